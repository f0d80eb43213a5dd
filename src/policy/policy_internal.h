/* Pieces of policies exposed to their unit tests: pure functions of hand-made inputs. */
#ifndef SW_POLICY_INTERNAL_H
#define SW_POLICY_INTERNAL_H

#include <stdint.h>

/* DSSP's synchronization controller (thesis 002, Algorithm 2): from the last two push times of
 * worker p (p0 newest, p1 before it) and of the slowest worker (s0, s1), the r in [0, r_max]
 * whose simulated push of p is nearest to one of the slowest worker's next k_max + 1 simulated
 * pushes; the smallest such r on ties (gaps equal but for rounding count as equal), 0 when
 * either interval is unknown (a time < 0) or not positive. */
uint32_t sw__dssp_controller(double p0, double p1, double s0, double s1, uint32_t r_max,
                             uint32_t k_max);

#include <stdbool.h>

#include "syncwise/engine.h"

/* DBW's choice (001, section III-C): k in [1, n] maximising gain(k) / T[k - 1], with eq. 12's
 * gain(k) = grad_sq - var / k (its constant eta / 2 does not move the argmax), or gain(k) = k for
 * blind DBW. T[k - 1] <= 0 means no estimate: that k is skipped. Returns n when no k has a
 * positive gain and an estimate. */
/* What DBW expects an apply of k gradients to gain (the paper's section III-A): eq. 12, which
 * assumes the rate eta = 1/L; k alone (blind DBW); or, with gain=eta, eq. 8 at the rate the
 * apply runs at, eta_k = lr on the mean gradient (lr k with agg=sum), and a smoothness L. */
typedef struct sw__dbw_gain {
    bool blind;
    double grad_sq, var; /* eqs. 11 and 10 */
    double lr, L;        /* eq. 8's rate and smoothness (0: none seen); L < 0: eq. 12 */
    bool sum;            /* agg=sum: the rate on the mean gradient grows with k */
} sw__dbw_gain;
double sw__dbw_gain_of(const sw__dbw_gain *g, uint32_t k);
/* argmax over k in 1..n with an estimate T[k-1] > 0 of gain(k) / T[k-1], among gains > 0; when
 * none is, n (eq. 12, blind) or eq. 8's k of the largest gain. */
uint32_t sw__dbw_choose(const sw__dbw_gain *g, const double *T, uint32_t n);

/* The k-of-n mechanism of backup workers and DBW: only gradients computed at the current
 * version are accepted; when k of them are in, they are applied (lr times their sum, or their
 * mean) and every waiting worker is released; an older gradient is dropped and its worker
 * released at once to pull the current version. */
void sw__kofn_push(uint32_t k, bool mean, const sw_engine_view *v, const sw_push *p,
                   sw_decision *d);
/* After a departure or a switch: apply when k gradients are in or nobody is still computing. */
void sw__kofn_settle(uint32_t k, bool mean, const sw_engine_view *v, sw_decision *d);
/* A joiner starts at once, unless its slot's gradient (of a worker that left it) waits in the
 * buffer: then it goes on with everyone at the next apply, one gradient of its slot in each. */
void sw__kofn_join(uint32_t k, bool mean, const sw_engine_view *v, uint32_t w, sw_decision *d);

struct sw_spec;
/* Reads agg=sum|mean (default sum) into *mean. */
int sw__parse_agg(struct sw_spec *spec, bool *mean, char *err);

#endif
