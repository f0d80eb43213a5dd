/* Concurrent applies: several threads updating one parameter array, the `use_locking` choice of
 * ElasticDL's asynchronous parameter server (paper 004) and Hogwild!'s lock-free SGD.
 *
 *   SW_APPLY_LOCKED   one mutex around each apply: applies are serialisable, none is lost; the
 *                     threads take turns
 *   SW_APPLY_HOGWILD  no lock: each coordinate is read, updated and written with relaxed atomic
 *                     loads and stores (so the races are defined behaviour, as plain floats would
 *                     not be); two threads updating one coordinate at once can lose one of the
 *                     updates. A reader may see an apply half done. Hogwild! shows SGD converges
 *                     anyway when gradients are sparse and collide rarely
 *   SW_APPLY_ATOMIC   no lock: each coordinate is updated with a compare-and-swap loop; no update
 *                     is lost, but an apply is still not atomic as a whole (a reader may see it
 *                     half done), and contended coordinates retry
 *
 * Gradients are sparse (index, value) pairs or dense arrays. Every coordinate is updated with the
 * optimizer's own expression (sw_sgd_coord of syncwise/optim.h), so that an apply here, with
 * weight decay and all, gives the bits the engine's serial apply gives (tested).
 */
#ifndef SYNCWISE_CONCURRENT_H
#define SYNCWISE_CONCURRENT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum sw_apply_mode {
    SW_APPLY_LOCKED,
    SW_APPLY_HOGWILD,
    SW_APPLY_ATOMIC,
} sw_apply_mode;

typedef struct sw_shared_params sw_shared_params;

/* n parameters starting at init (zeros when NULL). */
int sw_shared_new(sw_shared_params **out, size_t n, const float *init, sw_apply_mode mode,
                  char *err);
void sw_shared_free(sw_shared_params *p);

/* One SGD step, θ <- θ (1 - lr weight_decay) - lr g, safe to call from any number of threads at
 * once. A sparse gradient still decays every coordinate when weight_decay is not 0. */
void sw_shared_apply_sparse(sw_shared_params *p, const uint32_t *idx, const float *val, size_t nnz,
                            float lr, float weight_decay);
void sw_shared_apply_dense(sw_shared_params *p, const float *grad, float lr, float weight_decay);

/* Copies the parameters out (each coordinate read atomically), or those at idx[0..k). */
void sw_shared_read(sw_shared_params *p, float *out);
void sw_shared_gather(sw_shared_params *p, const uint32_t *idx, size_t k, float *out);

/* Parses "locked", "hogwild" or "atomic"; -1 if none. */
int sw_apply_mode_parse(const char *name);
const char *sw_apply_mode_name(sw_apply_mode m);

#ifdef __cplusplus
}
#endif

#endif
