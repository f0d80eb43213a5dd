/* The promises at edges an audit found the checker loose on: a slot joined again while the
 * gradient its last worker left waits in the buffer (one gradient of a slot per apply), a
 * k-of-n release with nothing buffered (everyone or nobody), ElasticBSP's call that logs the
 * barrier search's grants (still monitoring: nobody waits), and a diverged run's last call
 * (judged, as no failure cut it). */
#include "check_test_rig.h"

/* Worker 0 of `slots` pushes step 1, crashes and joins its slot again. */
static script *slot_joined_again(const char *policy, uint32_t slots)
{
    script *s = open_script(policy, slots);
    start_all(s, slots);
    push(s, 0, 1, 0);
    leave(s, 0, 1);
    join(s, 0, 0);
    return s;
}

static void a_bsp_superstep_is_started_by_a_gradient_of_a_worker_gone(void **state)
{
    (void)state;
    script *s = slot_joined_again("bsp", 2);
    release(s, 0, 0);
    expect(s, "only a barrier releases");

    /* The joiner waits for the barrier, which takes the gradient its slot left. */
    s = slot_joined_again("bsp", 2);
    push(s, 1, 1, 0);
    apply(s, 2);
    release(s, 0, 1); /* at the slowest started step */
    release(s, 1, 1);
    expect(s, NULL);
}

static void a_slot_puts_one_gradient_in_a_k_of_n_apply(void **state)
{
    (void)state;
    script *s = slot_joined_again("backup:k=2", 3);
    release(s, 0, 0);
    expect(s, "released joiner 0 while its slot's gradient waits in the buffer");

    s = slot_joined_again("backup:k=2", 3); /* the joiner waits for the next apply */
    push(s, 1, 1, 0);
    apply(s, 2);
    release(s, 0, 0);
    release(s, 1, 1);
    expect(s, NULL);
}

/* ssp:s=0 holds workers 0 and 1 at step 1 behind worker 2; the switch to backup:k=2 leaves them
 * waiting with nothing buffered, and worker 2 crashes. */
static script *waiting_with_nothing_buffered(void)
{
    script *s = open_script("ssp:s=0", 3);
    start_all(s, 3);
    push(s, 0, 1, 0);
    apply_scaled(s, 1, 1);
    push(s, 1, 1, 1);
    apply_scaled(s, 1, 1);
    feed(s, (sw_event){.kind = SW_EV_SWITCH, .reason = "backup:k=2"});
    leave(s, 2, 0);
    return s;
}

static void with_nothing_buffered_k_of_n_releases_everyone(void **state)
{
    (void)state;
    script *s = waiting_with_nothing_buffered();
    release(s, 0, 1);
    expect(s, "released 1 of 2 waiting workers without an apply");

    s = waiting_with_nothing_buffered();
    release(s, 0, 1);
    release(s, 1, 1);
    expect(s, NULL);
}

/* The search answers at worker 1's second push, and that worker goes on, or is kept waiting. */
static bool search_answers_and_lets_go(script *s)
{
    grant(s, 0, 1);
    grant(s, 1, 2);
    return true;
}

static bool search_answers_and_holds(script *s) { return !search_answers_and_lets_go(s); }

static void ebsp_lets_the_pusher_go_in_the_call_of_its_grants(void **state)
{
    (void)state;
    expect(ebsp_monitored(search_answers_and_holds), "left worker 1 waiting");
    expect(ebsp_monitored(search_answers_and_lets_go), NULL);
}

/* bsp: worker 0 pushes and is released alone, before the barrier: the call's fault shows when
 * the call is judged, at the next call or at the end line. */
static void an_end_line_judges_the_last_call_unless_a_failure_cut_it(void **state)
{
    (void)state;
    static const char *const ends[][2] = {
        {"time limit", "only a barrier releases"},
        {"failed: the model diverged at t=1.0 s: its validation loss is not finite (stopped by "
         "time limit)", "only a barrier releases"},
        {"failed: shard 1 has been silent for 60 s", NULL},
    };
    for (size_t i = 0; i < sizeof ends / sizeof *ends; i++) {
        script *s = open_script("bsp", 2);
        start_all(s, 2);
        push(s, 0, 1, 0);
        release(s, 0, 1);
        if (!s->rc)
            s->rc = sw_check_end_line(s->c, s->t, s->V, ends[i][0], 99, s->err);
        const char *want = ends[i][1];
        if (want ? s->rc != SW_EPROMISE || !strstr(s->err, want) : s->rc != 0)
            fail_msg("'%s': %d '%s'", ends[i][0], s->rc, s->err);
        sw_check_free(s->c);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_bsp_superstep_is_started_by_a_gradient_of_a_worker_gone),
        cmocka_unit_test(a_slot_puts_one_gradient_in_a_k_of_n_apply),
        cmocka_unit_test(with_nothing_buffered_k_of_n_releases_everyone),
        cmocka_unit_test(ebsp_lets_the_pusher_go_in_the_call_of_its_grants),
        cmocka_unit_test(an_end_line_judges_the_last_call_unless_a_failure_cut_it),
    };
    return cmocka_run_group_tests(tests, NULL, sw_test_teardown);
}
