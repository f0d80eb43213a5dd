/* Which examples a worker's mini-batches hold, in a seeded order, from its shard or from the
 * whole training set (syncwise/data.h). Dense batches copy these rows (batch.c); sparse models
 * read them in place.
 *
 * Shards are a fixed random partition of the examples (one permutation from the shard stream,
 * dealt round-robin by rank), so they are disjoint and balanced whatever the data's order on
 * disk. Each worker reshuffles its examples every epoch from its own stream.
 *
 * The permutation is one for every rank of a run: a process that holds many workers (a
 * simulator's thousands) makes it once (sw_deal_new) and lends it to their samplers, rather
 * than shuffling the whole set again for each (100,000 workers on 400,000 examples took a
 * quarter of an hour to set up). A sampler keeps only its share.
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

struct sw_deal {
    size_t n;
    uint64_t seed;
    uint32_t *perm; /* the n examples in the shard stream's order */
};

int sw_deal_new(sw_deal **out, size_t n, uint64_t seed, char *err)
{
    *out = NULL;
    if (n == 0 || n > UINT32_MAX)
        return sw_fail(err, SW_EINVAL, "batcher: %zu examples (1 to 2^32)", n);
    sw_deal *d = calloc(1, sizeof *d);
    if (!d || !(d->perm = malloc(n * sizeof *d->perm))) {
        free(d);
        return sw_fail(err, SW_ENOMEM, "out of memory for an order of %zu examples", n);
    }
    d->n = n;
    d->seed = seed;
    for (size_t i = 0; i < n; i++)
        d->perm[i] = (uint32_t)i;
    sw_rng shard;
    sw_rng_seed(&shard, seed, SW_STREAM_SHARD);
    sw_rng_shuffle(&shard, d->perm, n);
    *out = d;
    return 0;
}

size_t sw_deal_examples(const sw_deal *d) { return d->n; }

void sw_deal_free(sw_deal *d)
{
    if (d)
        free(d->perm);
    free(d);
}

/* s's share: every n_ranks-th example of the deal from rank. */
static int take_share(sw_sampler *s, const sw_deal *d, uint32_t rank, uint32_t n_ranks,
                      char *err)
{
    size_t k = rank < d->n ? (d->n - rank + n_ranks - 1) / n_ranks : 0;
    if (k == 0)
        return sw_fail(err, SW_EINVAL, "shard %u of %u is empty: only %zu training examples",
                       rank, n_ranks, d->n);
    if (!(s->order = malloc(k * sizeof *s->order)))
        return sw_fail(err, SW_ENOMEM, "out of memory for a batch order");
    for (size_t i = rank, j = 0; i < d->n; i += n_ranks)
        s->order[j++] = d->perm[i];
    s->n_order = k;
    return 0;
}

/* The whole set, in index order (shuffled by the caller). */
static int take_all(sw_sampler *s, size_t n, char *err)
{
    if (!(s->order = malloc(n * sizeof *s->order)))
        return sw_fail(err, SW_ENOMEM, "out of memory for a batch order");
    for (size_t i = 0; i < n; i++)
        s->order[i] = (uint32_t)i;
    s->n_order = n;
    return 0;
}

/* A sampler of rank's share of `deal`, or (deal NULL) of the whole set of n examples; its own
 * order shuffled from seed's stream of its rank. */
static int make(sw_sampler **out, const sw_deal *deal, size_t n, size_t batch, uint32_t rank,
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
    int rc = deal ? take_share(s, deal, rank, n_ranks, err) : take_all(s, n, err);
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

int sw_sampler_new_dealt(sw_sampler **out, const sw_deal *deal, size_t batch, uint32_t rank,
                         uint32_t n_ranks, char *err)
{
    return make(out, deal, deal->n, batch, rank, n_ranks, deal->seed, err);
}

int sw_sampler_new(sw_sampler **out, size_t n, size_t batch, sw_batch_mode mode, uint32_t rank,
                   uint32_t n_ranks, uint64_t seed, char *err)
{
    *out = NULL;
    if (mode == SW_BATCH_SAMPLE || n == 0 || n > UINT32_MAX)
        return make(out, NULL, n, batch, rank, n_ranks, seed, err);
    sw_deal *d;
    int rc = sw_deal_new(&d, n, seed, err);
    if (!rc)
        rc = sw_sampler_new_dealt(out, d, batch, rank, n_ranks, err);
    sw_deal_free(d);
    return rc;
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
