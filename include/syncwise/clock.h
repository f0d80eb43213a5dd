/* The real clock, for drivers and progress lines. Policies never read it: they see only the time
 * a driver hands them, which is what lets one policy run on the simulator's virtual clock. */
#ifndef SYNCWISE_CLOCK_H
#define SYNCWISE_CLOCK_H

#ifdef __cplusplus
extern "C" {
#endif

/* Seconds on a monotonic clock with an arbitrary origin. */
double sw_clock_now_s(void);

#ifdef __cplusplus
}
#endif

#endif
