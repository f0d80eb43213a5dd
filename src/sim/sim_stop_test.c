/* How a simulated run ends (targets, patience, divergence, everyone gone, a clock too coarse, a
 * broken policy) and the configurations it refuses, checked on its results and event logs. */
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
#include "syncwise/sim.h"
#include "sim_test_base.h"
#include "testutil/simlog.h"

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
    memset(err, 0, sizeof err);
    c.data = NULL; /* what the run refuses, its check refuses, with or without its data */
    assert_int_equal(sw_sim_check_config(&c, err), SW_EINVAL);
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
        cmocka_unit_test(bad_configurations),
        cmocka_unit_test(targets_and_patience_stop_runs),
        cmocka_unit_test(a_regression_task_has_no_accuracy),
        cmocka_unit_test(a_diverging_model_is_seen),
        cmocka_unit_test(evaluations_rest_while_versions_stand),
        cmocka_unit_test(everyone_gone_ends_the_run),
        cmocka_unit_test(a_clock_too_coarse_for_the_steps_ends_the_run),
        cmocka_unit_test(a_failed_run_ends_its_log_saying_why),
        cmocka_unit_test(a_sparse_model_runs_under_every_policy),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
