/* A promise of one's own: a registered policy's promise (sw_check_register_promise) is held by
 * the checker as its own promises are, reading the replay through the public accessors, and what
 * it finds broken is reported under the policy's spec. */
#include "check_test_rig.h"

#include <stdio.h>

#include "syncwise/policy.h"

/* "pairs:n=N": apply once N gradients are buffered, then release everyone waiting. */
static int pairs_start(void *state, sw_spec *spec, const sw_engine_view *v,
                       const sw_policy_env *env, char *err)
{
    (void)v, (void)env;
    long *n = state;
    *n = 2;
    return sw_spec_int(spec, "n", 1, 64, n, err);
}

static void pairs_push(void *state, const sw_engine_view *v, const sw_push *p, sw_decision *d)
{
    (void)p;
    if (v->buffered + 1 >= (uint32_t) * (long *)state) {
        d->apply = true;
        sw_policy_release_all(v, d);
    }
}

static const sw_policy_ops pairs_policy = {.name = "pairs",
                                           .keys = "n",
                                           .help = "test policy",
                                           .state_size = sizeof(long),
                                           .init = pairs_start,
                                           .on_push = pairs_push};

typedef struct pairs_promise {
    long n;
    uint32_t calls;
} pairs_promise;

static int pairs_init(void *state, sw_spec *spec, char *why)
{
    pairs_promise *p = state;
    p->n = 2;
    return sw_spec_int(spec, "n", 1, 64, &p->n, why);
}

/* Nobody is released more than 2 steps ahead of the slowest live worker. */
static int pairs_event(void *state, const sw_check *c, const sw_event *ev, char *why)
{
    (void)state;
    if (ev->kind != SW_EV_RELEASE || sw_check_lead(c, ev->worker) <= 2)
        return 0;
    snprintf(why, SW_ERR_LEN, "released worker %u %llu steps ahead", ev->worker,
             (unsigned long long)sw_check_lead(c, ev->worker));
    return 1;
}

/* Every apply holds exactly n gradients. */
static int pairs_end(void *state, const sw_check *c, char *why)
{
    pairs_promise *p = state;
    p->calls++;
    sw_check_call call;
    sw_check_call_facts(c, &call);
    if (!call.applied || call.applied_n == (uint32_t)p->n)
        return 0;
    snprintf(why, SW_ERR_LEN, "applied %u gradients, not n=%ld", call.applied_n, p->n);
    return 1;
}

static const sw_promise_ops pairs_promise_ops = {.policy = "pairs",
                                                 .state_size = sizeof(pairs_promise),
                                                 .init = pairs_init,
                                                 .on_event = pairs_event,
                                                 .on_end = pairs_end};

static int register_pairs(void **state)
{
    (void)state;
    char err[SW_ERR_LEN];
    assert_int_equal(sw_policy_register(&pairs_policy, err), 0);
    assert_int_equal(sw_check_register_promise(&pairs_promise_ops, err), 0);
    return 0;
}

/* Specs and lists are split at ':', ',', ';' and '=': a name holding one could never be named. */
static void a_name_specs_cannot_carry_is_refused(void **state)
{
    (void)state;
    char err[SW_ERR_LEN];
    sw_policy_ops ops = pairs_policy;
    const char *bad[] = {"x;y", "x,y", "x:y", "x=y", "x y", ""};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        ops.name = bad[i];
        assert_int_equal(sw_policy_register(&ops, err), SW_EINVAL);
        assert_non_null(strstr(err, "a name of letters, digits"));
    }
}

static void only_a_registered_policy_of_ones_own_takes_a_promise(void **state)
{
    (void)state;
    char err[SW_ERR_LEN];
    sw_promise_ops ops = pairs_promise_ops;
    assert_int_equal(sw_check_register_promise(&ops, err), SW_EINVAL); /* pairs has one */
    assert_non_null(strstr(err, "has a promise already"));
    ops.policy = "ssp";
    assert_int_equal(sw_check_register_promise(&ops, err), SW_EINVAL);
    assert_non_null(strstr(err, "the checker's own promise"));
    ops.policy = "nonesuch";
    assert_int_equal(sw_check_register_promise(&ops, err), SW_EINVAL);
    assert_non_null(strstr(err, "registered policy"));
    assert_int_equal(sw_check_register_promise(NULL, err), SW_EINVAL);
}

/* Two workers push, the second push makes an apply of both and releases them. */
static script *a_pair(const char *spec, uint32_t applied)
{
    script *s = open_script(spec, 2);
    start_all(s, 2);
    push(s, 0, 1, 0);
    push(s, 1, 1, 0);
    apply_scaled(s, applied, (float)applied);
    release(s, 0, 1);
    release(s, 1, 1);
    return s;
}

static void the_checker_holds_a_run_to_the_policys_own_promise(void **state)
{
    (void)state;
    script *s = a_pair("pairs", 2);
    assert_string_equal(sw_check_unknown_policy(s->c), ""); /* it has a promise */
    expect(s, NULL);
    expect(a_pair("pairs:n=3", 2), "pairs:n=3: applied 2 gradients, not n=3");

    s = open_script("pairs", 2); /* worker 0 alone, released 3 ahead of worker 1 */
    start_all(s, 2);
    for (uint64_t k = 1; k <= 3; k++) {
        push(s, 0, k, s->V);
        push(s, 0, k, s->V); /* never happens in a real run: the checker's rules see it */
    }
    expect(s, "every run");

    s = open_script("pairs:n=1", 2); /* worker 1 alone, released while worker 0 is at 0 */
    start_all(s, 2);
    for (uint64_t k = 1; k <= 3; k++) {
        push(s, 1, k, s->V);
        apply_scaled(s, 1, 1);
        release(s, 1, k);
    }
    expect(s, "pairs:n=1: released worker 1 3 steps ahead");
}

/* Rule 5 holds a policy of one's own whatever its promise checks: both wait for a third push
 * that never comes, and the liveness rule releases them. */
static void a_promise_of_ones_own_keeps_the_liveness_rule(void **state)
{
    (void)state;
    script *s = open_script("pairs:n=3", 2);
    start_all(s, 2);
    push(s, 0, 1, 0);
    push(s, 1, 1, 0);
    liveness(s, 0, 1);
    liveness(s, 1, 1);
    expect(s, "pairs:n=3: left all 2 live workers waiting");
}

static void a_spec_the_promise_refuses_is_one_no_engine_takes(void **state)
{
    (void)state;
    sw_check *c;
    char err[SW_ERR_LEN];
    assert_int_not_equal(sw_check_new(&c, "pairs:n=0", 2, 0, err), 0);
    assert_non_null(strstr(err, "n"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(only_a_registered_policy_of_ones_own_takes_a_promise),
        cmocka_unit_test(a_name_specs_cannot_carry_is_refused),
        cmocka_unit_test(the_checker_holds_a_run_to_the_policys_own_promise),
        cmocka_unit_test(a_promise_of_ones_own_keeps_the_liveness_rule),
        cmocka_unit_test(a_spec_the_promise_refuses_is_one_no_engine_takes),
    };
    return cmocka_run_group_tests(tests, register_pairs, NULL);
}
