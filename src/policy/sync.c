/* sync:grads_to_wait=k — ElasticDL's synchronous mode (004, "Asynchronous SGD" design doc).
 * A gradient computed at a version older than V is rejected and its worker re-pulls and
 * recomputes the same mini-batch; accepted gradients are buffered, and when k have arrived their
 * mean is applied. Workers never wait: after every push they pull the current model. ElasticDL's
 * default is k = 1. */
#include "syncwise/policy.h"

typedef struct sync_state {
    uint32_t k;
} sync_state;

static int sync_init(void *state, sw_spec *spec, const sw_engine_view *v,
                     const sw_policy_env *env, char *err)
{
    (void)v, (void)env;
    sync_state *st = state;
    long k = 1;
    int rc = sw_spec_int(spec, "grads_to_wait", 1, 1 << 24, &k, err);
    st->k = (uint32_t)k;
    return rc;
}

static void sync_push(void *state, const sw_engine_view *v, const sw_push *p, sw_decision *d)
{
    const sync_state *st = state;
    if (p->version < v->version)
        d->drop = true;
    else
        d->apply = v->buffered + 1 >= st->k;
    sw_decision_release(d, p->worker);
}

static void sync_tick(void *state, const sw_engine_view *v, sw_decision *d)
{
    (void)state;
    sw_policy_release_all(v, d);
}

const sw_policy_ops sw_policy_sync = {
    .name = "sync",
    .keys = "grads_to_wait",
    .help = "ElasticDL synchronous: drop gradients older than V, apply the mean of "
            "grads_to_wait=1 current ones",
    .state_size = sizeof(sync_state),
    .init = sync_init,
    .on_push = sync_push,
    .on_tick = sync_tick,
};
