/* The chunk table (syncwise/shard.h): which shard holds which parameters; and the list of
 * the shards' endpoints. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kv_text.h"
#include "syncwise/err.h"
#include "syncwise/shard.h"

int sw_chunk_table_init(sw_chunk_table *t, size_t n_params, size_t chunk_floats,
                        uint32_t n_shards, char *err)
{
    if (!n_params || !n_shards || n_shards > SW_SHARDS_MAX || n_shards > n_params)
        return sw_fail(err, SW_EINVAL,
                       "cannot cut %zu parameters over %u shards (1 to %d, at most one per "
                       "parameter)",
                       n_params, n_shards, SW_SHARDS_MAX);
    size_t chunk = sw_chunk_floats(n_params, chunk_floats, n_shards);
    if (!sw_chunk_count_fits(n_params, chunk))
        return sw_fail(err, SW_EINVAL, "chunks of %zu floats cut %zu parameters into more than "
                       "2^32 - 1 chunks: take larger chunks", chunk, n_params);
    memset(t, 0, sizeof *t);
    t->n_params = n_params;
    t->chunk = chunk;
    t->n_chunks = sw_chunk_count(n_params, t->chunk);
    t->n_shards = n_shards;
    for (uint32_t j = 0; j <= n_shards; j++)
        t->first[j] = sw_chunk_first(t->n_chunks, n_shards, j);
    return 0;
}

size_t sw_chunk_slice_at(const sw_chunk_table *t, uint32_t shard)
{
    return (size_t)t->first[shard] * t->chunk;
}

size_t sw_chunk_slice_len(const sw_chunk_table *t, uint32_t shard)
{
    size_t end = (size_t)t->first[shard + 1] * t->chunk;
    return (end < t->n_params ? end : t->n_params) - sw_chunk_slice_at(t, shard);
}

uint32_t sw_chunk_shard_of(const sw_chunk_table *t, size_t i)
{
    uint32_t c = (uint32_t)(i / t->chunk), lo = 0, hi = t->n_shards - 1;
    while (lo < hi) { /* the last shard whose first chunk is at or before c */
        uint32_t mid = (lo + hi + 1) / 2;
        if (t->first[mid] <= c)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

int sw_chunk_table_format(const sw_chunk_table *t, char *out, size_t cap)
{
    int len = snprintf(out, cap, "chunk=%zu\nfirst=", t->chunk);
    for (uint32_t j = 0; j < t->n_shards && len >= 0 && (size_t)len < cap; j++)
        len += snprintf(out + len, cap - (size_t)len, j ? ",%u" : "%u", t->first[j]);
    if (len >= 0 && (size_t)len < cap)
        len += snprintf(out + len, cap - (size_t)len, "\n");
    return len >= 0 && (size_t)len < cap ? len : -1;
}

/* The shards' first chunks, "F0,F1,..." up to the end of the line: each strictly after the one
 * before (every shard holds a chunk), the first 0, all below n_chunks. */
static int parse_firsts(sw_chunk_table *t, const char *at, char *err)
{
    for (uint32_t j = 0; j < t->n_shards; j++) {
        char *end;
        unsigned long v = strtoul(at, &end, 10);
        if (end == at || (j == 0 && v != 0) || (j > 0 && v <= t->first[j - 1]) ||
            v >= t->n_chunks)
            return sw_fail(err, SW_EFORMAT,
                           "chunk table: shard %u's first chunk is missing or out of order "
                           "(each shard holds at least one of %u chunks, in order)",
                           j, t->n_chunks);
        t->first[j] = (uint32_t)v;
        if (*end != (j + 1 < t->n_shards ? ',' : '\n') && !(j + 1 == t->n_shards && !*end))
            return sw_fail(err, SW_EFORMAT, "chunk table: %u shards expected", t->n_shards);
        at = end + 1;
    }
    t->first[t->n_shards] = t->n_chunks;
    return 0;
}

int sw_chunk_table_parse(sw_chunk_table *t, const char *text, size_t n_params, uint32_t n_shards,
                         char *err)
{
    const char *chunk = sw__text_value(text, "chunk"), *first = sw__text_value(text, "first");
    if (!chunk || !first)
        return sw_fail(err, SW_EFORMAT, "chunk table: no chunk= or first= line");
    char *end;
    unsigned long long c = strtoull(chunk, &end, 10);
    if (end == chunk || c == 0 || c > n_params || !sw_chunk_count_fits(n_params, (size_t)c) ||
        !n_shards || n_shards > SW_SHARDS_MAX)
        return sw_fail(err, SW_EFORMAT, "chunk table: chunks of %llu floats for %zu parameters "
                                        "over %u shards",
                       c, n_params, n_shards);
    memset(t, 0, sizeof *t);
    t->n_params = n_params;
    t->chunk = (size_t)c;
    t->n_chunks = (uint32_t)((n_params + c - 1) / c);
    t->n_shards = n_shards;
    return parse_firsts(t, first, err);
}

int sw_shard_list_parse(const char *list, char (*eps)[SW_SHARD_EP_LEN], uint32_t *n, char *err)
{
    *n = 0;
    for (const char *at = list;; at++) {
        size_t len = strcspn(at, ",\n");
        /* what is wrong first: a long list's text would be cut where it is kept */
        if (*n == SW_SHARDS_MAX)
            return sw_fail(err, SW_EINVAL, "a shard list names at most %d shards", SW_SHARDS_MAX);
        if (len == 0)
            return sw_fail(err, SW_EINVAL, "shard list entry %u is empty (endpoints are separated "
                           "by single commas): '%.*s'", *n + 1, (int)strcspn(list, "\n"), list);
        if (len >= SW_SHARD_EP_LEN)
            return sw_fail(err, SW_EINVAL, "shard list entry %u has %zu characters, at most %d: "
                           "'%.40s...'", *n + 1, len, SW_SHARD_EP_LEN - 1, at);
        memcpy(eps[*n], at, len);
        eps[*n][len] = '\0';
        for (uint32_t k = 0; k < *n; k++) /* two shards at one place would be one shard */
            if (!strcmp(eps[k], eps[*n]))
                return sw_fail(err, SW_EINVAL, "the shard list names %s twice (shards %u and %u)",
                               eps[k], k, *n);
        (*n)++;
        at += len;
        if (*at != ',')
            return 0;
    }
}
