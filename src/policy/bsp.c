/* bsp — bulk synchronous parallel: every live worker pushes once per superstep; when the last
 * one has pushed, the buffered gradients are applied together and everyone is released.
 * A worker that leaves or crashes mid-superstep is simply not waited for.
 *
 * agg=sum (the default) applies lr times the sum of the gradients, as Algorithm 1 of the RLP
 * paper does by updating ω with every gradient at the same learning rate, and as the DBW paper's
 * rule "learning rate proportional to the number of gradients averaged" does; agg=mean applies lr
 * times their mean (a larger effective batch at the same step size).
 */
#include "policy_internal.h"
#include "syncwise/policy.h"

typedef struct bsp_state {
    bool mean;
} bsp_state;

static int bsp_init(void *state, sw_spec *spec, const sw_engine_view *v,
                    const sw_policy_env *env, char *err)
{
    (void)v, (void)env;
    bsp_state *st = state;
    return sw__parse_agg(spec, &st->mean, err);
}

/* The barrier: complete when nobody is still computing. `incoming` is 1 when the gradient of
 * the push being decided is not yet in the buffer. */
static void barrier(const bsp_state *st, const sw_engine_view *v, uint32_t incoming,
                    sw_decision *d)
{
    if (!sw_policy_all_waiting(v))
        return;
    d->apply = true;
    d->lr_scale = st->mean ? 1.0f : (float)(v->buffered + incoming);
    sw_policy_release_all(v, d);
}

static void bsp_push(void *state, const sw_engine_view *v, const sw_push *p, sw_decision *d)
{
    (void)p;
    barrier(state, v, 1, d);
}

/* A joiner starts at once only at a superstep's start (nobody waits, nothing is buffered: not
 * even the gradient of a worker that left, maybe from the joiner's own slot); otherwise it
 * waits for the barrier and starts in step with everyone. The barrier may be complete at once:
 * everyone else left, their gradients buffered. */
static void bsp_join(void *state, const sw_engine_view *v, uint32_t w, sw_decision *d)
{
    if (v->n_waiting == 1 && v->buffered == 0)
        sw_decision_release(d, w);
    else
        barrier(state, v, 0, d);
}

static void bsp_leave(void *state, const sw_engine_view *v, uint32_t w, sw_decision *d)
{
    (void)w;
    barrier(state, v, 0, d);
}

static void bsp_tick(void *state, const sw_engine_view *v, sw_decision *d)
{
    barrier(state, v, 0, d);
}

const sw_policy_ops sw_policy_bsp = {
    .name = "bsp",
    .keys = "agg",
    .help = "bulk synchronous: one gradient per live worker, applied together (agg=sum or "
            "mean), then release all",
    .state_size = sizeof(bsp_state),
    .init = bsp_init,
    .on_push = bsp_push,
    .on_join = bsp_join,
    .on_leave = bsp_leave,
    .on_tick = bsp_tick,
};
