/* asp — asynchronous parallel: every gradient is applied on arrival and its worker goes on at
 * once. With lr_mod=staleness the learning rate of an apply is divided by the gradient's
 * staleness V - version when that is above 0 (ElasticDL's --lr_staleness_modulation). */
#include <string.h>

#include "syncwise/err.h"
#include "syncwise/policy.h"

typedef struct asp_state {
    bool staleness_lr;
} asp_state;

static int asp_init(void *state, sw_spec *spec, const sw_engine_view *v,
                    const sw_policy_env *env, char *err)
{
    (void)v, (void)env;
    asp_state *s = state;
    const char *mod = sw_spec_str(spec, "lr_mod", "none");
    if (strcmp(mod, "staleness") == 0)
        s->staleness_lr = true;
    else if (strcmp(mod, "none") != 0)
        return sw_fail(err, SW_EINVAL, "asp: lr_mod='%s' is not none or staleness", mod);
    return 0;
}

static void asp_push(void *state, const sw_engine_view *v, const sw_push *p, sw_decision *d)
{
    const asp_state *s = state;
    uint64_t staleness = v->version - p->version;
    d->apply = true;
    if (s->staleness_lr && staleness > 0)
        d->lr_scale = 1.0f / (float)staleness;
    sw_decision_release(d, p->worker);
}

/* After a switch from a policy that held workers back, nobody waits under asp. */
static void asp_tick(void *state, const sw_engine_view *v, sw_decision *d)
{
    (void)state;
    sw_policy_release_all(v, d);
}

const sw_policy_ops sw_policy_asp = {
    .name = "asp",
    .keys = "lr_mod",
    .help = "asynchronous: apply every gradient at once, never wait (lr_mod=staleness divides "
            "the learning rate by the staleness)",
    .state_size = sizeof(asp_state),
    .concurrent = true,
    .init = asp_init,
    .on_push = asp_push,
    .on_tick = asp_tick,
};
