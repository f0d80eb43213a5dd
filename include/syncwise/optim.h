/* The optimizer's arithmetic: SGD with optional L2 weight decay, heavy-ball or Nesterov
 * momentum, and Adam, on flat float arrays, dense or sparse.
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

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

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

/* ---- Optimizers with state: momentum and Adam -------------------------------------------
 *
 * Chosen by a spec (syncwise/spec.h): "sgd" (plain), "sgd:momentum=MU[,nesterov=1]" or
 * "adam[:beta1=B1,beta2=B2,eps=E]". One step, with g the caller's gradient times `scale` (the
 * engine hands its buffer's sum and 1 / count, so the state sees mean gradients whatever the
 * count of an apply) and d = g + wd theta, as PyTorch's SGD and Adam define them:
 *   sgd:      v <- mu v + d;  theta <- theta - lr (nesterov ? d + mu v : v)
 *   adam:     m <- b1 m + (1 - b1) d;  u <- b2 u + (1 - b2) d^2;  t <- t + 1;
 *             theta <- theta - (lr / (1 - b1^t)) m / (sqrt(u) / sqrt(1 - b2^t) + eps)
 * The learning rate may change from step to step (a policy's scale); the state does not store
 * it. A sparse gradient updates every coordinate (the state decays everywhere: O(n) a step),
 * each with exactly the dense step's arithmetic on a zero, so dense and sparse give the same
 * bits. Plain SGD keeps no state and takes the functions above, bit for bit as before. */

typedef enum sw_optim_kind { SW_OPTIM_SGD = 0, SW_OPTIM_ADAM = 1 } sw_optim_kind;

typedef struct sw_optim_params {
    sw_optim_kind kind;
    float momentum;          /* sgd: in [0, 1); 0 is plain SGD */
    bool nesterov;           /* sgd with momentum > 0 */
    double beta1, beta2, eps; /* adam, as given: 1 - beta is taken before rounding to float, as
                               * PyTorch takes it */
} sw_optim_params;

#define SW_OPTIM_SPEC_LEN 96

/* Plain SGD, and Adam's usual constants should kind become adam (0.9, 0.999, 1e-8). */
sw_optim_params sw_optim_default(void);

/* Parses a spec into *p; on a bad name or key (SW_EINVAL) or a value out of range (SW_ERANGE)
 * it says why and leaves *p as it was. */
int sw_optim_parse(sw_optim_params *p, const char *spec, char *err);

/* The canonical spec of p, which sw_optim_parse reads back to the same parameters. */
void sw_optim_format(const sw_optim_params *p, char out[SW_OPTIM_SPEC_LEN]);

/* Whether p keeps state between steps (momentum or Adam), and how many arrays of n floats. */
bool sw_optim_stateful(const sw_optim_params *p);
unsigned sw_optim_arrays(const sw_optim_params *p);

typedef struct sw_optim {
    sw_optim_params p;
    size_t n;
    float *m;       /* the momentum buffer, or Adam's first moment; NULL when not kept */
    float *u;       /* Adam's second moment; NULL otherwise */
    uint64_t steps; /* steps taken (Adam's bias correction) */
} sw_optim;

/* Zeroed state for n coordinates. SW_ENOMEM on failure. */
int sw_optim_init(sw_optim *o, const sw_optim_params *p, size_t n, char *err);
void sw_optim_free(sw_optim *o);

/* Copies src's state (same parameters and n) into o. */
void sw_optim_copy_state(sw_optim *o, const sw_optim *src);

/* One step of a stateful optimizer on theta (n floats) with the gradient scale * g. */
void sw_optim_step(sw_optim *o, float *theta, const float *g, float scale, float lr, float wd);

/* Coordinates [lo, hi) of step number `step` (o->steps + 1 for the next one): threads may step
 * disjoint ranges of one step at once, each coordinate as sw_optim_step computes it; the caller
 * then counts the step (o->steps = step). */
void sw_optim_step_range(const sw_optim *o, uint64_t step, float *theta, const float *g,
                         float scale, float lr, float wd, size_t lo, size_t hi);

/* The same with a sparse gradient: nnz (index, value) pairs, indices ascending, distinct and
 * below n. */
void sw_optim_step_sparse(sw_optim *o, float *theta, const uint32_t *idx, const float *val,
                          size_t nnz, float scale, float lr, float wd);

#ifdef __cplusplus
}
#endif

#endif
