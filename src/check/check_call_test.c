/* The checker holds every engine call to the order of its lines (docs/log.md: the starting
 * event, a drop, the apply, grants, the policy's releases, a wake-up request, the liveness
 * rule's releases) and lets the liveness rule act only when the policy left everyone waiting.
 * Found loose by an independent checker written from the docs alone. */
#include "check_test_rig.h"

static void wake(script *s, double at)
{
    feed(s, (sw_event){.kind = SW_EV_WAKE, .at = at});
}

static void a_call_in_order_is_kept(void **state)
{
    (void)state;
    script *s = open_script("mystery", 2); /* a policy of one's own may grant */
    start_all(s, 2);
    push(s, 0, 1, 0);
    apply_scaled(s, 1, 1);
    grant(s, 0, 1);
    release(s, 0, 1);
    wake(s, s->t + 5);
    expect(s, NULL);
}

static void a_line_out_of_order_is_broken(void **state)
{
    (void)state;
    script *s = open_script("mystery", 2);
    start_all(s, 2);
    push(s, 0, 1, 0);
    apply_scaled(s, 1, 1);
    release(s, 0, 1);
    grant(s, 0, 1); /* grants come before the releases */
    expect(s, "a grant out of the engine call's order");

    s = open_script("mystery", 2);
    start_all(s, 2);
    push(s, 0, 1, 0);
    apply_scaled(s, 1, 1);
    wake(s, s->t + 5);
    release(s, 0, 1); /* the policy's releases come before its wake-up request */
    expect(s, "a release out of the engine call's order");

    s = open_script("mystery", 2);
    start_all(s, 2);
    push(s, 0, 1, 0);
    apply_scaled(s, 1, 1);
    release(s, 0, 1);
    wake(s, s->t + 5);
    wake(s, s->t + 6); /* one request a call */
    expect(s, "a wake out of the engine call's order");

    s = open_script("mystery", 2);
    wake(s, 5); /* before any call */
    expect(s, "a wake outside any engine call");
}

/* actions on 2 workers whose policy released nobody after either push: in the second push's
 * call, every worker waits. */
static script *both_waiting(void)
{
    script *s = open_script("actions", 2);
    start_all(s, 2);
    push(s, 0, 1, 0);
    apply_scaled(s, 1, 1); /* nobody: worker 1 still computes */
    push(s, 1, 1, 1);
    apply_scaled(s, 1, 1);
    return s;
}

static void liveness_acts_only_when_the_policy_left_everyone_waiting(void **state)
{
    (void)state;
    script *s = both_waiting();
    liveness(s, 0, 1); /* everyone waits: the liveness rule may act */
    liveness(s, 1, 1);
    expect(s, NULL);

    s = both_waiting();
    release(s, 1, 1); /* the pusher goes on: somebody computes */
    liveness(s, 0, 1);
    expect(s, "a liveness release of worker 0 while some worker computed");

    s = both_waiting();
    liveness(s, 0, 1); /* one of the two: the rule releases everyone */
    expect(s, "the liveness rule released 1 of the 2 waiting workers");
}

/* Two grants, but both to worker 0. */
static bool search_answers_twice(script *s)
{
    grant(s, 0, 1);
    grant(s, 0, 2);
    return true;
}

static void a_barrier_search_grants_each_worker_once(void **state)
{
    (void)state;
    expect(ebsp_monitored(search_answers_twice), "granted worker 0 twice in one barrier search");
}

/* A policy of one's own on 2 workers: worker 0's push asks for a wake-up 2 s on; worker 1 pushes
 * `late` s after it is due, before any tick. */
static script *push_after_wake(bool simulated, double late)
{
    script *s = open_script("mystery", 2);
    if (simulated)
        sw_check_simulated(s->c);
    start_all(s, 2);
    push(s, 0, 1, 0);
    apply_scaled(s, 1, 1);
    wake(s, s->t + 2);
    s->t += 1 + late;
    push(s, 1, 1, 0); /* computed at the version it was released at */
    apply_scaled(s, 1, 1);
    release(s, 1, 1);
    return s;
}

static void on_a_virtual_clock_a_tick_comes_on_time(void **state)
{
    (void)state;
    /* A server on the real clock may serve a message before its overdue wake-up... */
    script *s = push_after_wake(false, 1);
    feed(s, (sw_event){.kind = SW_EV_TICK});
    expect(s, NULL);
    /* ...the simulator never, even in a log cut there or ending "failed:". */
    expect(push_after_wake(true, 1), "a wake-up due at t=3 had not come");
    /* An event at the due time itself ties with the tick and may come first. */
    s = push_after_wake(true, 0);
    feed(s, (sw_event){.kind = SW_EV_TICK});
    expect(s, NULL);
    /* Nor does a tick come late with nothing between. */
    s = push_after_wake(true, 0);
    s->t += 0.5;
    feed(s, (sw_event){.kind = SW_EV_TICK});
    expect(s, "a tick at t=3.5, due at t=3");

    s = open_script("mystery", 2); /* a wake-up asked for in the past is owed at once */
    sw_check_simulated(s->c);
    start_all(s, 2);
    push(s, 0, 1, 0);
    apply_scaled(s, 1, 1);
    wake(s, s->t - 0.5);
    feed(s, (sw_event){.kind = SW_EV_TICK});
    expect(s, NULL);
}

/* asp on 2 workers, simulated or not: worker 0's push applied (V = 1) and worker 0 released;
 * then `forged`. */
static script *asp_then(bool simulated, void (*forged)(script *))
{
    script *s = open_script("asp", 2);
    if (simulated)
        sw_check_simulated(s->c);
    start_all(s, 2);
    push(s, 0, 1, 0);
    apply(s, 1);
    release(s, 0, 1);
    forged(s);
    return s;
}

static void older_eval(script *s)
{
    push(s, 0, 2, 1);
    apply(s, 1);
    release(s, 0, 2);
    feed(s, (sw_event){.kind = SW_EV_EVAL, .V = 1}); /* at version 2 */
}
static void a_restore(script *s) { feed(s, (sw_event){.kind = SW_EV_RESTORE, .ver = 0}); }
static void newer_pull(script *s)
{
    push(s, 1, 1, 1); /* worker 1 was released at version 0 */
    apply(s, 1);
    release(s, 1, 1);
}

/* What only a server does (evaluate an older gather, restore its shards, hand a worker slices
 * newer than its release) breaks a promise in a simulator's log. */
static void a_simulators_log_is_held_to_the_simulator(void **state)
{
    (void)state;
    void (*forged[])(script *) = {older_eval, a_restore, newer_pull};
    const char *why[] = {"the eval says version 1, the version is 2", "a restore in a simulator",
                         "a simulated worker pulls only when released"};
    for (int i = 0; i < 3; i++) {
        expect(asp_then(false, forged[i]), NULL);
        expect(asp_then(true, forged[i]), why[i]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_call_in_order_is_kept),
        cmocka_unit_test(a_line_out_of_order_is_broken),
        cmocka_unit_test(liveness_acts_only_when_the_policy_left_everyone_waiting),
        cmocka_unit_test(a_barrier_search_grants_each_worker_once),
        cmocka_unit_test(on_a_virtual_clock_a_tick_comes_on_time),
        cmocka_unit_test(a_simulators_log_is_held_to_the_simulator),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
