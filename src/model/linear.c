/* Linear SVM and logistic regression on sparse rows, with sparse gradients.
 *
 * A gradient is gathered in a dense accumulator of dim + 1 floats, but only its touched entries
 * are ever read or cleared: a stamp per coordinate says whether it belongs to the current call,
 * so a call costs O(nonzeros log nonzeros) (the sort of the touched list) whatever the dimension.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "syncwise/err.h"
#include "syncwise/sparse.h"
#include "syncwise/spec.h"

typedef enum { HINGE, LOGISTIC } loss_kind;

struct sw_sparse_model {
    loss_kind kind;
    double lambda;
    size_t dim;
    float *acc;      /* dim + 1 */
    uint32_t *stamp; /* dim + 1: the call that last touched each coordinate */
    uint32_t call;
    char spec[64];
};

int sw_sparse_model_new(sw_sparse_model **out, const char *spec, size_t dim, char *err)
{
    *out = NULL;
    sw_spec s;
    int rc = sw_spec_parse(&s, spec, err);
    if (rc)
        return rc;
    loss_kind kind = strcmp(s.name, "svm") == 0 ? HINGE : LOGISTIC;
    if (kind == LOGISTIC && strcmp(s.name, "logistic") != 0)
        return sw_fail(err, SW_ENOTFOUND, "unknown sparse model '%s' (known: svm, logistic)",
                       s.name);
    double lambda = kind == HINGE ? 1e-4 : 0;
    if ((rc = sw_spec_double(&s, "lambda", 0, 1e3, &lambda, err)) ||
        (rc = sw_spec_finish(&s, "lambda", err)))
        return sw_spec_usage(rc);
    if (dim == 0 || dim >= UINT32_MAX)
        return sw_fail(err, SW_EINVAL, "dimension %zu out of range", dim);
    sw_sparse_model *m = calloc(1, sizeof *m);
    if (m) {
        m->acc = malloc((dim + 1) * sizeof *m->acc);
        m->stamp = calloc(dim + 1, sizeof *m->stamp);
    }
    if (!m || !m->acc || !m->stamp) {
        sw_sparse_model_free(m);
        return sw_fail(err, SW_ENOMEM, "out of memory for a model of %zu features", dim);
    }
    m->kind = kind;
    m->lambda = lambda;
    m->dim = dim;
    snprintf(m->spec, sizeof m->spec, "%s:lambda=%g", kind == HINGE ? "svm" : "logistic", lambda);
    *out = m;
    return 0;
}

void sw_sparse_model_free(sw_sparse_model *m)
{
    if (!m)
        return;
    free(m->acc);
    free(m->stamp);
    free(m);
}

size_t sw_sparse_model_n_params(const sw_sparse_model *m)
{
    return m->dim + 1;
}
const char *sw_sparse_model_spec(const sw_sparse_model *m)
{
    return m->spec;
}

static int by_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Starts a call: a new stamp, wrapping to a cleared table once every 2^32 calls. */
static void next_call(sw_sparse_model *m)
{
    if (++m->call == 0) {
        memset(m->stamp, 0, (m->dim + 1) * sizeof *m->stamp);
        m->call = 1;
    }
}

size_t sw_sparse_touched(sw_sparse_model *m, const sw_sparse_data *d, const uint32_t *rows,
                         size_t n_rows, uint32_t *idx)
{
    next_call(m);
    size_t k = 0;
    for (size_t r = 0; r < n_rows; r++)
        for (size_t p = d->row[rows[r]]; p < d->row[rows[r] + 1]; p++) {
            uint32_t j = d->col[p];
            if (j < m->dim && m->stamp[j] != m->call) {
                m->stamp[j] = m->call;
                idx[k++] = j;
            }
        }
    qsort(idx, k, sizeof *idx, by_u32);
    idx[k++] = (uint32_t)m->dim; /* the bias */
    return k;
}

static double margin(const sw_sparse_model *m, const float *w, const sw_sparse_data *d, size_t i)
{
    double z = w[m->dim];
    for (size_t p = d->row[i]; p < d->row[i + 1]; p++)
        if (d->col[p] < m->dim)
            z += (double)w[d->col[p]] * d->val[p];
    return z;
}

/* Loss of one example of margin z and its derivative with respect to z. */
static double example_loss(const sw_sparse_model *m, double z, int32_t label, double *dz)
{
    double y = label > 0 ? 1.0 : -1.0;
    if (m->kind == HINGE) {
        *dz = y * z < 1 ? -y : 0;
        return y * z < 1 ? 1 - y * z : 0;
    }
    /* log(1 + exp(-y z)), computed without overflow */
    double t = -y * z;
    *dz = -y / (1 + exp(-t));
    return t > 0 ? t + log1p(exp(-t)) : log1p(exp(t));
}

size_t sw_sparse_model_grad(sw_sparse_model *m, const float *w, const sw_sparse_data *d,
                            const uint32_t *rows, size_t n_rows, uint32_t *idx, float *val,
                            double *loss)
{
    size_t k = sw_sparse_touched(m, d, rows, n_rows, idx);
    for (size_t t = 0; t < k; t++)
        m->acc[idx[t]] = 0;
    double total = 0, bias = 0;
    for (size_t r = 0; r < n_rows; r++) {
        size_t i = rows[r];
        double dz;
        total += example_loss(m, margin(m, w, d, i), d->label[i], &dz);
        bias += dz;
        for (size_t p = d->row[i]; p < d->row[i + 1]; p++)
            if (d->col[p] < m->dim)
                m->acc[d->col[p]] += (float)(dz * d->val[p]);
    }
    double inv = n_rows ? 1.0 / (double)n_rows : 0;
    for (size_t t = 0; t + 1 < k; t++)
        val[t] = (float)(m->acc[idx[t]] * inv + m->lambda * w[idx[t]]);
    val[k - 1] = (float)(bias * inv);
    if (loss)
        *loss = total * inv;
    return k;
}

void sw_sparse_model_evaluate(sw_sparse_model *m, const float *w, const sw_sparse_data *d,
                              sw_eval *out)
{
    double total = 0, sq = 0;
    size_t right = 0;
    for (size_t i = 0; i < d->n; i++) {
        double dz, z = margin(m, w, d, i);
        total += example_loss(m, z, d->label[i], &dz);
        right += (z > 0) == (d->label[i] > 0);
    }
    for (size_t j = 0; j < m->dim; j++)
        sq += (double)w[j] * w[j];
    out->n = d->n;
    out->loss = (d->n ? total / (double)d->n : 0) + 0.5 * m->lambda * sq;
    out->accuracy = d->n ? (double)right / (double)d->n : 0;
}
