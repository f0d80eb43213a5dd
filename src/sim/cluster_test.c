/* Cluster models: the distributions they promise, groups, speed factors, traces and errors. */
#include "testutil/testutil.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>

#include "syncwise/cluster.h"
#include "syncwise/err.h"

static double mean_of(sw_cluster *c, uint32_t w, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++) {
        double v = sw_cluster_step_s(c, w);
        assert_true(v > 0 && isfinite(v));
        s += v;
    }
    return s / n;
}

static void distributions_have_their_means(void **state)
{
    (void)state;
    sw_cluster *c;
    char err[SW_ERR_LEN];
    assert_int_equal(sw_cluster_new(&c, "const:2.5", 3, 1, err), 0);
    assert_float_equal(sw_cluster_step_s(c, 2), 2.5, 0);
    sw_cluster_free(c);
    assert_int_equal(sw_cluster_new(&c, "uniform:1,3", 1, 1, err), 0);
    assert_float_equal(mean_of(c, 0, 50000), 2.0, 0.02);
    sw_cluster_free(c);
    /* shexp: base * (1 - a + a Exp(1)) has mean base whatever a is. */
    assert_int_equal(sw_cluster_new(&c, "shexp:0.5,base=2", 1, 1, err), 0);
    assert_float_equal(mean_of(c, 0, 50000), 2.0, 0.03);
    sw_cluster_free(c);
    /* Pareto with shape 3 and scale 1 has mean 1.5 and nothing below 1. */
    assert_int_equal(sw_cluster_new(&c, "pareto:3,1", 1, 1, err), 0);
    assert_float_equal(mean_of(c, 0, 100000), 1.5, 0.03);
    sw_cluster_free(c);
}

static void stragglers_per_worker_and_per_step(void **state)
{
    (void)state;
    sw_cluster *c;
    char err[SW_ERR_LEN];
    assert_int_equal(
        sw_cluster_new(&c, "straggle:p=0.3,mean=10,sd=1,base=4,jitter=0", 200, 3, err), 0);
    int stragglers = 0;
    for (uint32_t w = 0; w < 200; w++) {
        double m = mean_of(c, w, 50);
        if (sw_cluster_is_straggler(c, w)) {
            stragglers++;
            assert_float_equal(m, 14.0, 0.5);
        } else {
            assert_float_equal(m, 4.0, 1e-9);
        }
    }
    assert_in_range(stragglers, 40, 80); /* about 30% of 200 */
    sw_cluster_free(c);
    assert_int_equal(
        sw_cluster_new(&c, "straggle:p=0.3,mean=10,sd=1,base=4,jitter=0,mode=step", 1, 3, err),
        0);
    assert_float_equal(mean_of(c, 0, 50000), 4.0 + 0.3 * 10.0, 0.1);
    assert_int_equal(sw_cluster_is_straggler(c, 0), 0);
    sw_cluster_free(c);
}

static void groups_and_speed_factors(void **state)
{
    (void)state;
    sw_cluster *c;
    char err[SW_ERR_LEN];
    assert_int_equal(sw_cluster_new(&c, "const:1;const:2,speed=3@8-9;uniform:5,5@4", 10, 1, err),
                     0);
    assert_float_equal(sw_cluster_step_s(c, 0), 1.0, 0);
    assert_float_equal(sw_cluster_step_s(c, 4), 5.0, 0);
    assert_float_equal(sw_cluster_step_s(c, 8), 6.0, 0);
    assert_float_equal(sw_cluster_step_s(c, 9), 6.0, 0);
    sw_cluster_free(c);
}

static void same_seed_same_times(void **state)
{
    (void)state;
    sw_cluster *a, *b, *d;
    assert_int_equal(sw_cluster_new(&a, "shexp:1", 4, 9, NULL), 0);
    assert_int_equal(sw_cluster_new(&b, "shexp:1", 4, 9, NULL), 0);
    assert_int_equal(sw_cluster_new(&d, "shexp:1", 4, 10, NULL), 0);
    int differ = 0;
    for (int i = 0; i < 100; i++) {
        double x = sw_cluster_step_s(a, (uint32_t)i % 4);
        assert_true(x == sw_cluster_step_s(b, (uint32_t)i % 4));
        differ += x != sw_cluster_step_s(d, (uint32_t)i % 4);
    }
    assert_true(differ > 90);
    sw_cluster_free(a);
    sw_cluster_free(b);
    sw_cluster_free(d);
}

static void traces_replay(void **state)
{
    (void)state;
    const char *p = sw_test_path("trace.csv");
    sw_test_write_text(p, "worker,seconds\n0,1.5\n1,2\n0,2.5\n1,3\n");
    char spec[700];
    snprintf(spec, sizeof spec, "trace:%s", p);
    sw_cluster *c;
    char err[SW_ERR_LEN];
    assert_int_equal(sw_cluster_new(&c, spec, 2, 1, err), 0);
    assert_float_equal(sw_cluster_step_s(c, 0), 1.5, 0);
    assert_float_equal(sw_cluster_step_s(c, 0), 2.5, 0);
    assert_float_equal(sw_cluster_step_s(c, 0), 1.5, 0); /* cyclic */
    assert_float_equal(sw_cluster_step_s(c, 1), 2.0, 0);
    sw_cluster_free(c);
    assert_int_equal(sw_cluster_new(&c, spec, 3, 1, err), SW_EFORMAT); /* no rows for worker 2 */
    assert_non_null(strstr(err, "worker 2"));
    sw_test_write_text(p, "0.5\n0.7\n");
    assert_int_equal(sw_cluster_new(&c, spec, 3, 1, err), 0); /* shared by every worker */
    assert_float_equal(sw_cluster_step_s(c, 2), 0.5, 0);
    sw_cluster_free(c);
    sw_test_write_text(p, "0.5\n-1\n");
    assert_int_equal(sw_cluster_new(&c, spec, 1, 1, err), SW_EFORMAT);
    assert_non_null(strstr(err, ":2"));
    /* as a spreadsheet saves it: a byte-order mark, blanks around the comma, CRLF */
    sw_test_write_text(p, "\xEF\xBB\xBFworker,seconds\r\n0 , 1.5\r\n1\t,2\r\n");
    assert_int_equal(sw_cluster_new(&c, spec, 2, 1, err), 0);
    assert_float_equal(sw_cluster_step_s(c, 0), 1.5, 0);
    assert_float_equal(sw_cluster_step_s(c, 1), 2.0, 0);
    sw_cluster_free(c);
}

/* A trace read by one group needs rows for that group's workers only; its times keep the bounds
 * of every other model's; a first line is a header only when it reads as one. */
static void traces_of_groups_and_their_bounds(void **state)
{
    (void)state;
    const char *p = sw_test_path("group.csv");
    char spec[800], err[SW_ERR_LEN];
    sw_cluster *c;
    sw_test_write_text(p, "1,2\n2,3\n");
    snprintf(spec, sizeof spec, "const:7@0;trace:%s@1-2;const:5@3", p);
    assert_int_equal(sw_cluster_new(&c, spec, 4, 1, err), 0);
    assert_float_equal(sw_cluster_step_s(c, 0), 7, 0);
    assert_float_equal(sw_cluster_step_s(c, 2), 3, 0);
    sw_cluster_free(c);
    snprintf(spec, sizeof spec, "trace:%s@0-1;const:5", p);
    assert_int_equal(sw_cluster_new(&c, spec, 3, 1, err), SW_EFORMAT); /* worker 0 reads it */
    assert_non_null(strstr(err, "worker 0"));
    snprintf(spec, sizeof spec, "trace:%s", p);
    static const char *const bad[][2] = {
        {"1e300\n", "outside"}, {"1e-300\n", "outside"}, {"0\n", "outside"},
        {"0,1,5\n", ":1: expected"}, {"1.0.0\n", ":1: expected"}, {"# nothing\n", "no step"},
        {"inf\n", ":1: expected"}, {"0x10\n", ":1: expected"}, {"0,0x10\n", ":1: expected"},
        {"+1\n", ":1: expected"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        sw_test_write_text(p, bad[i][0]);
        assert_int_equal(sw_cluster_new(&c, spec, 1, 1, err), SW_EFORMAT);
        if (!strstr(err, bad[i][1]))
            fail_msg("%s: '%s' lacks '%s'", bad[i][0], err, bad[i][1]);
    }
}

static void bad_specs_are_explained(void **state)
{
    (void)state;
    sw_cluster *c;
    char err[SW_ERR_LEN];
    assert_int_equal(sw_cluster_new(&c, "gauss:1", 2, 1, err), SW_ENOTFOUND);
    assert_non_null(strstr(err, "straggle"));
    assert_int_equal(sw_cluster_new(&c, "straggle:q=1", 2, 1, err), SW_EINVAL);
    assert_non_null(strstr(err, "'q'"));
    assert_int_equal(sw_cluster_new(&c, "uniform:3,1", 2, 1, err), SW_EINVAL);
    assert_int_equal(sw_cluster_new(&c, "const:1@0", 2, 1, err), SW_EINVAL); /* worker 1 */
    assert_non_null(strstr(err, "worker 1"));
    assert_int_equal(sw_cluster_new(&c, "const:1@0-5", 2, 1, err), SW_ERANGE);
    assert_int_equal(sw_cluster_new(&c, "const:1;const:1@0;const:2@0", 2, 1, err), SW_EINVAL);
    assert_int_equal(sw_cluster_new(&c, "const:-1", 2, 1, err), SW_ERANGE);
    assert_int_equal(sw_cluster_new(&c, "trace", 2, 1, err), SW_EINVAL);
    assert_int_equal(sw_cluster_new(&c, "trace:/nonexistent.csv", 2, 1, err), SW_EIO);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(distributions_have_their_means),
        cmocka_unit_test(stragglers_per_worker_and_per_step),
        cmocka_unit_test(groups_and_speed_factors),
        cmocka_unit_test(same_seed_same_times),
        cmocka_unit_test(traces_replay),
        cmocka_unit_test(traces_of_groups_and_their_bounds),
        cmocka_unit_test(bad_specs_are_explained),
    };
    return cmocka_run_group_tests(tests, NULL, sw_test_teardown);
}
