/* Which CPUs a process runs on (`--cpus LIST` of the server, the shard and the worker).
 *
 * A frame is received by ZeroMQ's I/O thread (the kernel copies it in on that thread's core)
 * and checked and applied by the main thread. When several processes share a machine's cores
 * the scheduler moves those threads from core to core, and every 4 MB frame then crosses
 * between cores' caches once more; on the 2-vCPU machine of docs/results/net.md that took a
 * fifth to a quarter of a push and pull's CPU. Giving each process its own cores keeps a frame
 * on the core that received it, as `taskset -c` would, with the list checked and every thread
 * covered. */
#ifndef SYNCWISE_CPUS_H
#define SYNCWISE_CPUS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Parses LIST, CPU numbers and ranges separated by commas as taskset -c takes them ("0",
 * "2-3", "0,4-7", "0-6:2" for every second CPU from 0 to 6), and runs every thread of this
 * process (those started before, OpenBLAS's, too) and every thread it starts later on those
 * CPUs only; returns how many CPUs that is. Refused before anything changes when LIST is
 * malformed or names a CPU this process may not use (outside its cpuset, or offline); err says
 * which and what it may use. Wherever the process is pinned now (taskset, a launcher's
 * binding), it may be moved to any CPU it may use: LIST replaces that binding. */
int sw_cpus_pin_process(const char *list, char *err);

/* The same for the calling thread alone (and the threads it starts later): for programs
 * that run a server and its client as threads of one process, as the benchmarks do. */
int sw_cpus_pin_thread(const char *list, char *err);

/* Writes the CPUs this process may use as a list ("0-1", "0,2-3") into out (len bytes);
 * returns how many there are (0 when they cannot be read). len 0 writes nothing. */
int sw_cpus_allowed(char *out, size_t len);

/* The i-th (from 0) CPU this process may use, in increasing order; -1 when there is none. */
int sw_cpus_allowed_nth(int i);

#ifdef __cplusplus
}
#endif

#endif
