/* The server's apply threads (--apply-threads N): they run the jobs of a concurrent engine
 * (sw_engine_params.concurrent) while the main thread keeps the protocol and every decision.
 * A push frame reaches a thread only after the main thread checked it and the engine accepted
 * and applied it: the threads add no check and no policy of their own, only the arithmetic the
 * engine's job prescribes. */
#ifndef SW_NET_APPLY_POOL_H
#define SW_NET_APPLY_POOL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <zmq.h>

#include "syncwise/engine.h"

typedef struct sw__apply_pool {
    sw_engine *engine; /* borrowed; outlives the pool */
    void *zctx, *feed; /* inproc PUSH to the threads, used by the main thread only */
    char endpoint[64];
    pthread_t *threads;
    uint32_t n_threads, started;
    size_t n;          /* parameters */
    atomic_ullong applied;
} sw__apply_pool;

int sw__pool_start(sw__apply_pool *pool, void *zctx, sw_engine *engine, size_t n,
                   uint32_t threads, char *err);
/* Stops the threads after the jobs already handed over; frees everything. */
void sw__pool_stop(sw__apply_pool *pool);
/* Hands a job and the checked PUSH or PUSH_SPARSE frame it came from to a thread (the frame is
 * shared, not copied). */
void sw__pool_run(sw__apply_pool *pool, zmq_msg_t *frame, const sw_apply_job *job);

#endif
