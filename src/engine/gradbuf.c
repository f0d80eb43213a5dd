/* The aggregation buffer (see gradbuf.h). Dense sums go through BLAS; a lone sparse gradient is
 * applied by gathering its coordinates of θ, one saxpy, and scattering them back, so that every
 * coordinate gets exactly the arithmetic the dense path gives it (tested). */
#include "gradbuf.h"

#include <cblas.h>
#include <string.h>

#include "syncwise/optim.h"

double sw__grad_sq_norm(const sw__grad *g, size_t n)
{
    if (g->dense)
        return n ? cblas_sdot((int)n, g->dense, 1, g->dense, 1) : 0;
    return g->nnz ? cblas_sdot((int)g->nnz, g->val, 1, g->val, 1) : 0;
}

static void add_into(float *sum, const sw__grad *g, size_t n)
{
    if (g->dense) {
        cblas_saxpy((int)n, 1.0f, g->dense, 1, sum, 1);
        return;
    }
    for (size_t k = 0; k < g->nnz; k++)
        sum[g->idx[k]] += g->val[k];
}

void sw__gradbuf_keep(sw__gradbuf *b)
{
    if (!b->has_first)
        return;
    b->has_first = false;
    if (b->first.dense) {
        memcpy(b->sum, b->first.dense, b->n * sizeof *b->sum);
        return;
    }
    memset(b->sum, 0, b->n * sizeof *b->sum);
    add_into(b->sum, &b->first, b->n);
}

void sw__gradbuf_add(sw__gradbuf *b, const sw__grad *g, bool empty)
{
    if (b->n == 0)
        return;
    if (empty) {
        b->first = *g;
        b->has_first = true;
        return;
    }
    sw__gradbuf_keep(b);
    add_into(b->sum, g, b->n);
}

/* θ_j -= lr v_k on the gradient's coordinates only; sum is free scratch here. */
static void apply_sparse(sw__gradbuf *b, float *theta, float lr)
{
    const sw__grad *g = &b->first;
    for (size_t k = 0; k < g->nnz; k++)
        b->sum[k] = theta[g->idx[k]];
    if (g->nnz)
        cblas_saxpy((int)g->nnz, -lr, g->val, 1, b->sum, 1);
    for (size_t k = 0; k < g->nnz; k++)
        theta[g->idx[k]] = b->sum[k];
}

void sw__gradbuf_apply(sw__gradbuf *b, float *theta, float lr, float decay, double *sum_sq)
{
    if (b->n == 0)
        return;
    if (b->has_first && !b->first.dense) {
        if (sum_sq)
            *sum_sq = sw__grad_sq_norm(&b->first, b->n);
        if (decay != 0.0f)
            cblas_sscal((int)b->n, 1.0f - lr * decay, theta, 1);
        apply_sparse(b, theta, lr);
        b->has_first = false;
        return;
    }
    const float *sum = b->has_first ? b->first.dense : b->sum;
    b->has_first = false;
    if (sum_sq)
        *sum_sq = cblas_sdot((int)b->n, sum, 1, sum, 1);
    sw_sgd_step(theta, sum, b->n, lr, decay);
}
