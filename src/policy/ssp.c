/* ssp:s=N — stale synchronous parallel (Ho et al. 2013; the thesis, chapter 3). Gradients are
 * applied as they arrive; a worker whose clock (steps pushed) is p starts its next step only when
 * p - min <= s, min being the slowest live worker's clock. s = 0 is BSP's schedule.
 *
 * The RLP paper (000, section 3.1) counts differently: there a worker runs while p - min < s, so
 * its s = 1 is BSP. Its s equals ours plus one: the paper's s = 2, 5, 8 are our s = 1, 4, 7.
 */
#include "syncwise/policy.h"

typedef struct ssp_state {
    uint64_t s;
    uint64_t last_min; /* the slowest clock when waiting workers were last considered */
} ssp_state;

static int ssp_init(void *state, sw_spec *spec, const sw_engine_view *v,
                    const sw_policy_env *env, char *err)
{
    (void)env;
    ssp_state *st = state;
    long s = SW_SSP_DEFAULT_S;
    int rc = sw_spec_int(spec, "s", 0, 1000000, &s, err);
    st->s = (uint64_t)s;
    st->last_min = v->min_live_clock;
    return rc;
}

/* Releases every waiting worker within the bound. */
static void release_within(ssp_state *st, const sw_engine_view *v, sw_decision *d)
{
    st->last_min = v->min_live_clock;
    sw_policy_release_within(v, st->s, d);
}

static void ssp_push(void *state, const sw_engine_view *v, const sw_push *p, sw_decision *d)
{
    ssp_state *st = state;
    d->apply = true;
    /* Waiting workers can only be freed by a rise of the minimum; otherwise at most the pusher
     * goes on. This keeps a push O(1) except once per rise of the minimum. */
    if (v->min_live_clock != st->last_min)
        release_within(st, v, d);
    else if (p->clock - v->min_live_clock <= st->s)
        sw_decision_release(d, p->worker);
}

static void ssp_leave(void *state, const sw_engine_view *v, uint32_t w, sw_decision *d)
{
    (void)w;
    release_within(state, v, d);
}

static void ssp_tick(void *state, const sw_engine_view *v, sw_decision *d)
{
    release_within(state, v, d);
}

const sw_policy_ops sw_policy_ssp = {
    .name = "ssp",
    .keys = "s",
    .help = "stale synchronous: apply on arrival, no worker more than s=3 steps ahead of the "
            "slowest (s=0 is BSP's schedule)",
    .state_size = sizeof(ssp_state),
    .concurrent = true,
    .init = ssp_init,
    .on_push = ssp_push,
    .on_leave = ssp_leave,
    .on_tick = ssp_tick,
};
