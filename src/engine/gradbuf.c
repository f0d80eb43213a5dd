/* The aggregation buffer (see gradbuf.h). Its arithmetic is syncwise/optim.h's, so a lone
 * sparse gradient, applied in O(nonzeros), gives every coordinate exactly the bits the dense path
 * gives it (tested), on any BLAS kernel. */
#include "gradbuf.h"

#include <string.h>

#include "syncwise/optim.h"

double sw__grad_sq_norm(const sw__grad *g, size_t n)
{
    return g->dense ? sw_sq_norm(g->dense, n) : sw_sq_norm_sparse(g->idx, g->val, g->nnz);
}

static void add_into(float *sum, const sw__grad *g, size_t n)
{
    if (g->dense) {
        sw_vec_add(sum, g->dense, n);
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

void sw__gradbuf_apply(sw__gradbuf *b, float *theta, float lr, float decay, double *sum_sq)
{
    if (b->n == 0)
        return;
    if (b->has_first && !b->first.dense) {
        const sw__grad *g = &b->first;
        if (sum_sq)
            *sum_sq = sw__grad_sq_norm(g, b->n);
        sw_sgd_step_sparse(theta, b->n, g->idx, g->val, g->nnz, lr, decay);
        b->has_first = false;
        return;
    }
    const float *sum = b->has_first ? b->first.dense : b->sum;
    b->has_first = false;
    if (sum_sq)
        *sum_sq = sw_sq_norm(sum, b->n);
    sw_sgd_step(theta, sum, b->n, lr, decay);
}
