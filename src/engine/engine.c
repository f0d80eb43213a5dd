/* The engine state machine: worker table, aggregation buffer and the policy calls (what an
 * apply does to θ is apply.c's).
 *
 * Every event follows one path: update the worker table, ask the policy (timed, for the
 * "deciding" share of a run), check the decision against the policy contract, then carry it out
 * in a fixed order — buffer the gradient or drop it, apply, grants, releases, liveness, wake-up —
 * reporting each step to the event sink.
 */
#include "syncwise/engine.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "syncwise/clock.h"
#include "syncwise/err.h"
#include "syncwise/optim.h"
#include "syncwise/policy.h"
#include "syncwise/roster.h"

#include "engine_internal.h"

sw_engine_params sw_engine_default_params(void)
{
    return (sw_engine_params){
        .lr = 0.01f, .optim = sw_optim_default(), .max_workers = 1, .policy = "asp", .seed = 1};
}

/* Whether a worker's clock counts in view.min_live_clock: live and started (a joiner has no
 * clock of its own until its first release). */
static bool started(const sw_worker_info *k)
{
    return k->state != SW_WORKER_ABSENT && !k->fresh;
}

/* Recounts the slowest started clock; called only when the last worker at the minimum moved.
 * With no started worker the minimum stays the last one seen. */
static void recount_min(sw_engine *e)
{
    uint64_t min = UINT64_MAX;
    uint32_t at = 0;
    for (uint32_t i = 0; i < e->view.n_live; i++) {
        const sw_worker_info *k = &e->workers[e->live[i]];
        if (!started(k))
            continue;
        if (k->clock < min) {
            min = k->clock;
            at = 0;
        }
        at += k->clock == min;
    }
    if (at > 0)
        e->view.min_live_clock = min;
    e->n_at_min = at;
}

int sw_engine_new(sw_engine **out, const sw_engine_params *p, char *err)
{
    *out = NULL;
    if (p->max_workers == 0 || p->max_workers > (1u << 24))
        return sw_fail(err, SW_EINVAL, "engine: %u worker slots is not in [1, %u]", p->max_workers,
                       1u << 24);
    if (sw__engine_spec_bad(p->policy, err))
        return SW_EINVAL;
    if (!isfinite(p->lr) || p->lr < 0)
        return sw_fail(err, SW_EINVAL, "engine: a learning rate of %g (a finite number >= 0 "
                       "is needed)", (double)p->lr);
    sw_engine *e = calloc(1, sizeof *e);
    if (!e)
        return sw_fail(err, SW_ENOMEM, "out of memory for an engine");
    e->p = *p;
    size_t n = p->n_params && !p->concurrent ? p->n_params : 1;
    e->theta = e->own = calloc(n, sizeof *e->theta);
    e->buf.sum = calloc(n, sizeof *e->buf.sum);
    e->buf.n = p->concurrent ? 0 : p->n_params;
    e->workers = calloc(p->max_workers, sizeof *e->workers);
    e->live = calloc(p->max_workers, sizeof *e->live);
    e->decided = calloc(p->max_workers, sizeof *e->decided);
    e->released = calloc(p->max_workers, sizeof *e->released);
    e->chosen = calloc(p->max_workers, sizeof *e->chosen);
    e->grant_w = calloc(p->max_workers, sizeof *e->grant_w);
    e->grant_steps = calloc(p->max_workers, sizeof *e->grant_steps);
    if (!e->theta || !e->buf.sum || !e->workers || !e->live || !e->decided || !e->released ||
        !e->chosen || !e->grant_w || !e->grant_steps) {
        sw_engine_free(e);
        return sw_fail(err, SW_ENOMEM, "out of memory for an engine of %zu parameters",
                       p->n_params);
    }
    int rc = p->concurrent
                 ? sw_shared_new(&e->shared, p->n_params, p->init, p->concurrent_mode, err)
                 : 0;
    if (rc) {
        sw_engine_free(e);
        return rc;
    }
    if (p->init && p->n_params && !p->concurrent)
        memcpy(e->theta, p->init, p->n_params * sizeof *e->theta);
    e->view = (sw_engine_view){.n_slots = p->max_workers,
                               .workers = e->workers,
                               .live = e->live,
                               .buffer_sum = e->buf.sum,
                               .n_params = p->n_params,
                               .last_apply_t = -1,
                               .version = p->init_version,
                               .loss_before = NAN,
                               .loss_after = NAN};
    e->loss_now = NAN;
    sw_rng_seed(&e->rng, p->seed, 0x706f6c6963ULL /* "policy" */);
    e->env.rng = &e->rng;
    e->env.ctx = p->policy_ops ? p->policy_ctx : NULL;
    e->env.optim = p->optim;
    e->wake_at = -1;
    e->last_t = -INFINITY;
    rc = sw__engine_optim_new(e, p, err);
    if (!rc)
        rc = sw__engine_make_policy(e, p->policy, p->policy_ops, &e->ops, &e->state,
                                    &e->policy_lr, &e->wants, err);
    if (rc) {
        sw_engine_free(e);
        return rc;
    }
    snprintf(e->spec, sizeof e->spec, "%s", p->policy);
    e->p.policy = e->spec;
    e->view.lr = sw_engine_lr(e);
    *out = e;
    return 0;
}

void sw_engine_free(sw_engine *e)
{
    if (!e)
        return;
    if (e->ops && e->ops->fini)
        e->ops->fini(e->state);
    free(e->state);
    free(e->own);
    sw_optim_free(&e->opt);
    sw_shared_free(e->shared);
    free(e->buf.sum);
    free(e->workers);
    free(e->live);
    free(e->decided);
    free(e->released);
    free(e->chosen);
    free(e->grant_w);
    free(e->grant_steps);
    free(e);
}

static void reset_decision(sw_engine *e, sw_decision *d)
{
    *d = (sw_decision){.lr_scale = 1.0f,
                       .wake_at = -1,
                       .release = e->decided,
                       .cap = e->view.n_slots,
                       .chosen = e->chosen,
                       .grant_w = e->grant_w,
                       .grant_steps = e->grant_steps,
                       .bad_worker = UINT32_MAX};
}

/* A joiner's clock becomes the slowest started worker's at its first release (it keeps the
 * one it joined with when nobody has started), and counts from then on. */
static void align_joiner(sw_engine *e, uint32_t w)
{
    sw_worker_info *k = &e->workers[w];
    k->fresh = false;
    if (e->n_at_min > 0) {
        k->clock = e->view.min_live_clock;
        e->n_at_min++;
    } else {
        e->view.min_live_clock = k->clock;
        e->n_at_min = 1;
    }
}

static void release(sw_engine *e, uint32_t w, double t, const char *reason, sw_engine_result *out)
{
    sw_worker_info *k = &e->workers[w];
    if (k->state != SW_WORKER_WAITING)
        return;
    if (k->fresh)
        align_joiner(e, w);
    k->state = SW_WORKER_RUNNING;
    k->version = e->view.version;
    k->released_t = t;
    e->view.n_waiting--;
    e->released[out->n_released++] = w;
    sw__engine_emit(e, &(sw_event){.kind = SW_EV_RELEASE,
                        .t = t,
                        .worker = w,
                        .clock = k->clock,
                        .V = e->view.version,
                        .reason = reason});
}

/* An apply's learning-rate scale is a finite number >= 0, or the engine breaks before it
 * applies anything: every path to an apply asks (the decision's, one before on_applied, a
 * concurrent job's). */
static bool scale_ok(sw_engine *e, const sw_decision *d)
{
    if (isfinite(d->lr_scale) && d->lr_scale >= 0)
        return true;
    snprintf(e->broken, sizeof e->broken,
             "policy '%s' scaled an apply's learning rate by %g (a finite number >= 0 is needed)",
             e->spec, (double)d->lr_scale);
    return false;
}

/* A decision that names a worker outside the table, or a scale or wake-up no run can follow,
 * breaks the policy contract: the engine stops deciding, and every call says why. A wake-up's
 * own decision asking for a wake-up due already is one no run can follow: each tick would ask
 * for the next at once, the clock never moving on (a simulator's run would never end). */
static bool check_decision(sw_engine *e, const sw_decision *d)
{
    if (d->bad_worker != UINT32_MAX)
        snprintf(e->broken, sizeof e->broken,
                 "policy '%s' named worker %u in a decision, outside the table of %u slots",
                 e->spec, d->bad_worker, e->view.n_slots);
    else if (d->apply && !scale_ok(e, d))
        return false;
    else if (isnan(d->wake_at) || (d->wake_at >= 0 && !isfinite(d->wake_at)))
        snprintf(e->broken, sizeof e->broken, "policy '%s' asked for a wake-up at %g", e->spec,
                 d->wake_at);
    else if (e->ticking && d->wake_at >= 0 && d->wake_at <= e->view.now)
        snprintf(e->broken, sizeof e->broken,
                 "policy '%s', woken at t=%.9g, asked for a wake-up due already (at t=%.9g): "
                 "its wake-ups would follow one another with no time passing (a tick asks for "
                 "a later time, or for none)",
                 e->spec, e->view.now, d->wake_at);
    return !e->broken[0];
}

static void emit_grants(const sw_engine *e, const sw_decision *d, double t)
{
    for (uint32_t i = 0; i < d->n_grant; i++)
        sw__engine_emit(e, &(sw_event){.kind = SW_EV_GRANT,
                            .t = t,
                            .worker = d->grant_w[i],
                            .n = d->grant_steps[i],
                            .V = e->view.version});
}

/* Clears a decision's release marks, ready for the next one. */
static void forget_marks(sw_engine *e, const sw_decision *d)
{
    for (uint32_t i = 0; i < d->n_release; i++)
        e->chosen[d->release[i]] = 0;
}

/* Carries out a decision: apply, grants, releases, then the liveness rule and the wake-up. */
static int carry_out(sw_engine *e, const sw_decision *d, double t, sw_engine_result *out)
{
    forget_marks(e, d);
    if (!check_decision(e, d))
        return SW_EBUG;
    if (d->apply && e->view.buffered > 0) {
        sw__engine_apply(e, d->lr_scale, t);
        out->applied = true;
    }
    emit_grants(e, d, t);
    for (uint32_t i = 0; i < d->n_release; i++)
        release(e, d->release[i], t, "policy", out);
    if (d->wake_at >= 0) {
        e->wake_at = d->wake_at;
        sw__engine_emit(e, &(sw_event){.kind = SW_EV_WAKE, .t = t, .at = d->wake_at, .V = e->view.version});
    }
    if (e->view.n_live > 0 && e->view.n_waiting == e->view.n_live && e->wake_at < 0)
        for (uint32_t i = 0; i < e->view.n_live; i++)
            release(e, e->live[i], t, "liveness", out);
    out->released = e->released;
    out->wake_at = e->wake_at;
    return 0;
}

/* A policy spec the engine cannot hold (none, or longer than its copy), said in err. */
bool sw__engine_spec_bad(const char *policy, char *err)
{
    if (!policy)
        sw_fail(err, SW_EINVAL, "engine: no policy spec");
    else if (strlen(policy) >= SPEC_LEN)
        sw_fail(err, SW_EINVAL, "a policy spec of %zu characters: at most %d are taken",
                strlen(policy), SPEC_LEN - 1);
    return !policy || strlen(policy) >= SPEC_LEN;
}

/* Whether t may be the next event's time: a number, never before the last event's. */
bool sw__engine_time_ok(sw_engine *e, double t)
{
    if (!isfinite(t) || t < e->last_t)
        return false;
    e->last_t = t;
    return true;
}

/* Starts an event call; SW_EBUG when the engine is broken already, SW_ESTATE for a time that
 * is none or goes back (the driver's contract). */
static int begin(sw_engine *e, double t, sw_engine_result *out, sw_decision *d)
{
    *out = (sw_engine_result){.wake_at = -1, .released = e->released};
    if (e->broken[0])
        return SW_EBUG;
    if (!sw__engine_time_ok(e, t))
        return SW_ESTATE;
    e->view.now = t;
    reset_decision(e, d);
    return 0;
}

int sw_engine_join(sw_engine *e, uint32_t w, double t, sw_engine_result *out)
{
    sw_decision d;
    int bad = begin(e, t, out, &d);
    if (bad)
        return bad;
    if (w >= e->view.n_slots || e->workers[w].state != SW_WORKER_ABSENT)
        return SW_ESTATE;
    sw_worker_info *k = &e->workers[w];
    /* A provisional clock: the slowest started one (or the last one seen, when none is). */
    uint64_t clock = e->view.min_live_clock;
    *k = (sw_worker_info){.state = SW_WORKER_WAITING,
                          .clock = clock,
                          .version = e->view.version,
                          .joined_t = t,
                          .released_t = t,
                          .push_t = {-1, -1},
                          .fresh = true,
                          .buffered_for = k->buffered_for};
    sw_roster_add(e->live, &e->view.n_live, w);
    e->view.n_waiting++;
    sw__engine_emit(e, &(sw_event){
                .kind = SW_EV_JOIN, .t = t, .worker = w, .clock = clock, .V = e->view.version});
    double t0 = sw_clock_now_s();
    if (e->ops->on_join)
        e->ops->on_join(e->state, &e->view, w, &d);
    else
        sw_decision_release(&d, w);
    e->decide_s += sw_clock_now_s() - t0;
    return carry_out(e, &d, t, out);
}

int sw_engine_leave(sw_engine *e, uint32_t w, double t, bool crashed, sw_engine_result *out)
{
    sw_decision d;
    int bad = begin(e, t, out, &d);
    if (bad)
        return bad;
    if (w >= e->view.n_slots || e->workers[w].state == SW_WORKER_ABSENT)
        return SW_ESTATE;
    sw_worker_info *k = &e->workers[w];
    bool counted = started(k);
    if (k->state == SW_WORKER_WAITING)
        e->view.n_waiting--;
    k->state = SW_WORKER_ABSENT;
    sw_roster_remove(e->live, &e->view.n_live, w);
    if (counted && k->clock == e->view.min_live_clock && --e->n_at_min == 0)
        recount_min(e);
    sw__engine_emit(e, &(sw_event){.kind = crashed ? SW_EV_CRASH : SW_EV_LEAVE,
                        .t = t,
                        .worker = w,
                        .clock = k->clock,
                        .V = e->view.version});
    double t0 = sw_clock_now_s();
    if (e->ops->on_leave)
        e->ops->on_leave(e->state, &e->view, w, &d);
    e->decide_s += sw_clock_now_s() - t0;
    return carry_out(e, &d, t, out);
}

/* A concurrent engine's push: the decision must apply the gradient alone, at once (what the
 * policy's `concurrent` promised); the apply is counted and logged now and handed to the caller
 * as a job. */
static int push_concurrent(sw_engine *e, sw_decision *d, double t, sw_engine_result *out)
{
    if (d->drop || !d->apply) {
        forget_marks(e, d);
        snprintf(e->broken, sizeof e->broken,
                 "policy '%s' %s a gradient, which concurrent "
                 "applies cannot follow",
                 e->spec, d->drop ? "dropped" : "did not apply");
        return SW_EBUG;
    }
    if (!scale_ok(e, d)) {
        forget_marks(e, d);
        return SW_EBUG;
    }
    out->has_job = true;
    out->job = (sw_apply_job){.lr = sw_engine_lr(e) * d->lr_scale, .weight_decay = e->p.weight_decay};
    out->applied = true;
    e->view.last_apply_t = t;
    e->view.last_apply_n = 1;
    e->view.version++;
    sw__engine_emit(e,
         &(sw_event){
             .kind = SW_EV_APPLY, .t = t, .V = e->view.version, .n = 1, .lr_scale = d->lr_scale});
    d->apply = false;
    return carry_out(e, d, t, out);
}

/* A push, dense or sparse: the worker table, the policy, the buffer, the decision. */
static int push(sw_engine *e, uint32_t w, const sw__grad *grad, uint64_t version, double t,
                sw_engine_result *out)
{
    sw_decision d;
    int bad = begin(e, t, out, &d);
    if (bad)
        return bad;
    if (w >= e->view.n_slots || e->workers[w].state != SW_WORKER_RUNNING ||
        version > e->view.version) /* a gradient of parameters there never were */
        return SW_ESTATE;
    sw_worker_info *k = &e->workers[w];
    if (k->clock++ == e->view.min_live_clock && --e->n_at_min == 0)
        recount_min(e);
    k->pushes++;
    k->push_t[1] = k->push_t[0];
    k->push_t[0] = t;
    k->state = SW_WORKER_WAITING;
    e->view.n_waiting++;
    sw__engine_emit(e, &(sw_event){.kind = SW_EV_PUSH,
                        .t = t,
                        .worker = w,
                        .clock = k->clock,
                        .ver = version,
                        .V = e->view.version});
    sw_push p = {.worker = w, .version = version, .clock = k->clock};
    if ((e->wants & SW_WANT_SQ_NORM) && e->p.n_params) /* else the driver has the norms */
        p.sq_norm = sw__grad_sq_norm(grad, e->p.n_params);
    double t0 = sw_clock_now_s();
    e->ops->on_push(e->state, &e->view, &p, &d);
    e->decide_s += sw_clock_now_s() - t0;
    if (e->p.concurrent)
        return push_concurrent(e, &d, t, out);
    if (d.drop) {
        /* A refused gradient is not a step: the worker redoes the same batch. */
        k->clock--;
        if (k->clock < e->view.min_live_clock)
            recount_min(e);
        else
            e->n_at_min += k->clock == e->view.min_live_clock;
        out->dropped = true;
        sw__engine_emit(e, &(sw_event){
                    .kind = SW_EV_DROP, .t = t, .worker = w, .ver = version, .V = e->view.version});
    } else {
        sw__gradbuf_add(&e->buf, grad, e->view.buffered == 0);
        e->view.buffered++;
        k->buffered_for = e->view.version + 1;
        e->view.buffered_sq_norm += p.sq_norm;
    }
    if (d.apply && e->ops->on_applied && e->view.buffered > 0) {
        /* Decisions that depend on the new parameters are made after the apply. */
        if (!scale_ok(e, &d)) {
            forget_marks(e, &d);
            sw__gradbuf_keep(&e->buf);
            return SW_EBUG;
        }
        sw__engine_apply(e, d.lr_scale, t);
        out->applied = true;
        d.apply = false;
        t0 = sw_clock_now_s();
        e->ops->on_applied(e->state, &e->view, &p, &d);
        e->decide_s += sw_clock_now_s() - t0;
    }
    int rc = carry_out(e, &d, t, out);
    sw__gradbuf_keep(&e->buf); /* the caller's gradient is gone after this call */
    return rc;
}

int sw_engine_push(sw_engine *e, uint32_t w, const float *grad, uint64_t version, double t,
                   sw_engine_result *out)
{
    sw__grad g = {.dense = grad};
    return push(e, w, &g, version, t, out);
}

int sw_engine_push_facts(sw_engine *e, uint32_t w, uint64_t version, double t,
                         sw_engine_result *out)
{
    if (e->p.n_params) {
        *out = (sw_engine_result){.wake_at = -1};
        return SW_EINVAL;
    }
    sw__grad g = {0};
    return push(e, w, &g, version, t, out);
}

void sw_engine_apply_norms(sw_engine *e, const sw_apply_norms *norms)
{
    if (!e->p.n_params && norms->version > e->view.norms.version)
        e->view.norms = *norms;
}

int sw_engine_push_sparse(sw_engine *e, uint32_t w, const uint32_t *idx, const float *val,
                          size_t nnz, uint64_t version, double t, sw_engine_result *out)
{
    for (size_t k = 0; k < nnz; k++)
        if (idx[k] >= e->p.n_params || (k > 0 && idx[k] <= idx[k - 1])) {
            *out = (sw_engine_result){.wake_at = -1};
            return SW_EINVAL;
        }
    sw__grad g = {.idx = idx, .val = val, .nnz = nnz};
    return push(e, w, &g, version, t, out);
}

/* on_tick and its decision: a wake-up, or the start of a switched-to policy. */
int sw__engine_tick(sw_engine *e, double t, sw_engine_result *out)
{
    sw_decision d;
    int bad = begin(e, t, out, &d);
    if (bad)
        return bad;
    double t0 = sw_clock_now_s();
    if (e->ops->on_tick)
        e->ops->on_tick(e->state, &e->view, &d);
    e->decide_s += sw_clock_now_s() - t0;
    return carry_out(e, &d, t, out);
}

int sw_engine_tick(sw_engine *e, double t, sw_engine_result *out)
{
    if (e->broken[0])
        return sw__engine_tick(e, t, out);
    if (e->wake_at < 0 || !(t >= e->wake_at) || !sw__engine_time_ok(e, t)) {
        /* no wake-up due, or a time that goes back: the driver's mistake */
        *out = (sw_engine_result){.wake_at = e->wake_at, .released = e->released};
        return SW_ESTATE;
    }
    e->wake_at = -1;
    sw__engine_emit(e, &(sw_event){.kind = SW_EV_TICK, .t = t, .V = e->view.version});
    e->ticking = true;
    int rc = sw__engine_tick(e, t, out);
    e->ticking = false;
    return rc;
}

void sw_engine_run_job(sw_engine *e, const sw_apply_job *job, const float *dense,
                       const uint32_t *idx, const float *val, size_t nnz)
{
    if (dense)
        sw_shared_apply_dense(e->shared, dense, job->lr, job->weight_decay);
    else
        sw_shared_apply_sparse(e->shared, idx, val, nnz, job->lr, job->weight_decay);
}
