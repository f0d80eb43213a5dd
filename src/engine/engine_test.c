/* The engine and the classic policies on hand-made event scripts: who is released when, what is
 * applied, and what the log says. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "syncwise/engine.h"
#include "syncwise/err.h"
#include "syncwise/policy.h"
#include "engine_test_rig.h"

static void bsp_waits_for_everyone_then_applies_the_sum(void **state)
{
    (void)state;
    sw_engine *e = start("bsp", 3, 3);
    sw_engine_result r = push(e, 0, 1, 0, 1);
    assert_int_equal(r.n_released, 0);
    r = push(e, 2, 2, 0, 2);
    assert_int_equal(r.n_released, 0);
    assert_false(r.applied);
    r = push(e, 1, 3, 0, 3);
    assert_true(r.applied);
    assert_int_equal(r.n_released, 3);
    assert_int_equal(sw_engine_version(e), 1);
    /* agg=sum: 1 - 0.5 * (1 + 2 + 3) */
    assert_float_equal(sw_engine_params_ptr(e)[0], -2.0f, 1e-6);
    sw_engine_free(e);
    e = start("bsp:agg=mean", 2, 2);
    push(e, 0, 1, 0, 1);
    push(e, 1, 3, 0, 2);
    assert_float_equal(sw_engine_params_ptr(e)[1], 1 - 0.5f * 2, 1e-6);
    sw_engine_free(e);
}

static void a_crash_completes_the_barrier(void **state)
{
    (void)state;
    sw_engine *e = start("bsp", 3, 3);
    push(e, 0, 1, 0, 1);
    push(e, 1, 1, 0, 2);
    sw_engine_result r;
    assert_int_equal(sw_engine_leave(e, 2, 3, true, &r), 0);
    assert_true(r.applied);
    assert_int_equal(r.n_released, 2);
    assert_int_equal(rec.ev[rec.n - 4].kind, SW_EV_CRASH);
    /* The next superstep waits only for the two that are left. */
    push(e, 0, 1, 1, 4);
    r = push(e, 1, 1, 1, 5);
    assert_int_equal(r.n_released, 2);
    assert_int_equal(sw_engine_leave(e, 2, 6, false, &r), SW_ESTATE); /* already gone */
    sw_engine_free(e);
}

static void asp_releases_the_pusher_and_modulates_by_staleness(void **state)
{
    (void)state;
    sw_engine *e = start("asp:lr_mod=staleness", 2, 2);
    sw_engine_result r = push(e, 0, 1, 0, 1);
    assert_true(r.applied);
    assert_int_equal(r.n_released, 1);
    assert_int_equal(r.released[0], 0);
    push(e, 0, 1, 1, 2); /* V = 2 now */
    r = push(e, 1, 2, 0, 3); /* computed at 0, arrives at V = 2: staleness 2 */
    assert_float_equal(rec.ev[rec.n - 2].lr_scale, 0.5f, 0);
    assert_float_equal(sw_engine_params_ptr(e)[0], 1 - 0.5f - 0.5f - 0.5f * 0.5f * 2, 1e-6);
    sw_engine_free(e);
}

static void ssp_bounds_the_lead(void **state)
{
    (void)state;
    sw_engine *e = start("ssp:s=1", 2, 2);
    sw_engine_result r = push(e, 0, 1, 0, 1); /* clocks 1, 0: lead 1 <= s */
    assert_true(released(&r, 0));
    r = push(e, 0, 1, 1, 2); /* clocks 2, 0: lead 2 > s, waits */
    assert_int_equal(r.n_released, 0);
    r = push(e, 1, 1, 0, 3); /* the slowest moves: min 1, worker 0 may go, and worker 1 too */
    assert_true(released(&r, 0));
    assert_true(released(&r, 1));
    assert_int_equal(sw_engine_version(e), 3); /* every push applied on arrival */
    sw_engine_free(e);
}

static void ssp_zero_has_bsp_schedule(void **state)
{
    (void)state;
    sw_engine *e = start("ssp:s=0", 2, 2);
    assert_int_equal(push(e, 0, 1, 0, 1).n_released, 0);
    assert_int_equal(push(e, 1, 1, 0, 2).n_released, 2);
    sw_engine_free(e);
}

static void sync_drops_stale_gradients(void **state)
{
    (void)state;
    sw_engine *e = start("sync:grads_to_wait=2", 3, 3);
    sw_engine_result r = push(e, 0, 1, 0, 1);
    assert_false(r.applied);
    assert_true(released(&r, 0)); /* never waits */
    r = push(e, 1, 1, 0, 2);
    assert_true(r.applied); /* two gradients of version 0 */
    r = push(e, 2, 1, 0, 3); /* computed at 0, V is 1 */
    assert_true(r.dropped);
    assert_true(released(&r, 2));
    assert_int_equal(rec.ev[rec.n - 2].kind, SW_EV_DROP);
    assert_int_equal(sw_engine_get_view(e)->workers[2].clock, 0); /* not a step */
    sw_engine_free(e);
}

/* A policy of the test's own in the RLP action space: after each applied push, the action a
 * function of the test's chooses (sw_engine_params.policy_ctx carries it). */
typedef struct chooser {
    int (*choose)(void *arg, const sw_engine_view *v, const sw_push *p);
    void *arg;
} chooser;

static int acting_init(void *state, sw_spec *spec, const sw_engine_view *v,
                       const sw_policy_env *env, char *err)
{
    (void)spec, (void)v, (void)err;
    *(chooser **)state = env->ctx;
    return 0;
}

static void acting_push(void *state, const sw_engine_view *v, const sw_push *p, sw_decision *d)
{
    (void)state, (void)v, (void)p;
    d->apply = true;
}

static void acting_applied(void *state, const sw_engine_view *v, const sw_push *p,
                           sw_decision *d)
{
    chooser *c = *(chooser **)state;
    sw_policy_act(v, p->worker, c->choose(c->arg, v, p), d);
}

static const sw_policy_ops acting = {
    .name = "acting", .keys = "", .help = "", .state_size = sizeof(chooser *),
    .wants = SW_WANT_LOSS, .init = acting_init, .on_push = acting_push,
    .on_applied = acting_applied,
};

static int always_none(void *ctx, const sw_engine_view *v, const sw_push *p)
{
    (void)v, (void)p;
    (*(int *)ctx)++;
    return SW_ACTION_NONE;
}

static void liveness_rule_prevents_deadlock(void **state)
{
    (void)state;
    memset(&rec, 0, sizeof rec);
    int calls = 0;
    sw_engine_params p = sw_engine_default_params();
    p.max_workers = 2;
    p.policy = "acting";
    p.sink = record;
    p.sink_ctx = &rec;
    chooser c = {always_none, &calls};
    p.policy_ops = &acting;
    p.policy_ctx = &c;
    sw_engine *e;
    assert_int_equal(sw_engine_new(&e, &p, NULL), 0);
    sw_engine_result r;
    sw_engine_join(e, 0, 0, &r);
    sw_engine_join(e, 1, 0, &r);
    r = push(e, 0, 0, 0, 1);
    assert_int_equal(r.n_released, 0); /* "none": worker 0 waits while worker 1 computes */
    assert_true(r.applied);            /* every push is applied under `actions` */
    r = push(e, 1, 0, 0, 2);
    assert_int_equal(calls, 2);
    /* "none" again would leave everyone waiting: the engine releases both and says why. */
    assert_int_equal(r.n_released, 2);
    assert_int_equal(rec.ev[rec.n - 1].kind, SW_EV_RELEASE);
    assert_string_equal(rec.ev[rec.n - 1].reason, "liveness");
    sw_engine_free(e);
}

static void actions_draws_every_action(void **state)
{
    (void)state;
    sw_engine *e = start("actions", 3, 3);
    int seen_none = 0, seen_some = 0;
    for (int i = 0; i < 60; i++) {
        const sw_engine_view *v = sw_engine_get_view(e);
        uint32_t w = 0;
        while (v->workers[w].state != SW_WORKER_RUNNING)
            w++;
        sw_engine_result r = push(e, w, 0, 0, i);
        seen_none += r.n_released == 0;
        seen_some += r.n_released > 0;
    }
    assert_true(seen_none > 0 && seen_some > 0);
    sw_engine_free(e);
}

/* The probe reports θ[0] and counts its calls; the policy's choice records what it saw. */
typedef struct probe_log {
    int probes, choices;
    double before[8], after[8];
    uint64_t version[8];
} probe_log;

static double theta0_probe(void *ctx, const float *params)
{
    ((probe_log *)ctx)->probes++;
    return params[0];
}

static int record_losses(void *ctx, const sw_engine_view *v, const sw_push *p)
{
    (void)p;
    probe_log *l = ctx;
    if (l->choices < 8) {
        l->before[l->choices] = v->loss_before;
        l->after[l->choices] = v->loss_after;
        l->version[l->choices] = v->version;
    }
    l->choices++;
    return SW_ACTION_PUSHER;
}

static void a_choice_after_the_apply_sees_the_loss_before_and_after_it(void **state)
{
    (void)state;
    probe_log log = {0};
    sw_engine_params p = two_params("acting", 1);
    chooser c = {record_losses, &log};
    p.policy_ops = &acting;
    p.policy_ctx = &c;
    p.loss_probe = theta0_probe;
    p.loss_probe_ctx = &log;
    sw_engine *e;
    assert_int_equal(sw_engine_new(&e, &p, NULL), 0);
    sw_engine_result r;
    sw_engine_join(e, 0, 0, &r);
    for (int i = 0; i < 3; i++) {
        r = push(e, 0, 1, (uint64_t)i, i + 1);
        assert_true(released(&r, 0));
    }
    /* θ0: 1 -> 0.5 -> 0 -> -0.5; the choice comes after each apply. */
    assert_int_equal(log.choices, 3);
    assert_true(log.before[0] == 1.0 && log.after[0] == 0.5);
    assert_true(log.before[1] == 0.5 && log.after[1] == 0.0);
    assert_true(log.before[2] == 0.0 && log.after[2] == -0.5);
    assert_int_equal(log.version[0], 1);
    /* One probe per apply, plus one for the first "before". */
    assert_int_equal(log.probes, 4);
    /* Changing θ from outside forgets the cached loss. */
    sw_engine_params_mut(e)[0] = 7;
    push(e, 0, 0, 3, 4);
    assert_true(log.before[3] == 7.0);
    sw_engine_free(e);
}

static void policies_without_losses_never_probe(void **state)
{
    (void)state;
    probe_log log = {0};
    sw_engine_params p = sw_engine_default_params();
    p.n_params = 2;
    p.policy = "asp";
    p.loss_probe = theta0_probe;
    p.loss_probe_ctx = &log;
    sw_engine *e;
    assert_int_equal(sw_engine_new(&e, &p, NULL), 0);
    sw_engine_result r;
    sw_engine_join(e, 0, 0, &r);
    push(e, 0, 1, 0, 1);
    assert_int_equal(log.probes, 0);
    assert_true(isnan(sw_engine_get_view(e)->loss_after));
    sw_engine_free(e);
}

static void joiner_starts_at_the_slowest_clock(void **state)
{
    (void)state;
    sw_engine *e = start("ssp:s=5", 2, 3);
    for (int i = 0; i < 3; i++)
        push(e, 0, 0, 0, 1 + i);
    push(e, 1, 0, 0, 5); /* clocks 3, 1 */
    sw_engine_result r;
    assert_int_equal(sw_engine_join(e, 2, 6, &r), 0);
    assert_int_equal(sw_engine_get_view(e)->workers[2].clock, 1);
    assert_int_equal(sw_engine_join(e, 2, 7, &r), SW_ESTATE); /* already live */
    assert_int_equal(sw_engine_join(e, 9, 7, &r), SW_ESTATE); /* no such slot */
    sw_engine_free(e);
}

static void switch_keeps_state_and_releases_held_workers(void **state)
{
    (void)state;
    sw_engine *e = start("bsp", 3, 3);
    push(e, 0, 1, 0, 1);
    push(e, 1, 1, 0, 2); /* 0 and 1 wait at the barrier */
    sw_engine_result r;
    char err[SW_ERR_LEN];
    assert_int_equal(sw_engine_switch_policy(e, "nonsense", 3, &r, err), SW_ENOTFOUND);
    assert_non_null(strstr(err, "bsp, asp, ssp"));
    assert_string_equal(sw_engine_policy_name(e), "bsp");
    assert_int_equal(sw_engine_switch_policy(e, "asp", 3, &r, err), 0);
    assert_int_equal(r.n_released, 2); /* asp holds nobody */
    assert_string_equal(sw_engine_policy_name(e), "asp");
    int switches = 0;
    for (int i = 0; i < rec.n; i++)
        switches += rec.ev[i].kind == SW_EV_SWITCH;
    assert_int_equal(switches, 1);
    assert_int_equal(sw_engine_get_view(e)->workers[0].clock, 1); /* the table survived */
    assert_int_equal(sw_engine_get_view(e)->buffered, 2);         /* and the buffer */
    r = push(e, 2, 1, 0, 4);
    assert_true(r.applied);
    assert_int_equal(sw_engine_get_view(e)->buffered, 0);
    sw_engine_free(e);
}

/* Blind DBW (gain k: k by timing alone) switched in at version 1 times that version's arrivals
 * (its record sat where no arrival looked, at a version a multiple of 4 only): the first at 1 s,
 * the second at 3 s, so one gradient every second beats two in three, and k becomes 1. */
static void dbw_switched_in_times_its_first_version(void **state)
{
    (void)state;
    sw_engine *e = start("asp", 2, 2);
    push(e, 0, 1, 0, 0.5); /* version 1 */
    sw_engine_result r;
    char err[SW_ERR_LEN];
    assert_int_equal(sw_engine_switch_policy(e, "bdbw", 1, &r, err), 0);
    assert_int_equal(sw_engine_get_view(e)->version, 1);
    assert_false(push(e, 0, 1, 1, 2).applied); /* k starts at 2 */
    assert_true(push(e, 1, 1, 0, 3).dropped); /* computed at version 0: late */
    assert_true(push(e, 1, 1, 1, 4).applied);
    assert_true(push(e, 0, 1, 2, 5).applied); /* k = 1 now */
    sw_engine_free(e);
}

static void bad_specs_and_states(void **state)
{
    (void)state;
    sw_engine_params p = sw_engine_default_params();
    sw_engine *e;
    char err[SW_ERR_LEN];
    p.policy = "ssp:s=-1";
    assert_int_equal(sw_engine_new(&e, &p, err), SW_ERANGE);
    p.policy = "ssp:t=1";
    assert_int_equal(sw_engine_new(&e, &p, err), SW_EINVAL);
    assert_non_null(strstr(err, "known: s"));
    p.policy = "asp:lr_mod=age";
    assert_int_equal(sw_engine_new(&e, &p, err), SW_EINVAL);
    p.policy = "asp";
    p.max_workers = 0;
    assert_int_equal(sw_engine_new(&e, &p, err), SW_EINVAL);
    e = start("asp", 1, 2);
    float g[2] = {0, 0};
    sw_engine_result r;
    assert_int_equal(sw_engine_push(e, 1, g, 0, 1, &r), SW_ESTATE); /* never joined */
    push(e, 0, 0, 0, 1);
    sw_engine_free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bsp_waits_for_everyone_then_applies_the_sum),
        cmocka_unit_test(a_crash_completes_the_barrier),
        cmocka_unit_test(asp_releases_the_pusher_and_modulates_by_staleness),
        cmocka_unit_test(ssp_bounds_the_lead),
        cmocka_unit_test(ssp_zero_has_bsp_schedule),
        cmocka_unit_test(sync_drops_stale_gradients),
        cmocka_unit_test(liveness_rule_prevents_deadlock),
        cmocka_unit_test(actions_draws_every_action),
        cmocka_unit_test(a_choice_after_the_apply_sees_the_loss_before_and_after_it),
        cmocka_unit_test(policies_without_losses_never_probe),
        cmocka_unit_test(joiner_starts_at_the_slowest_clock),
        cmocka_unit_test(switch_keeps_state_and_releases_held_workers),
        cmocka_unit_test(dbw_switched_in_times_its_first_version),
        cmocka_unit_test(bad_specs_and_states),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
