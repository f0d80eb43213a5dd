/* The thesis's baselines: naive search over all R^n combinations, GridScan (Algorithm 3) and
 * FullGridScan (GridScan from every worker's row). */
#include <math.h>
#include <string.h>

#include "syncwise/err.h"
#include "zl_internal.h"

static void enumerate(const sw_zl_problem *p, sw_zl_workspace *ws, sw_zl_result *out, uint32_t w,
                      double lo, double hi)
{
    if (w == p->n) {
        sw__zl_offer(ws, out, hi - lo, hi);
        return;
    }
    for (uint32_t j = p->start[w]; j < p->start[w + 1]; j++) {
        double t = p->t[j];
        enumerate(p, ws, out, w + 1, t < lo ? t : lo, t > hi ? t : hi);
    }
}

int sw__zl_naive(const sw_zl_problem *p, sw_zl_workspace *ws, sw_zl_result *out)
{
    int rc = sw__zl_check(p, ws);
    if (rc)
        return rc;
    if (sw__zl_log10_combinations(p) > log10(SW__ZL_NAIVE_MAX_COMBINATIONS))
        return SW_ERANGE;
    sw__zl_reset(out);
    enumerate(p, ws, out, 0, INFINITY, -INFINITY);
    sw_zl_canonical_picks(p, out->t_sync, out->pick);
    return 0;
}

/* The point of worker w nearest to e (the first of equally near ones). */
static uint32_t nearest(const sw_zl_problem *p, uint32_t w, double e)
{
    uint32_t best = p->start[w];
    for (uint32_t j = best + 1; j < p->start[w + 1]; j++)
        if (fabs(p->t[j] - e) < fabs(p->t[best] - e))
            best = j;
    return best - p->start[w];
}

/* GridScan with row b designated: each of its points with every other worker's nearest. */
static void scan_row(const sw_zl_problem *p, sw_zl_workspace *ws, sw_zl_result *out, uint32_t b)
{
    for (uint32_t j = p->start[b]; j < p->start[b + 1]; j++) {
        double e = p->t[j], lo = e, hi = e;
        ws->pick[b] = j - p->start[b];
        for (uint32_t w = 0; w < p->n; w++) {
            if (w == b)
                continue;
            ws->pick[w] = nearest(p, w, e);
            double t = p->t[p->start[w] + ws->pick[w]];
            lo = t < lo ? t : lo;
            hi = t > hi ? t : hi;
        }
        if (sw__zl_offer(ws, out, hi - lo, hi))
            memcpy(out->pick, ws->pick, p->n * sizeof *out->pick);
    }
}

int sw__zl_gridscan(const sw_zl_problem *p, sw_zl_workspace *ws, sw_zl_result *out)
{
    int rc = sw__zl_check(p, ws);
    if (rc)
        return rc;
    sw__zl_reset(out);
    uint32_t b = 0; /* line 4: the row with the earliest first point */
    for (uint32_t w = 1; w < p->n; w++)
        if (p->t[p->start[w]] < p->t[p->start[b]])
            b = w;
    scan_row(p, ws, out, b);
    return 0;
}

int sw__zl_fullgridscan(const sw_zl_problem *p, sw_zl_workspace *ws, sw_zl_result *out)
{
    int rc = sw__zl_check(p, ws);
    if (rc)
        return rc;
    sw__zl_reset(out);
    for (uint32_t b = 0; b < p->n; b++)
        scan_row(p, ws, out, b);
    return 0;
}
