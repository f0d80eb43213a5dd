/* CSV reader: one example per row, comma-separated numbers, one column holding the label.
 *
 * Every row must have as many fields as the first; a first row that does not parse as numbers is
 * a header. Quoted fields are not supported: a numeric table has no use for them.
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

#define CSV_MAX_COLS (1u << 20)

typedef struct table {
    float *v; /* rows * cols */
    size_t rows, cols, cap;
    size_t *lineno, line_cap; /* row i's line in the file, for messages */
    int saw_header;
} table;

enum { TOO_MANY = -100, TOO_BIG = -101 };

/* Splits line in place and parses every field; returns the field count, or SW_EFORMAT (a field
 * that is not a number), TOO_BIG (one that does not fit a float) or TOO_MANY (more than max
 * fields) with *bad_col set to the 1-based field. */
static long parse_row(char *line, float *out, size_t max, size_t *bad_col)
{
    size_t n = 0;
    char *p = line;
    for (;;) {
        char *end;
        double v = 0;
        int bad = sw__parse_float(p, &end, &v);
        while (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n')
            end++;
        *bad_col = n + 1;
        if (bad == SW_ERANGE)
            return TOO_BIG;
        if (bad || (*end != ',' && *end != '\0'))
            return SW_EFORMAT;
        if (n == max)
            return TOO_MANY;
        out[n++] = (float)v;
        if (*end == '\0')
            return (long)n;
        p = end + 1;
    }
}

static size_t count_fields(const char *line)
{
    size_t n = 1;
    for (; *line; line++)
        n += *line == ',';
    return n;
}

static int add_row(table *t, char *line, const char *path, size_t lineno, char *err)
{
    if (t->cols == 0) {
        t->cols = count_fields(line);
        if (t->cols < 2 || t->cols > CSV_MAX_COLS)
            return sw_fail(err, SW_EFORMAT, "%s:%zu: %zu columns (need 2 to %u)", path, lineno,
                           t->cols, CSV_MAX_COLS);
    }
    if ((t->rows + 1) * t->cols > t->cap) {
        size_t cap = t->cap ? t->cap * 2 : t->cols * 256;
        float *v = realloc(t->v, cap * sizeof *v);
        if (!v)
            return sw_fail(err, SW_ENOMEM, "%s:%zu: out of memory", path, lineno);
        t->v = v;
        t->cap = cap;
    }
    if (t->rows == t->line_cap) {
        size_t cap = t->line_cap ? 2 * t->line_cap : 256;
        size_t *l = realloc(t->lineno, cap * sizeof *l);
        if (!l)
            return sw_fail(err, SW_ENOMEM, "%s:%zu: out of memory", path, lineno);
        t->lineno = l;
        t->line_cap = cap;
    }
    size_t bad = 0;
    long n = parse_row(line, t->v + t->rows * t->cols, t->cols, &bad);
    if (n < 0 || (size_t)n != t->cols) {
        if (n == SW_EFORMAT && t->rows == 0 && !t->saw_header) {
            t->saw_header = 1;
            return 1; /* a header: the caller skips it */
        }
        if (n >= 0 || n == TOO_MANY)
            return sw_fail(err, SW_EFORMAT, "%s:%zu: %s fields where the first row has %zu",
                           path, lineno, n >= 0 ? "fewer" : "more", t->cols);
        if (n == TOO_BIG)
            return sw_fail(err, SW_ERANGE, "%s:%zu: field %zu does not fit a float", path,
                           lineno, bad);
        return sw_fail(err, SW_EFORMAT, "%s:%zu: field %zu is not a number", path, lineno, bad);
    }
    t->lineno[t->rows++] = lineno;
    return 0;
}

typedef struct reading {
    table *t;
    const char *path;
} reading;

static int on_line(void *ctx, char *line, size_t lineno, char *err)
{
    reading *r = ctx;
    if (line[strspn(line, " \t\r\n")] == '\0')
        return 0;
    int rc = add_row(r->t, line, r->path, lineno, err);
    if (rc == 1) /* a header row: forget its width and go on */
        r->t->cols = 0;
    return rc == 1 ? 0 : rc;
}

static int read_table(table *t, const char *path, char *err)
{
    reading r = {t, path};
    int rc = sw_read_lines(path, on_line, &r, err);
    if (!rc && t->rows == 0)
        rc = sw_fail(err, SW_EFORMAT, "%s: no examples", path);
    return rc;
}

static int fill(sw_dataset *ds, const table *t, size_t lc, const char *path, char *err)
{
    int32_t max = 0;
    for (size_t i = 0; i < t->rows; i++) {
        const float *row = t->v + i * t->cols;
        float *x = ds->x + i * ds->dim;
        for (size_t j = 0, k = 0; j < t->cols; j++)
            if (j != lc)
                x[k++] = row[j];
        float l = row[lc];
        if (ds->objective == SW_REGRESS) {
            ds->target[i] = l;
            continue;
        }
        if (l != floorf(l) || l < 0 || l >= 1000)
            return sw_fail(err, SW_ERANGE, "%s:%zu: label %g (column %zu) is not a class in "
                           "[0, 1000)", path, t->lineno[i], (double)l, lc);
        ds->label[i] = (int32_t)l;
        if (ds->label[i] > max)
            max = ds->label[i];
    }
    if (ds->objective == SW_CLASSIFY)
        ds->n_classes = (uint32_t)max + 1 < 2 ? 2 : (uint32_t)max + 1;
    return 0;
}

int sw_csv_read(sw_dataset **out, const char *path, int label_col, sw_objective task, char *err)
{
    *out = NULL;
    table t = {0};
    int rc = read_table(&t, path, err);
    size_t lc = 0;
    if (!rc) {
        lc = label_col < 0 ? t.cols - 1 : (size_t)label_col;
        if (lc >= t.cols)
            rc = sw_fail(err, SW_EINVAL, "%s: label column %d but only %zu columns", path,
                         label_col, t.cols);
    }
    uint32_t shape[3] = {1, 1, (uint32_t)(t.cols - 1)};
    if (!rc)
        rc = sw_dataset_new(out, t.rows, shape, task, 2, err);
    if (!rc && (rc = fill(*out, &t, lc, path, err))) {
        sw_dataset_free(*out);
        *out = NULL;
    }
    free(t.v);
    free(t.lineno);
    return rc;
}
