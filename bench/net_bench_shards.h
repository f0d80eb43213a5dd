/* bench_net's sharded part: push + pull of a model through one real shard, the control plane a
 * real server (net_bench_shards.c). */
#ifndef SW_BENCH_NET_SHARDS_H
#define SW_BENCH_NET_SHARDS_H

#include <stddef.h>

#include "syncwise/net.h"

typedef struct sharded sharded;

/* A server under asp with one shard holding a linear model of `params` parameters, payload
 * checksums as `checksum` says, and a client joined to it (warmed up by three steps). */
sharded *sw_bench_sharded_open(size_t params, sw_checksum_mode checksum);
/* One sharded step's messages: the gradient to the shard, the server's RELEASE, the pull and
 * the slice back (checked and read where it landed, as a worker of a one-shard run reads it). */
void sw_bench_sharded_trip(sharded *s);
/* The mean microseconds of the steps since the last call: from the push's build to the release,
 * and from the release to the slice read. */
void sw_bench_sharded_legs(sharded *s, double *to_release_us, double *to_slice_us);
/* Ends the run (the server, then the shard) and frees s. */
void sw_bench_sharded_close(sharded *s);

#endif
