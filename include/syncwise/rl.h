/* RLP: a synchronization policy learned by deep Q-learning (paper 000, sections 3.2 and 3.3).
 *
 * After every applied push the policy takes one of three actions (syncwise/policy.h: none, the
 * pusher, all idle workers) from a state made of the last H iterations' tuples
 * (n, L(w), L(w') - L(w), l_n). Each tuple is normalised so that one policy serves clusters of
 * any size and models of any loss scale (docs/rl.md):
 *
 *   n               ln(1 + n / live workers) / ln(1001): iterations per worker, log-scaled so
 *                   that 1000 steps per worker read 1
 *   L(w)            L(w) / L0, L0 the probe loss before the run's first apply
 *   L(w') - L(w)    100 (L(w') - L(w)) / L0, clipped to [-10, 10]
 *   l_n             applies between the pusher's pull and its push, divided by the other live
 *                   workers: about 1 when everyone runs at the same pace
 *
 * Missing history (the first H - 1 iterations) is zeros. The network is the library's own MLP
 * (mlp:u=64/32,act=leaky by default) with one output per action.
 *
 * A second layout (not the paper's) adds a fifth feature to each tuple: the momentum of the
 * server's optimizer (heavy ball or Nesterov mu, Adam's beta1, 0 for plain SGD). It tells the
 * policy how long an applied gradient goes on acting, which is what makes staleness cost more
 * (docs/results/rl.md: under momentum 0.9 BSP needs a quarter of ASP's gradients).
 *
 * A fourth layout (not the paper's) is another action space: policy `rlswitch` decides once per
 * stretch of SW_RL_STRETCH_STEPS steps per live worker which classic policy runs the next
 * stretch (bsp, ssp:s=4 or asp), from one tuple per stretch (docs/rl.md, "Stretches").
 */
#ifndef SYNCWISE_RL_H
#define SYNCWISE_RL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "syncwise/engine.h"
#include "syncwise/model.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SW_RL_TUPLE_MAX 7 /* features per iteration, at most */
#define SW_RL_ACTIONS 3   /* none, pusher, all */
#define SW_RL_MAX_HISTORY 64
/* The feature layouts (policy files record theirs): the paper's four features per iteration;
 * those four and the optimizer's momentum; and those five, the share of live workers waiting
 * and the pusher's lead over the slowest clock (what a barrier or a bound needs to see). */
typedef enum sw_rl_layout {
    SW_RL_LAYOUT_PAPER = 1,
    SW_RL_LAYOUT_MOMENTUM = 2,
    SW_RL_LAYOUT_WAITING = 3,
    SW_RL_LAYOUT_STRETCH = 4,
} sw_rl_layout;
/* Features per iteration of a layout; 0 for a value that is none. */
uint32_t sw_rl_tuple(uint32_t layout);
/* The normalisation above; policy files record it and are refused if it changes. */
#define SW_RL_STEPS_UNIT 1000.0 /* steps per worker that read 1 */
#define SW_RL_DLOSS_SCALE 100.0
#define SW_RL_DLOSS_CLIP 10.0
/* Steps ahead of the slowest that read 1 in the waiting layout: part of that layout's
 * definition (files record the layout, not this), so a change needs a new layout. */
#define SW_RL_LEAD_UNIT 8.0
/* The stretch layout's definition (a change would be a new layout): a stretch is this many
 * steps per live worker; its tuple's loss fall is scaled by SW_RL_STRETCH_DLOSS_SCALE; action
 * a runs sw_rl_stretch_policies[a] through the stretch. */
#define SW_RL_STRETCH_STEPS 10
#define SW_RL_STRETCH_DLOSS_SCALE 10.0
enum { SW_RL_STRETCH_BSP, SW_RL_STRETCH_SSP, SW_RL_STRETCH_ASP }; /* the actions */
extern const char *const sw_rl_stretch_policies[SW_RL_ACTIONS];
/* The action that runs `policy` (one of the three, as written there), or -1. */
int sw_rl_stretch_action(const char *policy);

/* Learning hyperparameters: stored in policy files so that a run can be reproduced. */
typedef struct sw_rl_hparams {
    uint32_t layout;              /* sw_rl_layout: SW_RL_LAYOUT_PAPER */
    uint32_t history;             /* H = 10 */
    uint32_t replay;              /* replay pool size N = 50 */
    uint32_t minibatch;           /* 32 */
    uint32_t copy_every;          /* c = 5: iterations between copies to the target network */
    float gamma;                  /* 0.8 */
    float epsilon;                /* 0.1 */
    float lr;                     /* 0.01 */
    float grad_clip;              /* 0: none (the paper); else a learning step's gradient is
                                   * scaled down to this norm (training only: not in files) */
    uint32_t learn_steps;         /* learning steps per decision, 0 for 1 (the paper); more for
                                   * the stretch layout's few decisions (training only) */
    char qnet[SW_MODEL_SPEC_LEN]; /* "mlp:u=64/32,act=leaky" */
} sw_rl_hparams;

sw_rl_hparams sw_rl_default_hparams(void);

/* Checks ranges; fills err naming the bad value. */
int sw_rl_check_hparams(const sw_rl_hparams *hp, char *err);

/* ---- State features ---------------------------------------------------------------------- */

typedef struct sw_rl_features {
    uint32_t history, tuple; /* tuple: features per iteration, as the layout says */
    uint64_t n;              /* iterations seen */
    double loss0;            /* L0, NAN until the first apply */
    float momentum;          /* the fifth feature */
    double mark_loss;        /* the stretch layout: the probe loss when the last stretch ended */
    float ring[SW_RL_MAX_HISTORY][SW_RL_TUPLE_MAX];
    float state[SW_RL_MAX_HISTORY * SW_RL_TUPLE_MAX]; /* newest tuple first, history x tuple */
} sw_rl_features;

/* How long an applied gradient goes on acting under optimizer o: the share of it each later
 * update carries on (heavy ball's momentum, Adam's beta1; 0 for plain SGD). */
float sw_rl_momentum(const sw_optim_params *o);

/* The state of a layout with `history` iterations, for a run under optimizer o. */
void sw_rl_features_init(sw_rl_features *f, uint32_t history, uint32_t layout,
                         const sw_optim_params *o);

/* Records the iteration the view just applied (the push p) and rebuilds f->state. */
void sw_rl_features_update(sw_rl_features *f, const sw_engine_view *v, const sw_push *p);

/* The stretch layout: notes L0 from an apply's view (the first one's counts), and records a
 * stretch that ended after `pushes` pushes in all, run by action `ran` (-1 before the first),
 * then rebuilds f->state. Its tuple: n (as above, from the pushes), L / L0, the loss fall over
 * the stretch (SW_RL_STRETCH_DLOSS_SCALE (L_start - L_end) / L0, clipped to +-10), the
 * momentum, and the action that ran, one-hot. */
void sw_rl_features_note_loss0(sw_rl_features *f, const sw_engine_view *v);
void sw_rl_features_stretch(sw_rl_features *f, const sw_engine_view *v, uint64_t pushes, int ran);

/* What picks rlswitch's action at each stretch when a caller runs it as its own policy
 * (sw_policy_env.ctx): a training episode, told the state, the time and the probe loss in units
 * of L0 (NAN while unknown); the state has `history` stretches. */
typedef struct sw_rl_chooser {
    int (*choose)(void *ctx, const float *state, double now, double loss);
    void *ctx;
    uint32_t history;
} sw_rl_chooser;

/* ---- Q-network and agent ----------------------------------------------------------------- */

typedef struct sw_rl_agent sw_rl_agent;

/* An agent with fresh seeded weights (or, with init != NULL, these n_init weights). */
int sw_rl_agent_new(sw_rl_agent **out, const sw_rl_hparams *hp, const float *init, size_t n_init,
                    uint64_t seed, char *err);
void sw_rl_agent_free(sw_rl_agent *a);

size_t sw_rl_agent_n_params(const sw_rl_agent *a);
size_t sw_rl_agent_dim(const sw_rl_agent *a); /* floats in a state */
const sw_rl_hparams *sw_rl_agent_hparams(const sw_rl_agent *a);
/* The target network's weights: what a trained policy is. */
const float *sw_rl_agent_weights(const sw_rl_agent *a);

/* Q values of one state under the target network (SW_RL_ACTIONS floats, valid until the next
 * call), and the greedy action, or a uniformly random one with probability epsilon. */
const float *sw_rl_agent_q(sw_rl_agent *a, const float *state);
int sw_rl_agent_act(sw_rl_agent *a, const float *state, double epsilon);

/* Stores a transition in the replay pool (the oldest goes when it is full). */
void sw_rl_agent_remember(sw_rl_agent *a, const float *s, int action, float reward,
                          const float *next, bool done);

/* One double-DQN step on a mini-batch from the pool: y = r + gamma Q*(s', argmax_a Q(s', a)),
 * squared loss on Q(s, a); copies Q to Q* every copy_every steps. Returns the mean loss, or a
 * negative value while the pool holds fewer transitions than a mini-batch. */
double sw_rl_agent_learn(sw_rl_agent *a);

/* One regression step of Q(s_i, a_i) towards targets y_i on n <= minibatch samples
 * (pre-training); Q* follows Q. Returns the mean loss, or NaN (nothing learnt) for n of 0 or
 * over the minibatch. */
double sw_rl_agent_regress(sw_rl_agent *a, const float *states, const int *actions,
                           const float *targets, size_t n);

/* ---- Policy files ------------------------------------------------------------------------ */

/* A trained policy: hyperparameters, feature layout and target-network weights (format in
 * docs/rl.md). */
typedef struct sw_rl_policy {
    sw_rl_hparams hp;
    char note[1024]; /* how it was made: command and seed */
    float *weights;
    size_t n_weights;
    /* How far the training that wrote it had come, for `rl train --resume`: pre-training runs
     * and DQN episodes done. Read from a file of format 2; a format-1 file does not say. */
    bool has_progress;
    uint64_t pre_runs, episodes;
} sw_rl_policy;

int sw_rl_policy_save(const char *path, const sw_rl_policy *p, char *err);
/* Refuses files that are truncated, corrupt, of another format version or whose weights do not
 * fit their network, with a message naming the file and the fault. */
int sw_rl_policy_load(const char *path, sw_rl_policy *out, char *err);
void sw_rl_policy_free(sw_rl_policy *p);

/* The policy file `rlp` uses when given no file= (installed copy first, then the source tree's). */
const char *sw_rl_default_policy_path(void);
/* Another shipped policy, `name` in the same directory as that one (rlswitch's). */
void sw_rl_shipped_path(const char *name, char *out, size_t cap);

#ifdef __cplusplus
}
#endif

#endif
