/* Which examples a worker's mini-batches hold, in a seeded order, from its shard or from the
 * whole training set (syncwise/data.h). Dense batches copy these rows (batch.c); sparse models
 * read them in place.
 *
 * Shards are a fixed random partition of the examples (one permutation from the shard stream,
 * dealt round-robin by rank), so they are disjoint and balanced whatever the data's order on
 * disk. Each worker reshuffles its examples every epoch from its own stream.
 *
 * The permutation is one for every rank of a run: the last one made is kept while a sampler
 * made from it lives, so that a simulator setting up thousands of workers shuffles the set
 * once rather than once a worker (100,000 workers on 400,000 examples took a quarter of an hour
 * to set up). It costs 4 bytes an example while the samplers live: one copy for a simulator's
 * thousands of workers, and for a worker process next to nothing beside the examples it holds.
 */
#include <pthread.h>
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
    bool holds_deal; /* one of the kept permutation's holders */
};

/* The kept permutation of n examples from seed's shard stream, and how many samplers hold it
 * (freed when the last lets go). */
static struct {
    pthread_mutex_t lock;
    uint32_t *perm;
    size_t n;
    uint64_t seed;
    size_t holders;
} dealt = {.lock = PTHREAD_MUTEX_INITIALIZER};

static uint32_t *shuffled(size_t n, uint64_t seed)
{
    uint32_t *all = malloc(n * sizeof *all);
    if (!all)
        return NULL;
    for (size_t i = 0; i < n; i++)
        all[i] = (uint32_t)i;
    sw_rng shard;
    sw_rng_seed(&shard, seed, SW_STREAM_SHARD);
    sw_rng_shuffle(&shard, all, n);
    return all;
}

/* s's share (every n_ranks-th example of the run's permutation from rank) copied into
 * s->order; the permutation made, or the kept one taken, and held by s. */
static int deal_share(sw_sampler *s, size_t n, uint32_t rank, uint32_t n_ranks, uint64_t seed)
{
    size_t k = rank < n ? (n - rank + n_ranks - 1) / n_ranks : 0;
    pthread_mutex_lock(&dealt.lock);
    if (!dealt.perm || dealt.n != n || dealt.seed != seed) {
        uint32_t *perm = dealt.holders ? NULL : shuffled(n, seed); /* one kept at a time */
        if (perm) {
            free(dealt.perm);
            dealt.perm = perm;
            dealt.n = n;
            dealt.seed = seed;
        }
    }
    bool kept = dealt.perm && dealt.n == n && dealt.seed == seed;
    const uint32_t *perm = kept ? dealt.perm : NULL;
    uint32_t *own = kept ? NULL : shuffled(n, seed); /* another run's is held */
    s->order = malloc((k ? k : 1) * sizeof *s->order);
    if (s->order && (perm || own))
        for (size_t i = rank, j = 0; i < n; i += n_ranks)
            s->order[j++] = (perm ? perm : own)[i];
    bool ok = s->order && (perm || own);
    if (ok && kept) {
        dealt.holders++;
        s->holds_deal = true;
    }
    pthread_mutex_unlock(&dealt.lock);
    free(own);
    s->n_order = k;
    return ok ? 0 : -1;
}

static void let_go_of_deal(sw_sampler *s)
{
    if (!s->holds_deal)
        return;
    pthread_mutex_lock(&dealt.lock);
    if (--dealt.holders == 0) {
        free(dealt.perm);
        dealt.perm = NULL;
    }
    pthread_mutex_unlock(&dealt.lock);
}

static int fill_order(sw_sampler *s, size_t n, sw_batch_mode mode, uint32_t rank,
                      uint32_t n_ranks, uint64_t seed, char *err)
{
    if (mode != SW_BATCH_SAMPLE) {
        if (deal_share(s, n, rank, n_ranks, seed))
            return sw_fail(err, SW_ENOMEM, "out of memory for a batch order");
        if (s->n_order == 0)
            return sw_fail(err, SW_EINVAL, "shard %u of %u is empty: only %zu training examples",
                           rank, n_ranks, n);
        return 0;
    }
    uint32_t *all = malloc(n * sizeof *all);
    if (!all)
        return sw_fail(err, SW_ENOMEM, "out of memory for a batch order");
    for (size_t i = 0; i < n; i++)
        all[i] = (uint32_t)i;
    s->order = all;
    s->n_order = n;
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
    let_go_of_deal(s);
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
