/* ElasticBSP's barrier search (thesis 002, chapter 6, sections 6.4 to 6.6).
 *
 * n workers each have a list of predicted push times, sorted ascending (R of them in the thesis).
 * Pick one time per worker so that d = max - min of the picks is smallest; among equal d take the
 * earliest barrier t_sync = max (section 6.4.2). The answer is d*, t_sync, and per worker which
 * of its predicted pushes was picked (its index from 0: the worker runs index + 1 steps before
 * the barrier). For the exact algorithms the pick is canonical: each worker's latest predicted
 * push at or before t_sync.
 *
 * Every algorithm has one signature and runs on a workspace allocated once for the largest
 * problem, so a search allocates nothing:
 *   naive          all combinations (R^n: small n only)
 *   gridscan       the thesis's Algorithm 3, a heuristic that can miss the optimum: it pairs
 *                  the earliest worker's points with the nearest point of every other worker
 *   fullgridscan   GridScan from every worker's row (the thesis calls it exhaustive; it is not
 *                  exact in general either, see docs/zipline.md)
 *   zipline        Algorithm 4: sort all points, scan, keep one point per worker
 *   ziplineopt     ZipLine with the temporal array (section 6.5.3)
 *   ziplineoptbs   ZipLineOpt with the binary search through the auxiliary matrix
 *   sweep          ours: an n-way merge of the sorted lists with a replace-top heap, keeping
 *                  the largest front; O(Rn log n) with no sort of all points
 */
#ifndef SYNCWISE_ZIPLINE_H
#define SYNCWISE_ZIPLINE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* n sorted lists in one array: worker p's times are t[start[p]] .. t[start[p + 1] - 1]. */
typedef struct sw_zl_problem {
    uint32_t n;
    const double *t;
    const uint32_t *start; /* n + 1 offsets */
} sw_zl_problem;

typedef struct sw_zl_result {
    double d;          /* max - min of the picks */
    double t_sync;     /* max of the picks: when to impose the barrier */
    uint32_t *pick;    /* n entries (the caller's storage): index into each worker's list */
    uint64_t candidates; /* candidate sets evaluated */
} sw_zl_result;

typedef struct sw_zl_workspace sw_zl_workspace;

/* A workspace for problems of up to max_n workers and max_points points in all. */
int sw_zl_workspace_new(sw_zl_workspace **out, uint32_t max_n, size_t max_points, char *err);
void sw_zl_workspace_free(sw_zl_workspace *ws);

/* Called with every candidate d in scan order when set (the data of Figures 6.5 and 6.8). */
typedef void (*sw_zl_trace_fn)(void *ctx, double d);
void sw_zl_set_trace(sw_zl_workspace *ws, sw_zl_trace_fn fn, void *ctx);

/* The one signature. Fails with SW_EINVAL on an empty list or a problem larger than the
 * workspace, SW_ERANGE when naive search would take too long. */
typedef int (*sw_zl_algo_fn)(const sw_zl_problem *p, sw_zl_workspace *ws, sw_zl_result *out);

typedef struct sw_zl_algo {
    const char *name;
    sw_zl_algo_fn run;
    int exact; /* guaranteed to find the optimum with the earliest-barrier tie-break */
} sw_zl_algo;

/* Every algorithm, NULL-terminated, in the order of the thesis's tables, ours last. */
extern const sw_zl_algo sw_zl_algos[];
const sw_zl_algo *sw_zl_find(const char *name);
/* Their names, ", " between them, into out (cap bytes), for messages. */
void sw_zl_names(char *out, size_t cap);
/* Whether algorithm a takes problems of n workers with R points each: fails with SW_ERANGE,
 * saying why, where it would refuse them (naive search over more than its limit of R^n
 * combinations). */
int sw_zl_fits(const sw_zl_algo *a, uint32_t n, uint32_t R, char *err);
/* The same for problem p, whose workers may have different numbers of points. */
int sw_zl_problem_fits(const sw_zl_algo *a, const sw_zl_problem *p, char *err);

/* The predictor of section 6.4: worker p's next R pushes from its last two push times,
 * last[p] + i * (last[p] - prev[p]) for i = 1..R. Fills t (n * R) and start (n + 1). */
void sw_zl_predict(const double *last, const double *prev, uint32_t n, uint32_t R, double *t,
                   uint32_t *start);

/* The synthetic data sets of Table 6.2: each worker's interval uniform in [1000, 1500] ms, its
 * last push uniform in [0, interval) ms (workers out of phase), then R predicted pushes. */
void sw_zl_synthetic(uint32_t n, uint32_t R, uint64_t seed, double *t, uint32_t *start);

/* Fills each worker's canonical pick for a barrier at t_sync: its latest point <= t_sync. */
void sw_zl_canonical_picks(const sw_zl_problem *p, double t_sync, uint32_t *pick);

#ifdef __cplusplus
}
#endif

#endif
