/* actions — the action space of the RLP paper (000, section 3.2): after every push, whose
 * gradient is applied at once (Algorithm 1 updates ω on each push), one of three actions is
 * taken: none (every idle worker stays idle), the pusher (it runs again) or all idle workers.
 * The action comes from the chooser the driver plugs in (a learned policy); without one it is
 * drawn uniformly from the policy's random stream, which makes a baseline for learned policies.
 * The choice is made after the apply (on_applied), when the view holds the loss before and after
 * it: the RLP state needs both. */
#include "syncwise/policy.h"

typedef struct actions_state {
    sw_action_fn choose;
    void *ctx;
    sw_rng *rng;
} actions_state;

static int actions_init(void *state, sw_spec *spec, const sw_engine_view *v,
                        const sw_policy_env *env, char *err)
{
    (void)spec, (void)v, (void)err;
    actions_state *st = state;
    st->choose = env->chooser;
    st->ctx = env->chooser_ctx;
    st->rng = env->rng;
    return 0;
}

static void actions_push(void *state, const sw_engine_view *v, const sw_push *p, sw_decision *d)
{
    (void)state, (void)v, (void)p;
    d->apply = true;
}

/* The choice comes after the apply, so that the chooser sees the loss it caused. */
static void actions_applied(void *state, const sw_engine_view *v, const sw_push *p,
                            sw_decision *d)
{
    const actions_state *st = state;
    int a = st->choose ? st->choose(st->ctx, v, p) : (int)sw_rng_below(st->rng, 3);
    if (a == SW_ACTION_PUSHER)
        sw_decision_release(d, p->worker);
    else if (a == SW_ACTION_ALL)
        sw_policy_release_all(v, d);
}

const sw_policy_ops sw_policy_actions = {
    .name = "actions",
    .keys = "",
    .help = "RLP action space: after each applied push, release nobody, the pusher or all idle "
            "workers, as a plugged-in chooser says (uniformly random without one)",
    .state_size = sizeof(actions_state),
    .wants = SW_WANT_LOSS,
    .init = actions_init,
    .on_push = actions_push,
    .on_applied = actions_applied,
};
