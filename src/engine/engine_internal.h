/* The engine's inside, shared by its state machine (engine.c) and its applies (apply.c). */
#ifndef SW_ENGINE_INTERNAL_H
#define SW_ENGINE_INTERNAL_H

#include "syncwise/engine.h"
#include "syncwise/err.h"
#include "syncwise/optim.h"
#include "syncwise/policy.h"

#include "gradbuf.h"

#define SPEC_LEN 256 /* a policy spec */

struct sw_engine {
    sw_engine_params p;
    float *theta;
    float *own; /* the θ buffer the engine allocated, until a writable hook replaces it */
    sw_shared_params *shared; /* θ of a concurrent engine, instead of theta */
    sw__gradbuf buf;          /* view.buffer_sum is buf.sum */
    sw_optim opt;             /* the optimizer's state (none for plain SGD) */
    float policy_lr;          /* the policy spec's own lr=X, NAN when it sets none */
    sw_worker_info *workers;
    uint32_t *live; /* view.live: the live workers' slots (syncwise/roster.h) */
    sw_engine_view view;
    uint32_t n_at_min; /* started workers whose clock equals view.min_live_clock */
    uint32_t *decided, *released;
    uint8_t *chosen; /* a decision's release marks, all zero between calls */
    uint32_t *grant_w, *grant_steps;
    const sw_policy_ops *ops;
    unsigned wants; /* what the spec in force wants (sw_policy_wants) */
    void *state;
    sw_rng rng;
    sw_policy_env env;
    double wake_at; /* pending wake-up, < 0 when none */
    bool ticking;   /* deciding a wake-up's tick: it may not ask for another at once */
    double last_t;  /* the last event's time: the next is never before it */
    double decide_s;
    double probe_s;  /* real time in the loss probe */
    double loss_now; /* probe loss of θ as it is, NAN when unknown */
    char spec[SPEC_LEN];
    char broken[SW_ERR_LEN + SPEC_LEN]; /* why a policy broke its contract; empty if none did */
};

static inline void sw__engine_emit(const sw_engine *e, const sw_event *ev)
{
    if (e->p.sink)
        e->p.sink(e->p.sink_ctx, ev);
}

/* The optimizer's state for p: none for plain SGD, zeros, or a resumed run's (optim_init). */
int sw__engine_optim_new(sw_engine *e, const sw_engine_params *p, char *err);

/* θ, ready to be written (see sw_engine_params.writable). */
float *sw__engine_writable_theta(sw_engine *e);

/* Applies the buffer at time t with the policy's scale: loss probes around it for policies
 * that want them, θ through the optimizer, the view, the "apply" event. */
void sw__engine_apply(sw_engine *e, float lr_scale, double t);
/* The policy of spec `text`: `own` when not NULL (the caller's own table, which must be
 * named as the spec), else the registered one of that name; *lr gets the spec's own learning
 * rate (NAN when it sets none). engine_policy.c. */
int sw__engine_make_policy(sw_engine *e, const char *text, const sw_policy_ops *own,
                           const sw_policy_ops **ops, void **state, float *lr, unsigned *wants,
                           char *err);
/* The policy's on_tick and its decision carried out: a wake-up's, or a switched-to policy's
 * start. */
int sw__engine_tick(sw_engine *e, double t, sw_engine_result *out);
/* Whether t may be the next event's time (a number, never before the last event's), which it
 * then is. */
bool sw__engine_time_ok(sw_engine *e, double t);
bool sw__engine_spec_bad(const char *policy, char *err);

#endif
