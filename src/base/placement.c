/* The placement rule of parameters over shards (syncwise/placement.h). */
#include "syncwise/placement.h"

/* Chunks of at most SW_CHUNK_FLOATS, SW_CHUNKS_PER_SHARD a shard or more (a model of over a
 * chunk a shard). */
static size_t balanced(size_t n_params, uint32_t n_shards)
{
    /* Rounded down, so that the count rounds up: here n_params / parts is over 16384 */
    size_t chunk = n_params / ((size_t)n_shards * SW_CHUNKS_PER_SHARD) / 16 * 16;
    return chunk < SW_CHUNK_FLOATS ? chunk : SW_CHUNK_FLOATS;
}

size_t sw_chunk_floats(size_t n_params, size_t chunk_floats, uint32_t n_shards)
{
    size_t even = n_params / n_shards; /* so that every shard gets a chunk */
    if (!chunk_floats && even <= SW_CHUNK_FLOATS)
        return even; /* a chunk a shard, the last with the few floats over */
    size_t chunk = chunk_floats ? chunk_floats : balanced(n_params, n_shards);
    return chunk > even ? even : chunk;
}

uint32_t sw_chunk_count(size_t n_params, size_t chunk)
{
    return (uint32_t)((n_params + chunk - 1) / chunk);
}

bool sw_chunk_count_fits(size_t n_params, size_t chunk)
{
    return (n_params - 1) / chunk < UINT32_MAX;
}

uint32_t sw_chunk_first(uint32_t n_chunks, uint32_t n_shards, uint32_t shard)
{
    return (uint32_t)((uint64_t)n_chunks * shard / n_shards); /* balanced to within one chunk */
}
