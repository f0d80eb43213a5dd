/* Rules several policies promise, and the table of the promises the checker knows. */
#include <string.h>

#include "check_internal.h"

extern const ck_promise sw__promise_asp, sw__promise_ssp, sw__promise_dssp, sw__promise_actions,
    sw__promise_rlp, sw__promise_bsp, sw__promise_backup, sw__promise_dbw, sw__promise_bdbw,
    sw__promise_sync, sw__promise_ebsp, sw__promise_rlswitch;

const ck_promise *const sw__promises[] = {
    &sw__promise_asp,
    &sw__promise_ssp,
    &sw__promise_dssp,
    &sw__promise_actions,
    &sw__promise_rlp,
    &sw__promise_bsp,
    &sw__promise_backup,
    &sw__promise_dbw,
    &sw__promise_bdbw,
    &sw__promise_sync,
    &sw__promise_ebsp,
    &sw__promise_rlswitch,
    NULL,
};

int sw__ck_no_liveness(const sw_check *c, const sw_event *ev, char *err)
{
    if (ev->kind == SW_EV_RELEASE && ev->reason && strcmp(ev->reason, "liveness") == 0)
        return sw__ck_broken(c, err, "left all %u live workers waiting: the engine's liveness rule "
                         "had to release them", c->g.live_at_decision);
    return 0;
}

int sw__ck_push_applied_at_once(const sw_check *c, char *err)
{
    if (c->g.start != SW_EV_PUSH)
        return 0;
    if (c->g.dropped)
        return sw__ck_broken(c, err, "dropped the gradient of worker %u", c->g.worker);
    if (!c->g.applied || c->n_buf > 0)
        return sw__ck_broken(c, err, "did not apply the gradient of worker %u on arrival",
                         c->g.worker);
    return 0;
}

int sw__ck_nobody_waits(const sw_check *c, char *err)
{
    if (c->n_waiting == 0)
        return 0;
    for (uint32_t i = 0; i < c->n_live; i++)
        if (c->w[c->live[i]].state == SW_WORKER_WAITING)
            return sw__ck_broken(c, err, "left worker %u waiting", c->live[i]);
    return 0;
}

int sw__ck_drops_exactly_late(const sw_check *c, char *err)
{
    if (c->g.start != SW_EV_PUSH)
        return 0;
    bool late = c->g.push_ver < c->g.push_V;
    if (late && !c->g.dropped)
        return sw__ck_broken(c, err, "accepted a gradient of version %llu at version %llu",
                         (unsigned long long)c->g.push_ver, (unsigned long long)c->g.push_V);
    if (!late && c->g.dropped)
        return sw__ck_broken(c, err, "dropped a gradient of the current version %llu",
                         (unsigned long long)c->g.push_V);
    return 0;
}

int sw__ck_agg_scale(const sw_check *c, bool mean, char *err)
{
    if (!c->g.applied)
        return 0;
    float want = mean ? 1.0f : (float)c->g.apply.n;
    if (c->g.apply.lr_scale != want)
        return sw__ck_broken(c, err, "applied %u gradients with the learning rate scaled by %g, "
                         "not %g (agg=%s)", c->g.apply.n, (double)c->g.apply.lr_scale,
                         (double)want, mean ? "mean" : "sum");
    return 0;
}

int sw__ck_unit_scale(const sw_check *c, const sw_event *ev, char *err)
{
    if (ev->kind == SW_EV_APPLY && ev->lr_scale != 1.0f)
        return sw__ck_broken(c, err, "scaled the learning rate by %g, which it never does",
                         (double)ev->lr_scale);
    return 0;
}

bool sw__ck_agg_mean(sw_spec *spec) { return strcmp(sw_spec_str(spec, "agg", "sum"), "mean") == 0; }
