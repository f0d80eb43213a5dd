/* The engine's aggregation buffer: the sum of the accepted gradients, dense or sparse.
 *
 * The first gradient of a buffer is only remembered, not copied: a policy that applies each
 * gradient at once (asp, ssp, actions) then updates θ straight from the caller's array, one
 * pass less per push, and from a sparse gradient in O(nonzeros). A remembered gradient that
 * outlives the push that brought it is copied in by sw__gradbuf_keep. */
#ifndef SW_GRADBUF_H
#define SW_GRADBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct sw__grad {
    const float *dense;  /* n floats, or NULL for a sparse gradient */
    const uint32_t *idx; /* sparse: ascending distinct indices < n */
    const float *val;
    size_t nnz;
} sw__grad;

typedef struct sw__gradbuf {
    float *sum; /* n floats, valid when no gradient is only remembered */
    size_t n;
    sw__grad first;
    bool has_first;
} sw__gradbuf;

/* Squared norm of a gradient. */
double sw__grad_sq_norm(const sw__grad *g, size_t n);

/* Adds g; `empty` says the buffer holds no gradient yet. g must stay valid until the next call
 * of sw__gradbuf_keep or sw__gradbuf_apply. */
void sw__gradbuf_add(sw__gradbuf *b, const sw__grad *g, bool empty);

/* Copies a remembered gradient into sum. */
void sw__gradbuf_keep(sw__gradbuf *b);

/* θ <- (1 - lr decay) θ - lr sum, emptying the buffer; the squared norm of the sum into *sum_sq
 * when it is not NULL. */
void sw__gradbuf_apply(sw__gradbuf *b, float *theta, float lr, float decay, double *sum_sq);

/* The same apply through a stateful optimizer (syncwise/optim.h): one step on scale * sum. */
struct sw_optim;
void sw__gradbuf_apply_optim(sw__gradbuf *b, struct sw_optim *o, float *theta, float scale,
                             float lr, float wd, double *sum_sq);

#endif
