/* How much memory this process may hold: the machine's, or less where a control group bounds
 * it (a container's or a Slurm job's limit), so that work that would not fit is refused with a
 * clear message rather than killed by the kernel after minutes. */
#ifndef SYNCWISE_MEMLIMIT_H
#define SYNCWISE_MEMLIMIT_H

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes: the least of the machine's memory and the memory limits of this process's control
 * groups and of the groups above them (cgroup v2's memory.max; v1's memory.limit_in_bytes);
 * 0 when none of these can be read. */
double sw_memory_limit(void);

/* The same read from `self_cgroup` (as /proc/self/cgroup) and the cgroup file systems under
 * `root` (as /sys/fs/cgroup: v2 there or at its unified/, v1's memory controller at memory/),
 * with `physical` bytes of memory (0: unknown): for tests, and for a root elsewhere. */
double sw_memory_limit_in(const char *self_cgroup, const char *root, double physical);

#ifdef __cplusplus
}
#endif

#endif
