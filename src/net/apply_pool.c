/* The server's apply threads (see apply_pool.h): a queue of jobs under one lock, each with a
 * reference to the push frame it applies. */
#define _POSIX_C_SOURCE 200809L
#include "apply_pool.h"

#include <stdlib.h>
#include <string.h>

#include "syncwise/err.h"
#include "syncwise/proto.h"

#define QUEUE_LIMIT 64

struct sw__pool_job {
    sw_apply_job job;
    sw_frame *frame;
    sw__pool_job *next;
};

/* The thread's own buffers for a gradient that cannot be read where it lies. */
typedef struct scratch {
    uint32_t *idx;
    float *val, *dense;
} scratch;

static void run_job(sw__apply_pool *pool, const sw__pool_job *j, scratch *sc)
{
    sw_msg m;
    sw_msg_view(sw_frame_data(j->frame), sw_frame_size(j->frame), &m);
    if (m.type == SW_MSG_PUSH_SPARSE) {
        size_t nnz = sw_msg_pairs_accepted(&m, sc->idx, sc->val);
        sw_engine_run_job(pool->engine, &j->job, NULL, sc->idx, sc->val, nnz);
    } else {
        const float *g = sw_msg_floats_accepted(&m, pool->n, sc->dense);
        sw_engine_run_job(pool->engine, &j->job, g, NULL, NULL, 0);
    }
    atomic_fetch_add(&pool->applied, 1);
}

/* The oldest job, waiting for one; NULL when the pool stops and none is left. */
static sw__pool_job *next_job(sw__apply_pool *pool)
{
    pthread_mutex_lock(&pool->lock);
    while (!pool->head && !pool->stopping)
        pthread_cond_wait(&pool->more, &pool->lock);
    sw__pool_job *j = pool->head;
    if (j) {
        pool->head = j->next;
        pool->tail = pool->head ? pool->tail : NULL;
        pool->queued--;
        pthread_cond_signal(&pool->room);
    }
    pthread_mutex_unlock(&pool->lock);
    return j;
}

static void *apply_thread(void *arg)
{
    sw__apply_pool *pool = arg;
    size_t n = pool->n ? pool->n : 1;
    scratch sc = {malloc(n * sizeof *sc.idx), malloc(n * sizeof *sc.val),
                  malloc(n * sizeof *sc.dense)};
    for (sw__pool_job *j; (j = next_job(pool));) {
        if (sc.idx && sc.val && sc.dense)
            run_job(pool, j, &sc);
        sw_frame_unref(j->frame);
        free(j);
        pthread_mutex_lock(&pool->lock);
        if (--pool->pending == 0)
            pthread_cond_broadcast(&pool->idle);
        pthread_mutex_unlock(&pool->lock);
    }
    free(sc.idx);
    free(sc.val);
    free(sc.dense);
    return NULL;
}

int sw__pool_start(sw__apply_pool *pool, sw_engine *engine, size_t n, uint32_t threads,
                   char *err)
{
    memset(pool, 0, sizeof *pool);
    pool->engine = engine;
    pool->n = n;
    pool->n_threads = threads;
    pool->limit = QUEUE_LIMIT;
    atomic_init(&pool->applied, 0);
    pthread_mutex_init(&pool->lock, NULL);
    pthread_cond_init(&pool->more, NULL);
    pthread_cond_init(&pool->room, NULL);
    pthread_cond_init(&pool->idle, NULL);
    pool->ready = true;
    size_t k = n ? n : 1;
    pool->own_idx = malloc(k * sizeof *pool->own_idx);
    pool->own_val = malloc(k * sizeof *pool->own_val);
    pool->own_dense = malloc(k * sizeof *pool->own_dense);
    pool->threads = calloc(threads, sizeof *pool->threads);
    if (!pool->threads || !pool->own_idx || !pool->own_val || !pool->own_dense)
        return sw_fail(err, SW_ENOMEM, "cannot start %u apply threads", threads);
    for (; pool->started < threads; pool->started++)
        if (pthread_create(&pool->threads[pool->started], NULL, apply_thread, pool) != 0)
            return sw_fail(err, SW_ENOMEM, "cannot start apply thread %u", pool->started);
    return 0;
}

void sw__pool_stop(sw__apply_pool *pool)
{
    if (!pool->ready)
        return;
    pthread_mutex_lock(&pool->lock);
    pool->stopping = true; /* the threads finish the jobs queued, then end */
    pthread_cond_broadcast(&pool->more);
    pthread_mutex_unlock(&pool->lock);
    for (uint32_t t = 0; t < pool->started; t++)
        pthread_join(pool->threads[t], NULL);
    for (sw__pool_job *j = pool->head, *next; j; j = next) { /* no thread ever started */
        next = j->next;
        sw_frame_unref(j->frame);
        free(j);
    }
    pthread_cond_destroy(&pool->more);
    pthread_cond_destroy(&pool->room);
    pthread_cond_destroy(&pool->idle);
    pthread_mutex_destroy(&pool->lock);
    free(pool->threads);
    free(pool->own_idx);
    free(pool->own_val);
    free(pool->own_dense);
    memset(pool, 0, sizeof *pool);
}

/* A job the engine decided is never lost: when memory runs out the main thread applies it. */
void sw__pool_run(sw__apply_pool *pool, sw_frame *frame, const sw_apply_job *job)
{
    sw__pool_job *j = malloc(sizeof *j);
    if (!j) {
        scratch own = {pool->own_idx, pool->own_val, pool->own_dense};
        run_job(pool, &(sw__pool_job){.job = *job, .frame = frame}, &own);
        return;
    }
    *j = (sw__pool_job){.job = *job, .frame = sw_frame_ref(frame)};
    pthread_mutex_lock(&pool->lock);
    while (pool->queued >= pool->limit && pool->started > 0)
        pthread_cond_wait(&pool->room, &pool->lock);
    if (pool->tail)
        pool->tail->next = j;
    else
        pool->head = j;
    pool->tail = j;
    pool->queued++;
    pool->pending++;
    pthread_cond_signal(&pool->more);
    pthread_mutex_unlock(&pool->lock);
}

void sw__pool_drain(sw__apply_pool *pool)
{
    if (!pool->ready)
        return;
    pthread_mutex_lock(&pool->lock);
    while (pool->pending > 0 && pool->started > 0)
        pthread_cond_wait(&pool->idle, &pool->lock);
    pthread_mutex_unlock(&pool->lock);
}
