/* CSV reader: one example per row, comma-separated numbers, one column holding the label.
 *
 * A first row with fewer numbers than the second is a header: its names can choose the label
 * column. Labels of a classification are integers in [0, 1000), or text: the distinct texts,
 * in byte order, become classes 0, 1, ... (the mapping is logged and kept for the test file).
 * Quoted fields are not supported: a numeric table has no use for them.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sw_data_internal.h"
#include "syncwise/data.h"
#include "syncwise/err.h"
#include "syncwise/lines.h"
#include "syncwise/log.h"

#define CSV_MAX_COLS (1u << 20)
#define MAX_CLASSES 1000

typedef struct table {
    const char *path;
    sw_csv_labels *labels;
    sw_objective task;
    float *x;     /* rows * (cols - 1) features */
    double *y;    /* rows labels, NAN where a label is text */
    size_t *text; /* rows offsets into pool of each label's text */
    char *pool;
    size_t pool_len, pool_cap;
    size_t rows, cols, cap, lc; /* lc: the label column, once cols is known */
    size_t *lineno;             /* row i's line in the file, for messages */
    char **field;               /* cols + 1 pointers, for splitting */
    char *pending;              /* the first row until the second says whether it is a header */
    size_t pending_line;
    char **names; /* the header's names, or NULL */
    char *header; /* the storage of names */
} table;

/* Splits line at commas in place, trimming blanks; returns the field count (up to max + 1). */
static size_t split(char *line, char **field, size_t max)
{
    size_t n = 0;
    for (char *p = line;; p++) {
        while (*p == ' ' || *p == '\t')
            p++;
        char *end = strchr(p, ',');
        char *stop = end ? end : p + strlen(p);
        while (stop > p &&
               (stop[-1] == ' ' || stop[-1] == '\t' || stop[-1] == '\r' || stop[-1] == '\n'))
            stop--;
        if (n <= max)
            field[n] = p;
        n++;
        if (!end) {
            *stop = '\0';
            return n;
        }
        *stop = '\0';
        p = end;
    }
}

static bool is_number(const char *s)
{
    char *end;
    double v;
    return *s && sw__parse_float(s, &end, &v) == 0 && *end == '\0';
}

static size_t count_fields(const char *line)
{
    size_t n = 1;
    for (; *line; line++)
        n += *line == ',';
    return n;
}

/* How many of line's fields are numbers (line is copied, not changed). */
static size_t numbers_in(const char *line, size_t *fields)
{
    char *copy = strdup(line);
    size_t n = count_fields(line), numbers = 0;
    char **f = copy ? malloc(n * sizeof *f) : NULL;
    if (f) {
        split(copy, f, n - 1);
        for (size_t j = 0; j < n; j++)
            numbers += is_number(f[j]);
    }
    free(f);
    free(copy);
    *fields = n;
    return numbers;
}

/* The label column the spec names: first, last, a 0-based number or a header name. */
static int resolve_label(table *t, char *err)
{
    const char *want = t->labels->column ? t->labels->column : "first";
    if (!strcmp(want, "first")) {
        t->lc = 0;
        return 0;
    }
    if (!strcmp(want, "last")) {
        t->lc = t->cols - 1;
        return 0;
    }
    char *end;
    long col = strtol(want, &end, 10);
    if (*end == '\0' && end != want) {
        if (col < 0 || (size_t)col >= t->cols)
            return sw_fail(err, SW_EINVAL,
                           "%s: label=%ld, but columns count from 0 and the "
                           "last is %zu (label=last names it)",
                           t->path, col, t->cols - 1);
        t->lc = (size_t)col;
        return 0;
    }
    for (size_t j = 0; t->names && j < t->cols; j++)
        if (!strcmp(t->names[j], want)) {
            t->lc = j;
            return 0;
        }
    char known[512] = "";
    for (size_t j = 0; t->names && j < t->cols && strlen(known) < 400; j++)
        snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", j ? ", " : "",
                 t->names[j]);
    return sw_fail(err, SW_EINVAL, "%s: no column named '%s' (%s%s)", t->path, want,
                   t->names ? "the header has: " : "the file has no header", known);
}

static int start_table(table *t, size_t cols, size_t lineno, char *err)
{
    if (cols < 2 || cols > CSV_MAX_COLS)
        return sw_fail(err, SW_EFORMAT, "%s:%zu: %zu columns (need 2 to %u)", t->path, lineno, cols,
                       CSV_MAX_COLS);
    t->cols = cols;
    if (!(t->field = malloc((cols + 1) * sizeof *t->field)))
        return sw_fail(err, SW_ENOMEM, "out of memory");
    return 0;
}

static int grow(table *t, char *err)
{
    if (t->rows < t->cap)
        return 0;
    size_t cap = t->cap ? 2 * t->cap : 256;
    float *x = realloc(t->x, cap * (t->cols - 1) * sizeof *x);
    if (x)
        t->x = x;
    double *y = realloc(t->y, cap * sizeof *y);
    if (y)
        t->y = y;
    size_t *text = realloc(t->text, cap * sizeof *text), *line = NULL;
    if (text)
        t->text = text;
    if (x && y && text && (line = realloc(t->lineno, cap * sizeof *line)))
        t->lineno = line;
    if (!line)
        return sw_fail(err, SW_ENOMEM, "%s: out of memory after %zu rows", t->path, t->rows);
    t->cap = cap;
    return 0;
}

/* A label's text joins the pool; its offset is returned in *at. */
static int keep_text(table *t, const char *s, size_t *at, char *err)
{
    size_t n = strlen(s) + 1;
    if (t->pool_len + n > t->pool_cap) {
        size_t cap = t->pool_cap ? 2 * t->pool_cap : 4096;
        while (cap < t->pool_len + n)
            cap *= 2;
        char *p = realloc(t->pool, cap);
        if (!p)
            return sw_fail(err, SW_ENOMEM, "%s: out of memory", t->path);
        t->pool = p;
        t->pool_cap = cap;
    }
    memcpy(t->pool + t->pool_len, s, n);
    *at = t->pool_len;
    t->pool_len += n;
    return 0;
}

static int add_row(table *t, char *line, size_t lineno, char *err)
{
    int rc = grow(t, err);
    if (rc)
        return rc;
    size_t n = split(line, t->field, t->cols);
    if (n != t->cols)
        return sw_fail(err, SW_EFORMAT, "%s:%zu: %s fields where the first row has %zu", t->path,
                       lineno, n < t->cols ? "fewer" : "more", t->cols);
    float *x = t->x + t->rows * (t->cols - 1);
    for (size_t j = 0, k = 0; j < t->cols; j++) {
        char *end;
        double v = NAN;
        int bad = sw__parse_float(t->field[j], &end, &v);
        if (!bad && *end)
            bad = SW_EFORMAT;
        if (j == t->lc) {
            if (bad && t->task == SW_REGRESS)
                return sw_fail(err, SW_EFORMAT, "%s:%zu: the label (field %zu) is not a number",
                               t->path, lineno, j + 1);
            t->y[t->rows] = bad ? NAN : v;
            if ((rc = keep_text(t, t->field[j], &t->text[t->rows], err)))
                return rc;
            continue;
        }
        if (bad == SW_ERANGE)
            return sw_fail(err, SW_ERANGE, "%s:%zu: field %zu does not fit a float", t->path,
                           lineno, j + 1);
        if (bad)
            return sw_fail(err, SW_EFORMAT, "%s:%zu: field %zu is not a number", t->path, lineno,
                           j + 1);
        x[k++] = (float)v;
    }
    t->lineno[t->rows++] = lineno;
    return 0;
}

/* The first row, once the second (or the end) says what it is. */
static int settle_first(table *t, const char *second, char *err)
{
    char *first = t->pending;
    size_t line = t->pending_line, fields, fields2 = 0;
    size_t numbers = numbers_in(first, &fields);
    bool header = second ? numbers < numbers_in(second, &fields2) : numbers == 0;
    t->pending = NULL;
    int rc = start_table(t, fields, line, err);
    if (!rc && header) {
        t->header = first;
        t->names = t->field; /* the header keeps this array; rows get their own */
        split(first, t->names, t->cols);
        if (!(t->field = malloc((t->cols + 1) * sizeof *t->field)))
            return sw_fail(err, SW_ENOMEM, "out of memory");
        return resolve_label(t, err);
    }
    if (!rc)
        rc = resolve_label(t, err);
    if (!rc)
        rc = add_row(t, first, line, err);
    free(first);
    return rc;
}

static int on_line(void *ctx, char *line, size_t lineno, char *err)
{
    table *t = ctx;
    if (line[strspn(line, " \t\r\n")] == '\0')
        return 0;
    if (t->cols == 0 && !t->pending) {
        t->pending_line = lineno;
        return (t->pending = strdup(line)) ? 0 : sw_fail(err, SW_ENOMEM, "out of memory");
    }
    int rc = t->pending ? settle_first(t, line, err) : 0;
    return rc ? rc : add_row(t, line, lineno, err);
}

static int by_text(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The classes of text labels: the distinct texts in byte order, logged. */
static int map_texts(table *t, char *err)
{
    char **all = malloc(t->rows * sizeof *all);
    if (!all)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    for (size_t i = 0; i < t->rows; i++)
        all[i] = t->pool + t->text[i];
    qsort(all, t->rows, sizeof *all, by_text);
    sw_csv_labels *l = t->labels;
    int rc = 0;
    for (size_t i = 0; !rc && i < t->rows; i++) {
        if (i && !strcmp(all[i], all[i - 1]))
            continue;
        if (l->n == MAX_CLASSES)
            rc = sw_fail(err, SW_ERANGE, "%s: more than %d distinct labels", t->path, MAX_CLASSES);
        else if (!(l->names[l->n++] = strdup(all[i])))
            rc = sw_fail(err, SW_ENOMEM, "out of memory");
    }
    free(all);
    char said[600] = "";
    for (size_t c = 0; c < l->n && strlen(said) < 500; c++)
        snprintf(said + strlen(said), sizeof said - strlen(said), "%s%s=%zu", c ? ", " : "",
                 l->names[c], c);
    if (!rc)
        sw_log(SW_LOG_INFO, "%s: text labels become classes: %s%s", t->path, said,
               strlen(said) >= 500 ? ", ..." : "");
    return rc;
}

static int class_of_text(const table *t, size_t i, int32_t *out, char *err)
{
    const char *s = t->pool + t->text[i];
    for (size_t c = 0; c < t->labels->n; c++)
        if (!strcmp(t->labels->names[c], s)) {
            *out = (int32_t)c;
            return 0;
        }
    return sw_fail(err, SW_EFORMAT, "%s:%zu: label '%s' is not a class of the training set",
                   t->path, t->lineno[i], s);
}

/* Numeric labels must be classes; a column of other numbers is likely the wrong column. */
static int class_of_number(const table *t, size_t i, int32_t *out, char *err)
{
    double l = t->y[i];
    if (l != floor(l) || l < 0 || l >= MAX_CLASSES) {
        const char *name = t->names ? t->names[t->lc] : NULL;
        return sw_fail(err, SW_ERANGE,
                       "%s:%zu: label %g (column %zu%s%s%s) is not a class in "
                       "[0, %d): is the label another column? say label=last, label=COLUMN or "
                       "label=NAME",
                       t->path, t->lineno[i], l, t->lc, name ? ", '" : "", name ? name : "",
                       name ? "'" : "", MAX_CLASSES);
    }
    *out = (int32_t)l;
    return 0;
}

static int fill(sw_dataset *ds, table *t, char *err)
{
    memcpy(ds->x, t->x, t->rows * ds->dim * sizeof *ds->x);
    if (ds->objective == SW_REGRESS) {
        for (size_t i = 0; i < t->rows; i++)
            ds->target[i] = (float)t->y[i];
        return 0;
    }
    bool text = t->labels->n > 0;
    for (size_t i = 0; i < t->rows && !text; i++)
        text = isnan(t->y[i]);
    if (text && t->labels->numeric)
        return sw_fail(err, SW_EFORMAT, "%s: text labels where the training set's are numbers",
                       t->path);
    t->labels->numeric = !text;
    int rc = 0;
    if (text && t->labels->n == 0) {
        if (!(t->labels->names = calloc(MAX_CLASSES, sizeof *t->labels->names)))
            return sw_fail(err, SW_ENOMEM, "out of memory");
        rc = map_texts(t, err);
    }
    int32_t max = 0;
    for (size_t i = 0; !rc && i < t->rows; i++) {
        rc = text ? class_of_text(t, i, &ds->label[i], err)
                  : class_of_number(t, i, &ds->label[i], err);
        max = ds->label[i] > max ? ds->label[i] : max;
    }
    uint32_t classes = text ? (uint32_t)t->labels->n : (uint32_t)max + 1;
    ds->n_classes = classes < 2 ? 2 : classes;
    return rc;
}

static void free_table(table *t)
{
    free(t->x);
    free(t->y);
    free(t->text);
    free(t->pool);
    free(t->lineno);
    free(t->field);
    free(t->pending);
    free(t->names);
    free(t->header);
}

int sw_csv_read(sw_dataset **out, const char *path, sw_csv_labels *labels, sw_objective task,
                char *err)
{
    *out = NULL;
    table t = {.path = path, .labels = labels, .task = task};
    int rc = sw_read_lines(path, on_line, &t, err);
    if (!rc && t.pending)
        rc = settle_first(&t, NULL, err);
    if (!rc && t.rows == 0)
        rc = sw_fail(err, SW_EFORMAT, "%s: no examples", path);
    uint32_t shape[3] = {1, 1, (uint32_t)(t.cols - 1)};
    if (!rc)
        rc = sw_dataset_new(out, t.rows, shape, task, 2, err);
    if (!rc && (rc = fill(*out, &t, err))) {
        sw_dataset_free(*out);
        *out = NULL;
    }
    free_table(&t);
    return rc;
}

void sw_csv_labels_free(sw_csv_labels *l)
{
    for (size_t c = 0; l->names && c < l->n; c++)
        free(l->names[c]);
    free(l->names);
    l->names = NULL;
    l->n = 0;
}
