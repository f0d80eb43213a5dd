/* Whether cutting a push and its answer into parts would hide the checks behind the transfer
 * (net_parts.c): ZeroMQ alone carrying syncwise frames in P parts each way, each end doing
 * syncwise's work on them. bench_net's part 6. */
#ifndef SW_BENCH_NET_PARTS_H
#define SW_BENCH_NET_PARTS_H

#include <stdbool.h>
#include <stddef.h>

/* MB/s of `rounds` round trips of n floats each way in `parts` frames each way, with payload
 * checksums or without. */
double zmq_parts_mbps(size_t n, int parts, bool checksum, int rounds);

#endif
