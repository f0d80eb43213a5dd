/* Which examples a worker's mini-batches hold, in a seeded order, from its shard or from the
 * whole training set (syncwise/data.h). Dense batches copy these rows (batch.c); sparse models
 * read them in place.
 *
 * Shards are a fixed random partition of the examples (one permutation from the shard stream,
 * dealt round-robin by rank), so they are disjoint and balanced whatever the data's order on
 * disk. Each worker reshuffles its examples every epoch from its own stream.
 */
#include <stdlib.h>

#include "syncwise/data.h"
#include "syncwise/err.h"

struct sw_sampler {
    size_t batch;
    uint32_t *order; /* this worker's examples, in this epoch's order */
    size_t n_order, pos;
    uint64_t epoch;
    sw_rng rng;
    uint32_t *rows; /* the current batch */
};

static int fill_order(sw_sampler *s, size_t n, sw_batch_mode mode, uint32_t rank,
                      uint32_t n_ranks, uint64_t seed, char *err)
{
    uint32_t *all = malloc(n * sizeof *all);
    if (!all)
        return sw_fail(err, SW_ENOMEM, "out of memory for a batch order");
    for (size_t i = 0; i < n; i++)
        all[i] = (uint32_t)i;
    s->order = all;
    s->n_order = n;
    if (mode == SW_BATCH_SAMPLE)
        return 0;
    sw_rng shard;
    sw_rng_seed(&shard, seed, SW_STREAM_SHARD);
    sw_rng_shuffle(&shard, all, n);
    size_t k = 0;
    for (size_t i = rank; i < n; i += n_ranks)
        all[k++] = all[i]; /* i >= k always, so this compacts in place */
    s->n_order = k;
    if (k == 0)
        return sw_fail(err, SW_EINVAL, "shard %u of %u is empty: only %zu training examples",
                       rank, n_ranks, n);
    uint32_t *mine = realloc(all, k * sizeof *all); /* its share only: a simulator holds one */
    if (mine)                                       /* per worker, of thousands */
        s->order = mine;
    return 0;
}

int sw_sampler_new(sw_sampler **out, size_t n, size_t batch, sw_batch_mode mode, uint32_t rank,
                   uint32_t n_ranks, uint64_t seed, char *err)
{
    *out = NULL;
    if (batch == 0 || n_ranks == 0 || rank >= n_ranks)
        return sw_fail(err, SW_EINVAL, "batcher: batch %zu, rank %u of %u is not valid", batch,
                       rank, n_ranks);
    if (n == 0)
        return sw_fail(err, SW_EINVAL, "batcher: the data set is empty");
    if (n > UINT32_MAX)
        return sw_fail(err, SW_EINVAL, "batcher: %zu examples, more than 2^32", n);
    sw_sampler *s = calloc(1, sizeof *s);
    if (!s)
        return sw_fail(err, SW_ENOMEM, "out of memory for a batcher");
    s->batch = batch;
    int rc = fill_order(s, n, mode, rank, n_ranks, seed, err);
    if (!rc && !(s->rows = malloc(batch * sizeof *s->rows)))
        rc = sw_fail(err, SW_ENOMEM, "out of memory for a batch of %zu", batch);
    if (rc) {
        sw_sampler_free(s);
        return rc;
    }
    sw_rng_seed(&s->rng, seed, SW_STREAM_BATCH + rank);
    sw_rng_shuffle(&s->rng, s->order, s->n_order);
    *out = s;
    return 0;
}

void sw_sampler_free(sw_sampler *s)
{
    if (!s)
        return;
    free(s->order);
    free(s->rows);
    free(s);
}

const uint32_t *sw_sampler_next(sw_sampler *s)
{
    for (size_t i = 0; i < s->batch; i++) {
        s->rows[i] = s->order[s->pos++];
        if (s->pos == s->n_order) { /* a pass is complete: count it and start the next */
            sw_rng_shuffle(&s->rng, s->order, s->n_order);
            s->pos = 0;
            s->epoch++;
        }
    }
    return s->rows;
}

const uint32_t *sw_sampler_current(const sw_sampler *s) { return s->rows; }

size_t sw_sampler_batch(const sw_sampler *s) { return s->batch; }

uint64_t sw_sampler_epoch(const sw_sampler *s) { return s->epoch; }

size_t sw_sampler_epoch_size(const sw_sampler *s) { return s->n_order; }
