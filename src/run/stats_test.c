/* A run's statistics from its events: steps, drops, idle time per worker and overall, the
 * staleness of applied gradients, and open intervals closed at the run's end. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>

#include "syncwise/err.h"
#include "syncwise/run.h"

static void feed(sw_run_stats *s, sw_event ev)
{
    assert_int_equal(sw_run_stats_event(s, &ev), 0);
}

static void join(sw_run_stats *s, uint32_t w, double t)
{
    feed(s, (sw_event){.kind = SW_EV_JOIN, .worker = w, .t = t});
}

static void push(sw_run_stats *s, uint32_t w, double t, uint64_t ver)
{
    feed(s, (sw_event){.kind = SW_EV_PUSH, .worker = w, .t = t, .ver = ver});
}

static void release(sw_run_stats *s, uint32_t w, double t)
{
    feed(s, (sw_event){.kind = SW_EV_RELEASE, .worker = w, .t = t});
}

static void idle_time_per_worker_and_overall(void **state)
{
    (void)state;
    sw_run_stats s;
    char err[SW_ERR_LEN];
    assert_int_equal(sw_run_stats_init(&s, 3, err), 0);
    join(&s, 0, 0);
    join(&s, 1, 0);
    release(&s, 0, 0.5); /* waited 0.5 s for its first model */
    release(&s, 1, 0);
    push(&s, 0, 1, 0);
    push(&s, 1, 2, 0);
    release(&s, 1, 2.5);
    release(&s, 0, 3); /* waited 1..3 */
    feed(&s, (sw_event){.kind = SW_EV_LEAVE, .worker = 1, .t = 3});
    sw_run_stats_close(&s, 4);
    /* Worker 0: live 4 s, idle 0.5 + 2; worker 1: live 3 s, idle 0.5; worker 2 never lived. */
    assert_float_equal(sw_run_stats_worker_idle_share(&s, 0), 2.5 / 4, 1e-12);
    assert_float_equal(sw_run_stats_worker_idle_share(&s, 1), 0.5 / 3, 1e-12);
    assert_float_equal(sw_run_stats_worker_idle_share(&s, 2), 0, 0);
    assert_float_equal(sw_run_stats_worker_idle_share(&s, 99), 0, 0);
    assert_float_equal(sw_run_stats_idle_share(&s), 3.0 / 7, 1e-12);
    assert_int_equal(s.pushes, 2);
    assert_int_equal(s.steps[0], 1);
    sw_run_stats_free(&s);
}

/* A step's time runs from its release to its push; the step the run's end cuts off is no step
 * yet, and one a crash loses is none at all. */
static void step_times_of_finished_steps(void **state)
{
    (void)state;
    sw_run_stats s;
    char err[SW_ERR_LEN];
    assert_int_equal(sw_run_stats_init(&s, 2, err), 0);
    join(&s, 0, 0);
    join(&s, 1, 0);
    release(&s, 0, 0);
    release(&s, 1, 0);
    push(&s, 0, 5, 0);
    push(&s, 1, 2, 0);
    feed(&s, (sw_event){.kind = SW_EV_DROP, .worker = 1, .t = 2, .ver = 0}); /* refused: still
                                                                                * computed */
    release(&s, 0, 6);
    release(&s, 1, 2);
    feed(&s, (sw_event){.kind = SW_EV_CRASH, .worker = 1, .t = 3});
    sw_run_stats_close(&s, 8); /* worker 0 two seconds into a step */
    assert_int_equal(s.finished[0], 1);
    assert_float_equal(s.busy_s[0], 5, 0);
    assert_int_equal(s.finished[1], 1);
    assert_float_equal(s.busy_s[1], 2, 0);
    sw_run_stats_free(&s);
}

static void a_wait_still_open_at_the_end_counts(void **state)
{
    (void)state;
    sw_run_stats s;
    char err[SW_ERR_LEN];
    assert_int_equal(sw_run_stats_init(&s, 1, err), 0);
    join(&s, 0, 0);
    release(&s, 0, 0);
    push(&s, 0, 1, 0);
    sw_run_stats_close(&s, 5); /* never released again */
    assert_float_equal(sw_run_stats_worker_idle_share(&s, 0), 4.0 / 5, 1e-12);
    sw_run_stats_free(&s);
}

static void staleness_of_applied_gradients_and_drops(void **state)
{
    (void)state;
    sw_run_stats s;
    char err[SW_ERR_LEN];
    assert_int_equal(sw_run_stats_init(&s, 2, err), 0);
    join(&s, 0, 0);
    join(&s, 1, 0);
    push(&s, 0, 1, 0);
    feed(&s, (sw_event){.kind = SW_EV_APPLY, .t = 1, .V = 1}); /* fresh: staleness 0 */
    push(&s, 1, 2, 0);
    feed(&s, (sw_event){.kind = SW_EV_DROP, .worker = 1, .t = 2}); /* not applied */
    push(&s, 1, 3, 0);
    push(&s, 0, 3, 1);
    feed(&s, (sw_event){.kind = SW_EV_APPLY, .t = 3, .V = 2}); /* 1 and 0 behind */
    assert_int_equal(s.applies, 2);
    assert_int_equal(s.drops, 1);
    assert_int_equal(s.steps[1], 1); /* the dropped step does not count */
    assert_int_equal(s.stale_hist[0], 2);
    assert_int_equal(s.stale_hist[1], 1);
    assert_float_equal(sw_run_stats_mean_staleness(&s), 1.0 / 3, 1e-12);
    sw_run_stats_free(&s);
}

/* A steady 100 per second, then a stop: the rate follows the last window, not the whole run. */
static void a_rate_over_the_last_seconds(void **state)
{
    (void)state;
    sw_rate r;
    sw_rate_init(&r, 5);
    assert_true(sw_rate_get(&r, 0, 0) == 0);
    for (int i = 0; i <= 2000; i++) /* 20 s at 100 per second */
        sw_rate_add(&r, i * 0.01, (uint64_t)i);
    assert_true(fabs(sw_rate_get(&r, 20, 2000) - 100) < 1);
    /* 5 s later without a single new count the rate is near 0 */
    assert_true(sw_rate_get(&r, 25.7, 2000) < 5);
    /* a burst of 500 in the last second reads as about 100 per second over 5 */
    sw_rate_add(&r, 26, 2500);
    assert_true(fabs(sw_rate_get(&r, 26, 2500) - 500.0 / 6.0) < 25);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(idle_time_per_worker_and_overall),
        cmocka_unit_test(step_times_of_finished_steps),
        cmocka_unit_test(a_wait_still_open_at_the_end_counts),
        cmocka_unit_test(staleness_of_applied_gradients_and_drops),
        cmocka_unit_test(a_rate_over_the_last_seconds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
