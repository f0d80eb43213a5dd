/* Sparse data sets: allocation, conversion from dense data and LIBSVM writing. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "syncwise/err.h"
#include "syncwise/file.h"
#include "syncwise/sparse.h"

int sw_sparse_new(sw_sparse_data **out, size_t n, size_t dim, size_t nnz, char *err)
{
    *out = NULL;
    if (n == 0 || dim == 0 || dim >= UINT32_MAX)
        return sw_fail(err, SW_EINVAL, "a sparse data set needs rows and a dimension below 2^32");
    sw_sparse_data *d = calloc(1, sizeof *d);
    if (d) {
        d->row = calloc(n + 1, sizeof *d->row);
        d->col = malloc((nnz ? nnz : 1) * sizeof *d->col);
        d->val = malloc((nnz ? nnz : 1) * sizeof *d->val);
        d->label = calloc(n, sizeof *d->label);
    }
    if (!d || !d->row || !d->col || !d->val || !d->label) {
        sw_sparse_free(d);
        return sw_fail(err, SW_ENOMEM, "out of memory for %zu rows and %zu nonzeros", n, nnz);
    }
    d->n = n;
    d->dim = dim;
    d->nnz = nnz;
    d->n_classes = 2;
    *out = d;
    return 0;
}

void sw_sparse_free(sw_sparse_data *d)
{
    if (!d)
        return;
    free(d->row);
    free(d->col);
    free(d->val);
    free(d->label);
    free(d);
}

int sw_sparse_from_dense(sw_sparse_data **out, const sw_dataset *ds, char *err)
{
    if (ds->objective != SW_CLASSIFY)
        return sw_fail(err, SW_EINVAL, "only classification data converts to sparse rows");
    size_t nnz = 0;
    for (size_t i = 0; i < ds->n * ds->dim; i++)
        nnz += ds->x[i] != 0.0f;
    int rc = sw_sparse_new(out, ds->n, ds->dim, nnz, err);
    if (rc)
        return rc;
    sw_sparse_data *d = *out;
    size_t k = 0;
    for (size_t i = 0; i < ds->n; i++) {
        const float *x = ds->x + i * ds->dim;
        for (size_t j = 0; j < ds->dim; j++)
            if (x[j] != 0.0f) {
                d->col[k] = (uint32_t)j;
                d->val[k++] = x[j];
            }
        d->row[i + 1] = k;
        d->label[i] = ds->label[i];
    }
    d->n_classes = ds->n_classes;
    return 0;
}

/* One row as LIBSVM text; values with the shortest exact float spelling ("%.9g"). */
static void write_row(FILE *f, const sw_sparse_data *d, size_t i)
{
    if (d->n_classes == 2)
        fputs(d->label[i] ? "+1" : "-1", f);
    else
        fprintf(f, "%d", d->label[i]);
    for (size_t k = d->row[i]; k < d->row[i + 1]; k++)
        fprintf(f, " %u:%.9g", d->col[k] + 1, d->val[k]);
    fputc('\n', f);
}

int sw_sparse_write_libsvm(const sw_sparse_data *d, const char *path, char *err)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    for (size_t i = 0; i < d->n; i++)
        write_row(f, d, i);
    int bad = ferror(f);
    fclose(f);
    int rc = bad ? sw_fail(err, SW_ENOMEM, "out of memory for %s", path)
                 : sw_file_write_atomic(path, (const uint8_t *)text, len, "LIBSVM file", err);
    free(text);
    return rc;
}
