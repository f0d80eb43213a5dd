/* The statistics of a comparison of policies (`syncwise compare`, `syncwise rl eval`): each
 * policy's runs (one per seed) summarised as a mean time to target with a 95% confidence
 * interval, and its speedup over the best baseline.
 *
 * A run that missed its target counts with the time it ended at: the mean is then a lower bound
 * (censored), and the summary says how many runs reached the target.
 */
#ifndef SYNCWISE_COMPARE_H
#define SYNCWISE_COMPARE_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One run of a policy. */
typedef struct sw_trial {
    double time;    /* to the target, or to the end when it was not reached */
    bool reached;
    double applies; /* figures averaged alongside */
    double idle;    /* share of worker time spent waiting */
} sw_trial;

typedef struct sw_trials {
    long n, reached;
    double mean, half; /* mean time, and the half-width of its 95% interval (0 for one run) */
    double applies, idle;
} sw_trials;

/* The two-sided 95% quantile of Student's t with df degrees of freedom (1.96 above 30). */
double sw_t95(long df);

/* The mean of n values and the half-width of its 95% interval (Student's t; 0 for one value;
 * both 0 for none). The values are `stride` bytes apart (sizeof(double) for an array; the size
 * of a struct for one of its fields). */
void sw_mean_ci(const double *x, size_t n, size_t stride, double *mean, double *half);

/* Summarises n runs (n may be 0: an empty summary). */
sw_trials sw_trials_summarize(const sw_trial *runs, size_t n);

/* Whether a policy spec is a baseline: with baselines NULL every bsp, asp and ssp (any
 * parameters); else exactly one of the ';'-separated specs of baselines. */
bool sw_is_baseline(const char *policy, const char *baselines);

/* The ranking of policies by their runs, best first: the larger share of runs that reached
 * the target (a run that did not is censored: its time is where a limit stopped it, which
 * --max-applies or --max-pushes can make short), then the smaller mean time, then the first
 * name. Policies without runs are never best. */
/* The best baseline among n policies by that ranking, or -1. */
int sw_best_baseline(const char *const *policies, const sw_trials *s, int n,
                     const char *baselines);
/* The best of all n policies by that ranking (the fastest), or -1. */
int sw_fastest(const char *const *policies, const sw_trials *s, int n);

/* The speedup of s over the baseline b: b's mean time over s's (0 when s has no time). */
double sw_speedup(const sw_trials *b, const sw_trials *s);

/* What that speedup is when runs missed the target (their means are lower bounds): "" exact,
 * "<=" an upper bound (only s's runs missed), ">=" a lower bound (only b's), NULL unknown
 * (both missed, or s has no time): no figure to show. s == b, the baseline itself, is exact. */
const char *sw_speedup_bound(const sw_trials *b, const sw_trials *s);

/* The speedup of a policy over a baseline seed by seed: both ran the same scenarios (seed i
 * each), so the ratio of their times on one seed is free of the spread between scenarios that
 * widens the intervals of their means. Over the n seeds where both reached the target at a time
 * > 0 (b[i] and s[i], the baseline's and the policy's runs of seed i; a run that failed counts
 * as not reached), the geometric mean of b's time over s's and its 95% interval (Student's t on
 * the ratios' logarithms; the ratio itself for one pair, all 0 for none), and on how many of
 * them s was faster (all 0 out of memory). */
typedef struct sw_paired {
    size_t n, faster;
    double ratio, lo, hi;
} sw_paired;
sw_paired sw_paired_speedup(const sw_trial *b, const sw_trial *s, size_t n);
#ifdef __cplusplus
}
#endif

#endif
