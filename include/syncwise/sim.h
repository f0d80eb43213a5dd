/* The simulator: n workers in one process on a virtual clock, driving the engine.
 *
 * Each step of a worker takes pull transfer + compute + push transfer virtual seconds (compute
 * from the cluster model; a transfer costs the latency plus its bytes over the bandwidth: the
 * whole model each way for a dense task, for a sparse one the touched weights' indices and
 * values on the pull and (index, value) pairs on the push; a step that reuses a local model per
 * get_model_frequency skips the pull). The gradient is really computed (syncwise/task.h), at
 * the parameters that worker pulled, so staleness is real and the loss curve is honest.
 * Evaluations on the held-out set happen every eval_every virtual seconds and do not advance the
 * clock, nor does the loss probe (the first probe_batch held-out examples) of policies that
 * want losses.
 * The same configuration and seed give a bit-identical event log. Every event is held to the
 * promise of the policy in force (syncwise/check.h): a broken promise ends the run with
 * SW_EPROMISE and says where.
 */
#ifndef SYNCWISE_SIM_H
#define SYNCWISE_SIM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "syncwise/engine.h"
#include "syncwise/policy.h"
#include "syncwise/run.h"
#include "syncwise/task.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sw_sim_config {
    const char *policy;           /* e.g. "ssp:s=3" */
    uint32_t workers;             /* at the start */
    const char *cluster;          /* syncwise/cluster.h */
    const char *net;              /* "bw=BYTES_PER_S,lat=S[,params=N][,shards=S,server_bw=B,
                                   * decide=S,fanout=S]" (docs/simulator.md) */
    const char *events;           /* "crash:w=3,t=50;leave:w=1,t=80;join:t=100" or NULL */
    const sw_task_data *data;     /* borrowed; NULL runs without a model (timing only) */
    const char *model;            /* model spec: dense or sparse (syncwise/task.h) */
    uint32_t batch;
    float lr, weight_decay;
    sw_optim_params optim;        /* the engine's update (syncwise/optim.h); a worker's local
                                   * steps between pulls stay plain SGD */
    sw_batch_mode batch_mode;
    uint32_t get_model_frequency; /* pull every f steps, apply own gradients between (>= 1;
                                   * 1 for a sparse model, which pulls what each batch reads) */
    uint64_t seed;
    /* Stopping: the first condition met ends the run. 0 disables a condition. */
    double target_acc;            /* validation accuracy */
    double target_loss;           /* training loss, on a fixed sample of the training set */
    double max_time;              /* virtual seconds */
    uint64_t max_applies;
    uint64_t max_pushes;
    uint32_t patience;            /* evaluations without improvement; keeps the best weights */
    double eval_every;            /* virtual seconds between evaluations */
    FILE *log;                    /* JSONL event log, or NULL */
    bool no_check;                /* skip the promise checker (syncwise/check.h), which
                                   * otherwise ends a run whose policy breaks its promise */
    uint32_t probe_batch;         /* examples of the loss probe (first of the validation set) */
    /* A policy of the caller's own (sw_engine_params.policy_ops): `policy` gives its name (the
     * table's own) and parameters, policy_ctx reaches its init. NULL: the registered policy
     * `policy` names. A switch in `events` names registered policies only: register one's own
     * (sw_policy_register) to switch to it. */
    const sw_policy_ops *policy_ops;
    void *policy_ctx;
    /* Called after every evaluation (progress display); may be NULL. acc is NAN for a
     * regression task, which has none. */
    void (*on_eval)(void *ctx, double t, uint64_t version, double loss, double acc);
    void *on_eval_ctx;
} sw_sim_config;

sw_sim_config sw_sim_default_config(void);

typedef struct sw_sim_result {
    sw_stop_reason stop;
    double end_t;               /* virtual time the run ended */
    double target_t;            /* virtual time the target was first met, < 0 if never */
    double diverged_t;          /* virtual time the validation loss was first not finite, < 0
                                 * if never (the run goes on to its limit, never reaching a
                                 * target, so that comparisons count it as they always did) */
    uint64_t evals;
    double final_loss, final_acc; /* at the end (the best weights under patience) */
    bool classify;                /* the task has an accuracy (final_acc is 0 for regression) */
    const char *held_out;         /* the set evaluated (sw_task_held_out), NULL without a model */
    double best_acc;
    sw_run_stats stats;         /* applies, pushes, drops; per worker steps, idle and live time,
                                 * staleness (syncwise/run.h) */
    double decide_s, wall_s;    /* real time deciding, real time in all */
    double probe_s;             /* real time in the loss probe (policies that want losses) */
    size_t n_params;
    uint32_t shards;            /* --net shards=S (0: none modelled) */
    double link_load, ctl_load; /* with shards: the busiest shard link's share of the run spent
                                 * carrying, and the control plane's spent deciding */
} sw_sim_result;

/* Runs one simulation. Fails with a message on a bad configuration; a run that never reaches its
 * target is not a failure (target_t < 0). The caller frees the result. */
int sw_sim_run(const sw_sim_config *c, sw_sim_result *out, char *err);
/* Checks what a run would refuse at its start, without running: sizes, a stopping rule, the
 * policy spec (a registered policy's parameters included), the network, the cluster and the
 * events with every policy they switch to; with c->data also the model on that data and the
 * targets (without it, a target or patience is taken as meant for the data the caller will give,
 * which sw_sim_run refuses if none comes). Fails with the message the run would give. */
int sw_sim_check_config(const sw_sim_config *c, char *err);
void sw_sim_result_free(sw_sim_result *r);

#ifdef __cplusplus
}
#endif

#endif
