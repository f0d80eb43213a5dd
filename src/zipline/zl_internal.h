/* The workspace shared by the barrier-search algorithms: every buffer any of them needs, sized
 * once for the largest problem. */
#ifndef SW_ZL_INTERNAL_H
#define SW_ZL_INTERNAL_H

#include <float.h>
#include <math.h>

#include "syncwise/zipline.h"

/* One point of the merged timeline Ω. */
typedef struct zl_point {
    double t;
    uint32_t w, i; /* worker, index in its list */
} zl_point;

struct sw_zl_workspace {
    uint32_t max_n;
    size_t max_points;
    zl_point *omega;  /* max_points: the sorted timeline (zipline family) */
    zl_point *zarr;   /* 2 max_n: the candidate set in temporal order (ziplineopt/bs), or the
                       * heap of list fronts (sweep) */
    uint32_t *slot;   /* max_n: per worker, its point in the candidate set or its list cursor */
    uint32_t *pick;   /* max_n: scratch picks (naive, gridscan) */
    uint32_t *bucket; /* max_points + 1: bucket cursors of the sweep's bucket sort */
    sw_zl_trace_fn trace;
    void *trace_ctx;
};

/* Checks p against the workspace and that no list is empty. */
int sw__zl_check(const sw_zl_problem *p, const sw_zl_workspace *ws);

/* qsort order of points: time, then worker, then index. */
int sw__zl_by_time(const void *a, const void *b);

/* Sorts every point of p into ws->omega by (time, worker, index); returns the count. */
size_t sw__zl_build_omega(const sw_zl_problem *p, sw_zl_workspace *ws);

/* Offers candidate (d, t_sync): the result keeps it when d is smaller, or equal and earlier
 * (section 6.4.2's tie-break). Waits that differ by rounding alone are equal: 0.9 - 0.7 and
 * 1.3 - 1.1 are both 0.2, though not in doubles, and the earlier barrier must win. Counts and
 * traces every offer. */
static inline int sw__zl_offer(sw_zl_workspace *ws, sw_zl_result *out, double d, double t_sync)
{
    out->candidates++;
    if (ws->trace)
        ws->trace(ws->trace_ctx, d);
    double tie = 8 * DBL_EPSILON * (fabs(t_sync) > 1 ? fabs(t_sync) : 1); /* a few roundings */
    if (d < out->d - tie || (d <= out->d + tie && t_sync < out->t_sync)) {
        out->d = d;
        out->t_sync = t_sync;
        return 1;
    }
    return 0;
}

void sw__zl_reset(sw_zl_result *out);

/* Naive search refuses problems above this many combinations. */
#define SW__ZL_NAIVE_MAX_COMBINATIONS 20000000.0
/* And a grid scan's steps, each designated row's points against every other row's: R^2 (n - 1)
 * for gridscan's one row, R^2 n (n - 1) for fullgridscan's n (about 5 ns each here, so 1e10 is
 * about a minute a search). */
#define SW__ZL_GRID_MAX_STEPS 1e10
/* And the ZipLine family's, Rn points against the set of n workers' latest: Rn^2 (about 1 ns
 * each for zipline, a third of that for the others: under a minute a search). */
#define SW__ZL_SET_MAX_STEPS 5e10
int sw__zl_naive(const sw_zl_problem *p, sw_zl_workspace *ws, sw_zl_result *out);
/* log10 of the combinations naive search would try on p: the product of each worker's points. */
double sw__zl_log10_combinations(const sw_zl_problem *p);
int sw__zl_gridscan(const sw_zl_problem *p, sw_zl_workspace *ws, sw_zl_result *out);
int sw__zl_fullgridscan(const sw_zl_problem *p, sw_zl_workspace *ws, sw_zl_result *out);
int sw__zl_zipline(const sw_zl_problem *p, sw_zl_workspace *ws, sw_zl_result *out);
int sw__zl_ziplineopt(const sw_zl_problem *p, sw_zl_workspace *ws, sw_zl_result *out);
int sw__zl_ziplineoptbs(const sw_zl_problem *p, sw_zl_workspace *ws, sw_zl_result *out);
int sw__zl_sweep(const sw_zl_problem *p, sw_zl_workspace *ws, sw_zl_result *out);

#endif
