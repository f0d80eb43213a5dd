/* Barrier search: every exact algorithm agrees with naive search (d, barrier and picks) on
 * thousands of random small instances with ties and equal timestamps; heuristics never beat it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "syncwise/err.h"
#include "syncwise/rng.h"
#include "syncwise/zipline.h"

#define MAXN 6
#define MAXR 7

typedef struct instance {
    double t[MAXN * MAXR];
    uint32_t start[MAXN + 1];
    sw_zl_problem p;
} instance;

/* Ragged sorted lists; coarse integer times make ties and equal timestamps common. */
static void random_instance(instance *in, sw_rng *r, uint32_t n, int coarse)
{
    uint32_t k = 0;
    for (uint32_t w = 0; w < n; w++) {
        in->start[w] = k;
        uint32_t len = 1 + (uint32_t)sw_rng_below(r, MAXR);
        double t = coarse ? (double)sw_rng_below(r, 6) : sw_rng_uniform(r) * 10;
        for (uint32_t i = 0; i < len; i++) {
            in->t[k++] = t;
            t += coarse ? (double)sw_rng_below(r, 4) : sw_rng_uniform(r) * 5;
        }
    }
    in->start[n] = k;
    in->p = (sw_zl_problem){.n = n, .t = in->t, .start = in->start};
}

static void exact_algorithms_agree_with_naive(void **state)
{
    (void)state;
    sw_zl_workspace *ws;
    assert_int_equal(sw_zl_workspace_new(&ws, MAXN, MAXN * MAXR, NULL), 0);
    sw_rng r;
    sw_rng_seed(&r, 42, 0);
    uint32_t want_pick[MAXN], got_pick[MAXN];
    int gridscan_missed = 0, fullgrid_missed = 0;
    for (int trial = 0; trial < 5000; trial++) {
        instance in;
        random_instance(&in, &r, 1 + (uint32_t)sw_rng_below(&r, MAXN), trial % 2);
        sw_zl_result want = {.pick = want_pick};
        assert_int_equal(sw_zl_find("naive")->run(&in.p, ws, &want), 0);
        for (const sw_zl_algo *a = sw_zl_algos; a->name; a++) {
            sw_zl_result got = {.pick = got_pick};
            assert_int_equal(a->run(&in.p, ws, &got), 0);
            assert_true(got.d >= want.d); /* nobody beats the optimum */
            if (!a->exact) {
                int missed = got.d > want.d;
                gridscan_missed += missed && !strcmp(a->name, "gridscan");
                fullgrid_missed += missed && !strcmp(a->name, "fullgridscan");
                continue;
            }
            if (got.d != want.d || got.t_sync != want.t_sync ||
                memcmp(got_pick, want_pick, in.p.n * sizeof *got_pick))
                fail_msg("trial %d, %s: d %g t_sync %g, naive d %g t_sync %g", trial, a->name,
                         got.d, got.t_sync, want.d, want.t_sync);
        }
    }
    /* The heuristics are heuristics: they do miss, which is why exactness matters. */
    assert_true(gridscan_missed > 0);
    assert_true(fullgrid_missed > 0);
    sw_zl_workspace_free(ws);
}

/* One far outlier crowds every other point into a few buckets, which sends the sweep to its
 * heap fallback; both paths must agree with ZipLine on larger instances than naive can take. */
static void crowded_and_spread_timelines_agree_with_zipline(void **state)
{
    (void)state;
    enum { N = 6, R = 300 };
    static double t[N * R];
    uint32_t start[N + 1], pa[N], pb[N];
    sw_zl_workspace *ws;
    assert_int_equal(sw_zl_workspace_new(&ws, N, N * R, NULL), 0);
    sw_rng r;
    sw_rng_seed(&r, 7, 0);
    for (int trial = 0; trial < 400; trial++) {
        uint32_t n = 2 + (uint32_t)sw_rng_below(&r, N - 1), k = 0;
        for (uint32_t w = 0; w < n; w++) {
            start[w] = k;
            uint32_t len = 1 + (uint32_t)sw_rng_below(&r, R);
            double x = sw_rng_uniform(&r) * 100;
            for (uint32_t i = 0; i < len; i++, x += 1 + sw_rng_uniform(&r) * 50)
                t[k++] = trial % 3 ? x : floor(x / 8); /* some with many equal times */
        }
        if (trial % 2)
            t[k - 1] = 1e12; /* the outlier */
        start[n] = k;
        sw_zl_problem p = {.n = n, .t = t, .start = start};
        sw_zl_result a = {.pick = pa}, b = {.pick = pb};
        assert_int_equal(sw_zl_find("zipline")->run(&p, ws, &a), 0);
        assert_int_equal(sw_zl_find("sweep")->run(&p, ws, &b), 0);
        assert_true(a.d == b.d && a.t_sync == b.t_sync);
        assert_memory_equal(pa, pb, n * sizeof *pa);
    }
    sw_zl_workspace_free(ws);
}

static void earliest_barrier_wins_ties(void **state)
{
    (void)state;
    /* Windows [0,1] and [5,6] both have d = 1; the barrier must be at 1, not 6. */
    double t[] = {0, 5, 10, 1, 6, 20};
    uint32_t start[] = {0, 3, 6};
    sw_zl_problem p = {.n = 2, .t = t, .start = start};
    sw_zl_workspace *ws;
    assert_int_equal(sw_zl_workspace_new(&ws, 2, 6, NULL), 0);
    for (const sw_zl_algo *a = sw_zl_algos; a->name; a++) {
        uint32_t pick[2];
        sw_zl_result res = {.pick = pick};
        assert_int_equal(a->run(&p, ws, &res), 0);
        assert_float_equal(res.d, 1, 0);
        assert_float_equal(res.t_sync, 1, 0);
        assert_int_equal(pick[0], 0);
        assert_int_equal(pick[1], 0);
    }
    /* A tie that rounding hides: 0.9 - 0.7 and 1.3 - 1.1 are both 0.2, not in doubles (the
     * first is the larger there); the earlier barrier still wins. */
    double u[] = {0.7, 1.1, 0.9, 1.3};
    uint32_t ustart[] = {0, 2, 4};
    sw_zl_problem q = {.n = 2, .t = u, .start = ustart};
    for (const sw_zl_algo *a = sw_zl_algos; a->name; a++) {
        uint32_t pick[2];
        sw_zl_result res = {.pick = pick};
        assert_int_equal(a->run(&q, ws, &res), 0);
        assert_float_equal(res.t_sync, 0.9, 0);
    }
    sw_zl_workspace_free(ws);
}

static void single_worker_and_single_point(void **state)
{
    (void)state;
    sw_zl_workspace *ws;
    assert_int_equal(sw_zl_workspace_new(&ws, 3, 9, NULL), 0);
    double one[] = {3, 4, 5};
    uint32_t s1[] = {0, 3};
    sw_zl_problem p = {.n = 1, .t = one, .start = s1};
    double same[] = {7, 7, 7};
    uint32_t s2[] = {0, 1, 2, 3};
    sw_zl_problem q = {.n = 3, .t = same, .start = s2}; /* R = 1, equal timestamps */
    for (const sw_zl_algo *a = sw_zl_algos; a->name; a++) {
        uint32_t pick[3];
        sw_zl_result res = {.pick = pick};
        assert_int_equal(a->run(&p, ws, &res), 0);
        assert_float_equal(res.d, 0, 0); /* one worker never waits; the earliest barrier */
        assert_float_equal(res.t_sync, 3, 0);
        assert_int_equal(a->run(&q, ws, &res), 0);
        assert_float_equal(res.d, 0, 0);
        assert_float_equal(res.t_sync, 7, 0);
    }
    sw_zl_workspace_free(ws);
}

static void predictor_and_bad_problems(void **state)
{
    (void)state;
    double last[] = {10, 20}, prev[] = {8, 17}, t[6];
    uint32_t start[3];
    sw_zl_predict(last, prev, 2, 3, t, start);
    const double want[] = {12, 14, 16, 23, 26, 29};
    for (int i = 0; i < 6; i++)
        assert_float_equal(t[i], want[i], 0);
    assert_int_equal(start[2], 6);
    sw_zl_workspace *ws;
    char err[SW_ERR_LEN];
    assert_int_equal(sw_zl_workspace_new(&ws, 0, 6, err), SW_EINVAL);
    assert_int_equal(sw_zl_workspace_new(&ws, 2, 6, err), 0);
    uint32_t pick[3];
    sw_zl_result res = {.pick = pick};
    sw_zl_problem p = {.n = 3, .t = t, .start = start};
    assert_int_equal(sw_zl_find("sweep")->run(&p, ws, &res), SW_EINVAL); /* too many workers */
    uint32_t empty[] = {0, 0, 6};
    sw_zl_problem q = {.n = 2, .t = t, .start = empty};
    assert_int_equal(sw_zl_find("zipline")->run(&q, ws, &res), SW_EINVAL); /* an empty list */
    assert_null(sw_zl_find("fastest"));
    sw_zl_workspace_free(ws);
    double big[40 * 10];
    uint32_t bs[41];
    for (uint32_t w = 0; w <= 40; w++)
        bs[w] = w * 10;
    for (int i = 0; i < 400; i++)
        big[i] = i;
    assert_int_equal(sw_zl_workspace_new(&ws, 40, 400, NULL), 0);
    uint32_t bp[40];
    sw_zl_result br = {.pick = bp};
    sw_zl_problem b = {.n = 40, .t = big, .start = bs};
    assert_int_equal(sw_zl_find("naive")->run(&b, ws, &br), SW_ERANGE); /* 10^40 combinations */
    sw_zl_workspace_free(ws);
    /* What a search would refuse is known before it runs (ebsp checks at its start). */
    assert_int_equal(sw_zl_fits(sw_zl_find("naive"), 40, 10, err), SW_ERANGE);
    assert_non_null(strstr(err, "combinations"));
    assert_int_equal(sw_zl_fits(sw_zl_find("naive"), 4, 10, err), 0);
    for (const sw_zl_algo *a = sw_zl_algos; a->name; a++)
        assert_true(a->run == sw_zl_find("naive")->run || sw_zl_fits(a, 1000, 100, err) == 0);
    /* The grid scans cost R^2 (n - 1) steps from one row, n times that from every row: hours at
     * R = 100000 and 200 workers, refused before they run as naive search is. */
    assert_int_equal(sw_zl_fits(sw_zl_find("gridscan"), 200, 100000, err), SW_ERANGE);
    assert_non_null(strstr(err, "gridscan over 200 workers"));
    assert_int_equal(sw_zl_fits(sw_zl_find("fullgridscan"), 200, 1000, err), SW_ERANGE);
    for (const char *fast = "zipline"; fast; fast = strcmp(fast, "sweep") ? "sweep" : NULL)
        assert_int_equal(sw_zl_fits(sw_zl_find(fast), 200, 100000, err), 0);
    /* The ZipLines scan a set of n for each of Rn points: minutes at 10^5 workers, refused
     * past 5e10 steps (near 58,000 workers at R = 15); sweep has no limit. */
    for (const char *z = "zipline"; z; z = !strcmp(z, "zipline") ? "ziplineopt"
                                          : !strcmp(z, "ziplineopt") ? "ziplineoptbs" : NULL) {
        assert_int_equal(sw_zl_fits(sw_zl_find(z), 60000, 15, err), SW_ERANGE);
        assert_non_null(strstr(err, "choose another algorithm (sweep)"));
        assert_int_equal(sw_zl_fits(sw_zl_find(z), 50000, 15, err), 0);
    }
    assert_int_equal(sw_zl_fits(sw_zl_find("sweep"), 1u << 20, 1000, err), 0);
}

static int count;
static void counting(void *ctx, double d)
{
    (void)ctx, (void)d;
    count++;
}

static void trace_sees_every_candidate(void **state)
{
    (void)state;
    double t[] = {0, 2, 4, 1, 3, 5};
    uint32_t start[] = {0, 3, 6}, pick[2];
    sw_zl_problem p = {.n = 2, .t = t, .start = start};
    sw_zl_workspace *ws;
    assert_int_equal(sw_zl_workspace_new(&ws, 2, 6, NULL), 0);
    sw_zl_set_trace(ws, counting, NULL);
    sw_zl_result res = {.pick = pick};
    assert_int_equal(sw_zl_find("zipline")->run(&p, ws, &res), 0);
    assert_int_equal(count, 5); /* every point after the set first fills */
    assert_int_equal((int)res.candidates, 5);
    sw_zl_workspace_free(ws);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exact_algorithms_agree_with_naive),
        cmocka_unit_test(crowded_and_spread_timelines_agree_with_zipline),
        cmocka_unit_test(earliest_barrier_wins_ties),
        cmocka_unit_test(single_worker_and_single_point),
        cmocka_unit_test(predictor_and_bad_problems),
        cmocka_unit_test(trace_sees_every_candidate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
