/* The promise checker catches each broken promise in a hand-made event stream, names it, and
 * passes the same streams unbroken (log files: check_log_test.c). */
#include "check_test_rig.h"

static void every_run_counts_versions_and_never_stalls(void **state)
{
    (void)state;
    script *s = open_script("asp", 2);
    start_all(s, 1);
    push(s, 0, 1, 0);
    s->V++; /* an apply skipped */
    apply_scaled(s, 1, 1);
    expect(s, "the apply says version 2, the version is 1");

    /* An evaluation may read an older model (a sharded server's gather), never a later one. */
    for (int later = 0; later <= 1; later++) {
        s = open_script("asp", 2);
        start_all(s, 1);
        for (uint64_t k = 1; k <= 2; k++) {
            push(s, 0, k, k - 1);
            apply(s, 1);
            release(s, 0, k);
        }
        feed(s, (sw_event){.kind = SW_EV_EVAL, .V = later ? 3 : 1});
        expect(s, later ? "the eval says version 3, the version is 2" : NULL);
    }

    s = open_script("mystery", 2); /* unknown: only the rules of every run */
    start_all(s, 1);
    push(s, 0, 1, 0);
    expect(s, "stalled");

    s = open_script("mystery", 2);
    start_all(s, 1);
    push(s, 0, 1, 0);
    drop(s, 0, 0);
    apply_scaled(s, 1, 1);
    expect(s, "1 gradients with 0 accepted");

    s = open_script("mystery", 2);
    start_all(s, 1);
    release(s, 0, 0);
    expect(s, "released while not waiting");

    /* Rule 5 binds a policy of no known promise too: it may not lean on the liveness rule. */
    s = open_script("mystery", 1);
    start_all(s, 1);
    push(s, 0, 1, 0);
    feed(s, (sw_event){.kind = SW_EV_RELEASE, .worker = 0, .clock = 1, .reason = "liveness"});
    expect(s, "the engine's liveness rule had to release them");

    s = open_script("mystery", 2);
    start_all(s, 1);
    push(s, 0, 2, 0);
    expect(s, "pushed step 2 after step 0");

    s = open_script("mystery", 2);
    start_all(s, 2);
    push(s, 0, 1, 0);
    apply_scaled(s, 1, 1);
    release(s, 0, 1);
    s->t -= 5;
    push(s, 1, 1, 0);
    expect(s, "time went back");
}

static void asp_applies_at_once_and_never_holds_anyone(void **state)
{
    (void)state;
    script *s = open_script("asp", 2);
    start_all(s, 2);
    push(s, 0, 1, 0);
    apply_scaled(s, 1, 1);
    release(s, 0, 1);
    expect(s, NULL);

    s = open_script("asp", 2);
    start_all(s, 2);
    push(s, 0, 1, 0);
    apply_scaled(s, 1, 1);
    expect(s, "left worker 0 waiting");

    s = open_script("asp:lr_mod=staleness", 2);
    start_all(s, 2);
    push(s, 0, 1, 0);
    apply_scaled(s, 1, 1);
    release(s, 0, 1);
    push(s, 1, 1, 0); /* one version stale: scale 1 */
    apply_scaled(s, 1, 1);
    release(s, 1, 1);
    push(s, 0, 2, 1);
    apply_scaled(s, 1, 1);
    release(s, 0, 2);
    push(s, 1, 2, 1); /* two stale: scale 1/2 */
    apply_scaled(s, 1, 1);
    expect(s, "2 versions stale, not 0.5");
}

/* Worker 0 runs `steps` steps alone in a 2-worker ssp or dssp run, applied at once. */
static void run_ahead(script *s, uint64_t steps)
{
    for (uint64_t k = 1; k <= steps; k++) {
        push(s, 0, k, s->V);
        apply_scaled(s, 1, 1);
        release(s, 0, k);
    }
}

static void ssp_bounds_the_lead_both_ways(void **state)
{
    (void)state;
    script *s = open_script("ssp:s=2", 2);
    start_all(s, 2);
    run_ahead(s, 2);
    push(s, 0, 3, s->V); /* 3 ahead: must wait */
    apply_scaled(s, 1, 1);
    expect(s, NULL);

    s = open_script("ssp:s=2", 2);
    start_all(s, 2);
    run_ahead(s, 3);
    expect(s, "released worker 0 3 steps ahead of the slowest live worker (s=2)");

    s = open_script("ssp:s=2", 2);
    start_all(s, 2);
    push(s, 0, 1, 0);
    apply_scaled(s, 1, 1);
    expect(s, "left worker 0 waiting 1 steps ahead");
}

/* dssp:lo=2,hi=6 on 2 workers: worker 0's push of step 3 (3 ahead, beyond lo) applied, the
 * controller's decision to come. */
static script *asking_at_3(void)
{
    script *s = open_script("dssp:lo=2,hi=6", 2);
    start_all(s, 2);
    run_ahead(s, 2);
    push(s, 0, 3, s->V);
    apply_scaled(s, 1, 1);
    return s;
}

static void dssp_keeps_hi_and_spends_grants_on_every_push(void **state)
{
    (void)state;
    /* The scenario in small: a release 7 ahead with hi=6. */
    script *s = asking_at_3();
    grant(s, 0, 4);
    release(s, 0, 3);
    run_ahead(s, 0);
    for (uint64_t k = 4; k <= 7; k++) {
        push(s, 0, k, s->V);
        apply_scaled(s, 1, 1);
        release(s, 0, k);
    }
    expect(s, "released worker 0 7 steps ahead of the slowest live worker (hi=6)");

    s = asking_at_3();
    grant(s, 0, 5); /* 3 ahead: at most hi - 3 + 1 = 4 keep every granted step within hi */
    expect(s, "at most 4 keep it within hi=6");

    s = asking_at_3();
    grant(s, 0, 0);
    expect(s, "granted worker 0 0 steps: a grant is of 1 step at least");

    s = asking_at_3();
    grant(s, 0, 1);
    grant(s, 0, 3); /* the second would replace the first */
    expect(s, "granted worker 0 steps twice in one decision");

    s = open_script("dssp:lo=2,hi=6", 2);
    start_all(s, 2);
    run_ahead(s, 3);
    expect(s, "beyond lo=2, without a granted step");

    /* A grant is spent on every push, even within lo: a step granted at 3 ahead cannot be
     * spent after the slowest caught up and ran away again. */
    s = asking_at_3();
    grant(s, 0, 2);
    release(s, 0, 3); /* one granted step left */
    for (uint64_t k = 1; k <= 3; k++) { /* worker 1 catches up; 0's push then spends it */
        push(s, 1, k, s->V);
        apply_scaled(s, 1, 1);
        release(s, 1, k);
    }
    push(s, 0, 4, s->V);
    apply_scaled(s, 1, 1);
    release(s, 0, 4); /* 1 ahead: within lo anyway; the grant is now spent */
    run_ahead(s, 0);
    for (uint64_t k = 5; k <= 7; k++) {
        push(s, 0, k, s->V);
        apply_scaled(s, 1, 1);
        release(s, 0, k);
    }
    expect(s, "released worker 0 3 steps ahead, beyond lo=2, without a granted step");
}

static void bsp_waits_for_everyone(void **state)
{
    (void)state;
    script *s = open_script("bsp", 2);
    start_all(s, 2);
    push(s, 0, 1, 0);
    push(s, 1, 1, 0);
    apply(s, 2);
    release(s, 0, 1);
    release(s, 1, 1);
    expect(s, NULL);

    s = open_script("bsp", 2);
    start_all(s, 2);
    push(s, 0, 1, 0);
    apply(s, 1);
    expect(s, "applied before the barrier");

    s = open_script("bsp", 2);
    start_all(s, 2);
    push(s, 0, 1, 0);
    release(s, 0, 1);
    expect(s, "only a barrier releases");

    s = open_script("bsp:agg=mean", 2);
    start_all(s, 2);
    push(s, 0, 1, 0);
    push(s, 1, 1, 0);
    apply(s, 2);
    release(s, 0, 1);
    release(s, 1, 1);
    expect(s, "scaled by 2, not 1 (agg=mean)");

    s = open_script("bsp", 3); /* worker 2 crashes after pushing: not waited for */
    start_all(s, 3);
    push(s, 2, 1, 0);
    leave(s, 2, 1);
    push(s, 0, 1, 0);
    push(s, 1, 1, 0);
    apply(s, 3);
    release(s, 0, 1);
    release(s, 1, 1);
    expect(s, NULL);
}

static void backup_and_sync_drop_the_late_and_count_k(void **state)
{
    (void)state;
    script *s = open_script("backup:k=1", 2);
    start_all(s, 2);
    push(s, 0, 1, 0);
    apply(s, 1);
    release(s, 0, 1);
    push(s, 1, 1, 0); /* late */
    drop(s, 1, 0);
    release(s, 1, 0);
    expect(s, NULL);

    s = open_script("backup:k=1", 2);
    start_all(s, 2);
    push(s, 0, 1, 0);
    apply(s, 1);
    release(s, 0, 1);
    push(s, 1, 1, 0);
    apply(s, 1); /* a late gradient accepted */
    expect(s, "of a version older than 1");

    s = open_script("backup:k=2", 3);
    start_all(s, 3);
    push(s, 0, 1, 0);
    apply(s, 1);
    expect(s, "not k = 2");

    s = open_script("dbw", 2);
    start_all(s, 2);
    push(s, 0, 1, 0);
    drop(s, 0, 0);
    release(s, 0, 0);
    expect(s, "dropped a gradient of the current version");

    s = open_script("sync:grads_to_wait=2", 2);
    start_all(s, 2);
    push(s, 0, 1, 0);
    release(s, 0, 1);
    push(s, 0, 2, 0); /* one worker twice: ElasticDL counts gradients */
    apply_scaled(s, 2, 1);
    release(s, 0, 2);
    expect(s, NULL);

    s = open_script("sync:grads_to_wait=2", 2);
    start_all(s, 2);
    push(s, 0, 1, 0);
    apply_scaled(s, 1, 1);
    release(s, 0, 1);
    expect(s, "not grads_to_wait=2");
}

/* Two workers under ebsp:R=4 push twice each (monitoring), and the search grants worker 0 one
 * step and worker 1 two, counting the steps in flight. */
/* Everyone pushed twice: the search's answer. */
static bool search_answers(script *s)
{
    grant(s, 0, 1);
    grant(s, 1, 2);
    return true;
}

static script *ebsp_predicting(void) { return ebsp_monitored(search_answers); }

static void ebsp_stops_workers_at_the_searched_barrier(void **state)
{
    (void)state;
    script *s = ebsp_predicting();
    push(s, 0, 3, s->V); /* its one step spent: waits */
    apply_scaled(s, 1, 1);
    push(s, 1, 3, s->V); /* one of two: goes on */
    apply_scaled(s, 1, 1);
    release(s, 1, 3);
    push(s, 1, 4, s->V); /* the barrier */
    apply_scaled(s, 1, 1);
    release(s, 0, 3);
    release(s, 1, 4);
    expect(s, NULL);

    s = ebsp_predicting();
    push(s, 0, 3, s->V);
    apply_scaled(s, 1, 1);
    release(s, 0, 3); /* past its barrier */
    expect(s, "released worker 0 before the barrier");

    /* Monitoring ends when everyone pushed twice: the search must answer then (a log without
     * any grant passed as ebsp). */
    s = ebsp_monitored(NULL);
    expect(s, "every live worker pushed twice since the barrier, and no barrier search's grants");
}

static void actions_release_nobody_the_pusher_or_all(void **state)
{
    (void)state;
    script *s = open_script("actions", 3);
    start_all(s, 3);
    push(s, 0, 1, 0);
    apply_scaled(s, 1, 1); /* nobody */
    push(s, 1, 1, 1);
    apply_scaled(s, 1, 1);
    release(s, 0, 1); /* one of two idle workers, not the pusher */
    expect(s, "neither nobody, the pusher nor all");
}

/* rlswitch: what bsp, ssp and asp all keep, and their hand-overs: a barrier of everyone at the
 * scale of its gradients, an apply on arrival at 1, asp taking over bsp's buffer at 1; never a
 * drop, nor a sum scaled without everyone waiting. */
static void rlswitch_keeps_what_its_three_policies_keep(void **state)
{
    (void)state;
    script *s = open_script("rlswitch", 2);
    start_all(s, 2);
    push(s, 0, 1, 0);
    push(s, 1, 1, 0);
    apply(s, 2); /* bsp's barrier */
    release(s, 0, 1);
    release(s, 1, 1);
    push(s, 0, 2, 1);
    push(s, 1, 2, 1);
    apply_scaled(s, 2, 1); /* asp taking over a buffer */
    release(s, 0, 2);
    release(s, 1, 2);
    expect(s, NULL);

    s = open_script("rlswitch", 3);
    start_all(s, 3);
    push(s, 0, 1, 0);
    push(s, 1, 1, 0);
    apply(s, 2);
    expect(s, "neither 1 nor, in a barrier of every live worker, their number");

    s = open_script("rlswitch", 2);
    start_all(s, 2);
    push(s, 0, 1, 0);
    drop(s, 0, 0);
    expect(s, "dropped the gradient of worker 0");
}

/* Rules the independent review found loose: placement, grants, wake-ups, specs, scales, and the
 * backup workers' departures. */
static void what_no_policy_does_and_where_it_shows(void **state)
{
    (void)state;
    script *s = open_script("ssp:s=2", 2);
    start_all(s, 2);
    push(s, 0, 1, 0);
    apply_scaled(s, 1, 1);
    grant(s, 0, 2);
    expect(s, "granted worker 0 steps, which it never does");

    s = open_script("ssp:s=2", 2);
    start_all(s, 2);
    push(s, 0, 1, 0);
    apply_scaled(s, 1, 2);
    expect(s, "scaled the learning rate by 2, which it never does");

    s = open_script("mystery", 2);
    start_all(s, 1);
    feed(s, (sw_event){.kind = SW_EV_TICK});
    expect(s, "a tick with no wake-up due");

    /* A sharded server's restore goes back to a version it has passed, never ahead, and the
     * version counter goes on through it. */
    s = open_script("ssp:s=1", 2);
    start_all(s, 2);
    push(s, 0, 1, 0);
    apply(s, 1);
    feed(s, (sw_event){.kind = SW_EV_RESTORE, .ver = 0, .n = 1});
    release(s, 0, 1);
    push(s, 1, 1, 0);
    apply(s, 1);
    release(s, 1, 1);
    expect(s, NULL);
    s = open_script("ssp:s=1", 2);
    start_all(s, 2);
    feed(s, (sw_event){.kind = SW_EV_RESTORE, .ver = 3});
    expect(s, "a restore to version 3, ahead of it");

    /* A worker's pulls never go back: each push is of its last one's version or newer (pulls
     * may skip steps, so older than its release is allowed), unless a restore went back. */
    for (int restored = 0; restored <= 1; restored++) {
        s = open_script("asp", 1);
        start_all(s, 1);
        push(s, 0, 1, 0);
        apply(s, 1);
        release(s, 0, 1);
        push(s, 0, 2, 1);
        apply(s, 1);
        release(s, 0, 2);
        push(s, 0, 3, 1); /* no pull since step 2: still version 1 */
        apply(s, 1);
        if (restored)
            feed(s, (sw_event){.kind = SW_EV_RESTORE, .ver = 0, .n = 3});
        release(s, 0, 3);
        push(s, 0, 4, 0);
        apply(s, 1);
        release(s, 0, 4);
        expect(s, restored ? NULL : "pushed a gradient of version 0 after one of version 1");
    }

    s = open_script("mystery", 2);
    start_all(s, 1);
    push(s, 0, 1, 0);
    feed(s, (sw_event){.kind = SW_EV_WAKE, .at = 1.5});
    s->t = 9;
    feed(s, (sw_event){.kind = SW_EV_EVAL});
    expect(s, "a wake-up due at t=1.5 never came");

    /* A wake-up asked for in the last call, at a time already past, is owed none: nothing came
     * after the request (a run cut there by a push limit). */
    s = open_script("mystery", 2);
    start_all(s, 1);
    push(s, 0, 1, 0);
    feed(s, (sw_event){.kind = SW_EV_WAKE, .at = s->t - 0.5});
    expect(s, NULL);

    /* A wake-up's tick asking for another due already: the clock would stand still. One at the
     * tick's own time is the engine's to refuse: a log's times are rounded, and one a moment
     * later may print as the tick's. */
    const double asked[] = {-0.5, 0, 1};
    for (int k = 0; k < 3; k++) {
        s = open_script("mystery", 2);
        start_all(s, 1);
        push(s, 0, 1, 0);
        feed(s, (sw_event){.kind = SW_EV_WAKE, .at = s->t});
        feed(s, (sw_event){.kind = SW_EV_TICK});
        feed(s, (sw_event){.kind = SW_EV_WAKE, .at = s->t + asked[k]});
        expect(s, k ? NULL : "a wake-up's tick asked for a wake-up due already");
    }

    sw_check *c;
    char err[SW_ERR_LEN];
    assert_int_equal(sw_check_new(&c, NULL, 3, 0, err), SW_EINVAL); /* no spec at all */
    assert_int_equal(sw_check_new(&c, "asp", 3, 0, err), 0);
    uint64_t clock = 7; /* a worker outside the slots: absent, and no read outside them */
    assert_int_equal(sw_check_worker(c, 3, &clock), SW_WORKER_ABSENT);
    assert_int_equal(clock, 0);
    assert_int_equal(sw_check_lead(c, UINT32_MAX), 0);
    sw_check_free(c);
    assert_int_equal(sw_check_new(&c, "sync:grads_to_wait=4", 3, 0, err), SW_EPROMISE);
    assert_non_null(strstr(err, "exceeds the 3 worker slots"));
    assert_int_equal(sw_check_new(&c, "ssp:x=1", 3, 0, err), SW_EPROMISE);
    assert_non_null(strstr(err, "a spec no engine takes"));
    /* a value out of its range is broken the same way (rule 7), not a log that cannot be read */
    assert_int_equal(sw_check_new(&c, "ssp:s=-1", 3, 0, err), SW_EPROMISE);
    assert_non_null(strstr(err, "a spec no engine takes: ssp: s=-1 is outside"));
    /* and so are a choice the policy does not have, a learning rate out of range, a key twice:
     * the engine's own reading of a spec decides */
    const char *refused[] = {"bsp:agg=foo", "asp:lr_mod=foo", "dbw:D=0", "asp:lr=-5",
                             "ssp:s=1,lr=nan", "ssp:s=1,s=2", "ebsp:R=3,algo=foo"};
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
        if (sw_check_new(&c, refused[i], 3, 0, err) != SW_EPROMISE)
            fail_msg("%s was taken", refused[i]);
        assert_non_null(strstr(err, "a spec no engine takes"));
    }
    assert_int_equal(sw_check_new(&c, "backup:k=2,b=1", 3, 0, err), SW_EPROMISE);

    /* The decision as a whole shows where its call began. */
    s = open_script("ssp:s=1", 2);
    start_all(s, 2);
    push(s, 0, 1, 0);
    uint64_t began = sw_check_count(s->c);
    apply_scaled(s, 1, 1);
    expect(s, "(its decision as a whole)");
    (void)began;
}

static void backup_settles_departures_and_never_sits_on_k(void **state)
{
    (void)state;
    /* k=2 of 3: worker 2 leaves with one gradient in; two still compute: wait. */
    script *s = open_script("backup:k=2", 3);
    start_all(s, 3);
    push(s, 0, 1, 0);
    leave(s, 2, 0);
    apply(s, 1);
    release(s, 0, 1);
    expect(s, "on a departure, fewer than k = 2");

    /* Two current gradients in with k=2, and no apply. */
    s = open_script("backup:k=2", 3);
    start_all(s, 3);
    push(s, 0, 1, 0);
    push(s, 1, 1, 0);
    expect(s, "kept 2 current gradients unapplied with k = 2");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_run_counts_versions_and_never_stalls),
        cmocka_unit_test(asp_applies_at_once_and_never_holds_anyone),
        cmocka_unit_test(ssp_bounds_the_lead_both_ways),
        cmocka_unit_test(dssp_keeps_hi_and_spends_grants_on_every_push),
        cmocka_unit_test(bsp_waits_for_everyone),
        cmocka_unit_test(backup_and_sync_drop_the_late_and_count_k),
        cmocka_unit_test(ebsp_stops_workers_at_the_searched_barrier),
        cmocka_unit_test(rlswitch_keeps_what_its_three_policies_keep),
        cmocka_unit_test(actions_release_nobody_the_pusher_or_all),
        cmocka_unit_test(what_no_policy_does_and_where_it_shows),
        cmocka_unit_test(backup_settles_departures_and_never_sits_on_k),
    };
    return cmocka_run_group_tests(tests, NULL, sw_test_teardown);
}
