/* rlswitch: each stretch is decided by bsp, ssp:s=4 or asp, which the log does not name, so the
 * promise is what all three keep and their hand-overs too: no gradient is dropped, the liveness
 * rule is never needed, and an apply scales the learning rate by 1 (the policies that apply on
 * arrival, and the first apply of one taking over bsp's buffer) or, in a barrier with every live
 * worker waiting, by its gradients (bsp's agg=sum). */
#include "check_internal.h"

static int rlswitch_event(void *state, sw_check *c, const sw_event *ev, char *err)
{
    (void)state;
    if (ev->kind == SW_EV_DROP)
        return ck_broken(c, err, "dropped the gradient of worker %u", ev->worker);
    return ck_no_liveness(c, ev, err);
}

static int rlswitch_end(void *state, sw_check *c, char *err)
{
    (void)state;
    const ck_apply *a = &c->g.apply;
    if (!c->g.applied || a->lr_scale == 1.0f || (a->all_waiting && a->lr_scale == (float)a->n))
        return 0;
    return ck_broken(c, err,
                     "applied %u gradients with the learning rate scaled by %g: neither 1 nor, "
                     "in a barrier of every live worker, their number",
                     a->n, (double)a->lr_scale);
}

const ck_promise sw__promise_rlswitch = {
    .policy = "rlswitch",
    .on_event = rlswitch_event,
    .on_end = rlswitch_end,
};
