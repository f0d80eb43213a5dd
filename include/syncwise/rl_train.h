/* Training and evaluating learned policies on simulated instances (paper 000, section 4): the
 * part of RLP that runs the simulator, apart from what a running `rlp` policy needs
 * (syncwise/rl.h: features, the Q-network, policy files), so that policies never depend on the
 * simulator. */
#ifndef SYNCWISE_RL_TRAIN_H
#define SYNCWISE_RL_TRAIN_H

#include <stdbool.h>
#include <stdint.h>

#include "syncwise/data.h"
#include "syncwise/model.h"
#include "syncwise/optim.h"
#include "syncwise/rl.h"
#include "syncwise/rng.h"

#ifdef __cplusplus
extern "C" {
#endif

/* An instance of the RLP paper's section 4: a cluster of `workers` with its stragglers drawn from
 * its seed, an MLP with a random number of hidden layers, and a random share of the training
 * data. Instances are numbered; the same number and base seed give the same instance. */
typedef struct sw_rl_scenario {
    const sw_data *data; /* loaded once, borrowed */
    double data_frac;    /* share of the training set each instance draws (0.5) */
    /* The '|'-separated lists below each give the choices an instance draws one of, all with
     * equal chances and independently (a family of scenarios); a list of one is no choice. */
    const char *workers;    /* cluster sizes ("10") */
    const char *cluster;    /* syncwise/cluster.h specs (the paper's stragglers) */
    const char *models;     /* model specs */
    const char *lrs;        /* learning rates ("0.01") */
    const char *optimizers; /* the server's update (syncwise/optim.h): plain SGD as in the paper,
                             * or momentum, Adam (a regime where staleness costs more) */
    uint32_t batch;      /* 16 */
    double target_acc;   /* each episode ends at this validation accuracy */
    double eval_every;   /* virtual seconds between evaluations */
    uint64_t max_pushes; /* a cap for episodes that never reach the target */
    double reward_unit;  /* seconds a reward of -1 stands for; 0: base step / workers, or
                          * SW_RL_STRETCH_STEPS base steps for the stretch layout */
    /* Beside the paper's reward (minus the time), a reward of `reward_progress` per fall of the
     * probe loss by its first value, earned in the transition that saw it fall (0: the paper's
     * reward alone). Waiting pays only at the finish line under minus the time; this pays for
     * the better steps it buys within the discount's horizon. Not the paper's. */
    double reward_progress;
    /* A cost, in reward units, of a decision that changes the action of the one before: under
     * momentum, a run that hands over between policies pays for it beyond the time the reward
     * sees at once (docs/results/rl.md, item 11). 0: none. Meant for the stretch layout. */
    double switch_cost;
} sw_rl_scenario;

sw_rl_scenario sw_rl_default_scenario(void);

/* Checks every choice of every list of sc (a run that fails after an hour helps no one);
 * SW_EINVAL naming the list and the entry at fault. Without sc->data, the models' specs are
 * checked alone (sw_task_model_known); with them, each model is built on them. */
int sw_rl_scenario_check(const sw_rl_scenario *sc, char *err);

/* The choices one instance drew, and its label: "key=value" for each list that offered a
 * choice, space-separated ("" when none did), so that results can be told apart by part. */
#define SW_RL_REGIME_LEN 320
typedef struct sw_rl_draw {
    char model[SW_MODEL_SPEC_LEN];
    char cluster[256];
    uint32_t workers;
    float lr;
    sw_optim_params optim;
    char regime[SW_RL_REGIME_LEN];
} sw_rl_draw;

/* One simulated run (repeat: which of several seeds; 0 is the instance's own) of an instance
 * under a policy spec; with an agent the `actions` policy is
 * driven by it: learning with exploration eps when learn is set, greedy otherwise. */
typedef struct sw_rl_run {
    double time; /* virtual time to the target, or to the end when not reached */
    bool reached;
    uint64_t iterations, applies;
    double steps_per_worker, idle_share;
    double decide_share, probe_share; /* of real time: inference (deciding) and loss probe */
    double td_loss;                   /* mean learning loss (learning runs) */
    char model[SW_MODEL_SPEC_LEN];    /* the instance's model */
    char regime[SW_RL_REGIME_LEN];    /* and the other choices it drew (sw_rl_draw) */
} sw_rl_run;

typedef enum sw_rl_mode {
    SW_RL_PLAIN,   /* run `policy` as it is */
    SW_RL_EMULATE, /* record states of an `actions` run whose choices copy a classic policy
                    * ("bsp", "asp", "ssp:s=S" in our convention), then regress on returns */
    SW_RL_RECORD,  /* as SW_RL_EMULATE, but only keep the records in the archive: a resumed
                    * pre-training gathering again what its earlier runs kept */
    SW_RL_LEARN,   /* double DQN while acting eps-greedily */
    /* With an agent of the stretch layout both run rlswitch, choosing per stretch: a copy is
     * of one of its actions (sw_rl_stretch_policies), SW_EINVAL for another policy. */
} sw_rl_mode;

/* Whether SW_RL_EMULATE can copy `policy` (bsp, asp or ssp:s=S); SW_EINVAL with a message if
 * not. */
int sw_rl_check_classic(const char *policy, char *err);

/* Pre-training's records kept across its runs: (state, action, return) triples for passes over
 * all of them (rl train --pre-epochs). */
typedef struct sw_rl_archive sw_rl_archive;
int sw_rl_archive_new(sw_rl_archive **out, size_t dim, char *err);
void sw_rl_archive_free(sw_rl_archive *ar);
size_t sw_rl_archive_size(const sw_rl_archive *ar);
/* Appends n records (states: n x dim floats); SW_ENOMEM, keeping none of them, when out of
 * memory. */
int sw_rl_archive_add(sw_rl_archive *ar, const float *states, const int *actions,
                      const float *returns, size_t n);
/* One pass of regression steps (sw_rl_agent_regress) over n records in mini-batches, shuffled
 * by r; *loss: their mean loss (0 for none). SW_ENOMEM. */
int sw_rl_regress_pass(sw_rl_agent *a, const float *states, const int *actions,
                       const float *returns, size_t n, sw_rng *r, double *loss);
/* `epochs` passes over the whole archive, shuffled from `seed`. After each, done (when not NULL)
 * is told its mean loss; a nonzero return stops the passes and is returned. SW_ENOMEM. */
typedef int sw_rl_epoch_fn(void *ctx, uint32_t epoch, uint32_t epochs, double loss);
int sw_rl_archive_refit(const sw_rl_archive *ar, sw_rl_agent *a, uint32_t epochs, uint64_t seed,
                        sw_rl_epoch_fn *done, void *ctx);

/* With an archive, a run that records (SW_RL_EMULATE, SW_RL_RECORD) keeps its records there too
 * (SW_ENOMEM when it cannot). */
int sw_rl_run_instance(const sw_rl_scenario *sc, uint64_t seed, uint64_t instance, uint32_t repeat,
                       const char *policy, sw_rl_mode mode, sw_rl_agent *agent,
                       sw_rl_archive *archive, double eps, sw_rl_run *out, char *err);

#ifdef __cplusplus
}
#endif

#endif
