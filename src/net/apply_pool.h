/* The server's concurrent applies (--apply-threads N, asp only): the main thread keeps the
 * protocol and the engine's bookkeeping, and hands each push frame to one of N threads that
 * check it and apply it to shared parameters, locked, hogwild or atomic
 * (syncwise/concurrent.h). */
#ifndef SW_NET_APPLY_POOL_H
#define SW_NET_APPLY_POOL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <zmq.h>

#include "syncwise/concurrent.h"

typedef struct sw__apply_pool {
    sw_shared_params *params;
    void *zctx, *feed; /* inproc PUSH to the threads, used by the main thread only */
    char endpoint[64];
    pthread_t *threads;
    uint32_t n_threads, started;
    size_t n;
    float lr;
    atomic_ullong applied, refused;
    float *snapshot; /* the main thread's copy of the parameters */
} sw__apply_pool;

int sw__pool_start(sw__apply_pool *pool, void *zctx, size_t n, const float *init, float lr,
                   uint32_t threads, sw_apply_mode mode, char *err);
/* Stops the threads after the frames already handed over; frees everything. */
void sw__pool_stop(sw__apply_pool *pool);
/* Hands a PUSH or PUSH_SPARSE frame to a thread (shared, not copied). */
void sw__pool_feed(sw__apply_pool *pool, zmq_msg_t *frame);
/* All parameters as they are now (copied: other threads keep writing). */
const float *sw__pool_snapshot(sw__apply_pool *pool);
/* The parameters at idx[0..k) into out. */
void sw__pool_gather(sw__apply_pool *pool, const uint32_t *idx, size_t k, float *out);

#endif
