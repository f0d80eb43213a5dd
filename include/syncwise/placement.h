/* Where the parameters live when several processes hold them: n floats cut into chunks of at
 * most SW_CHUNK_FLOATS (fewer when the model is too small for one per shard), and shard j holding
 * a contiguous run of chunks, the runs balanced to within one chunk. The rule alone, for any
 * number of shards: the shards' chunk table (syncwise/shard.h) is built on it, and the
 * simulator's model of a sharded server (`sim --net shards=S`) places parameters by it.
 */
#ifndef SYNCWISE_PLACEMENT_H
#define SYNCWISE_PLACEMENT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SW_CHUNK_FLOATS 262144 /* 1 MiB of floats */

/* The floats per chunk of n_params over n_shards (n_params >= n_shards >= 1) when the caller
 * asks for chunk_floats (0: SW_CHUNK_FLOATS): that, or less so that every shard gets one. */
size_t sw_chunk_floats(size_t n_params, size_t chunk_floats, uint32_t n_shards);
/* How many chunks of `chunk` floats cover n_params (the last may be shorter). */
uint32_t sw_chunk_count(size_t n_params, size_t chunk);
/* The first chunk of shard j (0 <= j <= n_shards; j == n_shards gives n_chunks). */
uint32_t sw_chunk_first(uint32_t n_chunks, uint32_t n_shards, uint32_t shard);

#ifdef __cplusplus
}
#endif

#endif
