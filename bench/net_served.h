/* What bench_net's parts share to start a real server in a thread of their own. */
#ifndef SW_BENCH_NET_SERVED_H
#define SW_BENCH_NET_SERVED_H

#include <stddef.h>

#include "syncwise/net.h"

/* A server's parameters for the benchmarks: a linear model of `params` parameters on a small
 * synthetic set (its spec written to data, of cap bytes), bound to a free loopback port written
 * to epfile, under `policy`, never evaluating, checkpointing nor timing out a worker, stopped by
 * *stop. */
sw_server_params sw_bench_server_params(size_t params, char *data, size_t cap, const char *epfile,
                                        const char *policy, sw_stop_flag *stop);
/* A new file name in /tmp for one server's or shard's endpoint (path, cap bytes): each its own,
 * as a server or shard claims its file (FILE.lock) while it runs, and a part runs several at
 * once. */
void sw_bench_endpoint_file(char *path, size_t cap);
/* Waits for the endpoint written to `file` once `who` is bound (into ep, len bytes); exits
 * with err when it does not come within a minute. */
void sw_bench_await_endpoint(const char *file, char *ep, size_t len, const char *who,
                             const char *err);

#endif
