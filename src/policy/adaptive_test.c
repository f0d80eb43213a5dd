/* The adaptive policies' decision rules on hand-made inputs: DSSP's controller (Algorithm 2)
 * and DBW's choice of k (section III-C). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "syncwise/rng.h"

#include "policy/policy_internal.h"

static void controller_finds_where_pushes_meet(void **state)
{
    (void)state;
    /* p pushes every 1 s (last at 10); the slowest every 3 s (last at 10, next at 13, 16...).
     * p's pushes at 10, 11, 12, 13: the 4th (r = 3) meets the slowest's at 13. */
    assert_int_equal(sw__dssp_controller(10, 9, 10, 7, 12, 12), 3);
    /* With r_max = 2 the nearest is r = 2 (12 is 1 s from 13). */
    assert_int_equal(sw__dssp_controller(10, 9, 10, 7, 2, 2), 2);
    /* p every 2 s from 10; slowest every 5 s from 11 (next 16, 21): p's 16 is r = 3. */
    assert_int_equal(sw__dssp_controller(10, 8, 11, 6, 12, 12), 3);
    /* Equally good r values: the smallest wins. p pushes at even times 10, 12, ...; the slowest
     * at odd times 21, 31, 41: nothing meets exactly, and 20 (r = 5) and 22 (r = 6) are both
     * 1 s from 21, so r = 5. */
    assert_int_equal(sw__dssp_controller(10, 8, 11, 1, 12, 12), 5);
    /* An unknown interval (fewer than two pushes) grants nothing. */
    assert_int_equal(sw__dssp_controller(10, -1, 10, 7, 12, 12), 0);
    assert_int_equal(sw__dssp_controller(10, 9, 10, -1, 12, 12), 0);
    assert_int_equal(sw__dssp_controller(10, 10, 10, 7, 12, 12), 0); /* zero interval */
    /* Near hi, p may take r <= 2 steps though the slowest's pushes are seen 5 steps ahead. p
     * pushes every 1 s (last at 43.6), the slowest every 4.4 s (next at 44.0, 48.4): r = 5
     * (48.6) is the best overall, but within the cap r = 0 (0.4 s) beats r = 2 (1.6 s, what the
     * best overall cut down to the cap would give). */
    assert_int_equal(sw__dssp_controller(43.6, 42.6, 39.6, 35.2, 2, 5), 0);
    /* Ties that rounding would break: p every 5.0001 s from 12.0003, the slowest every 5.0001 s
     * from 10.0002: every r >= 1 is 2.0001 s from a push of the slowest, in exact arithmetic;
     * the smallest r wins (doubles alone gave r = 2). */
    assert_int_equal(sw__dssp_controller(12.0003, 7.0002, 10.0002, 5.0001, 4, 4), 1);
}

/* Algorithm 2 as the thesis writes it: every (r, k), the first best r. */
static uint32_t controller_by_every_pair(double p0, double p1, double s0, double s1,
                                         uint32_t r_max, uint32_t k_max)
{
    double ip = p0 - p1, is = s0 - s1, best_gap = INFINITY;
    uint32_t best = 0;
    for (uint32_t r = 0; r <= r_max; r++)
        for (uint32_t k = 0; k <= k_max; k++)
            if (fabs(s0 + is + k * is - (p0 + r * ip)) < best_gap) {
                best_gap = fabs(s0 + is + k * is - (p0 + r * ip));
                best = r;
            }
    return best;
}

/* The controller looks at two k a step (the closest lie on either side of the gap's root):
 * on random problems it gives what trying every (r, k) gives, up to rounding ties. */
static void the_controller_agrees_with_every_pair(void **state)
{
    (void)state;
    sw_rng rng;
    sw_rng_seed(&rng, 12, 0);
    int differ = 0;
    for (int i = 0; i < 20000; i++) {
        double p1 = 100 * sw_rng_uniform(&rng), s1 = 100 * sw_rng_uniform(&rng);
        double p0 = p1 + 0.1 + 5 * sw_rng_uniform(&rng), s0 = s1 + 0.1 + 20 * sw_rng_uniform(&rng);
        uint32_t r_max = (uint32_t)sw_rng_below(&rng, 30), k_max = (uint32_t)sw_rng_below(&rng, 30);
        uint32_t fast = sw__dssp_controller(p0, p1, s0, s1, r_max, k_max);
        uint32_t every = controller_by_every_pair(p0, p1, s0, s1, r_max, k_max);
        if (fast != every) { /* only where two r are within rounding of each other */
            double ip = p0 - p1, is = s0 - s1, g[2];
            uint32_t r[2] = {fast, every};
            for (int j = 0; j < 2; j++) {
                g[j] = INFINITY;
                for (uint32_t k = 0; k <= k_max; k++)
                    g[j] = fmin(g[j], fabs(s0 + is + k * is - (p0 + r[j] * ip)));
            }
            assert_true(fabs(g[0] - g[1]) <= 1e-9 * (p0 + s0));
            differ++;
        }
    }
    assert_true(differ < 20);
}

/* The paper's gain (eq. 12) of a squared gradient norm and a variance; blind DBW's. */
static uint32_t choose12(double grad_sq, double var, const double *T, uint32_t n, bool blind)
{
    sw__dbw_gain g = {.blind = blind, .grad_sq = grad_sq, .var = var, .L = -1};
    return sw__dbw_choose(&g, T, n);
}

static void dbw_waits_for_all_when_variance_dominates(void **state)
{
    (void)state;
    /* Time to the k-th gradient grows slowly with k, then the stragglers. */
    const double T[8] = {1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 3.0, 6.0};
    /* Variance 50 times the squared gradient norm: gain = g^2 - V/k is negative below k = 50,
     * so no k < 8 pays and DBW waits for everyone. */
    assert_int_equal(choose12(1.0, 50.0, T, 8, false), 8);
    /* Negligible variance: every k gains about the same, so the fastest k = 1 wins. */
    assert_int_equal(choose12(1.0, 1e-9, T, 8, false), 1);
    /* In between, k stops before the stragglers: gain/T is best at k = 6 for V = 3. */
    assert_int_equal(choose12(1.0, 3.0, T, 8, false), 6);
}

static void blind_dbw_depends_on_timing_only(void **state)
{
    (void)state;
    const double T[8] = {1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 3.0, 6.0};
    uint32_t k = choose12(1.0, 50.0, T, 8, true);
    assert_int_equal(k, 6); /* argmax k / T[k-1]: 6 / 1.5 = 4 */
    assert_int_equal(choose12(1.0, 1e-9, T, 8, true), k);
    assert_int_equal(choose12(123.0, 7.0, T, 8, true), k);
    const double later[8] = {1, 1, 1, 1, 1, 1, 1, 1}; /* no stragglers: wait for all */
    assert_int_equal(choose12(1.0, 50.0, later, 8, true), 8);
}

static void missing_estimates_are_skipped(void **state)
{
    (void)state;
    const double T[4] = {0, 0, 2.0, 0}; /* only k = 3 has samples */
    assert_int_equal(choose12(1.0, 0.1, T, 4, false), 3);
    const double none[4] = {0, 0, 0, 0};
    assert_int_equal(choose12(1.0, 0.1, none, 4, false), 4);
}

/* gain=eta: eq. 8 at the applied rate. eta = 1/L is eq. 12 scaled by eta / 2; a rate far below
 * 1/L weighs the variance L eta / 2 times less, so DBW waits for fewer gradients. */
static void dbw_at_the_applied_rate(void **state)
{
    (void)state;
    const double T[8] = {1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 3.0, 6.0};
    sw__dbw_gain g = {.grad_sq = 1.0, .var = 3.0, .lr = 0.5, .L = 2.0}; /* eta = 1/L */
    for (uint32_t k = 1; k <= 8; k++)
        assert_float_equal(sw__dbw_gain_of(&g, k), 0.25 * (1.0 - 3.0 / k), 1e-12);
    assert_int_equal(sw__dbw_choose(&g, T, 8), choose12(1.0, 3.0, T, 8, false));
    g.lr = 0.05; /* a tenth of 1/L: the variance term weighs 0.05 against 0.95 */
    assert_int_equal(sw__dbw_choose(&g, T, 8), 1);
    g.L = 0; /* no curvature seen: every k gains alike, time decides */
    assert_int_equal(sw__dbw_choose(&g, T, 8), 1);
    /* agg=sum: the rate on the mean grows with k, and a step past 2/L loses (eta k L > 2). */
    sw__dbw_gain sum = {.grad_sq = 1.0, .var = 0, .lr = 0.5, .L = 1.0, .sum = true};
    assert_true(sw__dbw_gain_of(&sum, 1) > 0);
    assert_true(sw__dbw_gain_of(&sum, 5) < 0);
    const double flat[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    assert_int_equal(sw__dbw_choose(&sum, flat, 8), 2); /* eta = 1/L at k = 2: the most */
    sum.var = 100; /* every k loses: the smallest step loses least, not waiting for all */
    assert_true(sw__dbw_gain_of(&sum, 1) < 0);
    assert_int_equal(sw__dbw_choose(&sum, flat, 8), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(controller_finds_where_pushes_meet),
        cmocka_unit_test(the_controller_agrees_with_every_pair),
        cmocka_unit_test(dbw_waits_for_all_when_variance_dominates),
        cmocka_unit_test(blind_dbw_depends_on_timing_only),
        cmocka_unit_test(missing_estimates_are_skipped),
        cmocka_unit_test(dbw_at_the_applied_rate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
