/* The ZipLine benchmark: the grid of the thesis's Table 6.4 (n in {10, 100, 1000}, R in {15, 150})
 * plus n in {200, 400, 600, 800}, every algorithm timed side by side on the same synthetic data
 * (intervals uniform in 1000-1500 ms), in microseconds; the thesis's figures printed beside ours,
 * and our sweep's speedup over the fastest other algorithm in the same run.
 *
 * Each figure is the median of 5 timings, each the mean over repetitions filling 20 ms.
 * FullGridScan is skipped where it would take minutes (the thesis measured 207 s at n = 1000,
 * R = 150); naive search only runs where it finishes.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_args.h"
#include "syncwise/clock.h"
#include "syncwise/err.h"
#include "syncwise/zipline.h"

#define REPEATS 5

/* Table 6.4 of the thesis (microseconds), by algorithm, for the six grid points it reports. */
static const struct {
    const char *algo;
    double us[6]; /* n=10 R=15, 10/150, 100/15, 100/150, 1000/15, 1000/150 */
} thesis[] = {
    {"zipline", {1.49e2, 1.32e3, 6.37e3, 4.99e4, 2.53e5, 2.38e6}},
    {"ziplineopt", {0.90e2, 8.08e2, 2.46e3, 1.93e4, 9.39e4, 7.78e5}},
    {"ziplineoptbs", {1.24e2, 1.15e3, 2.65e3, 2.30e4, 7.68e4, 5.66e5}},
    {"fullgridscan", {1.54e3, 4.67e4, 8.13e4, 2.15e6, 4.04e6, 2.07e8}},
    {"gridscan", {1.68e2, 5.50e3, 1.11e3, 4.38e4, 7.45e3, 2.57e5}},
};

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double time_us(const sw_zl_algo *a, const sw_zl_problem *p, sw_zl_workspace *ws,
                      sw_zl_result *r)
{
    double runs[REPEATS];
    if (a->run(p, ws, r))
        return -1;
    for (int k = 0; k < REPEATS; k++) {
        int reps = 0;
        double t0 = sw_clock_now_s(), el;
        do {
            a->run(p, ws, r);
            reps++;
            el = sw_clock_now_s() - t0;
        } while (el < 0.02);
        runs[k] = el / reps * 1e6;
    }
    qsort(runs, REPEATS, sizeof *runs, cmp);
    return runs[REPEATS / 2];
}

static int thesis_column(uint32_t n, uint32_t R)
{
    int col = n == 10 ? 0 : n == 100 ? 2 : n == 1000 ? 4 : -1;
    return col < 0 ? -1 : col + (R == 150);
}

static double thesis_us(const char *algo, int col)
{
    for (size_t i = 0; col >= 0 && i < sizeof thesis / sizeof thesis[0]; i++)
        if (!strcmp(thesis[i].algo, algo))
            return thesis[i].us[col];
    return -1;
}

int main(int argc, char **argv)
{
    bench_usage(argc, argv, 0,
                "(no arguments)\n"
                "The ZipLine family's microseconds per search on the grid of the thesis's\n"
                "Table 6.4 and more, the thesis's figures beside ours.\n");
    const uint32_t ns[] = {10, 100, 200, 400, 600, 800, 1000}, Rs[] = {15, 150};
    sw_zl_workspace *ws;
    char err[SW_ERR_LEN];
    if (sw_zl_workspace_new(&ws, 1000, 1000 * 150, err)) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    double *t = malloc(1000 * 150 * sizeof *t);
    uint32_t *start = malloc(1001 * sizeof *start), *pick = malloc(1000 * sizeof *pick);
    printf("ZipLine family, microseconds per search (ours: sweep); thesis = Table 6.4 (C++, Xeon "
           "E5-2620 v3)\n");
    for (size_t ri = 0; ri < 2; ri++) {
        for (size_t ni = 0; ni < sizeof ns / sizeof ns[0]; ni++) {
            uint32_t n = ns[ni], R = Rs[ri];
            sw_zl_synthetic(n, R, 1, t, start);
            sw_zl_problem p = {.n = n, .t = t, .start = start};
            int col = thesis_column(n, R);
            printf("\nn = %u, R = %u\n  %-14s %12s %12s %10s\n", n, R, "algorithm", "ours us",
                   "thesis us", "d*");
            double sweep = 0, best_other = 1e300;
            for (const sw_zl_algo *a = sw_zl_algos; a->name; a++) {
                sw_zl_result r = {.pick = pick};
                bool skip = !strcmp(a->name, "fullgridscan") && (double)n * n * R * R > 1e9;
                double us = skip ? -1 : time_us(a, &p, ws, &r);
                double th = thesis_us(a->name, col);
                if (us < 0) {
                    if (!strcmp(a->name, "naive"))
                        continue;
                    printf("  %-14s %12s", a->name, "skipped");
                } else {
                    printf("  %-14s %12.1f", a->name, us);
                }
                if (th > 0)
                    printf(" %12.3g", th);
                else
                    printf(" %12s", "-");
                printf(" %10.1f\n", us < 0 ? 0.0 : r.d);
                if (!strcmp(a->name, "sweep"))
                    sweep = us;
                else if (us > 0 && us < best_other)
                    best_other = us;
            }
            printf("  sweep is %.1fx faster than the fastest other algorithm", best_other / sweep);
            double bs = thesis_us("ziplineoptbs", col);
            if (bs > 0)
                printf(", %.0fx faster than the thesis's ZipLineOptBS", bs / sweep);
            printf("\n");
            fflush(stdout);
        }
    }
    free(t);
    free(start);
    free(pick);
    sw_zl_workspace_free(ws);
    return 0;
}
