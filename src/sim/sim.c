/* The discrete-event driver: simulated workers on a virtual clock around one engine.
 *
 * A worker's step is computed when it is released, at the parameters it pulls then (or at its
 * local model between pulls), and its push is scheduled for the time the step ends; so a gradient
 * arrives exactly as stale as the cluster model makes it. Membership events, policy wake-ups and
 * evaluations share the heap; a worker's epoch makes the push of a worker that left meanwhile
 * vanish.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"
#include "syncwise/clock.h"
#include "syncwise/err.h"
#include "syncwise/log.h"
#include "syncwise/optim.h"

sw_sim_config sw_sim_default_config(void)
{
    return (sw_sim_config){
        .policy = "asp",
        .workers = 10,
        .cluster = "straggle",
        .net = "bw=1.25e9,lat=5e-5",
        .model = "mlp:h=1,u=256",
        .batch = 16,
        .lr = 0.01f,
        .optim = sw_optim_default(),
        .batch_mode = SW_BATCH_SHARD,
        .get_model_frequency = 1,
        .seed = 1,
        .eval_every = 20,
        .probe_batch = 32,
    };
}

int sw__sim_fail(sim *s, int rc, const char *fmt, ...)
{
    if (s->rc)
        return rc;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->msg, sizeof s->msg, fmt, ap);
    va_end(ap);
    s->rc = rc;
    return rc;
}

/* An engine call's code: a failure ends the run, saying which event it was. */
static bool engine_ok(sim *s, int rc, const char *what, uint32_t w, double t)
{
    if (rc == 0)
        return true;
    const char *why = sw_engine_error(s->engine);
    sw__sim_fail(s, rc, "t=%.9g: the engine refused the %s of worker %u: %s", t, what, w,
                 why ? why : sw_strerror(rc));
    return false;
}

void sw__sim_enqueue(sim *s, sw__sim_event ev)
{
    if (sw__heap_push(&s->heap, ev))
        sw__sim_fail(s, SW_ENOMEM, "out of memory for the event queue");
}

/* A worker's gradient for its step, at the parameters it pulled (a sparse task reads only those
 * its batch touches, as a sparse pull brings), or between pulls at its local model after
 * applying its own last gradient there. */
static void compute_gradient(sim *s, sim_worker *k, bool pulled)
{
    const float *at = sw_engine_params_ptr(s->engine);
    if (k->local) {
        if (pulled)
            memcpy(k->local, at, s->n_params * sizeof *at);
        else
            sw_sgd_step(k->local, k->grad.dense, s->n_params, s->c->lr, s->c->weight_decay);
        at = k->local;
    }
    if (!k->redo) /* a refused gradient is computed again on the same batch */
        sw_learner_next(k->learner);
    sw_learner_grad(k->learner, at, &k->grad);
}

/* Whether the virtual clock still moves as the worker's steps ask. A double at t moves in steps
 * of t * 2^-52 at best: at t = 9e14 a step of 0.01 s leaves the clock where it was, and a run
 * would log steps of zero time, or never reach its time limit. Judged on a moving sum of the
 * worker's recent steps (about the last ten), so that one tiny draw rounded off is no error;
 * a clock that lost 1% of them ends the run, saying so. */
static bool clock_holds(sim *s, sim_worker *k, double from, double step, double to)
{
    k->steps_asked = 0.9 * k->steps_asked + step;
    k->steps_moved = 0.9 * k->steps_moved + (to - from);
    if (!(fabs(k->steps_moved - k->steps_asked) > 0.01 * k->steps_asked))
        return true;
    sw__sim_fail(s, SW_ERANGE,
                 "t=%.17g: the virtual clock is too coarse there for steps of about %.3g s (a "
                 "double at t moves in steps of %.3g s): end the run sooner (--max-time, event "
                 "times), or model steps of less spread (a heavy-tailed pareto?)",
                 from, step, nextafter(from, INFINITY) - from);
    return false;
}

/* Releases a worker into its next step: pull (or not, between pulls), compute, schedule its
 * push. A step between pulls keeps the version it pulled last and skips the pull's transfer,
 * with or without a model. With shards the push is scheduled as it leaves the worker (EV_SEND),
 * since its way through the shards' queues is known only then. */
static void start_step(sim *s, uint32_t w, double t)
{
    sim_worker *k = &s->w[w];
    bool pull = k->redo || k->since_pull >= s->c->get_model_frequency;
    if (pull) {
        k->version = sw_engine_version(s->engine);
        k->since_pull = 0;
    }
    k->since_pull++;
    if (s->task)
        compute_gradient(s, k, pull);
    k->redo = false;
    double pulled = pull ? sw__sim_transfer_end(s, k, t, SW_SIM_PULL) : t;
    double step = sw_cluster_step_s(s->cluster, w), computed = pulled + step;
    if (!clock_holds(s, k, pulled, step, computed))
        return;
    sw__sim_event ev = {.kind = EV_ARRIVE, .worker = w, .epoch = k->epoch};
    if (s->servers.n) {
        ev.t = computed;
        ev.kind = EV_SEND;
    } else {
        ev.t = sw__sim_transfer_end(s, k, computed, SW_SIM_PUSH);
    }
    sw__sim_enqueue(s, ev);
}

static void follow(sim *s, const sw_engine_result *res, double t)
{
    for (uint32_t i = 0; i < res->n_released; i++)
        start_step(s, res->released[i], t);
    if (res->wake_at < 0) { /* none due (a switch forgets the old policy's): ticks in the heap
                             * are stale */
        s->scheduled_wake = -1;
    } else if (res->wake_at != s->scheduled_wake) {
        s->scheduled_wake = res->wake_at;
        double at = res->wake_at > t ? res->wake_at : t;
        sw__sim_enqueue(s, (sw__sim_event){.t = at, .kind = EV_TICK});
    }
}

static void on_membership(sim *s, const sw__sim_event *ev)
{
    sim_worker *k = &s->w[ev->worker];
    sw_engine_result res;
    if (ev->kind == EV_JOIN) {
        if (k->live) { /* already there: a join of a live worker changes nothing */
            sw_log(SW_LOG_WARN, "--events: a join of worker %u at t=%g s, which is live: "
                   "passed over", ev->worker, ev->t);
            return;
        }
        k->epoch++;
        k->redo = false;
        k->since_pull = s->c->get_model_frequency; /* a joiner pulls first */
        k->live = true;
        if (!engine_ok(s, sw_engine_join(s->engine, ev->worker, ev->t, &res), "join", ev->worker,
                       ev->t))
            return;
    } else {
        if (!k->live) {
            sw_log(SW_LOG_WARN, "--events: a %s of worker %u at t=%g s, which is not live: "
                   "passed over", ev->kind == EV_CRASH ? "crash" : "leave", ev->worker, ev->t);
            return;
        }
        k->epoch++; /* its step in flight is lost */
        k->live = false;
        bool crash = ev->kind == EV_CRASH;
        if (!engine_ok(s, sw_engine_leave(s->engine, ev->worker, ev->t, crash, &res),
                       crash ? "crash" : "leave", ev->worker, ev->t))
            return;
    }
    follow(s, &res, ev->t);
}

static void on_arrive(sim *s, const sw__sim_event *ev)
{
    if (sw__sim_outlived(s, ev))
        return; /* the worker left while computing */
    sim_worker *k = &s->w[ev->worker];
    sw_engine_result res;
    int rc = s->task && sw_task_is_sparse(s->task)
                 ? sw_engine_push_sparse(s->engine, ev->worker, k->grad.idx, k->grad.val,
                                         k->grad.nnz, k->version, ev->t, &res)
                 : sw_engine_push(s->engine, ev->worker, k->grad.dense, k->version, ev->t, &res);
    if (!engine_ok(s, rc, "push", ev->worker, ev->t))
        return;
    if (res.dropped)
        k->redo = true;
    follow(s, &res, ev->t);
}

static void on_tick(sim *s, const sw__sim_event *ev)
{
    if (s->scheduled_wake < 0 || ev->t < s->scheduled_wake)
        return; /* superseded by a later wake-up, or by none */
    s->scheduled_wake = -1;
    sw_engine_result res;
    int rc = sw_engine_tick(s->engine, ev->t, &res);
    if (rc) {
        sw__sim_fail(s, rc, "t=%.9g: the engine failed a wake-up: %s", ev->t,
                     sw_engine_error(s->engine));
        return;
    }
    follow(s, &res, ev->t);
}

/* Loss and accuracy on the held-out set. */
static void evaluate(sim *s, sw_eval *e)
{
    sw_task_evaluate(s->task, sw_engine_params_ptr(s->engine), e);
}

/* The training loss on the fixed sample, for a target loss (NAN without one). */
static double train_loss(sim *s)
{
    if (!(s->c->target_loss > 0))
        return NAN;
    return sw_task_train_loss(s->task, sw_engine_params_ptr(s->engine));
}

static sw_stop_reason on_eval(sim *s, const sw__sim_event *ev)
{
    const sw_sim_config *c = s->c;
    sw_sim_result *r = s->r;
    uint64_t V = sw_engine_version(s->engine);
    if (r->evals > 0 && V == s->eval_V) { /* the parameters are the last evaluation's */
        s->eval_parked = true;
        return SW_STOP_NONE;
    }
    s->eval_t = ev->t;
    s->eval_V = V;
    sw_eval e;
    evaluate(s, &e);
    r->evals++;
    sw__sim_sink(
        s, &(sw_event){
               .kind = SW_EV_EVAL, .t = ev->t, .V = V, .loss = e.loss, .accuracy = e.accuracy});
    if (c->on_eval)
        c->on_eval(c->on_eval_ctx, ev->t, V, e.loss, r->classify ? e.accuracy : NAN);
    r->best_acc = e.accuracy > r->best_acc ? e.accuracy : r->best_acc;
    if (!isfinite(e.loss) && r->diverged_t < 0)
        r->diverged_t = ev->t;
    bool improved;
    sw_stop_reason hit = sw_stopper_eval(&s->stopper,
                                         &(sw_stop_eval){.accuracy = e.accuracy,
                                                         .loss = e.loss,
                                                         .train_loss = train_loss(s),
                                                         .classify = r->classify},
                                         &improved);
    if (improved && s->best) /* early stopping keeps the best weights */
        memcpy(s->best, sw_engine_params_ptr(s->engine), s->n_params * sizeof *s->best);
    if (hit == SW_STOP_TARGET_ACC || hit == SW_STOP_TARGET_LOSS)
        r->target_t = ev->t;
    if (!hit)
        sw__sim_enqueue(s, (sw__sim_event){.t = ev->t + c->eval_every, .kind = EV_EVAL});
    return hit;
}

static void on_switch(sim *s, const sw__sim_event *ev)
{
    sw_engine_result res;
    char err[SW_ERR_LEN];
    int rc = sw_engine_switch_policy(s->engine, s->switches[ev->worker], ev->t, &res, err);
    if (rc) {
        sw__sim_fail(s, rc, "policy switch at t=%.9g: %s", ev->t, err);
        return;
    }
    follow(s, &res, ev->t);
}

static bool joins_pending(const sim *s)
{
    for (size_t i = 0; i < s->heap.n; i++)
        if (s->heap.ev[i].kind == EV_JOIN)
            return true;
    return false;
}

static sw_stop_reason loop(sim *s)
{
    sw__sim_event ev;
    double now = 0;
    const sw_run_stats *st = &s->r->stats;
    bool at_limit = false;
    while (sw__heap_pop(&s->heap, &ev)) {
        if (sw_stopper_limits(&s->stopper, ev.t, 0, 0) == SW_STOP_MAX_TIME) {
            s->r->end_t = s->c->max_time; /* the run covers [0, max_time] */
            at_limit = true;
            if (ev.t > s->c->max_time)
                return SW_STOP_MAX_TIME;
            if (ev.kind != EV_EVAL) /* at the limit only the evaluation due then happens */
                continue;
        }
        if (!isfinite(ev.t)) { /* a log cannot say t = inf, nor a run mean anything after it */
            sw__sim_fail(s, SW_ERANGE, "t=%.9g: the virtual clock overflowed after t=%.9g s "
                         "(steps drawn too long for a double: a heavy-tailed cluster such as "
                         "pareto with a shape near 0?); give --max-time", ev.t, now);
            return SW_STOP_NONE;
        }
        now = ev.t;
        s->r->end_t = now;
        sw_stop_reason stop = SW_STOP_NONE;
        switch (ev.kind) {
        case EV_ARRIVE: on_arrive(s, &ev); break;
        case EV_TICK: on_tick(s, &ev); break;
        case EV_EVAL: stop = on_eval(s, &ev); break;
        case EV_SWITCH: on_switch(s, &ev); break;
        case EV_SEND: sw__sim_on_send(s, &ev); break;
        case EV_FACTS: sw__sim_on_facts(s, &ev); break;
        default: on_membership(s, &ev); break;
        }
        if (s->rc)
            return SW_STOP_NONE;
        if (stop || (stop = sw_stopper_limits(&s->stopper, 0, st->applies, st->pushes)))
            return stop;
        if (sw_engine_get_view(s->engine)->n_live == 0 && ev.kind != EV_EVAL && !joins_pending(s))
            return SW_STOP_NO_WORKERS;
    }
    return at_limit ? SW_STOP_MAX_TIME : SW_STOP_NO_WORKERS;
}

static void finish(sim *s)
{
    sw_sim_result *r = s->r;
    char why[SW_ERR_LEN];
    if (s->check && sw_check_end(s->check, why)) {
        sw__sim_fail(s, SW_EPROMISE, "%s", why);
        return;
    }
    sw_run_stats_close(&r->stats, r->end_t);
    if (s->task) {
        if (s->c->patience && s->best) /* keep the best weights, as early stopping promises */
            memcpy(sw_engine_params_mut(s->engine), s->best, s->n_params * sizeof *s->best);
        sw_eval e;
        evaluate(s, &e);
        r->final_loss = e.loss;
        r->final_acc = e.accuracy;
    }
    r->decide_s = sw_engine_decide_s(s->engine);
    r->probe_s = sw_engine_probe_s(s->engine);
    r->n_params = s->n_params;
    r->shards = s->servers.n;
    r->link_load = sw__sim_servers_link_load(&s->servers, r->end_t);
    r->ctl_load = sw__sim_servers_ctl_load(&s->servers, r->end_t);
}

/* The first log line says what ran, so that a log describes itself. */
static void log_start(const sim *s)
{
    const sw_sim_config *c = s->c;
    sw_run_info info = {.driver = "sim",
                        .workers = c->workers,
                        .slots = s->n_slots,
                        .seed = c->seed,
                        .params = s->n_params,
                        .batch = c->batch,
                        .lr = c->lr,
                        .target_acc = c->target_acc,
                        .regress = s->task && !sw_task_classifies(s->task)};
    snprintf(info.policy, sizeof info.policy, "%s", c->policy);
    snprintf(info.model, sizeof info.model, "%s", s->task ? sw_task_spec(s->task) : "none");
    snprintf(info.cluster, sizeof info.cluster, "%s", c->cluster);
    sw_optim_format(&c->optim, info.optimizer);
    sw_run_write_start(c->log, &info);
}

static int start(sim *s, char *err)
{
    const sw_sim_config *c = s->c;
    int rc;
    s->n_slots = c->workers + sw__sim_count_joins(c->events);
    if (c->cluster && strlen(c->cluster) >= sizeof ((sw_run_info *)0)->cluster)
        return sw_fail(err, SW_EINVAL, "a cluster spec of %zu characters: the log keeps at most "
                       "%zu", strlen(c->cluster), sizeof ((sw_run_info *)0)->cluster - 1);
    if ((rc = sw__sim_setup(s, err)))
        return rc;
    if (c->log)
        log_start(s);
    for (uint32_t w = 0; w < c->workers; w++)
        on_membership(s, &(sw__sim_event){.t = 0, .kind = EV_JOIN, .worker = w});
    if (s->rc)
        return sw_fail(err, s->rc, "%s", s->msg);
    if ((rc = sw__sim_schedule(s, c->events, c->workers, err)))
        return rc;
    if (s->task && sw__heap_push(&s->heap, (sw__sim_event){.t = 0, .kind = EV_EVAL}))
        return sw_fail(err, SW_ENOMEM, "out of memory");
    return 0;
}

/* A run that failed (the engine refused a decision, memory ran out) ends its log saying why,
 * as a failed server's does (docs/log.md). */
static void write_failed_end(const sim *s)
{
    char why[sizeof SW_END_FAILED + sizeof s->msg];
    snprintf(why, sizeof why, "%s%s", SW_END_FAILED, s->msg);
    sw_run_write_end(s->c->log, s->r->end_t, sw_engine_version(s->engine), why);
}

/* Why the run stopped; a run whose model diverged failed, as `sim` says by its status, though
 * it ran on to its stop (a comparison counts it as a run that never reaches the target). */
static void write_end(const sim *s)
{
    const sw_sim_result *r = s->r;
    char why[sizeof SW_END_FAILED + SW_ERR_LEN];
    if (r->diverged_t >= 0)
        snprintf(why, sizeof why, "%s at t=%.1f s: its %s loss is not finite (stopped by %s)",
                 SW_END_DIVERGED, r->diverged_t, r->held_out,
                 sw_stop_reason_name(r->stop));
    else
        snprintf(why, sizeof why, "%s", sw_stop_reason_name(r->stop));
    sw_run_write_end(s->c->log, r->end_t, sw_engine_version(s->engine), why);
}

int sw_sim_run(const sw_sim_config *c, sw_sim_result *out, char *err)
{
    memset(out, 0, sizeof *out);
    int rc = sw__sim_check_run(c, err);
    if (rc)
        return rc;
    double t0 = sw_clock_now_s();
    sim s = {.c = c, .r = out, .scheduled_wake = -1};
    rc = start(&s, err); /* which fails with s.rc too when a first join failed */
    if (!rc) {
        out->stop = loop(&s);
        if (!s.rc)
            finish(&s);
    }
    if (c->log && !rc && !s.rc)
        write_end(&s);
    else if (c->log && s.rc && s.rc != SW_EPROMISE) /* a broken promise's log is left to check */
        write_failed_end(&s);
    if (!rc && s.rc)
        rc = sw_fail(err, s.rc, "%s", s.msg);
    sw__sim_teardown(&s);
    out->wall_s = sw_clock_now_s() - t0;
    if (rc)
        sw_sim_result_free(out);
    return rc;
}

void sw_sim_result_free(sw_sim_result *r)
{
    sw_run_stats_free(&r->stats);
}
