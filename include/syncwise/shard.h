/* Server shards: the parameters cut into chunks held by several processes (the data plane),
 * under the one engine of the server (the control plane).
 *
 * The chunk table. The n parameters are cut into chunks of `chunk` floats (about 1 MB by
 * default; the last chunk may be shorter), and shard j holds the run of chunks
 * [first[j], first[j + 1]): contiguous, so that a shard's slice of a gradient or of θ is one
 * range of the vector, sent without gathering, and balanced to within one chunk. The table is
 * published as text ("chunk=C\nfirst=0,3,6\n") in the server's WELCOME and in a shard's INIT, and
 * read back with every rule checked: every parameter in exactly one chunk, every chunk on
 * exactly one shard, every shard holding at least one chunk.
 */
#ifndef SYNCWISE_SHARD_H
#define SYNCWISE_SHARD_H

#include <stddef.h>
#include <stdint.h>

#define SW_SHARDS_MAX 60
#define SW_CHUNK_FLOATS 262144 /* 1 MiB of floats */

typedef struct sw_chunk_table {
    size_t n_params, chunk;   /* floats in all, and per chunk */
    uint32_t n_chunks, n_shards;
    uint32_t first[SW_SHARDS_MAX + 1]; /* shard j: chunks [first[j], first[j + 1]) */
} sw_chunk_table;

/* The table of n_params floats over n_shards shards with chunks of at most chunk_floats (0: the
 * default). A model too small for n_shards chunks of that size gets smaller chunks, so that
 * every shard holds one. Fails (SW_EINVAL) on no parameters, no shards, more shards than
 * SW_SHARDS_MAX, or more shards than parameters. */
int sw_chunk_table_init(sw_chunk_table *t, size_t n_params, size_t chunk_floats,
                        uint32_t n_shards, char *err);

/* Shard j's slice: its first float and how many it holds. */
size_t sw_chunk_slice_at(const sw_chunk_table *t, uint32_t shard);
size_t sw_chunk_slice_len(const sw_chunk_table *t, uint32_t shard);
/* The shard holding parameter i (< n_params). */
uint32_t sw_chunk_shard_of(const sw_chunk_table *t, size_t i);

/* The table as text lines "chunk=C\nfirst=F0,F1,...\n" into out (cap bytes); the length, or
 * -1 when it does not fit. */
int sw_chunk_table_format(const sw_chunk_table *t, char *out, size_t cap);
/* Reads the lines chunk= and first= from text (other lines are ignored) into the table of
 * n_params floats over n_shards: fails (SW_EFORMAT) saying which rule a table breaks. */
int sw_chunk_table_parse(sw_chunk_table *t, const char *text, size_t n_params, uint32_t n_shards,
                         char *err);

#endif
