/* The simulator, checked on its own JSONL event logs: each policy's invariant, crashes that never
 * hang a barrier, bit-identical logs for identical seeds, and metamorphic checks (ssp:s=0 has
 * BSP's schedule; asp with one worker is sequential SGD). Runs use small synthetic data. */
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
#include "testutil/simlog.h"

static sw_task_data data;

static int setup(void **state)
{
    (void)state;
    return sw_task_data_load(&data, "mlp", "synthetic:task=logistic,d=20,n=3000,test=500", 1,
                             NULL);
}

static int teardown(void **state)
{
    (void)state;
    sw_task_data_free(&data);
    return 0;
}

static sw_sim_config base(const char *policy)
{
    sw_sim_config c = sw_sim_default_config();
    c.policy = policy;
    c.workers = 6;
    c.cluster = "shexp:1,base=1";
    c.data = &data;
    c.model = "mlp:h=1,u=16";
    c.lr = 0.05f;
    c.max_time = 150;
    c.eval_every = 10;
    return c;
}

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

static void count_nan_accuracy(void *ctx, double t, uint64_t version, double loss, double acc)
{
    (void)t, (void)version, (void)loss;
    double *counts = ctx;
    counts[0] += isnan(acc);
    counts[1]++;
}

static void targets_and_patience_stop_runs(void **state)
{
    (void)state;
    sw_sim_config c = base("asp");
    c.max_time = 5000;
    c.target_acc = 0.8;
    sw_sim_result res;
    assert_int_equal(sw_sim_run(&c, &res, NULL), 0);
    assert_int_equal(res.stop, SW_STOP_TARGET_ACC);
    assert_true(res.target_t > 0 && res.final_acc >= 0.8 && res.classify && res.diverged_t < 0);
    double reached = res.target_t;
    sw_sim_result_free(&res);
    c.max_time = reached; /* the evaluation due at the time limit still counts */
    assert_int_equal(sw_sim_run(&c, &res, NULL), 0);
    assert_int_equal(res.stop, SW_STOP_TARGET_ACC);
    assert_true(res.target_t == reached);
    sw_sim_result_free(&res);
    c.max_time = reached - 1e-6;
    assert_int_equal(sw_sim_run(&c, &res, NULL), 0);
    assert_int_equal(res.stop, SW_STOP_MAX_TIME);
    assert_true(res.end_t == c.max_time && res.target_t < 0);
    sw_sim_result_free(&res);
    c.max_time = 5000;
    c.target_acc = 0;
    c.patience = 3;
    c.lr = 2.0f; /* noisy enough that improvements stop */
    assert_int_equal(sw_sim_run(&c, &res, NULL), 0);
    assert_int_equal(res.stop, SW_STOP_PATIENCE);
    assert_true(res.final_acc == res.best_acc); /* the best weights were kept */
    sw_sim_result_free(&res);
}

/* A regression task has no accuracy: a target accuracy is refused (it would run to its limit),
 * the progress callback gets NAN for it, and the run learns on its loss. */
static void a_regression_task_has_no_accuracy(void **state)
{
    (void)state;
    sw_task_data lsq;
    char err[SW_ERR_LEN];
    assert_int_equal(sw_task_data_load(&lsq, "softmax", "synthetic:d=10,n=2000,test=400", 1, err), 0);
    sw_sim_config c = base("ssp:s=2");
    c.data = &lsq;
    c.model = "softmax";
    c.lr = 0.02f;
    c.target_acc = 0.5;
    sw_sim_result res;
    assert_int_equal(sw_sim_run(&c, &res, err), SW_EINVAL);
    assert_non_null(strstr(err, "regression"));
    c.target_acc = 0;
    double accs[2] = {0, 0}; /* NAN seen, evaluations */
    c.on_eval = count_nan_accuracy;
    c.on_eval_ctx = accs;
    assert_int_equal(sw_sim_run(&c, &res, err), 0);
    assert_false(res.classify);
    assert_true(accs[1] > 0 && accs[0] == accs[1]);
    assert_true(res.final_loss < 0.5);
    sw_sim_result_free(&res);
    sw_task_data_free(&lsq);
}

/* A model that diverges is seen at the first evaluation that is not finite; the run still goes
 * on to its limit without reaching its target, as comparisons count it (stopper_test.c: whatever
 * accuracy diverged parameters score). */
static void a_diverging_model_is_seen(void **state)
{
    (void)state;
    sw_sim_config c = base("asp");
    c.model = "mlp:h=2,u=16";
    c.lr = 1e5f;
    c.target_acc = 0.99;
    sw_sim_result res;
    assert_int_equal(sw_sim_run(&c, &res, NULL), 0);
    assert_true(res.diverged_t >= 0 && res.diverged_t < c.max_time);
    assert_int_equal(res.stop, SW_STOP_MAX_TIME);
    assert_true(res.target_t < 0 && !isfinite(res.final_loss));
    sw_sim_result_free(&res);
}

/* An evaluation that would repeat the last one (no apply since) does not happen, so a run whose
 * versions stand still for a long virtual time costs nothing per interval; evaluations resume
 * on their grid after the next apply. */
static void evaluations_rest_while_versions_stand(void **state)
{
    (void)state;
    sw_sim_config c = base("asp");
    c.cluster = "const:1e7"; /* half a million evaluation intervals between pushes */
    c.max_time = 0;
    c.max_pushes = 12;
    sw_sim_result res;
    char *log = run_log(c, &res);
    events es = read_events(log);
    long evals = 0;
    uint64_t last_V = 0;
    for (size_t i = 0; i < es.n; i++) {
        const sw_event *e = &es.e[i].ev;
        if (e->kind != SW_EV_EVAL)
            continue;
        assert_true(evals == 0 || e->V > last_V);                   /* each at new parameters */
        assert_true(fmod(e->t, c.eval_every) == 0);                 /* on the grid */
        last_V = e->V;
        evals++;
    }
    assert_true(evals >= 2 && (uint64_t)evals <= res.stats.applies + 1);
    free(es.e);
    free(log);
    sw_sim_result_free(&res);
}

static void everyone_gone_ends_the_run(void **state)
{
    (void)state;
    sw_sim_config c = base("bsp");
    c.workers = 2;
    c.events = "crash:w=0,t=5;leave:w=1,t=9";
    sw_sim_result res;
    assert_int_equal(sw_sim_run(&c, &res, NULL), 0);
    assert_int_equal(res.stop, SW_STOP_NO_WORKERS);
    assert_true(res.end_t == 9);
    sw_sim_result_free(&res);
}

/* A clock too coarse for the steps (a double at 9e14 moves by 0.125 s; steps of 0.01 s would
 * leave it standing, the run spinning at one time) ends the run, saying so, whether a time or
 * a push limit was to stop it; long steps at the same time, and a long run of short ones, go on. */
static void a_clock_too_coarse_for_the_steps_ends_the_run(void **state)
{
    (void)state;
    sw_sim_config c = base("asp");
    c.data = NULL;
    c.workers = 1;
    c.cluster = "const:0.01";
    c.events = "leave:w=0,t=0;join:w=0,t=9e14";
    c.max_time = 1e15;
    sw_sim_result res;
    char err[SW_ERR_LEN];
    assert_int_not_equal(sw_sim_run(&c, &res, err), 0);
    assert_non_null(strstr(err, "too coarse"));
    c.max_time = 0;
    c.max_pushes = 3;
    assert_int_not_equal(sw_sim_run(&c, &res, err), 0);
    c.cluster = "const:1000";
    assert_int_equal(sw_sim_run(&c, &res, err), 0);
    assert_int_equal(res.stats.pushes, 3);
    assert_true(res.end_t >= 9e14 + 3000);
    sw_sim_result_free(&res);
    /* At 1e9 the clock holds 1e-3 s steps to 1e-4 of them; exponential draws near zero are
     * rounded off by up to half now and then, which is no error. */
    c.cluster = "shexp:1,base=1e-3";
    c.events = "leave:w=0,t=0;join:w=0,t=1e9";
    c.max_pushes = 100000;
    assert_int_equal(sw_sim_run(&c, &res, err), 0);
    assert_int_equal(res.stats.pushes, 100000);
    sw_sim_result_free(&res);
}

/* A policy of the test's own that names a worker outside the table at its tenth push: the
 * engine refuses the decision and the run fails. */
static void breaking_push(void *state, const sw_engine_view *v, const sw_push *p, sw_decision *d)
{
    uint32_t *pushes = state;
    d->apply = true;
    sw_decision_release(d, ++*pushes == 10 ? v->n_slots + 5 : p->worker);
}

static const sw_policy_ops breaking = {
    .name = "breaking", .state_size = sizeof(uint32_t), .on_push = breaking_push};

static void a_failed_run_ends_its_log_saying_why(void **state)
{
    (void)state;
    sw_sim_config c = base("breaking");
    c.policy_ops = &breaking;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    c.log = f;
    sw_sim_result res;
    char err[SW_ERR_LEN];
    assert_int_equal(sw_sim_run(&c, &res, err), SW_EBUG);
    assert_non_null(strstr(err, "outside the table"));
    fclose(f);
    const char *last = buf + len - 2;
    while (last > buf && last[-1] != '\n')
        last--;
    assert_non_null(strstr(last, "\"ev\":\"end\""));
    assert_non_null(strstr(last, "\"why\":\"failed: "));
    assert_non_null(strstr(last, "outside the table"));
    free(buf);
}

/* A sparse linear model runs in the simulator under every kind of policy (the run checks its
 * promise), learns, and its transfers carry only the weights a batch touches. */
static void a_sparse_model_runs_under_every_policy(void **state)
{
    (void)state;
    sw_task_data sparse;
    char err[SW_ERR_LEN];
    assert_int_equal(sw_task_data_load(&sparse, "svm", "sparse:n=6000,test=600,dim=3000", 1, err),
                     0);
    const char *policies[] = {"asp", "bsp", "ssp:s=2", "dssp:lo=1,hi=4", "backup:b=1",
                              "sync:grads_to_wait=3", "ebsp:R=20"};
    for (size_t i = 0; i < sizeof policies / sizeof *policies; i++) {
        sw_sim_config c = base(policies[i]);
        c.data = &sparse;
        c.model = "svm";
        c.lr = 0.35f;
        c.max_time = 200;
        c.net = "bw=1e5,lat=0"; /* slow enough that the size of a transfer shows */
        c.events = "crash:w=2,t=40;join:t=70";
        sw_sim_result res;
        if (sw_sim_run(&c, &res, err))
            fail_msg("%s: %s", policies[i], err);
        assert_true(res.stats.applies > 50);
        assert_true(res.final_acc > 0.7);
        sw_sim_result_free(&res);
    }
    /* Steps of 1 s of compute: a whole model each way would add 2 * 4 * 3001 / 1e5 = 0.24 s;
     * the weights a batch of 16 touches (a few hundred) add a fraction of that. */
    sw_sim_config c = base("asp");
    c.data = &sparse;
    c.model = "svm";
    c.cluster = "const:1";
    c.net = "bw=1e5,lat=0";
    c.max_time = 100;
    sw_sim_result res;
    assert_int_equal(sw_sim_run(&c, &res, err), 0);
    for (uint32_t w = 0; w < c.workers; w++) {
        double step_s = res.stats.busy_s[w] / (double)res.stats.finished[w];
        assert_true(step_s > 1.01 && step_s < 1.12);
    }
    sw_sim_result_free(&res);
    c = base("asp");
    c.data = &sparse;
    c.model = "svm";
    c.get_model_frequency = 2;
    assert_int_equal(sw_sim_run(&c, &res, err), SW_EINVAL);
    assert_non_null(strstr(err, "sparse"));
    c.model = "mlp"; /* a dense model on sparse rows */
    c.get_model_frequency = 1;
    assert_int_equal(sw_sim_run(&c, &res, err), SW_EINVAL);
    sw_task_data_free(&sparse);
}

static void bad_configurations(void **state)
{
    (void)state;
    sw_sim_result res;
    char err[SW_ERR_LEN];
    sw_sim_config c = base("asp");
    c.max_time = 0;
    assert_int_equal(sw_sim_run(&c, &res, err), SW_EINVAL);
    assert_non_null(strstr(err, "stopping"));
    c = base("asp");
    c.events = "explode:t=3";
    assert_int_equal(sw_sim_run(&c, &res, err), SW_EINVAL);
    c.events = "crash:t=3";
    assert_int_equal(sw_sim_run(&c, &res, err), SW_EINVAL);
    assert_non_null(strstr(err, "w=WORKER"));
    c.events = "crash:w=99,t=3";
    assert_int_equal(sw_sim_run(&c, &res, err), SW_ERANGE);
    c.events = NULL;
    c.net = "bw=0";
    assert_int_equal(sw_sim_run(&c, &res, err), SW_ERANGE);
    c = base("unknown");
    assert_int_equal(sw_sim_run(&c, &res, err), SW_ENOTFOUND);
    c = base("asp");
    c.data = NULL;
    c.target_acc = 0.5;
    assert_int_equal(sw_sim_run(&c, &res, err), SW_EINVAL);
    c = base("asp");
    c.target_acc = 2; /* the log's reader would refuse it */
    assert_int_equal(sw_sim_run(&c, &res, err), SW_EINVAL);
    assert_non_null(strstr(err, "not in [0, 1]"));
}

/* A configuration without a policy or a cluster is refused, by the run as by its check. */
static void a_run_without_a_policy_or_a_cluster_is_refused(void **state)
{
    (void)state;
    char err[SW_ERR_LEN];
    sw_sim_result r;
    for (int k = 0; k < 2; k++) {
        sw_sim_config c = base("asp");
        if (k)
            c.cluster = NULL;
        else
            c.policy = NULL;
        assert_int_equal(sw_sim_check_config(&c, err), SW_EINVAL);
        assert_int_equal(sw_sim_run(&c, &r, err), SW_EINVAL);
        assert_non_null(strstr(err, k ? "no cluster spec" : "no policy spec"));
        sw_sim_result_free(&r);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_run_without_a_policy_or_a_cluster_is_refused),
        cmocka_unit_test(bsp_releases_only_when_clocks_agree),
        cmocka_unit_test(ssp_never_lets_a_worker_run_too_far_ahead),
        cmocka_unit_test(asp_releases_every_pusher_at_once),
        cmocka_unit_test(sync_never_applies_an_old_gradient),
        cmocka_unit_test(same_seed_same_log),
        cmocka_unit_test(ssp_zero_has_the_bsp_schedule),
        cmocka_unit_test(asp_with_one_worker_is_sequential_sgd),
        cmocka_unit_test(a_scheduled_switch_changes_the_behaviour),
        cmocka_unit_test(get_model_frequency_pulls_every_f_steps),
        cmocka_unit_test(targets_and_patience_stop_runs),
        cmocka_unit_test(a_regression_task_has_no_accuracy),
        cmocka_unit_test(a_diverging_model_is_seen),
        cmocka_unit_test(evaluations_rest_while_versions_stand),
        cmocka_unit_test(everyone_gone_ends_the_run),
        cmocka_unit_test(a_failed_run_ends_its_log_saying_why),
        cmocka_unit_test(a_sparse_model_runs_under_every_policy),
        cmocka_unit_test(bad_configurations),
        cmocka_unit_test(a_clock_too_coarse_for_the_steps_ends_the_run),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
