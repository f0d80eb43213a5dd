/* The stopping rules: a target met, patience run out, the limits; diverged parameters (a loss
 * that is not finite) meet no target and are never the best, whatever accuracy they score. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>

#include "syncwise/run.h"

static sw_stop_reason eval(sw_stopper *st, double acc, double loss, bool *improved)
{
    return sw_stopper_eval(
        st, &(sw_stop_eval){.accuracy = acc, .loss = loss, .train_loss = NAN, .classify = true},
        improved);
}

static void targets_and_patience(void **state)
{
    (void)state;
    sw_stopper st;
    sw_stopper_init(&st, &(sw_stop_rules){.target_acc = 0.8, .patience = 2});
    bool improved;
    assert_int_equal(eval(&st, 0.5, 1.0, &improved), SW_STOP_NONE);
    assert_true(improved);
    assert_int_equal(eval(&st, 0.4, 1.1, &improved), SW_STOP_NONE);
    assert_false(improved);
    assert_int_equal(eval(&st, 0.45, 1.0, &improved), SW_STOP_PATIENCE);
    sw_stopper_init(&st, &(sw_stop_rules){.target_acc = 0.8});
    assert_int_equal(eval(&st, 0.8, 0.3, &improved), SW_STOP_TARGET_ACC);
}

static void diverged_parameters_meet_no_target(void **state)
{
    (void)state;
    sw_stopper st;
    sw_stopper_init(&st, &(sw_stop_rules){.target_acc = 0.5, .patience = 3});
    bool improved;
    /* a constant answer scores the majority class's share: it must not count */
    assert_int_equal(eval(&st, 0.57, NAN, &improved), SW_STOP_NONE);
    assert_false(improved);
    assert_int_equal(eval(&st, 0.9, INFINITY, &improved), SW_STOP_NONE);
    assert_false(improved);
    /* the first finite evaluation after them is the best so far */
    assert_int_equal(eval(&st, 0.4, 1.0, &improved), SW_STOP_NONE);
    assert_true(improved);
    /* and patience counts the diverged ones as no improvement */
    assert_int_equal(eval(&st, 0.6, NAN, &improved), SW_STOP_NONE);
    assert_int_equal(eval(&st, 0.6, NAN, &improved), SW_STOP_NONE);
    assert_int_equal(eval(&st, 0.6, NAN, &improved), SW_STOP_PATIENCE);
}

static void limits(void **state)
{
    (void)state;
    sw_stopper st;
    sw_stopper_init(&st, &(sw_stop_rules){.max_time = 10, .max_applies = 5, .max_pushes = 7});
    assert_int_equal(sw_stopper_limits(&st, 9.9, 4, 6), SW_STOP_NONE);
    assert_int_equal(sw_stopper_limits(&st, 10, 0, 0), SW_STOP_MAX_TIME);
    assert_int_equal(sw_stopper_limits(&st, 0, 5, 0), SW_STOP_MAX_APPLIES);
    assert_int_equal(sw_stopper_limits(&st, 0, 0, 7), SW_STOP_MAX_PUSHES);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(targets_and_patience),
        cmocka_unit_test(diverged_parameters_meet_no_target),
        cmocka_unit_test(limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
