/* The server's apply threads (see apply_pool.h). Each job travels as two frames over an inproc
 * socket: the job itself, then the push frame it applies; an empty first frame stops a thread. */
#define _POSIX_C_SOURCE 200809L
#include "apply_pool.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "syncwise/err.h"
#include "syncwise/proto.h"

/* The thread's own buffers for a gradient that cannot be read where it lies. */
typedef struct scratch {
    uint32_t *idx;
    float *val, *dense;
} scratch;

static void run_job(sw__apply_pool *pool, const sw_apply_job *job, zmq_msg_t *f, scratch *sc)
{
    sw_msg m;
    sw_msg_view(zmq_msg_data(f), zmq_msg_size(f), &m);
    if (m.type == SW_MSG_PUSH_SPARSE) {
        size_t nnz = sw_msg_pairs_accepted(&m, sc->idx, sc->val);
        sw_engine_run_job(pool->engine, job, NULL, sc->idx, sc->val, nnz);
    } else {
        const float *g = sw_msg_floats_accepted(&m, pool->n, sc->dense);
        sw_engine_run_job(pool->engine, job, g, NULL, NULL, 0);
    }
    atomic_fetch_add(&pool->applied, 1);
}

/* Receives one job; false on the stop message or a broken socket. */
static bool next_job(void *in, sw_apply_job *job, zmq_msg_t *frame)
{
    zmq_msg_t head;
    zmq_msg_init(&head);
    bool ok = zmq_msg_recv(&head, in, 0) >= 0 && zmq_msg_size(&head) == sizeof *job &&
              zmq_msg_more(&head) && zmq_msg_recv(frame, in, 0) >= 0;
    if (ok)
        memcpy(job, zmq_msg_data(&head), sizeof *job);
    zmq_msg_close(&head);
    return ok;
}

static void *apply_thread(void *arg)
{
    sw__apply_pool *pool = arg;
    void *in = zmq_socket(pool->zctx, ZMQ_PULL);
    size_t n = pool->n ? pool->n : 1;
    scratch sc = {malloc(n * sizeof *sc.idx), malloc(n * sizeof *sc.val),
                  malloc(n * sizeof *sc.dense)};
    if (in && sc.idx && sc.val && sc.dense && zmq_connect(in, pool->endpoint) == 0)
        for (;;) {
            sw_apply_job job;
            zmq_msg_t frame;
            zmq_msg_init(&frame);
            bool ok = next_job(in, &job, &frame);
            if (ok)
                run_job(pool, &job, &frame, &sc);
            zmq_msg_close(&frame);
            if (!ok)
                break;
        }
    free(sc.idx);
    free(sc.val);
    free(sc.dense);
    if (in)
        zmq_close(in);
    return NULL;
}

int sw__pool_start(sw__apply_pool *pool, void *zctx, sw_engine *engine, size_t n,
                   uint32_t threads, char *err)
{
    memset(pool, 0, sizeof *pool);
    pool->zctx = zctx;
    pool->engine = engine;
    pool->n = n;
    pool->n_threads = threads;
    atomic_init(&pool->applied, 0);
    snprintf(pool->endpoint, sizeof pool->endpoint, "inproc://sw-apply-%p", (void *)pool);
    pool->threads = calloc(threads, sizeof *pool->threads);
    pool->feed = zmq_socket(zctx, ZMQ_PUSH);
    if (!pool->threads || !pool->feed || zmq_bind(pool->feed, pool->endpoint))
        return sw_fail(err, SW_ENOMEM, "cannot start %u apply threads", threads);
    for (; pool->started < threads; pool->started++)
        if (pthread_create(&pool->threads[pool->started], NULL, apply_thread, pool) != 0)
            return sw_fail(err, SW_ENOMEM, "cannot start apply thread %u", pool->started);
    return 0;
}

void sw__pool_stop(sw__apply_pool *pool)
{
    for (uint32_t t = 0; t < pool->started; t++)
        zmq_send(pool->feed, "", 0, 0); /* round-robin: one stop each, after their jobs */
    for (uint32_t t = 0; t < pool->started; t++)
        pthread_join(pool->threads[t], NULL);
    if (pool->feed)
        zmq_close(pool->feed);
    free(pool->threads);
    memset(pool, 0, sizeof *pool);
}

void sw__pool_run(sw__apply_pool *pool, zmq_msg_t *frame, const sw_apply_job *job)
{
    zmq_msg_t copy;
    zmq_msg_init(&copy);
    zmq_msg_copy(&copy, frame);
    /* Blocking sends, again when a signal interrupts them: a job the engine decided is never
     * lost, and a full queue slows the main thread down to the threads' pace. */
    int rc;
    while ((rc = zmq_send(pool->feed, job, sizeof *job, ZMQ_SNDMORE)) < 0 && errno == EINTR)
        ;
    while (rc >= 0 && (rc = zmq_msg_send(&copy, pool->feed, 0)) < 0 && errno == EINTR)
        ;
    if (rc < 0)
        zmq_msg_close(&copy);
}
