/* Concurrent applies in the server (see apply_pool.h). Each thread checks a frame as the main
 * thread would (its checksum, the dimension or the pairs, finiteness); a bad gradient is counted
 * as refused, but its sender is not told, since asp released it already. */
#define _POSIX_C_SOURCE 200809L
#include "apply_pool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "syncwise/err.h"
#include "syncwise/proto.h"

typedef struct worker_arg {
    sw__apply_pool *pool;
} worker_arg;

/* One frame: 0 when applied, -1 when refused. idx/val/dense are the thread's own buffers. */
static int apply_frame(sw__apply_pool *pool, zmq_msg_t *f, uint32_t *idx, float *val, float *dense)
{
    sw_msg m;
    size_t nnz;
    if (sw_msg_decode(zmq_msg_data(f), zmq_msg_size(f), 8 * (uint64_t)pool->n + 8192, &m, NULL))
        return -1;
    if (m.type == SW_MSG_PUSH_SPARSE) {
        if (sw_msg_get_pairs(&m, (uint32_t)pool->n, idx, val, pool->n, &nnz, NULL))
            return -1;
        sw_shared_apply_sparse(pool->params, idx, val, nnz, pool->lr);
        return 0;
    }
    char why[SW_ERR_LEN] = "";
    const float *g = sw_msg_floats_in_place(&m, pool->n, why);
    if (!g && !why[0] && sw_msg_get_floats(&m, dense, pool->n, NULL) == 0)
        g = dense;
    if (!g)
        return -1;
    sw_shared_apply_dense(pool->params, g, pool->lr);
    return 0;
}

static void *apply_thread(void *arg)
{
    sw__apply_pool *pool = arg;
    void *in = zmq_socket(pool->zctx, ZMQ_PULL);
    uint32_t *idx = malloc(pool->n * sizeof *idx);
    float *val = malloc(pool->n * sizeof *val), *dense = malloc(pool->n * sizeof *dense);
    if (in && idx && val && dense && zmq_connect(in, pool->endpoint) == 0)
        for (;;) {
            zmq_msg_t f;
            zmq_msg_init(&f);
            if (zmq_msg_recv(&f, in, 0) < 0 || zmq_msg_size(&f) == 0) { /* empty: stop */
                zmq_msg_close(&f);
                break;
            }
            if (apply_frame(pool, &f, idx, val, dense) == 0)
                atomic_fetch_add(&pool->applied, 1);
            else
                atomic_fetch_add(&pool->refused, 1);
            zmq_msg_close(&f);
        }
    free(idx);
    free(val);
    free(dense);
    if (in)
        zmq_close(in);
    return NULL;
}

int sw__pool_start(sw__apply_pool *pool, void *zctx, size_t n, const float *init, float lr,
                   uint32_t threads, sw_apply_mode mode, char *err)
{
    memset(pool, 0, sizeof *pool);
    pool->zctx = zctx;
    pool->n = n;
    pool->lr = lr;
    pool->n_threads = threads;
    atomic_init(&pool->applied, 0);
    atomic_init(&pool->refused, 0);
    snprintf(pool->endpoint, sizeof pool->endpoint, "inproc://sw-apply-%p", (void *)pool);
    int rc = sw_shared_new(&pool->params, n, init, mode, err);
    if (rc)
        return rc;
    pool->snapshot = malloc((n ? n : 1) * sizeof *pool->snapshot);
    pool->threads = calloc(threads, sizeof *pool->threads);
    pool->feed = zmq_socket(zctx, ZMQ_PUSH);
    if (!pool->snapshot || !pool->threads || !pool->feed || zmq_bind(pool->feed, pool->endpoint))
        return sw_fail(err, SW_ENOMEM, "cannot start %u apply threads", threads);
    for (; pool->started < threads; pool->started++)
        if (pthread_create(&pool->threads[pool->started], NULL, apply_thread, pool) != 0)
            return sw_fail(err, SW_ENOMEM, "cannot start apply thread %u", pool->started);
    return 0;
}

void sw__pool_stop(sw__apply_pool *pool)
{
    for (uint32_t t = 0; t < pool->started; t++)
        zmq_send(pool->feed, "", 0, 0); /* round-robin: one stop each, after their frames */
    for (uint32_t t = 0; t < pool->started; t++)
        pthread_join(pool->threads[t], NULL);
    if (pool->feed)
        zmq_close(pool->feed);
    sw_shared_free(pool->params);
    free(pool->snapshot);
    free(pool->threads);
    memset(pool, 0, sizeof *pool);
}

void sw__pool_feed(sw__apply_pool *pool, zmq_msg_t *frame)
{
    zmq_msg_t copy;
    zmq_msg_init(&copy);
    zmq_msg_copy(&copy, frame);
    if (zmq_msg_send(&copy, pool->feed, 0) < 0) {
        zmq_msg_close(&copy);
        atomic_fetch_add(&pool->refused, 1);
    }
}

const float *sw__pool_snapshot(sw__apply_pool *pool)
{
    sw_shared_read(pool->params, pool->snapshot);
    return pool->snapshot;
}

void sw__pool_gather(sw__apply_pool *pool, const uint32_t *idx, size_t k, float *out)
{
    sw_shared_gather(pool->params, idx, k, out);
}
