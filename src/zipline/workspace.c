/* The barrier-search workspace, the registry of algorithms, the predictor and the helpers the
 * algorithms share. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "syncwise/err.h"
#include "syncwise/rng.h"
#include "zl_internal.h"

const sw_zl_algo sw_zl_algos[] = {
    {"zipline", sw__zl_zipline, 1},
    {"ziplineopt", sw__zl_ziplineopt, 1},
    {"ziplineoptbs", sw__zl_ziplineoptbs, 1},
    {"fullgridscan", sw__zl_fullgridscan, 0},
    {"gridscan", sw__zl_gridscan, 0},
    {"naive", sw__zl_naive, 1},
    {"sweep", sw__zl_sweep, 1},
    {NULL, NULL, 0},
};

const sw_zl_algo *sw_zl_find(const char *name)
{
    for (const sw_zl_algo *a = sw_zl_algos; a->name; a++)
        if (strcmp(a->name, name) == 0)
            return a;
    return NULL;
}

void sw_zl_names(char *out, size_t cap)
{
    size_t len = 0;
    out[0] = '\0';
    for (const sw_zl_algo *a = sw_zl_algos; a->name && len < cap; a++)
        len += (size_t)snprintf(out + len, cap - len, "%s%s", a == sw_zl_algos ? "" : ", ",
                                a->name);
}

/* Naive search's refusal of log10_combos (a logarithm: R^n overflows a double at once). */
static int naive_refusal(uint32_t n, const char *points, double log10_combos, char *err)
{
    if (!(log10_combos > log10(SW__ZL_NAIVE_MAX_COMBINATIONS)))
        return 0;
    return sw_fail(err, SW_ERANGE,
                   "naive search over %u workers x %s points is about 10^%.1f combinations, "
                   "over its limit of %.3g: choose another algorithm",
                   n, points, log10_combos, SW__ZL_NAIVE_MAX_COMBINATIONS);
}

double sw__zl_log10_combinations(const sw_zl_problem *p)
{
    double sum = 0;
    for (uint32_t w = 0; w < p->n; w++)
        sum += log10((double)(p->start[w + 1] - p->start[w]));
    return sum;
}

/* A grid scan's refusal of `steps` (gridscan scans from one row, fullgridscan from every one). */
static int grid_refusal(const sw_zl_algo *a, uint32_t n, double steps, char *err)
{
    if (!(steps > SW__ZL_GRID_MAX_STEPS))
        return 0;
    return sw_fail(err, SW_ERANGE,
                   "%s over %u workers is about %.3g steps a search (%s's points against "
                   "every other row's), over its limit of %.3g: choose another algorithm",
                   a->name, n, steps, a->run == sw__zl_gridscan ? "one row" : "each row",
                   SW__ZL_GRID_MAX_STEPS);
}

/* The ZipLine family's scans keep a set of n workers' points and visit it for each of the Rn
 * points: up to Rn^2 steps (about 1 ns each here), which at 10^5 workers ran for minutes
 * (zipline 113 s, ziplineopt 32 s, ziplineoptbs 27 s, R = 15). */
static bool scans_the_set(const sw_zl_algo *a)
{
    return a->run == sw__zl_zipline || a->run == sw__zl_ziplineopt ||
           a->run == sw__zl_ziplineoptbs;
}

static int set_refusal(const sw_zl_algo *a, uint32_t n, double points, char *err)
{
    double steps = points * n;
    if (!(steps > SW__ZL_SET_MAX_STEPS))
        return 0;
    return sw_fail(err, SW_ERANGE,
                   "%s over %u workers is up to %.3g steps a search (each of %.3g points "
                   "against the set of every worker's latest), over its limit of %.3g: choose "
                   "another algorithm (sweep)",
                   a->name, n, steps, points, SW__ZL_SET_MAX_STEPS);
}

int sw_zl_fits(const sw_zl_algo *a, uint32_t n, uint32_t R, char *err)
{
    char points[16];
    snprintf(points, sizeof points, "%u", R);
    if (a->run == sw__zl_naive)
        return naive_refusal(n, points, n * log10((double)R), err);
    if (scans_the_set(a))
        return set_refusal(a, n, (double)R * n, err);
    double row = (double)R * R * (n - 1.0);
    if (a->run == sw__zl_gridscan)
        return grid_refusal(a, n, row, err);
    return a->run == sw__zl_fullgridscan ? grid_refusal(a, n, row * n, err) : 0;
}

int sw_zl_problem_fits(const sw_zl_algo *a, const sw_zl_problem *p, char *err)
{
    if (a->run == sw__zl_naive)
        return naive_refusal(p->n, "their", sw__zl_log10_combinations(p), err);
    if (scans_the_set(a))
        return set_refusal(a, p->n, (double)p->start[p->n], err);
    if (a->run != sw__zl_gridscan && a->run != sw__zl_fullgridscan)
        return 0;
    double all = (double)p->start[p->n], steps = 0, most = 0;
    for (uint32_t w = 0; w < p->n; w++) {
        double row = (double)(p->start[w + 1] - p->start[w]), scan = row * (all - row);
        steps += scan;
        most = scan > most ? scan : most;
    }
    /* gridscan's row is the one with the earliest point: its cost is at most the largest */
    return grid_refusal(a, p->n, a->run == sw__zl_gridscan ? most : steps, err);
}

int sw_zl_workspace_new(sw_zl_workspace **out, uint32_t max_n, size_t max_points, char *err)
{
    *out = NULL;
    if (max_n == 0 || max_points < max_n)
        return sw_fail(err, SW_EINVAL, "zipline: %u workers and %zu points is not a problem",
                       max_n, max_points);
    sw_zl_workspace *ws = calloc(1, sizeof *ws);
    if (!ws)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    ws->max_n = max_n;
    ws->max_points = max_points;
    ws->omega = malloc(max_points * sizeof *ws->omega);
    ws->zarr = malloc(2 * (size_t)max_n * sizeof *ws->zarr); /* room to append before compacting */
    ws->slot = malloc(max_n * sizeof *ws->slot);
    ws->pick = malloc(max_n * sizeof *ws->pick);
    ws->bucket = malloc((max_points + 1) * sizeof *ws->bucket);
    if (!ws->omega || !ws->zarr || !ws->slot || !ws->pick || !ws->bucket) {
        sw_zl_workspace_free(ws);
        return sw_fail(err, SW_ENOMEM, "out of memory for a search over %zu points", max_points);
    }
    *out = ws;
    return 0;
}

void sw_zl_workspace_free(sw_zl_workspace *ws)
{
    if (!ws)
        return;
    free(ws->omega);
    free(ws->zarr);
    free(ws->slot);
    free(ws->pick);
    free(ws->bucket);
    free(ws);
}

void sw_zl_set_trace(sw_zl_workspace *ws, sw_zl_trace_fn fn, void *ctx)
{
    ws->trace = fn;
    ws->trace_ctx = ctx;
}

int sw__zl_check(const sw_zl_problem *p, const sw_zl_workspace *ws)
{
    if (p->n == 0 || p->n > ws->max_n || p->start[p->n] > ws->max_points)
        return SW_EINVAL;
    for (uint32_t w = 0; w < p->n; w++)
        if (p->start[w + 1] <= p->start[w])
            return SW_EINVAL;
    return 0;
}

void sw__zl_reset(sw_zl_result *out)
{
    out->d = INFINITY;
    out->t_sync = INFINITY;
    out->candidates = 0;
}

int sw__zl_by_time(const void *a, const void *b)
{
    const zl_point *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    if (x->w != y->w)
        return x->w < y->w ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

size_t sw__zl_build_omega(const sw_zl_problem *p, sw_zl_workspace *ws)
{
    size_t k = 0;
    for (uint32_t w = 0; w < p->n; w++)
        for (uint32_t j = p->start[w]; j < p->start[w + 1]; j++)
            ws->omega[k++] = (zl_point){.t = p->t[j], .w = w, .i = j - p->start[w]};
    qsort(ws->omega, k, sizeof *ws->omega, sw__zl_by_time);
    return k;
}

void sw_zl_predict(const double *last, const double *prev, uint32_t n, uint32_t R, double *t,
                   uint32_t *start)
{
    for (uint32_t p = 0; p < n; p++) {
        double gamma = last[p] - prev[p];
        start[p] = p * R;
        for (uint32_t i = 0; i < R; i++)
            t[(size_t)p * R + i] = last[p] + (double)(i + 1) * gamma;
    }
    start[n] = n * R;
}

void sw_zl_canonical_picks(const sw_zl_problem *p, double t_sync, uint32_t *pick)
{
    for (uint32_t w = 0; w < p->n; w++) {
        /* Binary search for the last point <= t_sync; the first point if none is. */
        uint32_t lo = p->start[w], hi = p->start[w + 1];
        while (hi - lo > 1) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (p->t[mid] <= t_sync)
                lo = mid;
            else
                hi = mid;
        }
        pick[w] = lo - p->start[w];
    }
}

void sw_zl_synthetic(uint32_t n, uint32_t R, uint64_t seed, double *t, uint32_t *start)
{
    sw_rng r;
    sw_rng_seed(&r, seed, 0x7a6c /* "zl" */);
    for (uint32_t p = 0; p < n; p++) {
        double gamma = 1000 + 500 * sw_rng_uniform(&r);
        double last = gamma * sw_rng_uniform(&r);
        for (uint32_t i = 0; i < R; i++)
            t[(size_t)p * R + i] = last + (double)(i + 1) * gamma;
        start[p] = p * R;
    }
    start[n] = n * R;
}
