/* The statistics of a comparison: Student's t, a mean and its interval, censored runs, which
 * policies are baselines, the best of them and the speedup over it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>

#include "syncwise/compare.h"

static void student_t_quantiles(void **state)
{
    (void)state;
    assert_float_equal(sw_t95(1), 12.706, 1e-9);
    assert_float_equal(sw_t95(9), 2.262, 1e-9);
    assert_float_equal(sw_t95(30), 2.042, 1e-9);
    assert_float_equal(sw_t95(31), 1.96, 1e-9);
    for (long df = 1; df < 30; df++) /* the quantile falls as the sample grows */
        assert_true(sw_t95(df) > sw_t95(df + 1));
}

static void a_mean_and_its_interval(void **state)
{
    (void)state;
    /* 10, 12, 14, 16, 18: mean 14, sample sd sqrt(10), half-width t(4) sd / sqrt(5). */
    sw_trial runs[5];
    for (int i = 0; i < 5; i++)
        runs[i] = (sw_trial){.time = 10 + 2 * i, .reached = i != 4, .applies = 100 * i,
                             .idle = 0.1 * i};
    sw_trials s = sw_trials_summarize(runs, 5);
    assert_int_equal(s.n, 5);
    assert_int_equal(s.reached, 4); /* one censored run */
    assert_float_equal(s.mean, 14, 1e-12);
    assert_float_equal(s.half, 2.776 * sqrt(10.0) / sqrt(5.0), 1e-9);
    assert_float_equal(s.applies, 200, 1e-12);
    assert_float_equal(s.idle, 0.2, 1e-12);
    /* Far from zero, a spread of 1 s is still measured (no cancellation). */
    sw_trial far[2] = {{.time = 1e9}, {.time = 1e9 + 2}};
    s = sw_trials_summarize(far, 2);
    assert_float_equal(s.half, 12.706 * sqrt(2.0) / sqrt(2.0), 1e-6);
}

static void an_interval_of_plain_values(void **state)
{
    (void)state;
    double x[3] = {1, 2, 3}, mean, half;
    sw_mean_ci(x, 3, sizeof *x, &mean, &half);
    assert_float_equal(mean, 2, 1e-12);
    assert_float_equal(half, 4.303 * 1.0 / sqrt(3.0), 1e-9);
    sw_mean_ci(x, 0, sizeof *x, &mean, &half);
    assert_float_equal(mean, 0, 0);
}

static void one_run_or_none(void **state)
{
    (void)state;
    sw_trial one = {.time = 7, .reached = true};
    sw_trials s = sw_trials_summarize(&one, 1);
    assert_float_equal(s.mean, 7, 0);
    assert_float_equal(s.half, 0, 0);
    s = sw_trials_summarize(NULL, 0);
    assert_int_equal(s.n, 0);
    assert_float_equal(s.mean, 0, 0);
}

static void which_policies_are_baselines(void **state)
{
    (void)state;
    assert_true(sw_is_baseline("bsp", NULL));
    assert_true(sw_is_baseline("ssp:s=4", NULL));
    assert_true(sw_is_baseline("asp:lr_mod=staleness", NULL));
    assert_false(sw_is_baseline("dssp:lo=1,hi=4", NULL));
    assert_false(sw_is_baseline("rlp", NULL));
    const char *list = "dbw;ssp:s=4";
    assert_true(sw_is_baseline("dbw", list));
    assert_true(sw_is_baseline("ssp:s=4", list));
    assert_false(sw_is_baseline("ssp:s=40", list)); /* whole specs only */
    assert_false(sw_is_baseline("ssp", list));
    assert_false(sw_is_baseline("bsp", list));
}

static void the_best_baseline_and_speedups(void **state)
{
    (void)state;
    const char *policies[] = {"bsp", "asp", "dssp:lo=1,hi=4", "ssp:s=2"};
    sw_trials s[4] = {{.n = 3, .mean = 100}, {.n = 3, .mean = 60}, {.n = 3, .mean = 30},
                      {.n = 0, .mean = 0}};
    int best = sw_best_baseline(policies, s, 4, NULL);
    assert_int_equal(best, 1); /* asp: dssp is faster but no baseline; ssp has no runs */
    assert_float_equal(sw_speedup(&s[best], &s[2]), 2.0, 1e-12);
    assert_float_equal(sw_speedup(&s[best], &s[0]), 0.6, 1e-12);
    assert_float_equal(sw_speedup(&s[best], &s[3]), 0, 0);
    assert_int_equal(sw_best_baseline(policies, s, 4, "bsp"), 0);
    assert_int_equal(sw_best_baseline(policies, s, 4, "rlp"), -1);
    s[0].mean = 60; /* a tie: the same baseline whatever the order */
    assert_int_equal(sw_best_baseline(policies, s, 4, NULL), 1);
    const char *reversed[] = {"ssp:s=2", "dssp:lo=1,hi=4", "asp", "bsp"};
    sw_trials r[4] = {s[3], s[2], s[1], s[0]};
    assert_int_equal(sw_best_baseline(reversed, r, 4, NULL), 2);
}

/* A policy whose runs were stopped short of the target (by --max-applies, say) is not faster
 * than one that reached it, however early it stopped: the share reached ranks first. */
static void censored_runs_rank_below_reached_ones(void **state)
{
    (void)state;
    const char *policies[] = {"bsp", "asp", "backup:k=2", "dbw"};
    sw_trials s[4] = {{.n = 2, .reached = 2, .mean = 120},
                      {.n = 2, .reached = 0, .mean = 16},
                      {.n = 4, .reached = 3, .mean = 50},
                      {.n = 4, .reached = 4, .mean = 130}};
    assert_int_equal(sw_best_baseline(policies, s, 4, NULL), 0);
    assert_int_equal(sw_fastest(policies, s, 4), 0);
    s[0].reached = 1; /* half of bsp's, three quarters of backup's */
    assert_int_equal(sw_fastest(policies, s, 4), 3);
    s[3].reached = 3;
    assert_int_equal(sw_fastest(policies, s, 4), 2); /* equal shares: the smaller mean */
    assert_int_equal(sw_best_baseline(policies, s, 4, "asp;backup:k=2"), 2);
    for (int i = 0; i < 4; i++)
        s[i].reached = 0; /* none reached: the smaller mean, as before */
    assert_int_equal(sw_fastest(policies, s, 4), 1);
}

/* Seed by seed: a policy 10% faster on every seed of widely spread scenarios is told apart
 * from its baseline (an interval of one point), where the intervals of the two means overlap;
 * seeds either missed are left out, and a ratio of times 0 is none. */
static void paired_speedups_over_the_same_seeds(void **state)
{
    (void)state;
    sw_trial b[5], s[5];
    for (int i = 0; i < 5; i++) {
        b[i] = (sw_trial){.time = 100.0 * (i + 1), .reached = true};
        s[i] = (sw_trial){.time = b[i].time / 1.1, .reached = true};
    }
    sw_paired p = sw_paired_speedup(b, s, 5);
    assert_int_equal(p.n, 5);
    assert_int_equal(p.faster, 5);
    assert_true(fabs(p.ratio - 1.1) < 1e-9 && fabs(p.lo - 1.1) < 1e-9 && fabs(p.hi - 1.1) < 1e-9);
    sw_trials tb = sw_trials_summarize(b, 5), ts = sw_trials_summarize(s, 5);
    assert_true(tb.mean - tb.half < ts.mean + ts.half); /* the means' intervals overlap */
    s[0].time = b[0].time * 2;   /* slower on one seed: a wider interval about a smaller ratio */
    s[1].reached = false;        /* and one seed the policy missed */
    b[2].time = s[2].time = 0;   /* met at once by both: no ratio */
    p = sw_paired_speedup(b, s, 5);
    assert_int_equal(p.n, 3);
    assert_int_equal(p.faster, 2);
    double logs[3] = {log(0.5), log(1.1), log(1.1)}, mean, half;
    sw_mean_ci(logs, 3, sizeof *logs, &mean, &half);
    assert_true(fabs(p.ratio - exp(mean)) < 1e-9);
    assert_true(fabs(p.lo - exp(mean - half)) < 1e-9 && fabs(p.hi - exp(mean + half)) < 1e-9);
    assert_true(p.lo < 1 && p.hi > 1);
    p = sw_paired_speedup(b, s, 1); /* one pair: the ratio, no interval */
    assert_int_equal(p.n, 1);
    assert_true(fabs(p.ratio - 0.5) < 1e-9 && p.lo == p.ratio && p.hi == p.ratio);
    s[0].reached = false;
    p = sw_paired_speedup(b, s, 1);
    assert_int_equal(p.n, 0);
    assert_true(p.ratio == 0 && p.lo == 0 && p.hi == 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(student_t_quantiles),
        cmocka_unit_test(a_mean_and_its_interval),
        cmocka_unit_test(an_interval_of_plain_values),
        cmocka_unit_test(one_run_or_none),
        cmocka_unit_test(which_policies_are_baselines),
        cmocka_unit_test(the_best_baseline_and_speedups),
        cmocka_unit_test(censored_runs_rank_below_reached_ones),
        cmocka_unit_test(paired_speedups_over_the_same_seeds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
