/* Seeded streams: reproducible, independent per stream, and with the right distributions. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "syncwise/err.h"
#include "syncwise/rng.h"

static void same_seed_same_numbers(void **state)
{
    (void)state;
    sw_rng a, b;
    sw_rng_seed(&a, 42, 7);
    sw_rng_seed(&b, 42, 7);
    for (int i = 0; i < 1000; i++)
        assert_true(sw_rng_u64(&a) == sw_rng_u64(&b));
}

static void streams_and_seeds_differ(void **state)
{
    (void)state;
    sw_rng a, b, c;
    sw_rng_seed(&a, 42, 7);
    sw_rng_seed(&b, 42, 8);
    sw_rng_seed(&c, 43, 7);
    int same_ab = 0, same_ac = 0;
    for (int i = 0; i < 1000; i++) {
        uint64_t x = sw_rng_u64(&a);
        same_ab += x == sw_rng_u64(&b);
        same_ac += x == sw_rng_u64(&c);
    }
    assert_int_equal(same_ab, 0);
    assert_int_equal(same_ac, 0);
}

static void below_is_in_range_and_covers_it(void **state)
{
    (void)state;
    sw_rng r;
    sw_rng_seed(&r, 1, 1);
    int seen[7] = {0};
    for (int i = 0; i < 7000; i++) {
        uint64_t v = sw_rng_below(&r, 7);
        assert_true(v < 7);
        seen[v]++;
    }
    for (int k = 0; k < 7; k++)
        assert_in_range(seen[k], 850, 1150);
    assert_true(sw_rng_below(&r, 1) == 0);
    assert_true(sw_rng_below(&r, 0) == 0); /* defined, not a crash */
}

static void moments_of_deviates(void **state)
{
    (void)state;
    sw_rng r;
    sw_rng_seed(&r, 3, 3);
    const int n = 200000;
    double su = 0, sn = 0, sn2 = 0, se = 0;
    for (int i = 0; i < n; i++) {
        double u = sw_rng_uniform(&r);
        assert_true(u >= 0 && u < 1);
        su += u;
        double z = sw_rng_normal(&r);
        sn += z;
        sn2 += z * z;
        double e = sw_rng_exp(&r);
        assert_true(e >= 0 && isfinite(e));
        se += e;
    }
    /* Tolerances are several standard errors wide; the seed makes the test deterministic. */
    assert_true(fabs(su / n - 0.5) < 0.005);
    assert_true(fabs(sn / n) < 0.01);
    assert_true(fabs(sn2 / n - 1.0) < 0.02);
    assert_true(fabs(se / n - 1.0) < 0.02);
}

/* Secrets come from the kernel: no two alike in many, and every bit of them varies (a seeded
 * stream's are alike from one run to the next, and its outputs give its state away). */
static void secrets_vary_in_every_bit(void **state)
{
    (void)state;
    enum { N = 256 };
    uint64_t seen[N], ones = 0, zeros = 0;
    for (int i = 0; i < N; i++) {
        char err[SW_ERR_LEN];
        assert_int_equal(sw_rng_secret(&seen[i], err), 0);
        for (int j = 0; j < i; j++)
            assert_true(seen[i] != seen[j]);
        ones |= seen[i];
        zeros |= ~seen[i];
    }
    assert_true(ones == UINT64_MAX && zeros == UINT64_MAX);
}

static void shuffle_is_a_permutation(void **state)
{
    (void)state;
    sw_rng r;
    sw_rng_seed(&r, 9, 9);
    uint32_t idx[100];
    for (uint32_t i = 0; i < 100; i++)
        idx[i] = i;
    sw_rng_shuffle(&r, idx, 100);
    int seen[100] = {0}, moved = 0;
    for (uint32_t i = 0; i < 100; i++) {
        seen[idx[i]]++;
        moved += idx[i] != i;
    }
    for (int i = 0; i < 100; i++)
        assert_int_equal(seen[i], 1);
    assert_true(moved > 50);
    sw_rng_shuffle(&r, idx, 0); /* empty and single-element arrays are fine */
    sw_rng_shuffle(&r, idx, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(same_seed_same_numbers),
        cmocka_unit_test(streams_and_seeds_differ),
        cmocka_unit_test(below_is_in_range_and_covers_it),
        cmocka_unit_test(moments_of_deviates),
        cmocka_unit_test(shuffle_is_a_permutation),
        cmocka_unit_test(secrets_vary_in_every_bit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
