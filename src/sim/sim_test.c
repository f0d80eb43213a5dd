/* The simulator's policies, checked on its own JSONL event logs: each policy's invariant,
 * bit-identical logs for identical seeds, and metamorphic checks (ssp:s=0 has BSP's schedule;
 * asp with one worker is sequential SGD). Runs use small synthetic data (sim_test_base.h); how
 * runs end and what they refuse is sim_stop_test.c. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "syncwise/err.h"
#include "syncwise/model.h"
#include "syncwise/optim.h"
#include "syncwise/sim.h"
#include "sim_test_base.h"
#include "testutil/simlog.h"

static void bsp_releases_only_when_clocks_agree(void **state)
{
    (void)state;
    sw_sim_config c = base("bsp");
    c.events = "crash:w=2,t=40;join:t=70;leave:w=4,t=90";
    sw_sim_result res;
    char *log = run_log(c, &res);
    events es = read_events(log);
    sw_check *rp = replay_of(&es);
    long releases = 0, applies_after_crash = 0;
    for (size_t i = 0; i < es.n; i++) {
        const sw_event *e = &es.e[i].ev;
        replay(rp, e);
        if (e->kind == SW_EV_RELEASE) { /* every started worker at the same clock */
            releases++;
            for (uint32_t w = 0; w < es.info.slots; w++) {
                uint64_t cw;
                if (sw_check_worker(rp, w, &cw) != SW_WORKER_ABSENT && sw_check_lead(rp, w))
                    fail_msg("t=%g: release of %u while worker %u is %llu steps ahead", e->t,
                             e->worker, w, (unsigned long long)sw_check_lead(rp, w));
            }
        }
        applies_after_crash += e->kind == SW_EV_APPLY && e->t > 40;
    }
    assert_true(releases > 100);
    assert_true(applies_after_crash > 10); /* the crash never hung the barrier */
    assert_int_equal(res.stop, SW_STOP_MAX_TIME);
    sw_check_free(rp);
    free(es.e);
    free(log);
    sw_sim_result_free(&res);
}

static void ssp_never_lets_a_worker_run_too_far_ahead(void **state)
{
    (void)state;
    for (long s = 0; s <= 3; s++) {
        char policy[32];
        snprintf(policy, sizeof policy, "ssp:s=%ld", s);
        sw_sim_config c = base(policy);
        c.cluster = "const:1;const:3@0"; /* one worker three times slower */
        c.events = "crash:w=0,t=100";
        sw_sim_result res;
        char *log = run_log(c, &res);
        events es = read_events(log);
        sw_check *rp = replay_of(&es); /* it fails the test on a release beyond s */
        uint64_t max_lead = 0;
        for (size_t i = 0; i < es.n; i++) {
            replay(rp, &es.e[i].ev);
            if (es.e[i].ev.kind == SW_EV_RELEASE) {
                uint64_t lead = sw_check_lead(rp, es.e[i].ev.worker);
                max_lead = lead > max_lead ? lead : max_lead;
            }
        }
        assert_int_equal(max_lead, s); /* the bound is used, not just respected */
        sw_check_free(rp);
        free(es.e);
        free(log);
        sw_sim_result_free(&res);
    }
}

static void asp_releases_every_pusher_at_once(void **state)
{
    (void)state;
    sw_sim_result res;
    char *log = run_log(base("asp"), &res);
    events es = read_events(log);
    long pushes = 0;
    for (size_t i = 0; i + 2 < es.n; i++) {
        const sw_event *e = &es.e[i].ev;
        if (e->kind != SW_EV_PUSH)
            continue;
        pushes++;
        assert_int_equal(es.e[i + 1].ev.kind, SW_EV_APPLY); /* applied on arrival, released */
        const sw_event *rel = &es.e[i + 2].ev;
        assert_int_equal(rel->kind, SW_EV_RELEASE);
        assert_int_equal(rel->worker, e->worker);
        assert_true(rel->t == e->t);
    }
    assert_true(pushes > 200);
    free(es.e);
    free(log);
    sw_sim_result_free(&res);
}

static void sync_never_applies_an_old_gradient(void **state)
{
    (void)state;
    sw_sim_config c = base("sync:grads_to_wait=2");
    sw_sim_result res;
    char *log = run_log(c, &res);
    events es = read_events(log);
    long drops = 0, pending_old = 0;
    for (size_t i = 0; i < es.n; i++) {
        const sw_event *e = &es.e[i].ev;
        if (e->kind == SW_EV_PUSH)
            pending_old = e->ver < e->V;
        else if (e->kind == SW_EV_DROP)
            drops++, pending_old = 0;
        else if (e->kind == SW_EV_APPLY || e->kind == SW_EV_RELEASE)
            assert_int_equal(pending_old, 0); /* an old gradient is dropped before anything */
    }
    assert_true(drops > 10);
    assert_int_equal((long)res.stats.drops, drops);
    free(es.e);
    free(log);
    sw_sim_result_free(&res);
}

static void same_seed_same_log(void **state)
{
    (void)state;
    const char *policies[] = {"bsp", "asp", "ssp:s=2", "sync:grads_to_wait=3", "actions"};
    for (int i = 0; i < 5; i++) {
        sw_sim_config c = base(policies[i]);
        c.events = "crash:w=1,t=30;join:t=60";
        sw_sim_result a, b, d;
        char *la = run_log(c, &a), *lb = run_log(c, &b);
        c.seed = 2;
        char *ld = run_log(c, &d);
        assert_string_equal(la, lb);
        assert_string_not_equal(la, ld);
        free(la);
        free(lb);
        free(ld);
        sw_sim_result_free(&a);
        sw_sim_result_free(&b);
        sw_sim_result_free(&d);
    }
}

/* The (time, event, worker) sequence of pushes and releases: a run's schedule. */
static char *schedule_of(const char *log)
{
    events es = read_events(log);
    char *out = calloc(64 * es.n + 1, 1), *o = out;
    for (size_t i = 0; i < es.n; i++) {
        const sw_event *e = &es.e[i].ev;
        if (e->kind == SW_EV_PUSH || e->kind == SW_EV_RELEASE)
            o += sprintf(o, "%.9g %s %u\n", e->t, e->kind == SW_EV_PUSH ? "push" : "release",
                         e->worker);
    }
    free(es.e);
    return out;
}

static void ssp_zero_has_the_bsp_schedule(void **state)
{
    (void)state;
    sw_sim_result a, b;
    char *la = run_log(base("bsp"), &a), *lb = run_log(base("ssp:s=0"), &b);
    char *sa = schedule_of(la), *sb = schedule_of(lb);
    assert_string_equal(sa, sb);
    free(la), free(lb), free(sa), free(sb);
    sw_sim_result_free(&a);
    sw_sim_result_free(&b);
}

static void asp_with_one_worker_is_sequential_sgd(void **state)
{
    (void)state;
    sw_sim_config c = base("asp");
    c.workers = 1;
    c.max_time = 0;
    c.max_pushes = 300;
    sw_sim_result res;
    char err[SW_ERR_LEN];
    assert_int_equal(sw_sim_run(&c, &res, err), 0);
    assert_int_equal(res.stats.pushes, 300);
    /* The same steps by hand: same initialisation, the same batches, the same updates. */
    sw_model_desc d = {.spec = "mlp:h=1,u=16", .in_shape = {1, 1, 20},
                       .objective = SW_CLASSIFY, .n_classes = 2};
    sw_model *m;
    sw_batcher *b;
    assert_int_equal(sw_model_new(&m, &d, 256, NULL), 0);
    assert_int_equal(sw_batcher_new(&b, data.dense.train, 16, SW_BATCH_SHARD, 0, 1, 1, NULL), 0);
    size_t n = sw_model_n_params(m);
    float *p = malloc(n * sizeof *p), *g = malloc(n * sizeof *g);
    sw_model_init_params(m, p, 1);
    for (int s = 0; s < 300; s++) {
        sw_batch bt;
        sw_batcher_next(b, &bt);
        sw_model_grad(m, p, &bt, g);
        sw_sgd_step(p, g, n, c.lr, 0);
    }
    sw_eval e;
    sw_model_evaluate(m, p, data.dense.val, &e);
    /* Bit for bit: one process, one BLAS kernel, and the engine's apply is sw_sgd_step's
     * arithmetic (syncwise/optim.h). */
    assert_true(e.loss == res.final_loss);
    free(p), free(g);
    sw_batcher_free(b);
    sw_model_free(m);
    sw_sim_result_free(&res);
}

static void a_scheduled_switch_changes_the_behaviour(void **state)
{
    (void)state;
    sw_sim_config c = base("bsp");
    c.events = "switch:t=60,policy=asp";
    sw_sim_result res;
    char *log = run_log(c, &res);
    events es = read_events(log);
    long switches = 0, waits_before = 0, waits_after = 0;
    for (size_t i = 0; i + 1 < es.n; i++) {
        const sw_event *e = &es.e[i].ev;
        switches += e->kind == SW_EV_SWITCH;
        /* A push not followed by an apply means its worker waits at a barrier. */
        if (e->kind == SW_EV_PUSH && es.e[i + 1].ev.kind != SW_EV_APPLY) {
            if (e->t < 60)
                waits_before++;
            else
                waits_after++;
        }
    }
    assert_int_equal(switches, 1);
    assert_true(waits_before > 10);
    assert_int_equal(waits_after, 0);
    free(es.e);
    free(log);
    sw_sim_result_free(&res);
    c.events = "switch:t=60,policy=fastest";
    char err[SW_ERR_LEN];
    assert_int_equal(sw_sim_run(&c, &res, err), SW_ENOTFOUND);
    assert_non_null(strstr(err, "fastest"));
}

static void get_model_frequency_pulls_every_f_steps(void **state)
{
    (void)state;
    sw_sim_config c = base("asp");
    c.get_model_frequency = 3;
    sw_sim_result res;
    char *log = run_log(c, &res);
    events es = read_events(log);
    long last_ver[16], run[16], longest = 0;
    memset(last_ver, -1, sizeof last_ver);
    memset(run, 0, sizeof run);
    for (size_t i = 0; i < es.n; i++) {
        const sw_event *e = &es.e[i].ev;
        if (e->kind != SW_EV_PUSH)
            continue;
        /* Between pulls a worker's pushes carry the version it pulled last. */
        long ver = (long)e->ver;
        run[e->worker] = ver == last_ver[e->worker] ? run[e->worker] + 1 : 1;
        last_ver[e->worker] = ver;
        longest = run[e->worker] > longest ? run[e->worker] : longest;
    }
    assert_int_equal(longest, 3);
    free(es.e);
    free(log);
    sw_sim_result_free(&res);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bsp_releases_only_when_clocks_agree),
        cmocka_unit_test(ssp_never_lets_a_worker_run_too_far_ahead),
        cmocka_unit_test(asp_releases_every_pusher_at_once),
        cmocka_unit_test(sync_never_applies_an_old_gradient),
        cmocka_unit_test(same_seed_same_log),
        cmocka_unit_test(ssp_zero_has_the_bsp_schedule),
        cmocka_unit_test(asp_with_one_worker_is_sequential_sgd),
        cmocka_unit_test(a_scheduled_switch_changes_the_behaviour),
        cmocka_unit_test(get_model_frequency_pulls_every_f_steps),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
