/* The roster: sorted whatever the order of joins and departures, and each id once. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "syncwise/rng.h"
#include "syncwise/roster.h"

/* Random adds and removes over a table of 64 ids, against a table of flags. */
static void sorted_and_complete_under_churn(void **state)
{
    (void)state;
    uint32_t ids[64], n = 0;
    _Bool in[64] = {0};
    sw_rng rng;
    sw_rng_seed(&rng, 7, 0);
    for (int step = 0; step < 20000; step++) {
        uint32_t id = (uint32_t)(sw_rng_u64(&rng) % 64);
        if (in[id])
            sw_roster_remove(ids, &n, id);
        else
            sw_roster_add(ids, &n, id);
        in[id] = !in[id];
        uint32_t k = 0;
        for (uint32_t w = 0; w < 64; w++)
            if (in[w]) {
                assert_true(k < n);
                assert_int_equal(ids[k++], w); /* as a scan of the table meets them */
            }
        assert_int_equal(k, n);
    }
}

static void ends_and_empty(void **state)
{
    (void)state;
    uint32_t ids[4], n = 0;
    sw_roster_add(ids, &n, 5);
    sw_roster_add(ids, &n, 0);
    sw_roster_add(ids, &n, UINT32_MAX - 1);
    assert_int_equal(n, 3);
    assert_int_equal(ids[0], 0);
    assert_int_equal(ids[2], UINT32_MAX - 1);
    sw_roster_remove(ids, &n, UINT32_MAX - 1);
    sw_roster_remove(ids, &n, 0);
    sw_roster_remove(ids, &n, 5);
    assert_int_equal(n, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sorted_and_complete_under_churn),
        cmocka_unit_test(ends_and_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
