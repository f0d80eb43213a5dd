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

int sw_batcher_new(sw_batcher **out, const sw_dataset *ds, size_t batch, sw_batch_mode mode,
                   uint32_t rank, uint32_t n_ranks, uint64_t seed, char *err)
{
    *out = NULL;
    sw_batcher *b = calloc(1, sizeof *b);
    if (!b)
        return sw_fail(err, SW_ENOMEM, "out of memory for a batcher");
    b->ds = ds;
    int rc = sw_sampler_new(&b->sampler, ds->n, batch, mode, rank, n_ranks, seed, err);
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
    *out = b;
    return 0;
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
