/* The placement rule of parameters over shards (syncwise/placement.h). */
#include "syncwise/placement.h"

size_t sw_chunk_floats(size_t n_params, size_t chunk_floats, uint32_t n_shards)
{
    size_t chunk = chunk_floats ? chunk_floats : SW_CHUNK_FLOATS;
    size_t even = n_params / n_shards; /* so that every shard gets a chunk */
    return chunk > even ? even : chunk;
}

uint32_t sw_chunk_count(size_t n_params, size_t chunk)
{
    return (uint32_t)((n_params + chunk - 1) / chunk);
}

uint32_t sw_chunk_first(uint32_t n_chunks, uint32_t n_shards, uint32_t shard)
{
    return (uint32_t)((uint64_t)n_chunks * shard / n_shards); /* balanced to within one chunk */
}
