/* Mini-batches in a seeded order, from a worker's shard or from the whole training set.
 *
 * Shards are a fixed random partition of the examples (one permutation from the shard stream,
 * dealt round-robin by rank), so they are disjoint and balanced whatever the data's order on
 * disk. Each worker reshuffles its examples every epoch from its own stream.
 */
#include <stdlib.h>
#include <string.h>

#include "syncwise/data.h"
#include "syncwise/err.h"

struct sw_batcher {
    const sw_dataset *ds;
    size_t batch;
    uint32_t *order; /* this worker's examples, in this epoch's order */
    size_t n_order, pos;
    uint64_t epoch;
    sw_rng rng;
    float *x;
    int32_t *label;
    float *target;
};

static int fill_order(sw_batcher *b, sw_batch_mode mode, uint32_t rank, uint32_t n_ranks,
                      uint64_t seed, char *err)
{
    size_t n = b->ds->n;
    uint32_t *all = malloc(n * sizeof *all);
    if (!all)
        return sw_fail(err, SW_ENOMEM, "out of memory for a batch order");
    for (size_t i = 0; i < n; i++)
        all[i] = (uint32_t)i;
    if (mode == SW_BATCH_SAMPLE) {
        b->order = all;
        b->n_order = n;
        return 0;
    }
    sw_rng shard;
    sw_rng_seed(&shard, seed, SW_STREAM_SHARD);
    sw_rng_shuffle(&shard, all, n);
    size_t k = 0;
    for (size_t i = rank; i < n; i += n_ranks)
        all[k++] = all[i]; /* i >= k always, so this compacts in place */
    b->order = all;
    b->n_order = k;
    if (k == 0)
        return sw_fail(err, SW_EINVAL, "shard %u of %u is empty: only %zu training examples",
                       rank, n_ranks, n);
    return 0;
}

int sw_batcher_new(sw_batcher **out, const sw_dataset *ds, size_t batch, sw_batch_mode mode,
                   uint32_t rank, uint32_t n_ranks, uint64_t seed, char *err)
{
    *out = NULL;
    if (batch == 0 || n_ranks == 0 || rank >= n_ranks)
        return sw_fail(err, SW_EINVAL, "batcher: batch %zu, rank %u of %u is not valid", batch,
                       rank, n_ranks);
    if (ds->n == 0)
        return sw_fail(err, SW_EINVAL, "batcher: the data set is empty");
    sw_batcher *b = calloc(1, sizeof *b);
    if (!b)
        return sw_fail(err, SW_ENOMEM, "out of memory for a batcher");
    b->ds = ds;
    b->batch = batch;
    int rc = fill_order(b, mode, rank, n_ranks, seed, err);
    if (!rc) {
        b->x = malloc(batch * ds->dim * sizeof *b->x);
        if (ds->label)
            b->label = malloc(batch * sizeof *b->label);
        else
            b->target = malloc(batch * sizeof *b->target);
        if (!b->x || (!b->label && !b->target))
            rc = sw_fail(err, SW_ENOMEM, "out of memory for a batch of %zu", batch);
    }
    if (rc) {
        sw_batcher_free(b);
        return rc;
    }
    sw_rng_seed(&b->rng, seed, SW_STREAM_BATCH + rank);
    sw_rng_shuffle(&b->rng, b->order, b->n_order);
    *out = b;
    return 0;
}

void sw_batcher_free(sw_batcher *b)
{
    if (!b)
        return;
    free(b->order);
    free(b->x);
    free(b->label);
    free(b->target);
    free(b);
}

void sw_batcher_next(sw_batcher *b, sw_batch *out)
{
    const sw_dataset *ds = b->ds;
    for (size_t i = 0; i < b->batch; i++) {
        uint32_t e = b->order[b->pos++];
        if (b->pos == b->n_order) { /* a pass is complete: count it and start the next */
            sw_rng_shuffle(&b->rng, b->order, b->n_order);
            b->pos = 0;
            b->epoch++;
        }
        memcpy(b->x + i * ds->dim, ds->x + (size_t)e * ds->dim, ds->dim * sizeof *b->x);
        if (b->label)
            b->label[i] = ds->label[e];
        else
            b->target[i] = ds->target[e];
    }
    sw_batcher_current(b, out);
}

void sw_batcher_current(const sw_batcher *b, sw_batch *out)
{
    out->x = b->x;
    out->label = b->label;
    out->target = b->target;
    out->n = b->batch;
}

uint64_t sw_batcher_epoch(const sw_batcher *b) { return b->epoch; }

size_t sw_batcher_epoch_size(const sw_batcher *b) { return b->n_order; }
