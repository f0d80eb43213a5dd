/* actions — the action space of the RLP paper (000, section 3.2): after every push, whose
 * gradient is applied at once (Algorithm 1 updates ω on each push), one of three actions is
 * taken: none (every idle worker stays idle), the pusher (it runs again) or all idle workers.
 * Here the action is drawn uniformly from the policy's random stream: a baseline for learned
 * policies (rlp, and the learning policy of `syncwise rl train`, which act in the same space
 * through sw_policy_act). */
#include "syncwise/policy.h"

typedef struct actions_state {
    sw_rng *rng;
} actions_state;

static int actions_init(void *state, sw_spec *spec, const sw_engine_view *v,
                        const sw_policy_env *env, char *err)
{
    (void)spec, (void)v, (void)err;
    ((actions_state *)state)->rng = env->rng;
    return 0;
}

static void actions_push(void *state, const sw_engine_view *v, const sw_push *p, sw_decision *d)
{
    (void)state, (void)v, (void)p;
    d->apply = true;
}

static void actions_applied(void *state, const sw_engine_view *v, const sw_push *p,
                            sw_decision *d)
{
    const actions_state *st = state;
    sw_policy_act(v, p->worker, (int)sw_rng_below(st->rng, 3), d);
}

const sw_policy_ops sw_policy_actions = {
    .name = "actions",
    .keys = "",
    .help = "RLP action space at random: after each applied push, release nobody, the pusher "
            "or all idle workers, each with probability 1/3 (a baseline for learned policies)",
    .state_size = sizeof(actions_state),
    .wants = SW_WANT_LOSS,
    .init = actions_init,
    .on_push = actions_push,
    .on_applied = actions_applied,
};
