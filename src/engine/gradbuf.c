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

/* The buffer's content as one gradient (a lone sparse one stays sparse), emptying it. */
static sw__grad take(sw__gradbuf *b, double *sum_sq)
{
    sw__grad g = b->has_first ? b->first : (sw__grad){.dense = b->sum};
    b->has_first = false;
    if (sum_sq)
        *sum_sq = sw__grad_sq_norm(&g, b->n);
    return g;
}

void sw__gradbuf_apply(sw__gradbuf *b, float *theta, float lr, float decay, double *sum_sq)
{
    if (b->n == 0)
        return;
    sw__grad g = take(b, sum_sq);
    if (g.dense)
        sw_sgd_step(theta, g.dense, b->n, lr, decay);
    else
        sw_sgd_step_sparse(theta, b->n, g.idx, g.val, g.nnz, lr, decay);
}

void sw__gradbuf_apply_optim(sw__gradbuf *b, struct sw_optim *o, float *theta, float scale,
                             float lr, float wd, double *sum_sq)
{
    if (b->n == 0)
        return;
    sw__grad g = take(b, sum_sq);
    if (g.dense)
        sw_optim_step(o, theta, g.dense, scale, lr, wd);
    else
        sw_optim_step_sparse(o, theta, g.idx, g.val, g.nnz, scale, lr, wd);
}
