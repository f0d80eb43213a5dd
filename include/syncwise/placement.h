/* Where the parameters live when several processes hold them: n floats cut into chunks of at
 * most SW_CHUNK_FLOATS, and shard j holding a contiguous run of chunks, the runs balanced to
 * within one chunk. A model of at most a chunk a shard is cut into one chunk a shard (n / S
 * floats, the last shard also taking the fewer than S floats over); a larger one into chunks
 * small enough that every shard gets SW_CHUNKS_PER_SHARD or more, so that its slices differ by
 * about 1/SW_CHUNKS_PER_SHARD of one at most: with 1 MiB chunks a model of 4 MiB over 3 shards
 * was cut 1, 1 and 2 MiB, its last shard holding and moving half as much again as the mean.
 * The rule alone, for any number of shards: the shards' chunk table (syncwise/shard.h) is built
 * on it, and the simulator's model of a sharded server (`sim --net shards=S`) places
 * parameters by it.
 */
#ifndef SYNCWISE_PLACEMENT_H
#define SYNCWISE_PLACEMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SW_CHUNK_FLOATS 262144 /* 1 MiB of floats */
#define SW_CHUNKS_PER_SHARD 16 /* at least, for a model of over SW_CHUNK_FLOATS a shard */

/* The floats per chunk of n_params over n_shards (n_params >= n_shards >= 1): the caller's
 * chunk_floats, or less so that every shard gets one; for 0, the rule above (beyond a chunk a
 * shard, a multiple of 16 floats: a cache line). */
size_t sw_chunk_floats(size_t n_params, size_t chunk_floats, uint32_t n_shards);
/* How many chunks of `chunk` floats cover n_params (the last may be shorter). */
uint32_t sw_chunk_count(size_t n_params, size_t chunk);
/* Whether that count fits its 32 bits (n_params >= 1, chunk >= 1): a table of more chunks is
 * refused wherever one is made or read. */
bool sw_chunk_count_fits(size_t n_params, size_t chunk);
/* The first chunk of shard j (0 <= j <= n_shards; j == n_shards gives n_chunks). */
uint32_t sw_chunk_first(uint32_t n_chunks, uint32_t n_shards, uint32_t shard);

#ifdef __cplusplus
}
#endif

#endif
