/* The adaptive policies checked on simulator logs: DSSP's bound, ElasticBSP's barriers against
 * our own barrier search on the logged push times, backup workers' first-k rule, and the
 * metamorphic check that backup:k=n is bsp. */
#include "testutil/simlog.h"

#include <math.h>

#include "syncwise/zipline.h"
#include "testutil/simdata.h"

static sw_sim_config base(const char *policy, uint32_t workers, const char *cluster)
{
    return small_run(policy, workers, cluster, 200);
}

static void dssp_never_starts_a_step_more_than_hi_ahead(void **state)
{
    (void)state;
    sw_sim_result res;
    char *log = run_log(base("dssp:lo=1,hi=4", 6, "const:1;const:3@0"), &res);
    events es = read_events(log);
    sw_check *rp = replay_of(&es); /* it fails the test on a release beyond hi */
    uint64_t max_lead = 0;
    for (size_t i = 0; i < es.n; i++) {
        replay(rp, &es.e[i].ev);
        if (es.e[i].ev.kind == SW_EV_RELEASE) {
            uint64_t lead = sw_check_lead(rp, es.e[i].ev.worker);
            max_lead = lead > max_lead ? lead : max_lead;
        }
    }
    assert_true(max_lead > 1); /* the controller did grant extra steps beyond lo */
    sw_check_free(rp);
    free(es.e);
    free(log);
    sw_sim_result_free(&res);
}

/* Replays an ElasticBSP log: at each prediction point (every worker has pushed twice since the
 * barrier) runs the sweep on predictions from the logged push times, then checks that the next
 * barrier comes at its t_sync after exactly pick + 1 pushes from each worker. */
static void ebsp_barrier_lands_where_the_search_says(void **state)
{
    (void)state;
    enum { N = 4, R = 15 };
    sw_sim_config c = base("ebsp:R=15", N, "const:1;const:1.7@1;const:2.3@2;const:2.9@3");
    c.data = NULL; /* timing only: exact predictions */
    c.net = "bw=1e15,lat=0";
    c.max_time = 300;
    sw_sim_result res;
    char *log = run_log(c, &res);
    events es = read_events(log);
    double last[N], prev[N], t[N * R];
    uint32_t start[N + 1], pick[N], since[N] = {0}, after[N] = {0};
    sw_zl_workspace *ws;
    assert_int_equal(sw_zl_workspace_new(&ws, N, N * R, NULL), 0);
    bool predicted = false;
    double t_sync = 0;
    int barriers = 0, released_at_once = 0;
    double release_t = -1;
    for (size_t i = 0; i < es.n; i++) {
        const sw_event *l = &es.e[i].ev;
        if (l->kind == SW_EV_PUSH) {
            prev[l->worker] = last[l->worker];
            last[l->worker] = l->t;
            since[l->worker]++;
            after[l->worker] += predicted;
            bool all = true;
            for (int w = 0; w < N; w++)
                all = all && since[w] >= 2;
            if (!predicted && all) {
                sw_zl_predict(last, prev, N, R, t, start);
                sw_zl_problem p = {.n = N, .t = t, .start = start};
                sw_zl_result r = {.pick = pick};
                assert_int_equal(sw_zl_find("sweep")->run(&p, ws, &r), 0);
                t_sync = r.t_sync;
                predicted = true;
                memset(after, 0, sizeof after);
            }
        } else if (l->kind == SW_EV_RELEASE) {
            released_at_once = l->t == release_t ? released_at_once + 1 : 1;
            release_t = l->t;
            if (predicted && released_at_once == N) { /* the barrier */
                assert_true(fabs(l->t - t_sync) < 1e-6);
                for (int w = 0; w < N; w++)
                    assert_int_equal(after[w], pick[w] + 1);
                barriers++;
                predicted = false;
                memset(since, 0, sizeof since);
            }
        }
    }
    assert_true(barriers >= 3);
    sw_zl_workspace_free(ws);
    free(es.e);
    free(log);
    sw_sim_result_free(&res);
}

/* Under k-of-n, each apply takes exactly the first k gradients of its version; every gradient of
 * an older version is dropped. Returns the sizes of the applies after the first `skip` (as a bit
 * set of 1..31). */
static uint32_t first_k_sizes(sw_sim_config c, uint32_t fixed_k, long skip)
{
    sw_sim_result res;
    char *log = run_log(c, &res);
    events es = read_events(log);
    long accepted = 0, applies = 0;
    uint32_t sizes = 0;
    for (size_t i = 1; i < es.n; i++) {
        const sw_event *l = &es.e[i].ev, *prev = &es.e[i - 1].ev;
        if (prev->kind == SW_EV_PUSH) {
            bool dropped = l->kind == SW_EV_DROP;
            assert_int_equal(dropped, prev->ver < prev->V); /* old versions, and only they, drop */
            accepted += !dropped;
        }
        if (l->kind == SW_EV_APPLY) {
            if (++applies > skip)
                sizes |= 1u << (accepted < 31 ? accepted : 31);
            if (fixed_k)
                assert_int_equal(accepted, fixed_k);
            accepted = 0;
        }
    }
    assert_true(applies > 20);
    free(es.e);
    free(log);
    sw_sim_result_free(&res);
    return sizes;
}

static uint32_t check_first_k(const char *policy, uint32_t fixed_k)
{
    return first_k_sizes(base(policy, 6, "shexp:1"), fixed_k, 0);
}

static void backup_applies_exactly_the_first_k(void **state)
{
    (void)state;
    check_first_k("backup:k=3", 3);
    check_first_k("backup:b=2", 4);
}

static void dbw_varies_k_within_the_first_k_rule(void **state)
{
    (void)state;
    uint32_t sizes = check_first_k("bdbw", 0);
    assert_true(__builtin_popcount(sizes) >= 2); /* k changed during the run */
    check_first_k("dbw:D=3", 0);
}

/* When every gradient of a version is the same (each worker computes on the whole data set),
 * the variance is zero, every k gains alike and DBW takes the fastest k (mostly 1) from its
 * first estimate on: a run of lone applies, which cannot measure the variance, must not send it
 * back to waiting for every worker. */
static void dbw_keeps_its_variance_through_lone_applies(void **state)
{
    (void)state;
    sw_sim_config c = base("dbw", 6, "shexp:1");
    c.batch = 3000;
    c.batch_mode = SW_BATCH_SAMPLE;
    c.max_time = 60;
    /* the first apply waits for all (no estimate yet); none after it, and lone ones are taken */
    uint32_t sizes = first_k_sizes(c, 0, 2);
    assert_false(sizes & 1u << 6);
    assert_true(sizes & 1u << 1);
}

static void backup_with_k_n_is_bsp(void **state)
{
    (void)state;
    sw_sim_result a, b;
    char *la = run_log(base("bsp", 5, "shexp:1"), &a), *lb = run_log(base("backup:k=5", 5, "shexp:1"), &b);
    /* Every event after the start line (which names the policy) is the same. */
    assert_string_equal(strchr(la, '\n'), strchr(lb, '\n'));
    assert_true(a.final_loss == b.final_loss);
    free(la);
    free(lb);
    sw_sim_result_free(&a);
    sw_sim_result_free(&b);
}

static void adaptive_policies_survive_membership_changes(void **state)
{
    (void)state;
    const char *policies[] = {"dssp", "ebsp:R=5", "backup:b=1", "dbw", "bdbw"};
    for (int i = 0; i < 5; i++) {
        sw_sim_config c = base(policies[i], 5, "shexp:1");
        c.events = "crash:w=1,t=30;join:t=50;leave:w=3,t=80;switch:t=120,policy=asp";
        sw_sim_result res;
        char err[SW_ERR_LEN];
        if (sw_sim_run(&c, &res, err))
            fail_msg("%s: %s", policies[i], err);
        assert_int_equal(res.stop, SW_STOP_MAX_TIME); /* nobody hung */
        assert_true(res.stats.pushes > 300);
        sw_sim_result_free(&res);
    }
}

static void bad_parameters(void **state)
{
    (void)state;
    const char *bad[] = {"dssp:lo=5,hi=2", "ebsp:algo=quick", "backup", "backup:k=2,b=1",
                         "backup:agg=median", "dbw:D=0"};
    for (int i = 0; i < 6; i++) {
        sw_sim_config c = base(bad[i], 3, "const:1");
        sw_sim_result res;
        char err[SW_ERR_LEN];
        assert_true(sw_sim_run(&c, &res, err) < 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(dssp_never_starts_a_step_more_than_hi_ahead),
        cmocka_unit_test(ebsp_barrier_lands_where_the_search_says),
        cmocka_unit_test(backup_applies_exactly_the_first_k),
        cmocka_unit_test(dbw_varies_k_within_the_first_k_rule),
        cmocka_unit_test(dbw_keeps_its_variance_through_lone_applies),
        cmocka_unit_test(backup_with_k_n_is_bsp),
        cmocka_unit_test(adaptive_policies_survive_membership_changes),
        cmocka_unit_test(bad_parameters),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
