/* Concurrent applies (see syncwise/concurrent.h). Floats live as their bit patterns in 32-bit
 * atomics, so every access, racing or not, is defined behaviour. */
#include "syncwise/concurrent.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "syncwise/err.h"
#include "syncwise/optim.h"

struct sw_shared_params {
    _Atomic uint32_t *bits;
    size_t n;
    sw_apply_mode mode;
    pthread_mutex_t lock;
};

static uint32_t to_bits(float f)
{
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
}

static float from_bits(uint32_t b)
{
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}

int sw_shared_new(sw_shared_params **out, size_t n, const float *init, sw_apply_mode mode,
                  char *err)
{
    *out = NULL;
    sw_shared_params *p = calloc(1, sizeof *p);
    if (p)
        p->bits = malloc((n ? n : 1) * sizeof *p->bits);
    if (!p || !p->bits) {
        free(p);
        return sw_fail(err, SW_ENOMEM, "out of memory for %zu shared parameters", n);
    }
    for (size_t i = 0; i < n; i++)
        atomic_init(&p->bits[i], to_bits(init ? init[i] : 0.0f));
    p->n = n;
    p->mode = mode;
    pthread_mutex_init(&p->lock, NULL);
    *out = p;
    return 0;
}

void sw_shared_free(sw_shared_params *p)
{
    if (!p)
        return;
    pthread_mutex_destroy(&p->lock);
    free(p->bits);
    free(p);
}

/* θ_j <- θ_j keep - lr g under the mode's rule for one coordinate. */
static void update(sw_shared_params *p, size_t j, float g, float lr, float keep)
{
    _Atomic uint32_t *c = &p->bits[j];
    if (p->mode == SW_APPLY_ATOMIC) {
        uint32_t old = atomic_load_explicit(c, memory_order_relaxed);
        while (!atomic_compare_exchange_weak_explicit(
            c, &old, to_bits(sw_sgd_coord(from_bits(old), g, lr, keep)), memory_order_relaxed,
            memory_order_relaxed))
            ;
        return;
    }
    /* locked (the mutex orders it) or hogwild (a racing update may be overwritten) */
    float v = from_bits(atomic_load_explicit(c, memory_order_relaxed));
    atomic_store_explicit(c, to_bits(sw_sgd_coord(v, g, lr, keep)), memory_order_relaxed);
}

void sw_shared_apply_sparse(sw_shared_params *p, const uint32_t *idx, const float *val, size_t nnz,
                            float lr, float weight_decay)
{
    float keep = sw_sgd_keep(lr, weight_decay);
    if (p->mode == SW_APPLY_LOCKED)
        pthread_mutex_lock(&p->lock);
    if (keep != 1.0f) /* what sw_sgd_step_sparse does: decay everywhere, then the pairs */
        for (size_t j = 0; j < p->n; j++)
            update(p, j, 0.0f, lr, keep);
    for (size_t k = 0; k < nnz; k++)
        if (idx[k] < p->n)
            update(p, idx[k], val[k], lr, 1.0f);
    if (p->mode == SW_APPLY_LOCKED)
        pthread_mutex_unlock(&p->lock);
}

void sw_shared_apply_dense(sw_shared_params *p, const float *grad, float lr, float weight_decay)
{
    float keep = sw_sgd_keep(lr, weight_decay);
    if (p->mode == SW_APPLY_LOCKED)
        pthread_mutex_lock(&p->lock);
    for (size_t j = 0; j < p->n; j++)
        update(p, j, grad[j], lr, keep);
    if (p->mode == SW_APPLY_LOCKED)
        pthread_mutex_unlock(&p->lock);
}

void sw_shared_read(sw_shared_params *p, float *out)
{
    for (size_t j = 0; j < p->n; j++)
        out[j] = from_bits(atomic_load_explicit(&p->bits[j], memory_order_relaxed));
}

void sw_shared_gather(sw_shared_params *p, const uint32_t *idx, size_t k, float *out)
{
    for (size_t i = 0; i < k; i++)
        out[i] = idx[i] < p->n
                     ? from_bits(atomic_load_explicit(&p->bits[idx[i]], memory_order_relaxed))
                     : 0.0f;
}

int sw_apply_mode_parse(const char *name)
{
    static const char *const names[] = {"locked", "hogwild", "atomic"};
    for (int i = 0; i < 3; i++)
        if (strcmp(name, names[i]) == 0)
            return i;
    return -1;
}

const char *sw_apply_mode_name(sw_apply_mode m)
{
    return m == SW_APPLY_LOCKED ? "locked" : m == SW_APPLY_HOGWILD ? "hogwild" : "atomic";
}
