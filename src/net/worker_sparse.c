/* The worker's sparse path, the key-value model of classic parameter servers: after a release
 * it picks its next mini-batch of rows, pulls only the weights those rows touch
 * (PULL_SPARSE -> MODEL_SPARSE), computes the linear model's sparse gradient and pushes its
 * (index, value) pairs (PUSH_SPARSE). It reads the whole training set in its own seeded order
 * (batch_mode sample), or every slots-th row from its id (shard), reshuffled each epoch. */
#include <stdlib.h>
#include <string.h>

#include "syncwise/err.h"
#include "syncwise/rng.h"
#include "worker_internal.h"

static void shuffle_shard(worker *k)
{
    sw_rng r;
    sw_rng_seed(&r, k->cfg.seed ^ (k->epoch * 0x9e3779b97f4a7c15ULL),
                SW_STREAM_SHARD + 16 + k->cfg.worker);
    sw_rng_shuffle(&r, k->shard, k->n_shard);
    k->next_row = 0;
    k->epoch++;
}

static void next_batch(worker *k)
{
    for (uint32_t b = 0; b < k->cfg.batch; b++) {
        if (k->next_row == k->n_shard)
            shuffle_shard(k);
        k->rows[b] = k->shard[k->next_row++];
    }
}

int sw__worker_sparse_load(worker *k, char *err)
{
    const config *c = &k->cfg;
    k->sparse = true;
    if (k->loaded && k->smodel) { /* same data, another id: only the shard changes */
        free(k->shard);
        k->shard = NULL;
    } else {
        int rc = sw_sparse_load(&k->sdata, c->data, c->seed, err);
        if (!rc)
            rc = sw_sparse_model_new(&k->smodel, c->model, k->sdata.train->dim, err);
        if (rc)
            return rc;
        if (sw_sparse_model_n_params(k->smodel) != c->params)
            return sw_fail(err, SW_EMISMATCH, "the server's model has %zu parameters, ours %zu",
                           c->params, sw_sparse_model_n_params(k->smodel));
    }
    size_t n = k->sdata.train->n, cap = c->params;
    bool shard = strcmp(c->batch_mode, "shard") == 0;
    uint32_t step = shard ? c->slots : 1, first = shard ? c->worker : 0;
    k->n_shard = n / step + (first < n % step);
    k->shard = malloc((k->n_shard ? k->n_shard : 1) * sizeof *k->shard);
    free(k->rows);
    k->rows = malloc(c->batch * sizeof *k->rows);
    if (!k->loaded) {
        k->params = calloc(cap, sizeof *k->params);
        k->idx = malloc(cap * sizeof *k->idx);
        k->val = malloc(cap * sizeof *k->val);
        k->pulled = malloc(cap * sizeof *k->pulled);
        k->scratch = malloc(8 * cap);
    }
    if (!k->shard || !k->rows || !k->params || !k->idx || !k->val || !k->pulled || !k->scratch)
        return sw_fail(err, SW_ENOMEM, "out of memory for %zu parameters", cap);
    if (k->n_shard == 0)
        return sw_fail(err, SW_EINVAL, "worker %u of %u has no rows of %zu", c->worker, c->slots,
                       n);
    for (size_t i = 0; i < k->n_shard; i++)
        k->shard[i] = (uint32_t)(first + i * step);
    k->epoch = 0;
    shuffle_shard(k);
    k->loaded = true;
    return 0;
}

void sw__worker_sparse_unload(worker *k)
{
    sw_sparse_set_free(&k->sdata);
    sw_sparse_model_free(k->smodel);
    free(k->shard);
    free(k->rows);
    free(k->idx);
    free(k->val);
    free(k->pulled);
    free(k->scratch);
    k->smodel = NULL;
    k->shard = k->rows = k->idx = NULL;
    k->val = k->pulled = NULL;
    k->scratch = NULL;
    k->sparse = false;
}

/* Pulls the weights at k->idx[0..n) into k->params; the version they are of into k->version. */
static int pull(worker *k, size_t n, char *err)
{
    sw_msg_put_indices(k->scratch, k->idx, n);
    sw__worker_send(k, k->sock, SW_MSG_PULL_SPARSE, 0, k->version, k->scratch, 4 * n, NULL);
    for (;;) {
        zmq_msg_t frame;
        zmq_msg_init(&frame);
        sw_msg m;
        int rc = sw__worker_receive(k, &frame, &m, err);
        if (!rc && m.type == SW_MSG_MODEL_SPARSE) {
            if (!(rc = sw_msg_get_floats(&m, k->pulled, n, err))) {
                for (size_t i = 0; i < n; i++)
                    k->params[k->idx[i]] = k->pulled[i];
                k->version = m.version;
            }
        } else if (!rc && m.type == SW_MSG_ERROR) {
            rc = (m.flags & SW_FLAG_UNKNOWN) ? SW_ENOTFOUND
                                             : sw_fail(err, SW_ESTATE,
                                                       "the server refused our "
                                                       "pull: %.*s",
                                                       (int)m.payload_len, (const char *)m.payload);
        } else if (!rc && (m.flags & SW_FLAG_DONE)) {
            k->r->done = true; /* the run is over: the caller stops */
        } else if (!rc) {
            zmq_msg_close(&frame);
            continue; /* nothing else is meant for a running worker; ignore it */
        }
        zmq_msg_close(&frame);
        return rc;
    }
}

int sw__worker_sparse_step(worker *k, const sw_msg *rel, char *err)
{
    bool dropped = (rel->flags & SW_FLAG_DROPPED) != 0;
    if (!k->redo && !dropped)
        next_batch(k);
    k->r->drops += dropped;
    k->redo = false;
    const sw_sparse_data *d = k->sdata.train;
    size_t n = sw_sparse_touched(k->smodel, d, k->rows, k->cfg.batch, k->idx);
    int rc = pull(k, n, err);
    if (rc || k->r->done)
        return rc;
    size_t nnz =
        sw_sparse_model_grad(k->smodel, k->params, d, k->rows, k->cfg.batch, k->idx, k->val, NULL);
    sw__worker_straggle(k);
    sw_msg_put_pairs(k->scratch, k->idx, k->val, nnz);
    sw__worker_send(k, k->sock, SW_MSG_PUSH_SPARSE, 0, k->version, k->scratch, 8 * nnz, NULL);
    k->r->steps++;
    return 0;
}
