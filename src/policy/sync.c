/* sync:grads_to_wait=k — ElasticDL's synchronous mode (004, "Asynchronous SGD" design doc).
 * A gradient computed at a version older than V is rejected and its worker re-pulls and
 * recomputes the same mini-batch; accepted gradients are buffered, and when k have arrived their
 * mean is applied. Workers never wait: after every push they pull the current model. ElasticDL's
 * default is k = 1.
 *
 * k may exceed the live workers (a worker then contributes more than one gradient to an apply),
 * but not the worker slots: ElasticDL waits for gradients from distinct pushes of a cluster of
 * that size, and k = 1000000 with 4 workers would apply once a geological age. */
#include "syncwise/err.h"
#include "syncwise/policy.h"

typedef struct sync_state {
    uint32_t k;
} sync_state;

static int sync_init(void *state, sw_spec *spec, const sw_engine_view *v,
                     const sw_policy_env *env, char *err)
{
    (void)env;
    sync_state *st = state;
    long k = SW_SYNC_DEFAULT_GRADS;
    int rc = sw_spec_int(spec, "grads_to_wait", 1, 1 << 24, &k, err);
    if (!rc && k > (long)v->n_slots)
        return sw_fail(err, SW_EINVAL, "sync: grads_to_wait=%ld exceeds the %u worker slots of "
                       "this run: give at most %u", k, v->n_slots, v->n_slots);
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

/* After a switch: gradients another policy left in the buffer are applied once k are in, and
 * nobody waits. */
static void sync_tick(void *state, const sw_engine_view *v, sw_decision *d)
{
    const sync_state *st = state;
    d->apply = v->buffered >= st->k;
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
