/* A set of a run's shards, in memory and on the wire (docs/protocol.md, "Shards").
 *
 * On the wire, a set in a run of S shards is ceil(S / 64) little-endian u64 words, shard j being
 * bit j % 64 of word j / 64: one word up to 64 shards, as the protocol's first version had it,
 * so the width follows from the chunk table every party already holds and costs a run of few
 * shards nothing. An APPLY or RESTORE entry is u32 worker, u64 token, u64 sequence number, then
 * the set of shards its push went to. */
#ifndef SW_NET_SHARD_SET_H
#define SW_NET_SHARD_SET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "syncwise/bytes.h"
#include "syncwise/shard.h"

#define SW_SHARD_SET_WORDS ((SW_SHARDS_MAX + 63) / 64)

typedef struct sw_shard_set {
    uint64_t w[SW_SHARD_SET_WORDS];
} sw_shard_set;

static inline void sw_shard_set_add(sw_shard_set *s, uint32_t j)
{
    s->w[j / 64] |= 1ULL << (j % 64);
}

static inline void sw_shard_set_remove(sw_shard_set *s, uint32_t j)
{
    s->w[j / 64] &= ~(1ULL << (j % 64));
}

static inline bool sw_shard_set_has(const sw_shard_set *s, uint32_t j)
{
    return s->w[j / 64] >> (j % 64) & 1;
}

static inline bool sw_shard_set_equal(const sw_shard_set *a, const sw_shard_set *b)
{
    return memcmp(a->w, b->w, sizeof a->w) == 0;
}

static inline bool sw_shard_set_empty(const sw_shard_set *s)
{
    return sw_shard_set_equal(s, &(sw_shard_set){{0}});
}

/* Shards 0 .. n - 1, and whether s names every one of them. */
sw_shard_set sw_shard_set_all(uint32_t n);
static inline bool sw_shard_set_full(const sw_shard_set *s, uint32_t n)
{
    sw_shard_set all = sw_shard_set_all(n);
    return sw_shard_set_equal(s, &all);
}

/* The head of a shard's refusal of every order of a run it does not hold (started again
 * without --resume): the server knows that refusal by it. */
#define SW_SHARD_NO_RUN_HEAD "this shard holds no run"

/* Bytes of a set on the wire in a run of n shards, and of an APPLY or RESTORE entry. */
static inline size_t sw_shard_set_bytes(uint32_t n)
{
    return 8 * (((size_t)n + 63) / 64);
}

static inline size_t sw_shard_entry_bytes(uint32_t n)
{
    return 20 + sw_shard_set_bytes(n);
}

/* Whether a set on the wire names shard j (below the run's shards, which gave its width). */
static inline bool sw_shard_set_wire_has(const uint8_t *at, uint32_t j)
{
    return sw_get_u64(at + 8 * (size_t)(j / 64)) >> (j % 64) & 1;
}

void sw_shard_set_put(uint8_t *at, const sw_shard_set *s, uint32_t n);
/* Reads a set of a run of n shards; false when it names a shard at n or beyond. */
bool sw_shard_set_get(const uint8_t *at, uint32_t n, sw_shard_set *s);

/* An entry: its fields, and its set of shards (at 20). */
void sw_shard_entry_put(uint8_t *at, uint32_t worker, uint64_t token, uint64_t seq,
                        const sw_shard_set *to, uint32_t n);

#endif
