/* rlp — the learned policy of the RLP paper (000): the `actions` action space, decided by a
 * trained Q-network (syncwise/rl.h) from the last H iterations' normalised tuples. The policy
 * file is read once, at init (the only I/O of any policy); deciding allocates nothing. With
 * eps > 0 it explores like training does, drawing from the policy's own stream.
 *
 * One network per regime (not the paper's): with high=PATH, a run whose optimizer carries at
 * least `above` of each gradient on (heavy-ball momentum, Adam's beta1) is decided by that
 * network instead, one trained on that regime alone (docs/results/rl.md, item 9). */
#include <stdlib.h>

#include "syncwise/err.h"
#include "syncwise/policy.h"
#include "syncwise/rl.h"

typedef struct rlp_state {
    sw_rl_agent *agent;
    sw_rl_features features;
    double eps;
    sw_rng *rng;
} rlp_state;

/* A policy file that decides after each push: a stretch layout's is rlswitch's. */
static int load_per_push(const char *path, sw_rl_policy *pol, char *err)
{
    int rc = sw_rl_policy_load(path, pol, err);
    if (rc || pol->hp.layout != SW_RL_LAYOUT_STRETCH)
        return rc;
    sw_rl_policy_free(pol);
    return sw_fail(err, SW_EINVAL,
                   "rlp: %s picks a policy per stretch (trained with --features stretch): run "
                   "it as rlswitch:file=%s",
                   path, path);
}

static int rlp_init(void *state, sw_spec *spec, const sw_engine_view *v, const sw_policy_env *env,
                    char *err)
{
    (void)v;
    rlp_state *st = state;
    st->rng = env->rng;
    const char *path = sw_spec_str(spec, "file", sw_rl_default_policy_path());
    const char *high = sw_spec_str(spec, "high", NULL);
    double above = 0.7;
    int rc = sw_spec_double(spec, "eps", 0, 1, &st->eps, err);
    if (!rc)
        rc = sw_spec_double(spec, "above", 0, 1, &above, err);
    if (rc)
        return rc;
    sw_rl_policy pol;
    if (high) { /* both are read, so that a bad file is said whichever regime the run is in */
        bool high_decides = sw_rl_momentum(&env->optim) >= (float)above; /* as given */
        if ((rc = load_per_push(high_decides ? path : high, &pol, err)))
            return rc;
        sw_rl_policy_free(&pol);
        path = high_decides ? high : path;
    }
    if ((rc = load_per_push(path, &pol, err)))
        return rc;
    rc = sw_rl_agent_new(&st->agent, &pol.hp, pol.weights, pol.n_weights, 1, err);
    sw_rl_features_init(&st->features, pol.hp.history, pol.hp.layout, &env->optim);
    sw_rl_policy_free(&pol);
    return rc;
}

static void rlp_push(void *state, const sw_engine_view *v, const sw_push *p, sw_decision *d)
{
    (void)state, (void)v, (void)p;
    d->apply = true;
}

static void rlp_applied(void *state, const sw_engine_view *v, const sw_push *p, sw_decision *d)
{
    rlp_state *st = state;
    sw_rl_features_update(&st->features, v, p);
    int a = st->eps > 0 && sw_rng_uniform(st->rng) < st->eps
                ? (int)sw_rng_below(st->rng, SW_RL_ACTIONS)
                : sw_rl_agent_act(st->agent, st->features.state, 0);
    sw_policy_act(v, p->worker, a, d);
}

static void rlp_fini(void *state)
{
    rlp_state *st = state;
    sw_rl_agent_free(st->agent);
    st->agent = NULL;
}

const sw_policy_ops sw_policy_rlp = {
    .name = "rlp",
    .keys = "file, high, above, eps",
    .help = "learned by deep Q-learning (syncwise rl train): after each applied push, release "
            "nobody, the pusher or all idle workers as the policy file=PATH says (default: the "
            "shipped policy); high=PATH decides instead under momentum (or Adam's beta1) of at "
            "least above=0.7; eps=0 explores with that probability",
    .state_size = sizeof(rlp_state),
    .wants = SW_WANT_LOSS,
    .init = rlp_init,
    .on_push = rlp_push,
    .on_applied = rlp_applied,
    .fini = rlp_fini,
};
