/* Where bench_net's two ends run. Shared: every thread where the scheduler puts it, as
 * processes started without --cpus. Apart: the serving side's threads (server, shard and their
 * ZeroMQ threads) on one CPU and the client's on another, as `--cpus` gives a server and a
 * worker sharing a machine, and as two machines would. The same placement holds the part's
 * baselines (ZeroMQ alone, raw TCP), so that each ratio compares like with like. */
#ifndef SW_BENCH_NET_PLACEMENT_H
#define SW_BENCH_NET_PLACEMENT_H

#include <stdbool.h>

/* Chooses the placement of the parts that follow; false (and shared) when apart is asked on a
 * process that may use fewer than two CPUs. Pins the calling thread, the client, apart. */
bool sw_bench_place_apart(bool apart);
/* In a serving thread, before it makes its ZeroMQ context (whose threads inherit the place). */
void sw_bench_place_server(void);
/* "shared" or "apart: serving side on CPU A, client on CPU B", for the part's heading. */
const char *sw_bench_placement(void);

#endif
