/* The optimizer's arithmetic: plain SGD with optional L2 weight decay, on flat float arrays,
 * dense or sparse.
 *
 * Every path (a dense step, a sparse step, the engine's aggregated apply, a concurrent apply of
 * syncwise/concurrent.h) computes each coordinate with the one expression of sw_sgd_coord, in
 * plain C compiled without contraction into fused multiply-adds (CMakeLists.txt). So the dense
 * and sparse paths give the same bits, and the result does not depend on which BLAS kernel the
 * machine picks (OpenBLAS's saxpy rounds differently under its Haswell and SkylakeX kernels).
 * The engine scales the learning rate per apply (staleness modulation, backup-worker rules);
 * this module only does the arithmetic.
 */
#ifndef SYNCWISE_OPTIM_H
#define SYNCWISE_OPTIM_H

#include <stddef.h>
#include <stdint.h>

/* One coordinate: theta * keep - lr * g, where keep = 1 - lr * weight_decay. */
static inline float sw_sgd_coord(float theta, float g, float lr, float keep)
{
    return theta * keep - lr * g;
}

/* The factor weight decay leaves on every coordinate. */
static inline float sw_sgd_keep(float lr, float weight_decay) { return 1.0f - lr * weight_decay; }

/* params <- params - lr * (grad + weight_decay * params), over n floats. */
void sw_sgd_step(float *params, const float *grad, size_t n, float lr, float weight_decay);

/* The same step with a sparse gradient: nnz (index, value) pairs, indices below n. Weight decay
 * still shrinks every coordinate (an O(n) pass); without it the step costs O(nnz). Each
 * coordinate gets exactly the arithmetic of the dense step with zeros elsewhere. */
void sw_sgd_step_sparse(float *params, size_t n, const uint32_t *idx, const float *val,
                        size_t nnz, float lr, float weight_decay);

/* sum <- sum + grad, over n floats (an aggregation buffer). */
void sw_vec_add(float *sum, const float *grad, size_t n);

/* The squared norm of n floats, accumulated in double in a fixed order: eight lanes by index
 * modulo 8, then their pairwise sum. A sparse vector gives the same bits through
 * sw_sq_norm_sparse, since a lane adds its zeros exactly. */
double sw_sq_norm(const float *x, size_t n);
double sw_sq_norm_sparse(const uint32_t *idx, const float *val, size_t nnz);

#endif
