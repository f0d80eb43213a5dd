/* SGD in plain C loops (see syncwise/optim.h for why not BLAS level 1): each loop is a
 * coordinate-wise expression the compiler vectorises without reordering any sum. */
#include "syncwise/optim.h"
#include "syncwise/simd.h"

#define LANES 8

SW_VECTOR_CLONES void sw_sgd_step(float *params, const float *grad, size_t n, float lr, float weight_decay)
{
    float keep = sw_sgd_keep(lr, weight_decay);
    for (size_t j = 0; j < n; j++)
        params[j] = sw_sgd_coord(params[j], grad[j], lr, keep);
}

void sw_sgd_step_sparse(float *params, size_t n, const uint32_t *idx, const float *val,
                        size_t nnz, float lr, float weight_decay)
{
    float keep = sw_sgd_keep(lr, weight_decay);
    if (keep != 1.0f) /* theta * keep - lr * 0 is theta * keep */
        for (size_t j = 0; j < n; j++)
            params[j] = params[j] * keep;
    for (size_t k = 0; k < nnz; k++)
        params[idx[k]] = params[idx[k]] - lr * val[k];
}

SW_VECTOR_CLONES void sw_vec_add(float *sum, const float *grad, size_t n)
{
    for (size_t j = 0; j < n; j++)
        sum[j] += grad[j];
}

static double combine(const double lane[LANES])
{
    return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
}

SW_VECTOR_CLONES double sw_sq_norm(const float *x, size_t n)
{
    double lane[LANES] = {0};
    size_t j = 0;
    for (; j + LANES <= n; j += LANES)
        for (int l = 0; l < LANES; l++)
            lane[l] += (double)x[j + l] * x[j + l]; /* a float product is exact in double */
    for (; j < n; j++)
        lane[j % LANES] += (double)x[j] * x[j];
    return combine(lane);
}

double sw_sq_norm_sparse(const uint32_t *idx, const float *val, size_t nnz)
{
    double lane[LANES] = {0};
    for (size_t k = 0; k < nnz; k++)
        lane[idx[k] % LANES] += (double)val[k] * val[k];
    return combine(lane);
}
