/* A sharded run's part of `ctl status` (server_shards.h): the chunk table's balance, the
 * common checkpoint and its restores, and each shard as it last said of itself. */
#include <stdio.h>

#include "kv_text.h"
#include "server_internal.h"

/* The largest of n figures over their mean (1: balanced). */
static double skew(const double *x, uint32_t n)
{
    double sum = 0, top = 0;
    for (uint32_t j = 0; j < n; j++) {
        sum += x[j];
        top = x[j] > top ? x[j] : top;
    }
    return sum > 0 ? top * n / sum : 1;
}

/* A checkpoint's version, or "none" before the first. */
static const char *version_or_none(char *out, uint64_t version)
{
    if (version == SW_SHARD_NONE)
        return "none";
    snprintf(out, 24, "%llu", (unsigned long long)version);
    return out;
}

int sw__shards_status(const server *s, char *text, size_t cap, int len)
{
    const sw__shards *h = &s->shards;
    const sw_chunk_table *t = &h->table;
    char saved[24];
    double params[SW_SHARDS_MAX], bytes[SW_SHARDS_MAX], now = sw__server_now(s);
    for (uint32_t j = 0; j < h->n; j++) {
        params[j] = (double)sw_chunk_slice_len(t, j);
        bytes[j] = (double)(h->seen[j].bytes_in + h->seen[j].bytes_out);
    }
    len = sw__text_append(text, cap, len,
                          "shards %u: %u chunk%s of %zu float%s; skew (the largest over the "
                          "mean) %.2f in parameters, %.2f in bytes moved (each since the shard "
                          "started)\n",
                          h->n, t->n_chunks, t->n_chunks == 1 ? "" : "s", t->chunk,
                          t->chunk == 1 ? "" : "s",
                          skew(params, h->n), skew(bytes, h->n));
    if (h->saved != SW_SHARD_NONE || h->restores)
        len = sw__text_append(text, cap, len,
                              "  checkpoint: every shard holds version %s; %llu restore%s "
                              "undid %llu applies\n",
                              version_or_none(saved, h->saved),
                              (unsigned long long)h->restores, h->restores == 1 ? "" : "s",
                              (unsigned long long)h->lost_applies);
    if (h->waited)
        len = sw__text_append(text, cap, len,
                              "  norms: %llu pushes waited for the last apply's (the policy "
                              "reads them)\n", (unsigned long long)h->waited);
    if (h->waited_gather)
        len = sw__text_append(text, cap, len,
                              "  gathers: %llu pushes waited for an evaluation's gather of the "
                              "slices\n", (unsigned long long)h->waited_gather);
    for (uint32_t j = 0; j < h->n; j++) {
        const sw__shard_seen *v = &h->seen[j];
        len = sw__text_append(text, cap, len,
                              "  shard %u  %-24s params [%zu, %zu)  chunks %u  version %llu  "
                              "checkpoint %s  restores %llu  in %.1f MB  out %.1f MB  refused "
                              "%llu  heard %.1f s ago%s\n",
                              j, h->eps[j], sw_chunk_slice_at(t, j),
                              sw_chunk_slice_at(t, j) + sw_chunk_slice_len(t, j),
                              t->first[j + 1] - t->first[j], (unsigned long long)v->version,
                              version_or_none(saved, v->saved),
                              (unsigned long long)v->restores,
                              (double)v->bytes_in / 1e6, (double)v->bytes_out / 1e6,
                              (unsigned long long)v->refused, now - v->heard,
                              v->awaiting              ? "  (resumed: being restored)"
                              : sw__shards_out(s, j)   ? "  (not answering: the workers wait)"
                                                       : "");
    }
    return len;
}
