/* Episodes: one simulated run of an RLP instance, plain, or under the episode's own policy in the
 * RLP action space whose choices copy a classic policy (pre-training records) or come from a
 * learning agent; or, for an agent of the stretch layout, under rlswitch, whose choice per
 * stretch the episode makes the same two ways. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "syncwise/err.h"
#include "syncwise/policy.h"
#include "syncwise/rl_train.h"
#include "syncwise/rng.h"
#include "syncwise/cluster.h"
#include "syncwise/sim.h"

#define DIM_MAX (SW_RL_MAX_HISTORY * SW_RL_TUPLE_MAX)

sw_rl_scenario sw_rl_default_scenario(void)
{
    return (sw_rl_scenario){
        .data_frac = 0.5,
        .workers = "10",
        .cluster = "straggle:p=0.3,mean=10,sd=4,base=4.5",
        .models = "mlp:h=0|mlp:h=1,u=256|mlp:h=2,u=256|mlp:h=3,u=256",
        .lrs = "0.01",
        .optimizers = "sgd",
        .batch = 16,
        .target_acc = 0.80,
        .eval_every = 20,
        .max_pushes = 20000,
    };
}

enum { CLASSIC_BSP, CLASSIC_ASP, CLASSIC_SSP };

typedef struct episode {
    sw_rl_mode mode;
    sw_rl_agent *agent;
    double eps, unit;
    double progress; /* reward per fall of the probe loss by L0 (sw_rl_scenario) */
    double switch_cost;
    sw_rl_features f;
    sw_rl_chooser chooser; /* the stretch layout's: rlswitch asks it */
    size_t dim;
    int classic;
    long ssp_s;
    int copied; /* the stretch layout's pre-training: the action that runs the copied policy */
    bool has_prev;
    float prev[DIM_MAX];
    int prev_action, action_before; /* the last decision's, and the one's before it (-1) */
    double prev_t, prev_loss, loss_sum;
    uint64_t loss_n;
    /* Pre-training records: state, action, time and probe loss of every iteration. */
    float *states;
    int *actions;
    double *times, *losses;
    size_t n, cap;
    bool out_of_memory;
} episode;

/* The classic policies in the three-action space (our ssp convention: no worker more than s
 * steps ahead of the slowest). */
static int emulate(const episode *e, const sw_engine_view *v, const sw_push *p)
{
    if (e->classic == CLASSIC_ASP)
        return SW_ACTION_PUSHER;
    if (e->classic == CLASSIC_BSP)
        return sw_policy_all_waiting(v) ? SW_ACTION_ALL : SW_ACTION_NONE;
    uint64_t bound = v->min_live_clock + (uint64_t)e->ssp_s;
    if (p->clock > bound)
        return SW_ACTION_NONE;
    for (uint32_t w = 0; w < v->n_slots; w++)
        if (v->workers[w].state == SW_WORKER_WAITING && v->workers[w].clock > bound)
            return SW_ACTION_PUSHER;
    return SW_ACTION_ALL;
}

/* The probe loss of θ as the policy sees it now, in units of the first one (NAN before). */
static double loss_now(const episode *e, const sw_engine_view *v)
{
    return isfinite(e->f.loss0) && isfinite(v->loss_after) ? v->loss_after / e->f.loss0 : NAN;
}

/* The reward of the transition from (t0, loss l0) to (t1, l1): minus the time, in units, as
 * the paper, plus the progress the loss made when the scenario pays for it (a loss unknown at
 * either end counts as none). */
static double reward(const episode *e, double t0, double l0, double t1, double l1)
{
    double r = -(t1 - t0) / e->unit;
    if (e->progress > 0 && isfinite(l0) && isfinite(l1))
        r += e->progress * (l0 - l1);
    return r;
}

static void record(episode *e, const float *state, int action, double t, double loss)
{
    if (e->n == e->cap) {
        size_t cap = e->cap ? 2 * e->cap : 1024;
        float *s = realloc(e->states, cap * e->dim * sizeof *s);
        if (s)
            e->states = s;
        int *a = realloc(e->actions, cap * sizeof *a);
        if (a)
            e->actions = a;
        double *tt = realloc(e->times, cap * sizeof *tt);
        if (tt)
            e->times = tt;
        double *ll = realloc(e->losses, cap * sizeof *ll);
        if (ll)
            e->losses = ll;
        if (!s || !a || !tt || !ll) {
            e->out_of_memory = true;
            return;
        }
        e->cap = cap;
    }
    memcpy(e->states + e->n * e->dim, state, e->dim * sizeof(float));
    e->actions[e->n] = action;
    e->losses[e->n] = loss;
    e->times[e->n++] = t;
}

/* The reward of the last decision's transition, which ended at (t, loss): with the cost of a
 * change of action when it made one. */
static float last_reward(const episode *e, double t, double loss)
{
    double r = reward(e, e->prev_t, e->prev_loss, t, loss);
    if (e->action_before >= 0 && e->prev_action != e->action_before)
        r -= e->switch_cost;
    return (float)r;
}

/* A learning step per iteration (or --learn-steps): the transition that this push (or
 * stretch) completes, then the next action (Algorithm 2 of the paper). */
static int learn_and_act(episode *e, const float *state, double t, double probe)
{
    if (e->has_prev) {
        float r = last_reward(e, t, probe);
        sw_rl_agent_remember(e->agent, e->prev, e->prev_action, r, state, false);
        uint32_t steps = sw_rl_agent_hparams(e->agent)->learn_steps;
        for (uint32_t k = 0; k < (steps ? steps : 1); k++) {
            double loss = sw_rl_agent_learn(e->agent);
            if (loss >= 0) {
                e->loss_sum += loss;
                e->loss_n++;
            }
        }
    }
    int a = sw_rl_agent_act(e->agent, state, e->eps);
    memcpy(e->prev, state, e->dim * sizeof(float));
    e->action_before = e->has_prev ? e->prev_action : -1;
    e->prev_action = a;
    e->prev_t = t;
    e->prev_loss = probe;
    e->has_prev = true;
    return a;
}

static int choose(episode *e, const sw_engine_view *v, const sw_push *p)
{
    sw_rl_features_update(&e->f, v, p);
    if (e->mode == SW_RL_LEARN)
        return learn_and_act(e, e->f.state, v->now, loss_now(e, v));
    int a = emulate(e, v, p);
    record(e, e->f.state, a, v->now, loss_now(e, v));
    return a;
}

/* The stretch layout's choice (sw_rl_chooser): the copied policy's action in every stretch, or
 * the agent learns and picks. */
static int choose_stretch(void *ctx, const float *state, double now, double loss)
{
    episode *e = ctx;
    if (e->mode == SW_RL_LEARN)
        return learn_and_act(e, state, now, loss);
    record(e, state, e->copied, now, loss);
    return e->copied;
}

/* The policy an episode that records or learns runs (a policy of its own, sw_sim_config's
 * policy_ops): the RLP action space, each action chosen by the episode after the apply, when the
 * view holds the loss it caused. It is named "actions", so that the promise checker holds it to
 * the action space's promise. */
static int learner_init(void *state, sw_spec *spec, const sw_engine_view *v,
                        const sw_policy_env *env, char *err)
{
    (void)spec, (void)v, (void)err;
    *(episode **)state = env->ctx;
    return 0;
}

static void learner_push(void *state, const sw_engine_view *v, const sw_push *p, sw_decision *d)
{
    (void)state, (void)v, (void)p;
    d->apply = true;
}

static void learner_applied(void *state, const sw_engine_view *v, const sw_push *p,
                            sw_decision *d)
{
    episode *e = *(episode **)state;
    sw_policy_act(v, p->worker, choose(e, v, p), d);
}

static const sw_policy_ops learner = {
    .name = "actions",
    .keys = "",
    .help = "the RLP action space, each action chosen by an episode of rl train",
    .state_size = sizeof(episode *),
    .wants = SW_WANT_LOSS,
    .init = learner_init,
    .on_push = learner_push,
    .on_applied = learner_applied,
};

/* Pre-training: Q(s_i, a_i) regressed on the discounted return that followed, in shuffled
 * mini-batches (with gamma = 1 the return is minus the time to the end, as in the paper), and the
 * records kept in the archive when there is one. Returns the mean loss (0 when only kept). */
static double regress_returns(episode *e, double end_t, uint64_t seed, sw_rl_archive *archive)
{
    if (e->n == 0)
        return 0;
    float *y = malloc(e->n * sizeof *y);
    double loss = 0, g = 0;
    if (!y) {
        e->out_of_memory = true;
        return 0;
    }
    float gamma = sw_rl_agent_hparams(e->agent)->gamma;
    for (size_t i = e->n; i-- > 0;) {
        bool last = i + 1 == e->n; /* to the end: the time, and no loss known there */
        double next_t = last ? end_t : e->times[i + 1], next_l = last ? NAN : e->losses[i + 1];
        g = reward(e, e->times[i], e->losses[i], next_t, next_l) + gamma * g;
        y[i] = (float)g;
    }
    if (archive && sw_rl_archive_add(archive, e->states, e->actions, y, e->n)) {
        e->out_of_memory = true;
    } else if (e->mode == SW_RL_EMULATE) {
        sw_rng r;
        sw_rng_seed(&r, seed, SW_STREAM_RL);
        if (sw_rl_regress_pass(e->agent, e->states, e->actions, y, e->n, &r, &loss))
            e->out_of_memory = true;
    }
    free(y);
    return loss;
}

/* How many entries the '|'-separated list has. */
static uint32_t list_count(const char *list)
{
    uint32_t n = 1;
    for (const char *c = list; *c; c++)
        n += *c == '|';
    return n;
}

/* Entry `pick` of a '|'-separated list, into out. */
static int list_entry(const char *list, uint64_t pick, char *out, size_t cap, const char *what,
                      char *err)
{
    const char *at = list;
    for (uint64_t i = 0; i < pick; i++)
        at = strchr(at, '|') + 1;
    size_t len = strcspn(at, "|");
    if (len == 0 || len >= cap)
        return sw_fail(err, SW_EINVAL, "empty or too long entry in the %s '%s'", what, list);
    memcpy(out, at, len);
    out[len] = '\0';
    return 0;
}

enum { LIST_WORKERS, LIST_CLUSTER, LIST_LR, LIST_OPTIM, LIST_MODEL, LISTS };

/* The scenario's lists, by LIST_*. */
static void lists_of(const sw_rl_scenario *sc, const char *lists[LISTS])
{
    lists[LIST_WORKERS] = sc->workers;
    lists[LIST_CLUSTER] = sc->cluster;
    lists[LIST_LR] = sc->lrs;
    lists[LIST_OPTIM] = sc->optimizers;
    lists[LIST_MODEL] = sc->models;
}

/* Reads entry pick[k] of each list k into d; the numbers are checked here, the cluster and
 * model specs where they are built (sw_rl_scenario_check builds each once). */
static int read_entries(const sw_rl_scenario *sc, const uint64_t pick[LISTS], sw_rl_draw *d,
                        char *err)
{
    const char *lists[LISTS];
    lists_of(sc, lists);
    char workers[32], lr[32], optim[SW_OPTIM_SPEC_LEN], *end;
    int rc = list_entry(lists[LIST_WORKERS], pick[LIST_WORKERS], workers, sizeof workers,
                        "workers", err);
    if (!rc)
        rc = list_entry(lists[LIST_CLUSTER], pick[LIST_CLUSTER], d->cluster, sizeof d->cluster,
                        "clusters", err);
    if (!rc)
        rc = list_entry(lists[LIST_LR], pick[LIST_LR], lr, sizeof lr, "learning rates", err);
    if (!rc)
        rc = list_entry(lists[LIST_OPTIM], pick[LIST_OPTIM], optim, sizeof optim, "optimizers",
                        err);
    if (!rc)
        rc = list_entry(lists[LIST_MODEL], pick[LIST_MODEL], d->model, sizeof d->model, "models",
                        err);
    if (rc)
        return rc;
    unsigned long w = strtoul(workers, &end, 10);
    if (*end || w < 1 || w > 100000)
        return sw_fail(err, SW_EINVAL, "workers '%s': expected a count in 1..100000", workers);
    d->workers = (uint32_t)w;
    d->lr = strtof(lr, &end);
    if (*end || !(d->lr > 0) || d->lr > 100)
        return sw_fail(err, SW_EINVAL, "learning rate '%s': expected a number in (0, 100]", lr);
    return sw_optim_parse(&d->optim, optim, err);
}

/* The label of a draw: the entries of the lists that offered a choice. */
static void label(const char *const lists[LISTS], const uint64_t pick[LISTS], sw_rl_draw *d)
{
    static const char *const keys[LISTS] = {"workers", "cluster", "lr", "optimizer", "model"};
    size_t at = 0;
    d->regime[0] = '\0';
    for (int k = 0; k < LISTS; k++) {
        char value[256], err[SW_ERR_LEN];
        if (list_count(lists[k]) > 1 && at < sizeof d->regime &&
            !list_entry(lists[k], pick[k], value, sizeof value, keys[k], err))
            at += (size_t)snprintf(d->regime + at, sizeof d->regime - at, "%s%s=%s",
                                   at ? " " : "", keys[k], value);
    }
}

/* The choices of instance `instance`: the model from the instance's own stream r (as before
 * there were other lists, so that those instances stay what they were), the rest from a stream
 * of their own, drawn only where a list offers a choice. */
static int draw(const sw_rl_scenario *sc, sw_rng *r, uint64_t seed, uint64_t instance,
                sw_rl_draw *d, char *err)
{
    memset(d, 0, sizeof *d);
    const char *lists[LISTS];
    lists_of(sc, lists);
    uint64_t pick[LISTS];
    pick[LIST_MODEL] = sw_rng_below(r, list_count(sc->models));
    sw_rng other;
    sw_rng_seed(&other, seed ^ (instance * 0x9e3779b97f4a7c15ULL), SW_STREAM_REGIME);
    for (int k = 0; k < LIST_MODEL; k++) {
        uint32_t n = list_count(lists[k]);
        pick[k] = n > 1 ? sw_rng_below(&other, n) : 0;
    }
    int rc = read_entries(sc, pick, d, err);
    if (!rc)
        label(lists, pick, d);
    return rc;
}

/* The model a spec names, built on the scenario's data once, so that a bad one is said before
 * any run (not at the first instance that draws it). */
static int try_model(const sw_rl_scenario *sc, const char *model, char *err)
{
    sw_task_data view = {.dense = *sc->data};
    sw_task *t = NULL;
    int rc = sw_task_new(&t, model, &view, sc->batch, 0, err);
    sw_task_free(t);
    return rc;
}

int sw_rl_scenario_check(const sw_rl_scenario *sc, char *err)
{
    const char *lists[LISTS];
    lists_of(sc, lists);
    uint32_t most = 0, n[LISTS];
    for (int k = 0; k < LISTS; k++) {
        n[k] = list_count(lists[k]);
        most = n[k] > most ? n[k] : most;
    }
    int rc = 0;
    for (uint32_t i = 0; i < most && !rc; i++) { /* every entry of every list at least once */
        uint64_t pick[LISTS];
        for (int k = 0; k < LISTS; k++)
            pick[k] = i < n[k] ? i : 0;
        sw_rl_draw d;
        sw_cluster *c = NULL;
        if (!(rc = read_entries(sc, pick, &d, err)) &&
            !(rc = sw_cluster_new(&c, d.cluster, d.workers, 1, err)))
            sw_cluster_free(c);
        if (!rc) /* without the data, the spec's own faults (sw_task_model_known) */
            rc = sc->data ? try_model(sc, d.model, err) : sw_task_model_known(d.model, err);
    }
    return rc;
}

/* The instance's choices, data share and simulation seed, all drawn from (seed, instance). */
static int make_instance(const sw_rl_scenario *sc, uint64_t seed, uint64_t instance,
                         sw_dataset **train, sw_rl_draw *d, uint64_t *sim_seed, char *err)
{
    sw_rng r;
    sw_rng_seed(&r, seed ^ (instance * 0x9e3779b97f4a7c15ULL), SW_STREAM_INSTANCE);
    int rc = draw(sc, &r, seed, instance, d, err);
    if (rc)
        return rc;
    const sw_dataset *full = sc->data->train;
    size_t n = (size_t)(sc->data_frac * (double)full->n);
    n = n < 1 ? 1 : n > full->n ? full->n : n;
    uint32_t *idx = malloc(full->n * sizeof *idx);
    if (!idx)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    for (size_t i = 0; i < full->n; i++)
        idx[i] = (uint32_t)i;
    sw_rng_shuffle(&r, idx, full->n);
    rc = sw_dataset_subset(train, full, idx, n, err);
    free(idx);
    *sim_seed = sw_rng_u64(&r);
    return rc;
}

static void fill_run(const sw_sim_result *r, const episode *e, sw_rl_run *out)
{
    out->reached = r->target_t >= 0;
    out->time = out->reached ? r->target_t : r->end_t;
    const sw_run_stats *st = &r->stats;
    out->iterations = st->pushes;
    out->applies = st->applies;
    double steps = 0;
    for (uint32_t w = 0; w < st->n_slots; w++)
        steps += (double)st->steps[w];
    out->steps_per_worker = st->n_slots ? steps / st->n_slots : 0;
    out->idle_share = sw_run_stats_idle_share(st);
    out->decide_share = r->decide_s / (r->wall_s + 1e-12);
    out->probe_share = r->probe_s / (r->wall_s + 1e-12);
    out->td_loss = e->loss_n ? e->loss_sum / (double)e->loss_n : 0;
}

static int parse_classic(episode *e, const char *policy, char *err)
{
    if (strcmp(policy, "bsp") == 0)
        e->classic = CLASSIC_BSP;
    else if (strcmp(policy, "asp") == 0)
        e->classic = CLASSIC_ASP;
    else if (sscanf(policy, "ssp:s=%ld", &e->ssp_s) == 1 && e->ssp_s >= 0)
        e->classic = CLASSIC_SSP;
    else
        return sw_fail(err, SW_EINVAL, "pre-training copies bsp, asp or ssp:s=S, not '%s'", policy);
    return 0;
}

int sw_rl_check_classic(const char *policy, char *err)
{
    episode scratch;
    return parse_classic(&scratch, policy, err);
}

static int run_sim(const sw_rl_scenario *sc, const sw_task_data *view, const sw_rl_draw *d,
                   uint64_t sim_seed, const char *policy, episode *e, sw_sim_result *r, char *err)
{
    sw_sim_config c = sw_sim_default_config();
    c.policy = e->mode == SW_RL_PLAIN ? policy : "actions";
    c.workers = d->workers;
    c.cluster = d->cluster;
    c.data = view;
    c.model = d->model;
    c.batch = sc->batch;
    c.lr = d->lr;
    c.optim = d->optim;
    c.seed = sim_seed;
    c.target_acc = sc->target_acc;
    c.eval_every = sc->eval_every;
    c.max_pushes = sc->max_pushes;
    if (e->mode != SW_RL_PLAIN && e->chooser.choose) {
        c.policy = "rlswitch";
        c.policy_ops = sw_policy_find(c.policy);
        c.policy_ctx = &e->chooser;
    } else if (e->mode != SW_RL_PLAIN) {
        c.policy_ops = &learner;
        c.policy_ctx = e;
    }
    return sw_sim_run(&c, r, err);
}

int sw_rl_run_instance(const sw_rl_scenario *sc, uint64_t seed, uint64_t instance, uint32_t repeat,
                       const char *policy, sw_rl_mode mode, sw_rl_agent *agent,
                       sw_rl_archive *archive, double eps, sw_rl_run *out, char *err)
{
    memset(out, 0, sizeof *out);
    episode e = {.mode = mode, .agent = agent, .eps = eps};
    int rc = 0;
    bool copies = mode == SW_RL_EMULATE || mode == SW_RL_RECORD; /* a classic policy's run */
    if (mode != SW_RL_PLAIN) {
        if (!agent)
            return sw_fail(err, SW_EINVAL, "an episode that records or learns needs an agent");
        if (copies && (rc = parse_classic(&e, policy, err)))
            return rc;
        uint32_t history = sw_rl_agent_hparams(agent)->history;
        if (sw_rl_agent_hparams(agent)->layout == SW_RL_LAYOUT_STRETCH)
            e.chooser = (sw_rl_chooser){.choose = choose_stretch, .ctx = &e, .history = history};
        if (e.chooser.choose && copies && (e.copied = sw_rl_stretch_action(policy)) < 0)
            return sw_fail(err, SW_EINVAL,
                           "the stretch layout's pre-training copies its actions, bsp, ssp:s=4 "
                           "or asp, not '%s'",
                           policy);
    }
    sw_dataset *train = NULL;
    uint64_t sim_seed = 0;
    sw_rl_draw d;
    if ((rc = make_instance(sc, seed, instance, &train, &d, &sim_seed, err)))
        return rc;
    if (mode != SW_RL_PLAIN) { /* the state reads the instance's optimizer */
        const sw_rl_hparams *hp = sw_rl_agent_hparams(agent);
        sw_rl_features_init(&e.f, hp->history, hp->layout, &d.optim);
        e.dim = (size_t)hp->history * e.f.tuple;
    }
    memcpy(out->model, d.model, sizeof out->model);
    memcpy(out->regime, d.regime, sizeof out->regime);
    /* By default a push's time at ASP's pace on the default cluster costs 1, or a stretch's */
    e.unit = sc->reward_unit > 0 ? sc->reward_unit
             : e.chooser.choose  ? 4.5 * SW_RL_STRETCH_STEPS
                                 : 4.5 / d.workers;
    e.progress = sc->reward_progress;
    e.switch_cost = sc->switch_cost;
    sim_seed += repeat * 0x2545f4914f6cdd1dULL; /* another run of the same instance */
    sw_task_data view = {.dense = {.train = train, .val = sc->data->val, .test = sc->data->test}};
    sw_sim_result r;
    rc = run_sim(sc, &view, &d, sim_seed, policy, &e, &r, err);
    if (!rc) {
        double end = r.target_t >= 0 ? r.target_t : r.end_t;
        if (mode == SW_RL_LEARN && e.has_prev) {
            static const float terminal[DIM_MAX];
            float r_end = last_reward(&e, end, NAN); /* no probe at the end */
            sw_rl_agent_remember(agent, e.prev, e.prev_action, r_end, terminal, true);
        }
        double pre_loss = copies ? regress_returns(&e, end, sim_seed, archive) : 0;
        fill_run(&r, &e, out);
        if (copies)
            out->td_loss = pre_loss;
        sw_sim_result_free(&r);
        if (e.out_of_memory)
            rc = sw_fail(err, SW_ENOMEM, "out of memory for pre-training records");
    }
    free(e.states);
    free(e.actions);
    free(e.times);
    free(e.losses);
    sw_dataset_free(train);
    return rc;
}
