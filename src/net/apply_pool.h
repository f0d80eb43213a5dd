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

#include "syncwise/engine.h"
#include "syncwise/transport.h"

typedef struct sw__pool_job sw__pool_job;

typedef struct sw__apply_pool {
    sw_engine *engine; /* borrowed; outlives the pool */
    size_t n;          /* parameters */
    pthread_t *threads;
    uint32_t n_threads, started;
    /* The jobs handed over and not yet taken, oldest first; at most `limit` of them, so that
     * the main thread slows down to the threads' pace instead of queuing without end. */
    pthread_mutex_t lock;
    pthread_cond_t more, room, idle;
    sw__pool_job *head, *tail;
    size_t queued, limit;
    size_t pending; /* jobs handed over and not yet done: queued, or being applied */
    bool stopping, ready;
    /* The main thread's buffers, for a job it applies itself when memory for queuing runs out. */
    uint32_t *own_idx;
    float *own_val, *own_dense;
    atomic_ullong applied;
} sw__apply_pool;

int sw__pool_start(sw__apply_pool *pool, sw_engine *engine, size_t n, uint32_t threads,
                   char *err);
/* Stops the threads after the jobs already handed over; frees everything. */
void sw__pool_stop(sw__apply_pool *pool);
/* Hands a job and the checked PUSH or PUSH_SPARSE frame it came from to a thread (the frame is
 * shared, not copied). */
void sw__pool_run(sw__apply_pool *pool, sw_frame *frame, const sw_apply_job *job);
/* Waits until every job handed over is done: θ then holds every apply the engine decided, as a
 * checkpoint labelled with the engine's version must. */
void sw__pool_drain(sw__apply_pool *pool);

#endif
