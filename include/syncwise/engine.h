/* The engine: the parameter server's state machine, independent of any clock or transport.
 *
 * The engine owns the model parameters θ and their version V (the number of applies), an
 * aggregation buffer (the sum of accepted gradients, their count and the sum of their squared
 * norms), and a table of worker slots. A driver (the simulator or the network server) feeds it
 * events — join, leave, push, tick — with the time they happen, and carries out what it answers:
 * which workers to release (they then pull θ and V and start a step), and when to call back.
 * The synchronization policy (syncwise/policy.h) makes every decision; the engine applies it and
 * reports each step as an event to an optional sink, which is how both drivers write one log.
 *
 * Conventions: an apply is θ <- θ - lr * lr_scale * (buffer sum / buffer count), with optional
 * weight decay, or with momentum or Adam (syncwise/optim.h) a step of that optimizer on the mean
 * gradient at the rate lr * lr_scale. lr is the run's, or the policy spec's own "lr=X" (any
 * policy takes it) while that policy is in force. A worker's clock counts the steps it has pushed; a worker that joins has no
 * clock of its own until it is first released, when it gets the clock of the slowest started
 * worker, so that staleness bounds keep their meaning (a joiner held until a barrier starts in
 * step with everyone). Until then it holds a provisional clock, the slowest one when it joined,
 * which counts in no minimum. If a decision
 * leaves every live worker waiting and asks for no wake-up, the engine releases them all (event
 * "release" with reason "liveness"): no policy can deadlock the run.
 *
 * Ownership: the engine copies the initial parameters; arrays in an sw_engine_result are owned by
 * the engine and valid until its next call. Nothing here allocates after sw_engine_new except a
 * policy switch.
 */
#ifndef SYNCWISE_ENGINE_H
#define SYNCWISE_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "syncwise/concurrent.h"
#include "syncwise/optim.h"
#include "syncwise/rng.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum sw_worker_state {
    SW_WORKER_ABSENT = 0, /* never joined, left or crashed */
    SW_WORKER_RUNNING,    /* released: computing a step */
    SW_WORKER_WAITING,    /* pushed, waiting to be released */
} sw_worker_state;

/* One slot of the worker table, as policies see it. */
typedef struct sw_worker_info {
    sw_worker_state state;
    uint64_t clock;          /* steps pushed (joiners start at the slowest started clock) */
    uint64_t pushes;         /* pushes received from this worker, dropped ones included */
    uint64_t version;        /* version of the parameters it pulled last */
    double joined_t;         /* when it joined */
    double released_t;       /* when it was last released */
    double push_t[2];        /* its last two push times, newest first (-1: none yet); a
                              * slot's fields are set when it joins (zero in one never joined,
                              * so that a table of 16M slots costs nothing until used) */
    bool fresh;              /* joined and not yet released: its clock is provisional */
    uint64_t buffered_for;   /* the version whose apply takes the slot's newest gradient in the
                              * buffer (0: none since): kept when the slot is joined again, so
                              * that its gradients are one per apply (sw_policy_slot_buffered) */
} sw_worker_info;

/* What an apply's gradients measured: a policy that decides on gradient statistics (DBW)
 * reads these instead of the gradients. */
typedef struct sw_apply_norms {
    uint64_t version; /* the version the apply made (0: no apply measured yet) */
    uint32_t n;       /* gradients it applied */
    double sq_norms;  /* the sum of their squared norms */
    double sum_sq;    /* the squared norm of their sum */
} sw_apply_norms;

/* A const view of the engine's state, handed to every policy call. */
typedef struct sw_engine_view {
    double now;                   /* time of the event being decided */
    uint64_t version;             /* V */
    uint32_t n_slots;             /* size of the worker table */
    uint32_t n_live;              /* workers running or waiting */
    uint32_t n_waiting;
    const sw_worker_info *workers;
    uint32_t buffered;            /* gradients in the aggregation buffer */
    double buffered_sq_norm;      /* sum of their squared norms (if the policy asked for it;
                                   * 0 without parameters: see `norms`) */
    const float *buffer_sum;      /* their sum, n_params floats */
    size_t n_params;
    uint64_t min_live_clock;      /* smallest clock among started live workers (fresh joiners
                                   * excluded); the last one seen while none is started */
    double lr;                    /* the learning rate in force (the run's, or the policy
                                   * spec's lr=), which an apply's lr_scale multiplies; set
                                   * once the policy's init has run */
    double last_apply_t;          /* the last apply's time (-1 before the first) */
    uint32_t last_apply_n;        /* gradients it applied */
    /* When the policy asked for squared norms (SW_WANT_SQ_NORM): those of the last apply, or on
     * an engine without parameters those of the newest apply its driver reported
     * (sw_engine_apply_norms), which may lag behind. */
    sw_apply_norms norms;
    /* The last apply, when the policy asked for losses (SW_WANT_LOSS) and the driver gave a
     * probe; NAN otherwise: */
    double loss_before, loss_after; /* probe loss of θ before and after it */
    const uint32_t *live;         /* the live workers' slots, n_live of them in ascending order:
                                   * a walk over these costs the live workers, not the table */
} sw_engine_view;

/* A push as the policy sees it: the engine has already counted it in the worker's clock. */
typedef struct sw_push {
    uint32_t worker;
    uint64_t version;   /* version the gradient was computed at */
    uint64_t clock;     /* the worker's clock including this push */
    double sq_norm;     /* squared norm of the gradient (if the policy asked for it; 0 on an
                         * engine without parameters, whose driver reports each apply's) */
} sw_push;

/* What a policy decides. The engine resets it before each call: accept, no apply, lr_scale 1,
 * nobody released, no grant, no wake-up. Release with sw_decision_release and grant with
 * sw_decision_grant (the storage is the engine's). */
typedef struct sw_decision {
    bool drop;         /* refuse this push's gradient: the worker recomputes the same batch */
    bool apply;        /* apply the buffer now (after adding this gradient unless dropped) */
    float lr_scale;    /* multiplies the learning rate of this apply */
    double wake_at;    /* call on_tick at this time (< 0: no wake-up; now or past: at once; from
                        * on_tick itself, a time after its own: one due already would have
                        * the ticks follow one another for ever, and breaks the contract) */
    uint32_t *release; /* workers to release, each once; only waiting workers are released */
    uint32_t n_release;
    uint32_t cap;      /* the worker table's size */
    uint8_t *chosen;   /* chosen[w]: w is in release already */
    uint32_t *grant_w, *grant_steps; /* grants: worker grant_w[i] may run grant_steps[i] steps */
    uint32_t n_grant;
    uint32_t bad_worker; /* the first worker named outside the table, or UINT32_MAX */
} sw_decision;

/* Adds w to the workers to release (naming it twice releases it once). Naming a worker outside
 * the table breaks the policy contract: the engine call that carries the decision out fails. */
static inline void sw_decision_release(sw_decision *d, uint32_t w)
{
    if (w >= d->cap) {
        if (d->bad_worker == UINT32_MAX)
            d->bad_worker = w;
        return;
    }
    if (!d->chosen[w]) {
        d->chosen[w] = 1;
        d->release[d->n_release++] = w;
    }
}

/* Records that worker w may run `steps` steps without waiting (a quota of DSSP or ElasticBSP):
 * the policy keeps its own count; the grant is logged, so that a checker can hold the policy to
 * it. At most one grant per worker and decision. */
static inline void sw_decision_grant(sw_decision *d, uint32_t w, uint32_t steps)
{
    if (w >= d->cap || d->n_grant >= d->cap) {
        if (d->bad_worker == UINT32_MAX)
            d->bad_worker = w;
        return;
    }
    d->grant_w[d->n_grant] = w;
    d->grant_steps[d->n_grant++] = steps;
}

/* Log events, as the engine reports them to its sink. */
typedef enum sw_event_kind {
    SW_EV_PUSH,
    SW_EV_APPLY,
    SW_EV_DROP,
    SW_EV_RELEASE,
    SW_EV_JOIN,
    SW_EV_LEAVE,
    SW_EV_CRASH,
    SW_EV_SWITCH,
    SW_EV_EVAL, /* reported by drivers, not by the engine */
    SW_EV_GRANT, /* a policy granted a worker steps it may run without waiting */
    SW_EV_WAKE,  /* a policy asked to be called back at `at` */
    SW_EV_TICK,  /* that call-back happened */
    SW_EV_RESTORE, /* reported by a sharded server: the parameters went back to version `ver`
                    * (a shard's crash), losing `n` applies; the version counter goes on */
} sw_event_kind;

typedef struct sw_event {
    sw_event_kind kind;
    double t;
    uint32_t worker;       /* push, drop, release, join, leave, crash, grant */
    uint64_t clock;        /* push: the worker's clock including it; release, join: its clock */
    uint64_t ver;          /* push, drop: version the gradient was computed at; restore: the
                            * version whose parameters the run went back to */
    uint64_t V;            /* server version: on arrival (push, drop), after (apply, release) */
    uint32_t n;            /* apply: gradients applied; grant: steps granted; restore: applies
                            * lost */
    float lr_scale;        /* apply */
    const char *reason;    /* release: "policy" or "liveness"; switch: the new policy spec */
    double loss, accuracy; /* eval */
    double at;             /* wake: when */
} sw_event;

typedef void (*sw_event_sink)(void *ctx, const sw_event *ev);

/* A kind's name in the event log ("push", "apply", ...); NULL for a value that is no kind. */
const char *sw_event_kind_name(sw_event_kind kind);

/* Writes ev as one line of the JSONL event log (docs/log.md) to f; nothing once f has failed
 * (ferror), so that a log cut by a full disk is a prefix of the run's events, never one with a
 * hole where a failed write's buffer went missing. */
void sw_event_write_jsonl(FILE *f, const sw_event *ev);

/* Reads one parsed log line (syncwise/logread.h) back into *ev: the inverse of
 * sw_event_write_jsonl, up to the evaluation's printed precision. Fails with SW_ENOTFOUND on a
 * kind of line that is not an engine event (such as "start") and SW_EFORMAT on a missing or bad
 * field, saying which. ev->reason of a switch points into l. */
struct sw_log_line;
int sw_event_from_log(const struct sw_log_line *l, sw_event *ev, char *err);

typedef struct sw_engine sw_engine;

typedef struct sw_engine_params {
    size_t n_params;          /* may be 0: an engine without a model, for timing studies */
    const float *init;        /* n_params initial values, copied; NULL means zeros */
    float lr, weight_decay;
    sw_optim_params optim;    /* plain SGD (zeros), momentum or Adam; not with `concurrent` */
    const sw_optim *optim_init; /* the optimizer state to resume from, copied; NULL: zeros */
    uint32_t max_workers;     /* size of the worker table */
    uint64_t init_version;    /* V to start from (a resumed run), 0 otherwise */
    const char *policy;       /* policy spec, e.g. "ssp:s=3" */
    /* A policy of the caller's own instead of a registered one (syncwise/policy.h); `policy`
     * then gives its parameters as "name:key=value,...", and policy_ctx is handed to its init
     * (sw_policy_env.ctx). NULL: look `policy` up by name. */
    const struct sw_policy_ops *policy_ops;
    void *policy_ctx;
    uint64_t seed;            /* seeds the policy's random stream */
    sw_event_sink sink;       /* may be NULL */
    void *sink_ctx;
    /* The loss of parameters on a fixed small held-out batch, for policies that ask for it
     * (the RLP state); called once per apply, only for them. NULL: no losses. */
    double (*loss_probe)(void *ctx, const float *params);
    void *loss_probe_ctx;
    /* Where the engine may write θ, asked just before each write: theta itself, or another
     * buffer holding the same values when theta is still being read elsewhere (the server
     * sends θ to workers without copying it, src/net/lend.h). The buffers it hands out stay its
     * owner's, who keeps the engine's current one alive until sw_engine_free; the engine frees
     * only the one it allocated. NULL: θ is always written in place. */
    float *(*writable)(void *ctx, float *theta);
    void *writable_ctx;
    /* Concurrent applies (the server's --apply-threads): the engine decides every event in its
     * caller's thread as always, but applies nothing itself. Each gradient a decision applies
     * becomes a job in the result (sw_engine_result.job), which the caller runs on any thread,
     * in any number at once, with sw_engine_run_job, while the engine goes on deciding; θ then
     * lives in a store safe for that (syncwise/concurrent.h) in `concurrent_mode`, and is read
     * with sw_engine_read_params or sw_engine_gather. Only policies whose ops say `concurrent`
     * can run so (sw_engine_new and switches refuse the others, saying why); the version counts
     * decided applies, and θ catches up as the jobs run. */
    bool concurrent;
    sw_apply_mode concurrent_mode;
} sw_engine_params;

/* One apply a concurrent engine decided: the gradient of the push it came from, to be applied
 * alone with this learning rate (the policy's scale included) and weight decay. */
typedef struct sw_apply_job {
    float lr, weight_decay;
} sw_apply_job;

sw_engine_params sw_engine_default_params(void);

/* Creates an engine. Fails with a message on a bad policy spec or sizes. */
int sw_engine_new(sw_engine **out, const sw_engine_params *p, char *err);
/* Whether an engine of `slots` workers takes this registered policy's spec, parameters and all:
 * the engine's own reading, for whoever must know before a run (a command line, the promise
 * checker's rule 7). Fails with the engine's message. */
int sw_engine_check_policy(const char *policy, uint32_t slots, char *err);
void sw_engine_free(sw_engine *e);

/* What the driver must do after an event: release these workers (each pulls θ and V now) and
 * call sw_engine_tick at wake_at if it is >= 0. `dropped` says the pushed gradient was refused,
 * `applied` that θ changed.
 *
 * Every event call below returns 0, SW_ESTATE when the driver broke the call's contract (a push
 * from a worker that is not running or of a version above the engine's, a join of a live one,
 * a time that is not a number or goes back from the last call's, a tick with no wake-up due;
 * nothing changed), or SW_EBUG when
 * the policy broke its contract (a decision naming a worker outside the table): the engine
 * is then broken, every later call fails the same way, and sw_engine_error says what happened.
 * A driver stops its run on any of them. */
typedef struct sw_engine_result {
    const uint32_t *released;
    uint32_t n_released;
    bool dropped, applied;
    double wake_at;
    /* A concurrent engine's push that was applied: the job the caller must run, with the
     * pushed gradient, through sw_engine_run_job (has_job is false otherwise). */
    bool has_job;
    sw_apply_job job;
} sw_engine_result;

/* Worker w (< max_workers, not live) joins at time t. Unless the policy says otherwise it is
 * released at once. */
int sw_engine_join(sw_engine *e, uint32_t w, double t, sw_engine_result *out);

/* Worker w leaves (crashed = false) or is found dead (crashed = true) at time t. Whatever it
 * was computing is lost; no barrier waits for it afterwards. */
int sw_engine_leave(sw_engine *e, uint32_t w, double t, bool crashed, sw_engine_result *out);

/* Worker w pushes a gradient of n_params floats computed at version `version`. w must be
 * running. */
int sw_engine_push(sw_engine *e, uint32_t w, const float *grad, uint64_t version, double t,
                   sw_engine_result *out);

/* A push on an engine without parameters (n_params 0: a sharded run's control plane, whose
 * shards hold the gradient): its facts alone. A policy that reads norms gets each apply's from
 * the driver (sw_engine_apply_norms), which the shards measure as they apply. */
int sw_engine_push_facts(sw_engine *e, uint32_t w, uint64_t version, double t,
                         sw_engine_result *out);

/* On an engine without parameters: the norms of an apply, learned after it (a sharded run's
 * shards report their slices' sums). The view shows them unless it shows a newer apply's. */
void sw_engine_apply_norms(sw_engine *e, const sw_apply_norms *norms);

/* The same push with a sparse gradient: nnz (index, value) pairs, indices ascending, distinct
 * and below n_params (SW_EINVAL otherwise, and nothing changes). Every policy works unchanged;
 * a gradient applied alone costs O(nnz), and the result is bit for bit the dense push's. */
int sw_engine_push_sparse(sw_engine *e, uint32_t w, const uint32_t *idx, const float *val,
                          size_t nnz, uint64_t version, double t, sw_engine_result *out);

/* The wake-up a policy asked for. */
int sw_engine_tick(sw_engine *e, double t, sw_engine_result *out);

/* Replaces the policy at a safe point (between events) without losing state: the new policy
 * starts from the current worker table and buffer, and gets one on_tick at once to release
 * workers the old policy held that it would not hold. On failure the old policy stays. */
int sw_engine_switch_policy(sw_engine *e, const char *policy, double t, sw_engine_result *out,
                            char *err);

/* Runs a job of a concurrent engine (see sw_engine_params.concurrent) with its push's gradient:
 * dense (n_params floats) when `dense` is not NULL, else nnz (index, value) pairs as the push
 * gave them. Safe from any thread, in any number at once, also while the engine decides. */
void sw_engine_run_job(sw_engine *e, const sw_apply_job *job, const float *dense,
                       const uint32_t *idx, const float *val, size_t nnz);

/* θ copied into out (n_params floats), or its values at idx[0..k): on a concurrent engine a
 * coordinate at a time, as the jobs leave it (an apply may show half done). */
void sw_engine_read_params(const sw_engine *e, float *out);
void sw_engine_gather(const sw_engine *e, const uint32_t *idx, size_t k, float *out);

/* θ itself, on an engine that is not concurrent (NULL on one that is). */
const float *sw_engine_params_ptr(const sw_engine *e);
float *sw_engine_params_mut(sw_engine *e); /* for restoring best weights; not during a run */
uint64_t sw_engine_version(const sw_engine *e);
/* The learning rate in force: the policy spec's own lr=X, or the run's (an apply's rate is
 * this times its lr_scale). */
float sw_engine_lr(const sw_engine *e);
const sw_engine_view *sw_engine_get_view(const sw_engine *e);
const char *sw_engine_policy_name(const sw_engine *e);
/* Whether the policy in force asked for all of the SW_WANT_* flags (syncwise/policy.h). */
bool sw_engine_policy_wants(const sw_engine *e, unsigned flags);
/* The current policy's spec, as given to sw_engine_new or the last switch. */
const char *sw_engine_policy_spec(const sw_engine *e);
/* The optimizer's state, for a checkpoint (arrays NULL for plain SGD). */
const sw_optim *sw_engine_optim(const sw_engine *e);
/* Why the engine is broken (see SW_EBUG above), or NULL while it is not. */
const char *sw_engine_error(const sw_engine *e);

/* Real time (seconds) spent inside policy calls so far: the "deciding" share of a run. */
double sw_engine_decide_s(const sw_engine *e);
/* Real time (seconds) spent in the loss probe so far. */
double sw_engine_probe_s(const sw_engine *e);

#ifdef __cplusplus
}
#endif

#endif
