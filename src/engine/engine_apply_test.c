/* What an engine's apply writes, holds and reports: θ written where the hook says, a decision
 * taken as a set, concurrent applies against the serial engine, the gradients' norms. */
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

/* A writable hook that hands out a fresh buffer whenever θ is "being sent". */
typedef struct lender {
    float bufs[3][2];
    int next, calls;
    const float *sending; /* the buffer a frame is reading, or NULL */
} lender;

static float *hand_out(void *ctx, float *theta)
{
    lender *l = ctx;
    l->calls++;
    if (theta != l->sending && theta >= &l->bufs[0][0] && theta <= &l->bufs[2][1])
        return theta; /* one of ours and idle: written in place */
    float *w = l->bufs[l->next++];
    memcpy(w, theta, sizeof l->bufs[0]);
    return w;
}

static void writes_go_where_the_hook_says_and_never_into_a_buffer_being_sent(void **state)
{
    (void)state;
    lender l = {0};
    sw_engine_params p = two_params("asp", 1);
    p.writable = hand_out;
    p.writable_ctx = &l;
    sw_engine *e;
    sw_engine_result r;
    assert_int_equal(sw_engine_new(&e, &p, NULL), 0);
    assert_int_equal(l.calls, 0); /* nothing written yet */
    assert_int_equal(sw_engine_join(e, 0, 0, &r), 0);
    push(e, 0, 1, 0, 1); /* the engine's own buffer is copied into the hook's first */
    assert_ptr_equal(sw_engine_params_ptr(e), l.bufs[0]);
    assert_float_equal(l.bufs[0][0], 0.5f, 0);
    push(e, 0, 1, 1, 2); /* idle: in place */
    assert_ptr_equal(sw_engine_params_ptr(e), l.bufs[0]);
    assert_float_equal(l.bufs[0][1], 0.0f, 0);
    l.sending = l.bufs[0];
    push(e, 0, 1, 2, 3); /* being sent: the apply lands in a copy, the sent values stay */
    assert_ptr_equal(sw_engine_params_ptr(e), l.bufs[1]);
    assert_float_equal(l.bufs[0][0], 0.0f, 0);
    assert_float_equal(l.bufs[1][0], -0.5f, 0);
    float *mut = sw_engine_params_mut(e); /* a caller's write asks the hook too */
    assert_ptr_equal(mut, l.bufs[1]);
    assert_int_equal(l.calls, 4);
    assert_int_equal(sw_engine_version(e), 3);
    sw_engine_free(e); /* frees only the engine's own buffer (ASan checks) */
}

/* A policy of the test's own: worker 0 waits after its pushes; worker 1's push releases worker
 * 1 three times, then every waiting worker, and grants it 2 steps; a push at t=7 names worker
 * 99. */
static void sloppy_push(void *state, const sw_engine_view *v, const sw_push *p, sw_decision *d)
{
    (void)state;
    d->apply = true;
    if (p->worker == 0)
        return;
    for (int i = 0; i < 3; i++)
        sw_decision_release(d, p->worker);
    sw_policy_release_all(v, d);
    sw_decision_grant(d, p->worker, 2);
    if (v->now == 7)
        sw_decision_release(d, 99);
}

static int sloppy_init(void *state, sw_spec *spec, const sw_engine_view *v,
                       const sw_policy_env *env, char *err)
{
    (void)state, (void)spec, (void)v, (void)env, (void)err;
    return 0;
}

static const sw_policy_ops sloppy = {
    .name = "sloppy", .keys = "", .help = "", .init = sloppy_init, .on_push = sloppy_push,
};

static void a_decision_is_a_set_and_a_worker_outside_the_table_breaks_the_engine(void **state)
{
    (void)state;
    memset(&rec, 0, sizeof rec);
    sw_engine_params p = two_params("sloppy", 2);
    p.policy_ops = &sloppy;
    p.sink = record;
    p.sink_ctx = &rec;
    sw_engine *e;
    sw_engine_result r;
    assert_int_equal(sw_engine_new(&e, &p, NULL), 0);
    assert_int_equal(sw_engine_join(e, 0, 0, &r), 0);
    assert_int_equal(sw_engine_join(e, 1, 0, &r), 0);
    r = push(e, 0, 1, 0, 1);
    assert_int_equal(r.n_released, 0);
    /* Four names in a table of two slots: each worker is released once, none is cut off. */
    r = push(e, 1, 1, 0, 1);
    assert_int_equal(r.n_released, 2);
    assert_true(released(&r, 0) && released(&r, 1));
    assert_int_equal(rec.ev[rec.n - 3].kind, SW_EV_GRANT);
    assert_int_equal(rec.ev[rec.n - 3].n, 2);
    assert_null(sw_engine_error(e));
    float g[2] = {1, 1};
    assert_int_equal(sw_engine_push(e, 1, g, 1, 7, &r), SW_EBUG);
    assert_non_null(strstr(sw_engine_error(e), "worker 99"));
    assert_int_equal(sw_engine_push(e, 0, g, 2, 3, &r), SW_EBUG); /* and stays broken */
    assert_int_equal(sw_engine_tick(e, 4, &r), SW_EBUG);
    char err[SW_ERR_LEN];
    assert_int_equal(sw_engine_switch_policy(e, "asp", 5, &r, err), SW_EBUG);
    assert_non_null(strstr(err, "worker 99"));
    sw_engine_free(e);
}

/* A bare policy of one's own, as a plugin may write it: no init, no keys, no help. It applies
 * each push and releases its pusher; a push at t=5 asks for a NaN learning-rate scale, at t=8
 * for a negative one, at t=6 for a wake-up at infinity, at t=7 for one at NaN. */
static void bare_push(void *state, const sw_engine_view *v, const sw_push *p, sw_decision *d)
{
    (void)state;
    d->apply = true;
    d->lr_scale = v->now == 5 ? NAN : v->now == 8 ? -1 : 1;
    d->wake_at = v->now == 6 ? INFINITY : v->now == 7 ? NAN : -1;
    sw_decision_release(d, p->worker);
}

static void bare_applied(void *state, const sw_engine_view *v, const sw_push *p, sw_decision *d)
{
    (void)state, (void)v, (void)p, (void)d;
}

static const sw_policy_ops bare = {.name = "bare", .on_push = bare_push};
/* The same with decisions after the apply: the apply comes before the decision is carried out,
 * and must be refused all the same. */
static const sw_policy_ops bare_after = {
    .name = "bare", .on_push = bare_push, .on_applied = bare_applied};

/* And a concurrent one, whose apply is a job the caller runs. */
static const sw_policy_ops bare_concurrent = {
    .name = "bare", .on_push = bare_push, .concurrent = true};

static sw_engine *bare_engine_of(const sw_policy_ops *ops)
{
    sw_engine_params p = two_params(ops->name, 1);
    p.policy_ops = ops;
    p.concurrent = ops->concurrent;
    sw_engine *e;
    sw_engine_result r;
    assert_int_equal(sw_engine_new(&e, &p, NULL), 0);
    assert_int_equal(sw_engine_join(e, 0, 0, &r), 0);
    return e;
}

static sw_engine *bare_engine(void) { return bare_engine_of(&bare); }

static void a_bare_policy_runs_and_a_scale_or_wake_up_out_of_range_breaks_the_engine(void **state)
{
    (void)state;
    char err[SW_ERR_LEN];
    sw_engine_params p = two_params("bare:x=1", 1);
    p.policy_ops = &bare;
    sw_engine *e;
    assert_int_equal(sw_engine_new(&e, &p, err), SW_EINVAL); /* no keys: none accepted */
    e = bare_engine();
    sw_engine_result r = push(e, 0, 1, 0, 1);
    assert_true(r.applied);
    assert_int_equal(sw_engine_version(e), 1);
    float g[2] = {1, 1};
    assert_int_equal(sw_engine_push(e, 0, g, 1, 5, &r), SW_EBUG); /* NaN: nothing applied */
    assert_non_null(strstr(sw_engine_error(e), "learning rate by nan"));
    assert_int_equal(sw_engine_version(e), 1);
    sw_engine_free(e);
    e = bare_engine();
    assert_int_equal(sw_engine_push(e, 0, g, 0, 6, &r), SW_EBUG);
    assert_non_null(strstr(sw_engine_error(e), "wake-up at inf"));
    sw_engine_free(e);
    e = bare_engine();
    assert_int_equal(sw_engine_push(e, 0, g, 0, 7, &r), SW_EBUG); /* NaN is no "none" */
    assert_non_null(strstr(sw_engine_error(e), "wake-up at nan"));
    sw_engine_free(e);
    const sw_policy_ops *early[] = {&bare_after, &bare_concurrent};
    for (int k = 0; k < 2; k++)
        for (double t = 5; t <= 8; t += 3) { /* NaN and a negative scale */
            e = bare_engine_of(early[k]);
            assert_int_equal(sw_engine_push(e, 0, g, 0, t, &r), SW_EBUG);
            assert_non_null(strstr(sw_engine_error(e), "scaled an apply's learning rate"));
            assert_int_equal(sw_engine_version(e), 0);
            assert_false(r.has_job);
            sw_engine_free(e);
        }
}

/* What a driver may not do is refused with SW_ESTATE, nothing changed, the engine still whole:
 * a time that goes back or is none, a gradient of a version there never was, a tick with no
 * wake-up due; and what no engine can be made of with SW_EINVAL. */
static void a_driver_s_mistakes_are_refused(void **state)
{
    (void)state;
    sw_engine *e = bare_engine();
    sw_engine_result r;
    float g[2] = {1, 1};
    push(e, 0, 1, 0, 2);
    assert_int_equal(sw_engine_push(e, 0, g, 1, 1, &r), SW_ESTATE); /* back from t=2 */
    assert_int_equal(sw_engine_push(e, 0, g, 1, NAN, &r), SW_ESTATE);
    assert_int_equal(sw_engine_push(e, 0, g, 1, INFINITY, &r), SW_ESTATE);
    assert_int_equal(sw_engine_push(e, 0, g, 2, 3, &r), SW_ESTATE); /* V is 1 */
    assert_int_equal(sw_engine_tick(e, 3, &r), SW_ESTATE);          /* none asked for */
    assert_int_equal(sw_engine_join(e, 1, 1, &r), SW_ESTATE);
    char err[SW_ERR_LEN];
    assert_int_equal(sw_engine_switch_policy(e, "asp", 1, &r, err), SW_ESTATE);
    assert_int_equal(sw_engine_switch_policy(e, NULL, 3, &r, err), SW_EINVAL);
    assert_int_equal(sw_engine_version(e), 1);
    assert_null(sw_engine_error(e));
    push(e, 0, 1, 1, 3); /* the time of the last call again is no going back */
    assert_int_equal(sw_engine_version(e), 2);
    sw_engine_free(e);
    sw_engine_params p = two_params("bare", 1);
    p.lr = NAN;
    assert_int_equal(sw_engine_new(&e, &p, err), SW_EINVAL);
    p = two_params("bsp", 1);
    p.policy_ops = &bare; /* a table named otherwise than the spec */
    assert_int_equal(sw_engine_new(&e, &p, err), SW_EINVAL);
    assert_non_null(strstr(err, "named otherwise than the spec"));
    static const sw_policy_ops pushless = {.name = "pushless"};
    p = two_params("pushless", 1);
    p.policy_ops = &pushless;
    assert_int_equal(sw_engine_new(&e, &p, err), SW_EINVAL);
    assert_non_null(strstr(err, "no on_push"));
}

/* A policy of one's own that holds each pusher until a wake-up, asked for from its push at
 * `push_wake` seconds after it (0: at once, < 0: already past), and whose wake-up asks for
 * another `tick_wake` seconds on (a NAN: none). */
static double push_wake, tick_wake;

static void sleepy_push(void *state, const sw_engine_view *v, const sw_push *p, sw_decision *d)
{
    (void)state, (void)p;
    d->apply = true;
    d->wake_at = v->now + push_wake;
}

static void sleepy_tick(void *state, const sw_engine_view *v, sw_decision *d)
{
    (void)state;
    sw_decision_release(d, 0);
    d->wake_at = isnan(tick_wake) ? -1 : v->now + tick_wake;
}

static const sw_policy_ops sleepy = {.name = "sleepy", .on_push = sleepy_push, .on_tick = sleepy_tick};

static void a_wake_up_asking_for_one_due_already_breaks_the_engine(void **state)
{
    (void)state;
    float g[2] = {1, 1};
    const double later[] = {1, NAN}, due[] = {0, -5};
    for (int k = 0; k < 4; k++) {
        push_wake = k % 2 ? -3 : 0; /* a push may ask for a wake-up now or past: it comes next */
        tick_wake = k < 2 ? later[k] : due[k - 2];
        sw_engine *e = bare_engine_of(&sleepy);
        sw_engine_result r;
        assert_int_equal(sw_engine_push(e, 0, g, 0, 10, &r), 0);
        assert_true(r.applied);
        assert_true(r.wake_at >= 0 && r.wake_at <= 10);
        int rc = sw_engine_tick(e, 10, &r);
        if (k < 2) {
            assert_int_equal(rc, 0);
            assert_true(isnan(tick_wake) ? r.wake_at < 0 : r.wake_at == 11);
        } else {
            assert_int_equal(rc, SW_EBUG);
            assert_non_null(strstr(sw_engine_error(e), "woken at t=10, asked for a wake-up due "
                                                       "already"));
        }
        sw_engine_free(e);
    }
}

/* The same pushes through a serial engine and a concurrent one whose jobs run in order: the same
 * decisions, and θ bit for bit (one optimizer: sw_sgd_coord on both paths), weight decay and
 * staleness modulation included. */
static void concurrent_jobs_apply_what_the_serial_engine_applies(void **state)
{
    (void)state;
    sw_engine *e[2];
    for (int c = 0; c < 2; c++) {
        sw_engine_params p = two_params("asp:lr_mod=staleness", 3);
        p.weight_decay = 0.1f;
        p.concurrent = c == 1;
        p.concurrent_mode = SW_APPLY_LOCKED;
        assert_int_equal(sw_engine_new(&e[c], &p, NULL), 0);
        sw_engine_result r;
        for (uint32_t w = 0; w < 3; w++)
            assert_int_equal(sw_engine_join(e[c], w, 0, &r), 0);
    }
    assert_null(sw_engine_params_ptr(e[1])); /* θ is read, not pointed at */
    uint64_t ver[3] = {0, 0, 0};
    for (int i = 0; i < 30; i++) {
        uint32_t w = (uint32_t)(i * 7 % 3);
        float g[2] = {(float)i / 7 - 1, 0.5f - (float)(i % 5) / 3};
        sw_engine_result r[2];
        for (int c = 0; c < 2; c++)
            assert_int_equal(sw_engine_push(e[c], w, g, ver[w], i, &r[c]), 0);
        assert_false(r[0].has_job);
        assert_true(r[1].has_job && r[1].applied);
        sw_engine_run_job(e[1], &r[1].job, g, NULL, NULL, 0);
        assert_int_equal(r[0].n_released, r[1].n_released);
        assert_int_equal(sw_engine_version(e[0]), sw_engine_version(e[1]));
        ver[w] = sw_engine_version(e[0]);
    }
    float a[2], b[2];
    sw_engine_read_params(e[0], a);
    sw_engine_read_params(e[1], b);
    assert_memory_equal(a, b, sizeof a);
    assert_true(a[0] != 1.0f); /* something was applied */
    /* A policy that aggregates, drops or reads the loss cannot run so, and says why. */
    char err[SW_ERR_LEN];
    sw_engine_result r;
    assert_int_equal(sw_engine_switch_policy(e[1], "sync:grads_to_wait=2", 31, &r, err),
                     SW_EINVAL);
    assert_non_null(strstr(err, "aggregates or drops gradients"));
    assert_int_equal(sw_engine_switch_policy(e[1], "rlp", 31, &r, err), SW_EINVAL);
    assert_non_null(strstr(err, "loss"));
    assert_int_equal(sw_engine_switch_policy(e[1], "ssp:s=1", 31, &r, err), 0);
    sw_engine_params p = two_params("bsp", 3);
    p.concurrent = true;
    sw_engine *bad;
    assert_int_equal(sw_engine_new(&bad, &p, err), SW_EINVAL);
    assert_non_null(strstr(err, "--apply-threads"));
    sw_engine_free(e[0]);
    sw_engine_free(e[1]);
}

/* DBW's gradient statistics: measured at the apply on an engine with parameters; on one
 * without (a sharded run's control plane), the apply's norms when the driver reports them,
 * never an older report over a newer one. */
/* Field by field: the padding after n holds whatever it held. */
static void same_norms(const sw_apply_norms *a, const sw_apply_norms *b)
{
    assert_int_equal(a->version, b->version);
    assert_int_equal(a->n, b->n);
    assert_true(a->sq_norms == b->sq_norms && a->sum_sq == b->sum_sq);
}

static void an_apply_s_norms_are_measured_or_reported(void **state)
{
    (void)state;
    sw_engine *e = start("dbw", 2, 2);
    push(e, 0, 1, 0, 1);
    sw_engine_result r = push(e, 1, 2, 0, 2); /* k = every worker until estimates exist */
    assert_true(r.applied);
    const sw_engine_view *v = sw_engine_get_view(e);
    assert_int_equal(v->norms.version, 1);
    assert_int_equal(v->norms.n, 2);
    assert_true(fabs(v->norms.sq_norms - 10) < 1e-9); /* |(1,1)|^2 + |(2,2)|^2 */
    assert_true(fabs(v->norms.sum_sq - 18) < 1e-9);   /* |(3,3)|^2 */
    assert_int_equal(sw_engine_push_facts(e, 0, 1, 3, &r), SW_EINVAL);
    sw_engine_apply_norms(e, &(sw_apply_norms){.version = 9, .n = 1});
    assert_int_equal(v->norms.version, 1); /* an engine with parameters measures its own */
    sw_engine_free(e);

    sw_engine_params p = sw_engine_default_params();
    p.max_workers = 2;
    p.policy = "dbw";
    assert_int_equal(sw_engine_new(&e, &p, NULL), 0);
    v = sw_engine_get_view(e);
    sw_engine_join(e, 0, 0, &r);
    sw_engine_join(e, 1, 0, &r);
    assert_int_equal(sw_engine_push_facts(e, 0, 0, 1, &r), 0);
    assert_int_equal(sw_engine_push_facts(e, 1, 0, 2, &r), 0);
    assert_true(r.applied);
    assert_int_equal(v->norms.version, 0); /* not reported yet */
    sw_apply_norms one = {.version = 1, .n = 2, .sq_norms = 7, .sum_sq = 12};
    sw_engine_apply_norms(e, &one);
    same_norms(&v->norms, &one);
    sw_engine_apply_norms(e, &(sw_apply_norms){.version = 1, .n = 2, .sq_norms = 1});
    sw_engine_apply_norms(e, &(sw_apply_norms){.version = 0, .n = 2, .sq_norms = 1});
    same_norms(&v->norms, &one);
    sw_engine_free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(writes_go_where_the_hook_says_and_never_into_a_buffer_being_sent),
        cmocka_unit_test(a_decision_is_a_set_and_a_worker_outside_the_table_breaks_the_engine),
        cmocka_unit_test(a_bare_policy_runs_and_a_scale_or_wake_up_out_of_range_breaks_the_engine),
        cmocka_unit_test(a_wake_up_asking_for_one_due_already_breaks_the_engine),
        cmocka_unit_test(a_driver_s_mistakes_are_refused),
        cmocka_unit_test(concurrent_jobs_apply_what_the_serial_engine_applies),
        cmocka_unit_test(an_apply_s_norms_are_measured_or_reported),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
