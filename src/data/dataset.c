/* Data set allocation, subsets and standardisation. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "syncwise/data.h"
#include "syncwise/err.h"

/* Keeps a hostile header from asking for an absurd allocation: 2^31 floats is 8 GiB. */
#define SW_DATASET_MAX_FLOATS ((size_t)1 << 31)

int sw_dataset_new(sw_dataset **out, size_t n, const uint32_t shape[3], sw_objective task,
                   uint32_t n_classes, char *err)
{
    *out = NULL;
    size_t dim = (size_t)shape[0] * shape[1] * shape[2];
    if (dim == 0)
        return sw_fail(err, SW_EINVAL, "data set with zero features per example");
    if (n > SW_DATASET_MAX_FLOATS / dim)
        return sw_fail(err, SW_ERANGE, "data set of %zu x %zu values is too large", n, dim);
    sw_dataset *ds = calloc(1, sizeof *ds);
    if (!ds)
        return sw_fail(err, SW_ENOMEM, "out of memory for a data set");
    ds->n = n;
    ds->dim = dim;
    memcpy(ds->shape, shape, sizeof ds->shape);
    ds->objective = task;
    ds->n_classes = task == SW_CLASSIFY ? n_classes : 0;
    size_t rows = n ? n : 1; /* calloc(0) may return NULL, which is not a failure */
    ds->x = calloc(rows * dim, sizeof *ds->x);
    if (task == SW_CLASSIFY)
        ds->label = calloc(rows, sizeof *ds->label);
    else
        ds->target = calloc(rows, sizeof *ds->target);
    if (!ds->x || (!ds->label && !ds->target)) {
        sw_dataset_free(ds);
        return sw_fail(err, SW_ENOMEM, "out of memory for %zu examples of %zu features", n, dim);
    }
    *out = ds;
    return 0;
}

void sw_dataset_free(sw_dataset *ds)
{
    if (!ds)
        return;
    free(ds->x);
    free(ds->label);
    free(ds->target);
    free(ds);
}

int sw_dataset_subset(sw_dataset **out, const sw_dataset *ds, const uint32_t *idx, size_t n,
                      char *err)
{
    int rc = sw_dataset_new(out, n, ds->shape, ds->objective, ds->n_classes, err);
    if (rc)
        return rc;
    sw_dataset *s = *out;
    for (size_t i = 0; i < n; i++) {
        if (idx[i] >= ds->n) {
            sw_dataset_free(s);
            *out = NULL;
            return sw_fail(err, SW_EINVAL, "subset: index %u is outside a data set of %zu examples",
                           idx[i], ds->n);
        }
        memcpy(s->x + i * ds->dim, ds->x + (size_t)idx[i] * ds->dim, ds->dim * sizeof(float));
        if (ds->label)
            s->label[i] = ds->label[idx[i]];
        else
            s->target[i] = ds->target[idx[i]];
    }
    return 0;
}

int sw_dataset_standardize(const sw_dataset *fit, sw_dataset **apply, int n_apply, char *err)
{
    if (fit->n == 0)
        return sw_fail(err, SW_EINVAL, "cannot standardise on an empty data set");
    size_t d = fit->dim;
    double *mean = calloc(d, sizeof *mean), *m2 = calloc(d, sizeof *m2);
    if (!mean || !m2) {
        free(mean);
        free(m2);
        return sw_fail(err, SW_ENOMEM, "out of memory for feature statistics");
    }
    /* Welford's update keeps the variance accurate for features with a large mean. */
    for (size_t i = 0; i < fit->n; i++) {
        const float *x = fit->x + i * d;
        for (size_t j = 0; j < d; j++) {
            double delta = x[j] - mean[j];
            mean[j] += delta / (double)(i + 1);
            m2[j] += delta * (x[j] - mean[j]);
        }
    }
    for (size_t j = 0; j < d; j++) {
        double sd = sqrt(m2[j] / (double)fit->n);
        m2[j] = sd > 1e-12 ? 1.0 / sd : 1.0; /* reuse m2 as the scale */
    }
    for (int k = 0; k < n_apply; k++) {
        sw_dataset *ds = apply[k];
        if (!ds)
            continue;
        if (ds->dim != d) {
            free(mean);
            free(m2);
            return sw_fail(err, SW_EMISMATCH, "cannot standardise %zu features by statistics of %zu",
                           ds->dim, d);
        }
        for (size_t i = 0; i < ds->n; i++) {
            float *x = ds->x + i * d;
            for (size_t j = 0; j < d; j++)
                x[j] = (float)((x[j] - mean[j]) * m2[j]);
        }
    }
    free(mean);
    free(m2);
    return 0;
}
