/* A request to stop, set by a signal handler and read by every thread of the command.
 *
 * The flag is a lock-free atomic: the one kind of object C11 lets a signal handler write while
 * other threads read it (a compare's jobs, a server's loop when its heartbeat thread took the
 * signal) without a data race; a volatile sig_atomic_t is safe only on the handler's own thread.
 */
#ifndef SYNCWISE_STOP_H
#define SYNCWISE_STOP_H

#ifdef __cplusplus /* C++ has its own atomics, of the same layout as C11's */
#include <atomic>
typedef std::atomic<int> sw_stop_flag;

/* Whether a stop was asked for; false for NULL (no flag: nothing can ask). */
static inline bool sw_stop_requested(const sw_stop_flag *stop)
{
    return stop && stop->load(std::memory_order_relaxed);
}
#else
#include <stdatomic.h>
#include <stdbool.h>

typedef atomic_int sw_stop_flag;

/* Whether a stop was asked for; false for NULL (no flag: nothing can ask). */
static inline bool sw_stop_requested(const sw_stop_flag *stop)
{
    return stop && atomic_load_explicit(stop, memory_order_relaxed);
}
#endif

#endif
