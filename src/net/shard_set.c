/* Sets of shards on the wire (shard_set.h). */
#include "shard_set.h"

sw_shard_set sw_shard_set_all(uint32_t n)
{
    sw_shard_set s = {{0}};
    for (uint32_t k = 0; k < n / 64; k++)
        s.w[k] = UINT64_MAX;
    if (n % 64)
        s.w[n / 64] = (1ULL << (n % 64)) - 1;
    return s;
}

void sw_shard_set_put(uint8_t *at, const sw_shard_set *s, uint32_t n)
{
    for (size_t k = 0; k < sw_shard_set_bytes(n) / 8; k++)
        sw_put_u64(at + 8 * k, s->w[k]);
}

bool sw_shard_set_get(const uint8_t *at, uint32_t n, sw_shard_set *s)
{
    *s = (sw_shard_set){{0}};
    size_t words = sw_shard_set_bytes(n) / 8;
    if (words > SW_SHARD_SET_WORDS)
        return false;
    for (size_t k = 0; k < words; k++)
        s->w[k] = sw_get_u64(at + 8 * k);
    sw_shard_set all = sw_shard_set_all(n);
    for (size_t k = 0; k < words; k++)
        if (s->w[k] & ~all.w[k])
            return false;
    return true;
}

void sw_shard_entry_put(uint8_t *at, uint32_t worker, uint64_t token, uint64_t seq,
                        const sw_shard_set *to, uint32_t n)
{
    sw_put_u32(at, worker);
    sw_put_u64(at + 4, token);
    sw_put_u64(at + 12, seq);
    sw_shard_set_put(at + 20, to, n);
}
