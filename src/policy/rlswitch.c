/* rlswitch — a learned choice of classic policy per stretch of the run (not the RLP paper's
 * action space; docs/rl.md, "Stretches"). Every SW_RL_STRETCH_STEPS steps per live worker a
 * Q-network trained by `rl train --features stretch` picks which of bsp, ssp:s=4 and asp
 * (sw_rl_stretch_policies) decides the next stretch, from one tuple per stretch. The paper's
 * reward looks five pushes ahead, too short to see what a barrier buys (docs/results/rl.md,
 * items 1-10); a stretch is long enough for the loss to show it.
 *
 * The chosen policy decides every event of its stretch exactly as it would alone. A change asks
 * for a wake-up at once, whose tick is the new policy's, as an engine switch does: it releases
 * the workers the old policy held that the new one would not. None of the three keeps anything
 * between events that the view would not give it again, but ssp's last minimum, which that tick
 * renews. In training, a caller runs it as its own policy and sw_policy_env.ctx is an
 * sw_rl_chooser that picks instead of a file's network. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "syncwise/err.h"
#include "syncwise/policy.h"
#include "syncwise/rl.h"

typedef struct rlswitch_state {
    sw_rl_agent *agent;           /* the file's network; NULL when a chooser picks */
    const sw_rl_chooser *chooser; /* training's, or NULL */
    sw_rl_features features;
    double eps;
    bool once;             /* choose=once: the first choice runs the whole run */
    sw_policy_env sub_env; /* the run's, without the chooser: the three are registered ones */
    const sw_policy_ops *ops[SW_RL_ACTIONS];
    void *sub[SW_RL_ACTIONS];
    int active;
    uint64_t pushes, stretch_start; /* pushes so far, and when the active stretch began */
} rlswitch_state;

static int start_policies(rlswitch_state *st, const sw_engine_view *v, char *err)
{
    for (int a = 0; a < SW_RL_ACTIONS; a++) {
        sw_spec spec;
        int rc = sw_spec_parse(&spec, sw_rl_stretch_policies[a], err);
        if (rc)
            return rc;
        st->ops[a] = sw_policy_find(spec.name);
        st->sub[a] = calloc(1, st->ops[a]->state_size ? st->ops[a]->state_size : 1);
        if (!st->sub[a])
            return sw_fail(err, SW_ENOMEM, "out of memory for rlswitch's policies");
        if (st->ops[a]->init && (rc = st->ops[a]->init(st->sub[a], &spec, v, &st->sub_env, err)))
            return rc;
    }
    return 0;
}

static int load_network(rlswitch_state *st, const char *path, char *err)
{
    sw_rl_policy pol;
    int rc = sw_rl_policy_load(path, &pol, err);
    if (rc)
        return rc;
    if (pol.hp.layout != SW_RL_LAYOUT_STRETCH)
        rc = sw_fail(err, SW_EINVAL,
                     "rlswitch: %s decides after each push (feature layout %u): run it as "
                     "rlp:file=%s; rlswitch needs a policy trained with --features stretch",
                     path, pol.hp.layout, path);
    if (!rc)
        rc = sw_rl_agent_new(&st->agent, &pol.hp, pol.weights, pol.n_weights, 1, err);
    sw_rl_features_init(&st->features, pol.hp.history, pol.hp.layout, &st->sub_env.optim);
    sw_rl_policy_free(&pol);
    return rc;
}

/* The action for the stretch that begins now, after recording the one that ended. */
static int choose(rlswitch_state *st, const sw_engine_view *v)
{
    sw_rl_features *f = &st->features;
    sw_rl_features_stretch(f, v, st->pushes, st->pushes ? st->active : -1);
    if (st->chooser) {
        double loss = v->version > 0 && isfinite(f->loss0) ? v->loss_after / f->loss0 : NAN;
        return st->chooser->choose(st->chooser->ctx, f->state, v->now, loss);
    }
    if (st->eps > 0 && sw_rng_uniform(st->sub_env.rng) < st->eps)
        return (int)sw_rng_below(st->sub_env.rng, SW_RL_ACTIONS);
    return sw_rl_agent_act(st->agent, f->state, 0);
}

static int rlswitch_init(void *state, sw_spec *spec, const sw_engine_view *v,
                         const sw_policy_env *env, char *err)
{
    rlswitch_state *st = state;
    st->chooser = env->ctx;
    st->sub_env = *env;
    st->sub_env.ctx = NULL;
    const char *when = sw_spec_str(spec, "choose", "stretch");
    st->once = strcmp(when, "once") == 0;
    if (!st->once && strcmp(when, "stretch") != 0)
        return sw_fail(err, SW_EINVAL, "rlswitch: choose='%s' is not stretch or once", when);
    char shipped[4096]; /* each way of choosing has its own network, trained for it */
    sw_rl_shipped_path(st->once ? "rlswitch-once.swrl" : "rlswitch.swrl", shipped, sizeof shipped);
    const char *path = sw_spec_str(spec, "file", shipped);
    int rc = sw_spec_double(spec, "eps", 0, 1, &st->eps, err);
    if (!rc)
        rc = start_policies(st, v, err);
    if (rc)
        return rc;
    if (st->chooser)
        sw_rl_features_init(&st->features, st->chooser->history, SW_RL_LAYOUT_STRETCH, &env->optim);
    else if ((rc = load_network(st, path, err)))
        return rc;
    st->active = choose(st, v);
    return 0;
}

static void rlswitch_push(void *state, const sw_engine_view *v, const sw_push *p, sw_decision *d)
{
    rlswitch_state *st = state;
    uint64_t live = v->n_live ? v->n_live : 1;
    int before = st->active;
    if (!st->once && st->pushes - st->stretch_start >= SW_RL_STRETCH_STEPS * live) {
        st->active = choose(st, v);
        st->stretch_start = st->pushes;
    }
    st->pushes++;
    st->ops[st->active]->on_push(st->sub[st->active], v, p, d);
    if (st->active != before && (d->wake_at < 0 || d->wake_at > v->now))
        d->wake_at = v->now; /* the new policy's tick, as after an engine switch */
}

static void rlswitch_applied(void *state, const sw_engine_view *v, const sw_push *p, sw_decision *d)
{
    rlswitch_state *st = state;
    sw_rl_features_note_loss0(&st->features, v);
    if (st->ops[st->active]->on_applied)
        st->ops[st->active]->on_applied(st->sub[st->active], v, p, d);
}

static void rlswitch_join(void *state, const sw_engine_view *v, uint32_t w, sw_decision *d)
{
    rlswitch_state *st = state;
    if (st->ops[st->active]->on_join)
        st->ops[st->active]->on_join(st->sub[st->active], v, w, d);
    else
        sw_decision_release(d, w);
}

static void rlswitch_leave(void *state, const sw_engine_view *v, uint32_t w, sw_decision *d)
{
    rlswitch_state *st = state;
    if (st->ops[st->active]->on_leave)
        st->ops[st->active]->on_leave(st->sub[st->active], v, w, d);
}

static void rlswitch_tick(void *state, const sw_engine_view *v, sw_decision *d)
{
    rlswitch_state *st = state;
    if (st->ops[st->active]->on_tick)
        st->ops[st->active]->on_tick(st->sub[st->active], v, d);
}

static void rlswitch_fini(void *state)
{
    rlswitch_state *st = state;
    for (int a = 0; a < SW_RL_ACTIONS; a++) {
        if (st->sub[a] && st->ops[a]->fini)
            st->ops[a]->fini(st->sub[a]);
        free(st->sub[a]);
        st->sub[a] = NULL;
    }
    sw_rl_agent_free(st->agent);
    st->agent = NULL;
}

/* choose=once picks at the start, when no loss is known yet, and never again: it reads none. */
static unsigned rlswitch_wants(const sw_spec *spec)
{
    sw_spec read = *spec; /* the getter marks what it reads: init reads it again */
    return strcmp(sw_spec_str(&read, "choose", "stretch"), "once") ? SW_WANT_LOSS : 0;
}

const sw_policy_ops sw_policy_rlswitch = {
    .name = "rlswitch",
    .keys = "file, choose, eps",
    .help = "learned per stretch (syncwise rl train --features stretch): every 10 steps per "
            "worker, the policy file=PATH (default: the shipped one) picks bsp, ssp:s=4 or asp "
            "for the next 10; choose=stretch (default) or once: its first pick runs the whole "
            "run (default file: the shipped one trained for that); eps=0 explores with that "
            "probability",
    .state_size = sizeof(rlswitch_state),
    .wants = SW_WANT_LOSS,
    .wants_of = rlswitch_wants,
    .init = rlswitch_init,
    .on_push = rlswitch_push,
    .on_applied = rlswitch_applied,
    .on_join = rlswitch_join,
    .on_leave = rlswitch_leave,
    .on_tick = rlswitch_tick,
    .fini = rlswitch_fini,
};
