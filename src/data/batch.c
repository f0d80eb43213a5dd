/* Dense mini-batches: the examples a sampler picks (sampler.c), copied into one contiguous
 * batch, as the models read them. */
#include <stdlib.h>
#include <string.h>

#include "syncwise/data.h"
#include "syncwise/err.h"

struct sw_batcher {
    const sw_dataset *ds;
    sw_sampler *sampler;
    float *x;
    int32_t *label;
    float *target;
};

/* A batcher of ds around `sampler` (taken, freed on failure), or the sampler's failure rc. */
static int around(sw_batcher **out, const sw_dataset *ds, sw_sampler *sampler, size_t batch,
                  int rc, char *err)
{
    *out = NULL;
    if (rc)
        return rc;
    sw_batcher *b = calloc(1, sizeof *b);
    if (!b) {
        sw_sampler_free(sampler);
        return sw_fail(err, SW_ENOMEM, "out of memory for a batcher");
    }
    b->ds = ds;
    b->sampler = sampler;
    b->x = malloc(batch * ds->dim * sizeof *b->x);
    if (ds->label)
        b->label = malloc(batch * sizeof *b->label);
    else
        b->target = malloc(batch * sizeof *b->target);
    if (!b->x || (!b->label && !b->target)) {
        sw_batcher_free(b);
        return sw_fail(err, SW_ENOMEM, "out of memory for a batch of %zu", batch);
    }
    *out = b;
    return 0;
}

int sw_batcher_new(sw_batcher **out, const sw_dataset *ds, size_t batch, sw_batch_mode mode,
                   uint32_t rank, uint32_t n_ranks, uint64_t seed, char *err)
{
    sw_sampler *s;
    int rc = sw_sampler_new(&s, ds->n, batch, mode, rank, n_ranks, seed, err);
    return around(out, ds, s, batch, rc, err);
}

int sw_batcher_new_dealt(sw_batcher **out, const sw_dataset *ds, const sw_deal *deal,
                         size_t batch, uint32_t rank, uint32_t n_ranks, char *err)
{
    sw_sampler *s = NULL;
    int rc = sw_deal_examples(deal) == ds->n
                 ? sw_sampler_new_dealt(&s, deal, batch, rank, n_ranks, err)
                 : sw_fail(err, SW_EINVAL, "batcher: a deal of %zu examples for a set of %zu",
                           sw_deal_examples(deal), ds->n);
    return around(out, ds, s, batch, rc, err);
}

void sw_batcher_free(sw_batcher *b)
{
    if (!b)
        return;
    sw_sampler_free(b->sampler);
    free(b->x);
    free(b->label);
    free(b->target);
    free(b);
}

void sw_batcher_next(sw_batcher *b, sw_batch *out)
{
    const sw_dataset *ds = b->ds;
    const uint32_t *rows = sw_sampler_next(b->sampler);
    size_t n = sw_sampler_batch(b->sampler);
    for (size_t i = 0; i < n; i++) {
        uint32_t e = rows[i];
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
    out->n = sw_sampler_batch(b->sampler);
}

uint64_t sw_batcher_epoch(const sw_batcher *b) { return sw_sampler_epoch(b->sampler); }

size_t sw_batcher_epoch_size(const sw_batcher *b) { return sw_sampler_epoch_size(b->sampler); }
