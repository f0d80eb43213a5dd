/* LIBSVM reader: "label index:value index:value ..." per line, indices from 1 and ascending.
 *
 * The file is parsed once into growing arrays of (index, value) pairs, then densified; linear
 * models on truly sparse data keep the pairs (see the sparse path). Blank lines and lines starting
 * with '#' are skipped; a '#' after the pairs starts a comment.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sw_data_internal.h"
#include "syncwise/data.h"
#include "syncwise/err.h"
#include "syncwise/lines.h"
#include "syncwise/sparse.h"

#define LIBSVM_MAX_CLASSES 1000
#define LIBSVM_MAX_DIM (1u << 24)

typedef struct pairs {
    uint32_t *col; /* 0-based */
    float *val;
    size_t n, cap;
    size_t *row_end; /* pairs of row i end at row_end[i] */
    double *label;
    size_t *lineno;  /* row i's line in the file, for messages */
    size_t rows, row_cap;
    uint32_t max_col;
} pairs;

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap * 2 : 1024;
    while (c < need)
        c *= 2;
    void *q = realloc(*p, c * elem);
    if (!q)
        return SW_ENOMEM;
    *p = q;
    *cap = c;
    return 0;
}

static void pairs_free(pairs *s)
{
    free(s->col);
    free(s->val);
    free(s->row_end);
    free(s->label);
    free(s->lineno);
}

static int push_pair(pairs *s, uint32_t col, float v)
{
    size_t cap = s->cap;
    if (grow((void **)&s->col, &cap, s->n + 1, sizeof *s->col))
        return SW_ENOMEM;
    cap = s->cap;
    if (grow((void **)&s->val, &cap, s->n + 1, sizeof *s->val))
        return SW_ENOMEM;
    s->cap = cap;
    s->col[s->n] = col;
    s->val[s->n++] = v;
    if (col + 1 > s->max_col)
        s->max_col = col + 1;
    return 0;
}

static int parse_pairs(pairs *s, char *p, const char *path, size_t lineno, const char *line,
                       char *err)
{
    long prev = 0;
    for (;;) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '\0' || *p == '\n' || *p == '\r' || *p == '#')
            return 0;
        char *end;
        errno = 0;
        long idx = strtol(p, &end, 10);
        size_t col = (size_t)(p - line) + 1;
        if (end == p || *end != ':')
            return sw_fail(err, SW_EFORMAT, "%s:%zu:%zu: expected index:value", path, lineno, col);
        if (errno || idx < 1 || idx > (long)LIBSVM_MAX_DIM) /* the text: errno clamped idx */
            return sw_fail(err, SW_ERANGE, "%s:%zu:%zu: index %.*s outside [1, %u]", path, lineno,
                           col, (int)(end - p), p, LIBSVM_MAX_DIM);
        if (idx <= prev)
            return sw_fail(err, SW_EFORMAT, "%s:%zu:%zu: index %ld is not above the previous %ld",
                           path, lineno, col, idx, prev);
        p = end + 1;
        double v = 0;
        int bad = sw__parse_float(p, &end, &v);
        if (bad == SW_ERANGE)
            return sw_fail(err, SW_ERANGE, "%s:%zu:%zu: value %.*s of index %ld does not fit a "
                           "float", path, lineno, (size_t)(p - line) + 1, (int)(end - p), p, idx);
        if (bad || (*end && *end != ' ' && *end != '\t' && *end != '\n' && *end != '\r'))
            return sw_fail(err, SW_EFORMAT, "%s:%zu:%zu: bad value after index %ld", path, lineno,
                           (size_t)(p - line) + 1, idx);
        if (push_pair(s, (uint32_t)(idx - 1), (float)v))
            return sw_fail(err, SW_ENOMEM, "%s:%zu: out of memory", path, lineno);
        prev = idx;
        p = end;
    }
}

static int parse_line(pairs *s, char *line, const char *path, size_t lineno, char *err)
{
    /* A carriage return ends a line only before its newline (CRLF): elsewhere it would end the
     * line's reading early, the rest of the line (or, with old Mac line ends, of the file) lost
     * without a word. */
    const char *cr = strchr(line, '\r');
    if (cr && cr[1] != '\0' && cr[1] != '\n')
        return sw_fail(err, SW_EFORMAT, "%s:%zu:%zu: a carriage return inside a line (lines end "
                       "with a newline, or CR LF)", path, lineno, (size_t)(cr - line) + 1);
    char *p = line;
    while (*p == ' ' || *p == '\t')
        p++;
    if (*p == '\0' || *p == '\n' || *p == '\r' || *p == '#')
        return 0;
    char *end;
    double label = 0;
    int bad = sw__parse_float(p, &end, &label);
    if (bad == SW_ERANGE)
        return sw_fail(err, SW_ERANGE, "%s:%zu:%zu: label %.*s does not fit a float", path,
                       lineno, (size_t)(p - line) + 1, (int)(end - p), p);
    if (bad || (*end != ' ' && *end != '\t' && *end != '\n' && *end != '\r' && *end != '\0'))
        return sw_fail(err, SW_EFORMAT, "%s:%zu:%zu: expected a numeric label", path, lineno,
                       (size_t)(p - line) + 1);
    size_t rcap = s->row_cap, lcap = s->row_cap;
    if (grow((void **)&s->row_end, &rcap, s->rows + 1, sizeof *s->row_end) ||
        grow((void **)&s->lineno, &lcap, s->rows + 1, sizeof *s->lineno) ||
        grow((void **)&s->label, &s->row_cap, s->rows + 1, sizeof *s->label))
        return sw_fail(err, SW_ENOMEM, "%s:%zu: out of memory", path, lineno);
    int rc = parse_pairs(s, end, path, lineno, line, err);
    if (rc)
        return rc;
    s->label[s->rows] = label;
    s->lineno[s->rows] = lineno;
    s->row_end[s->rows++] = s->n;
    return 0;
}

typedef struct reading {
    pairs *s;
    const char *path;
} reading;

static int on_line(void *ctx, char *line, size_t lineno, char *err)
{
    reading *r = ctx;
    return parse_line(r->s, line, r->path, lineno, err);
}

static bool is_class(double l) { return l == floor(l) && l >= 0 && l < LIBSVM_MAX_CLASSES; }

/* The first row whose label is neither -1/+1 nor a class, or rows.n. */
static size_t first_not_class(const pairs *s)
{
    size_t i = 0;
    while (i < s->rows && (s->label[i] == -1.0 || s->label[i] == 1.0 || is_class(s->label[i])))
        i++;
    return i;
}

/* The first row whose label is `l` (or, l NAN, is neither -1 nor +1). */
static size_t first_label(const pairs *s, double l)
{
    size_t i = 0;
    while (i < s->rows && (isnan(l) ? s->label[i] == -1.0 || s->label[i] == 1.0 : s->label[i] != l))
        i++;
    return i;
}

/* Labels that are not classes: one that is no class at all, or -1 mixed with class indices
 * (two conventions, of which neither file line alone is wrong). */
static int bad_labels(const pairs *s, const char *path, char *err)
{
    size_t c = first_not_class(s);
    if (c < s->rows)
        return sw_fail(err, SW_ERANGE, "%s:%zu: label %g is not a class (labels are -1/+1, or "
                       "integers in [0, %d))", path, s->lineno[c], s->label[c],
                       LIBSVM_MAX_CLASSES);
    size_t minus = first_label(s, -1.0), other = first_label(s, NAN);
    return sw_fail(err, SW_ERANGE, "%s: labels mix the -1/+1 convention (line %zu: -1) with "
                   "class indices (line %zu: %g): give one kind", path, s->lineno[minus],
                   s->lineno[other], s->label[other]);
}

/* Maps raw labels to class indices: {-1, +1} to {0, 1}; otherwise integers in range as is. */
static int class_labels(const pairs *s, int32_t *out, uint32_t *n_classes, const char *path,
                        char *err)
{
    int pm_one = 1;
    for (size_t i = 0; i < s->rows; i++)
        if (s->label[i] != 1.0 && s->label[i] != -1.0)
            pm_one = 0;
    int32_t max = 0;
    for (size_t i = 0; i < s->rows; i++) {
        double l = s->label[i];
        if (pm_one)
            l = l > 0 ? 1 : 0;
        if (!is_class(l))
            return bad_labels(s, path, err);
        out[i] = (int32_t)l;
        if (out[i] > max)
            max = out[i];
    }
    *n_classes = (uint32_t)max + 1 < 2 ? 2 : (uint32_t)max + 1;
    return 0;
}

/* The rows' dimension: dim as given (0: the largest index seen), which every index must fit. */
static int check_dim(const pairs *s, size_t *dim, const char *path, char *err)
{
    if (s->rows == 0)
        return sw_fail(err, SW_EFORMAT, "%s: no examples", path);
    if (*dim == 0)
        *dim = s->max_col;
    if (s->max_col <= *dim)
        return 0;
    size_t row = 0, k = 0;
    while (s->col[k] < *dim) /* the first pair beyond: max_col says there is one */
        k++;
    while (s->row_end[row] <= k)
        row++;
    return sw_fail(err, SW_EMISMATCH, "%s:%zu: index %u beyond the expected dimension dim=%zu",
                   path, s->lineno[row], s->col[k] + 1, *dim);
}

static int densify(sw_dataset **out, const pairs *s, size_t dim, sw_objective task, const char *path,
                   char *err)
{
    int rc = check_dim(s, &dim, path, err);
    if (rc)
        return rc;
    uint32_t shape[3] = {1, 1, (uint32_t)dim};
    rc = sw_dataset_new(out, s->rows, shape, task, 2, err);
    if (rc)
        return rc;
    sw_dataset *ds = *out;
    size_t k = 0;
    for (size_t i = 0; i < s->rows; i++)
        for (; k < s->row_end[i]; k++)
            ds->x[i * dim + s->col[k]] = s->val[k];
    if (task == SW_CLASSIFY)
        rc = class_labels(s, ds->label, &ds->n_classes, path, err);
    else
        for (size_t i = 0; i < s->rows; i++)
            ds->target[i] = (float)s->label[i];
    if (rc) {
        sw_dataset_free(ds);
        *out = NULL;
    }
    return rc;
}

/* Parses path's lines into s (freed by the caller, also on failure). */
static int parse(pairs *s, const char *path, size_t dim, char *err)
{
    if (dim > LIBSVM_MAX_DIM)
        return sw_fail(err, SW_ERANGE, "dimension %zu above %u", dim, LIBSVM_MAX_DIM);
    reading r = {s, path};
    return sw_read_lines(path, on_line, &r, err);
}

int sw_libsvm_read(sw_dataset **out, const char *path, size_t dim, sw_objective task, char *err)
{
    *out = NULL;
    pairs s = {0};
    int rc = parse(&s, path, dim, err);
    if (!rc)
        rc = densify(out, &s, dim, task, path, err);
    pairs_free(&s);
    return rc;
}

/* The same parse, kept sparse: the pairs already are compressed rows. */
static int to_sparse(sw_sparse_data **out, const pairs *s, size_t dim, const char *path,
                     char *err)
{
    int rc = check_dim(s, &dim, path, err);
    if (rc)
        return rc;
    if ((rc = sw_sparse_new(out, s->rows, dim, s->n, err)))
        return rc;
    sw_sparse_data *d = *out;
    memcpy(d->col, s->col, s->n * sizeof *d->col);
    memcpy(d->val, s->val, s->n * sizeof *d->val);
    for (size_t i = 0; i < s->rows; i++)
        d->row[i + 1] = s->row_end[i];
    if ((rc = class_labels(s, d->label, &d->n_classes, path, err))) {
        sw_sparse_free(d);
        *out = NULL;
    }
    return rc;
}

int sw_sparse_read_libsvm(sw_sparse_data **out, const char *path, size_t dim, char *err)
{
    *out = NULL;
    pairs s = {0};
    int rc = parse(&s, path, dim, err);
    if (!rc)
        rc = to_sparse(out, &s, dim, path, err);
    pairs_free(&s);
    return rc;
}
