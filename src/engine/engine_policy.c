/* The engine's policy: made from its spec (a registered policy, or the caller's own table) and
 * checked as the engine takes it, and replaced by another between two events. */
#include "syncwise/engine.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "syncwise/err.h"
#include "syncwise/policy.h"

#include "engine_internal.h"

int sw_engine_check_policy(const char *policy, uint32_t slots, char *err)
{
    sw_engine_params p = sw_engine_default_params();
    p.policy = policy;
    p.max_workers = slots;
    sw_engine *e = NULL;
    int rc = sw_engine_new(&e, &p, err);
    sw_engine_free(e);
    return rc;
}

int sw__engine_make_policy(sw_engine *e, const char *text, const sw_policy_ops *own,
                           const sw_policy_ops **ops, void **state, float *lr, unsigned *wants,
                           char *err)
{
    sw_spec spec;
    int rc = sw_spec_parse(&spec, text, err);
    if (rc)
        return rc;
    double spec_lr = NAN;
    if ((rc = sw_spec_double(&spec, SW_POLICY_LR_KEY, 0, 1e6, &spec_lr, err)))
        return rc;
    if (own && (!own->on_push || !own->name || strcmp(own->name, spec.name)))
        return sw_fail(err, SW_EINVAL, "engine: the policy table given %s",
                       !own->on_push ? "has no on_push (it is required)"
                       : !own->name  ? "has no name"
                                     : "is named otherwise than the spec (its name first)");
    const sw_policy_ops *o = own ? own : sw_policy_find(spec.name);
    if (!o)
        return sw_fail(err, SW_ENOTFOUND, "unknown policy '%s' (known: %s; a plugin's policies "
                       "are known once SYNCWISE_PLUGINS names it)", spec.name,
                       sw_policy_names());
    unsigned w = sw_policy_wants(o, &spec);
    if (e->p.concurrent && !o->concurrent)
        return sw_fail(err, SW_EINVAL,
                       "policy '%s' cannot run with concurrent applies "
                       "(--apply-threads): it %s, while concurrent applies need each gradient "
                       "applied alone on arrival, unseen by the policy (asp, ssp, dssp, ebsp)",
                       spec.name,
                       (w & SW_WANT_LOSS)      ? "decides from the loss after each apply"
                       : (w & SW_WANT_SQ_NORM) ? "reads the gradients' norms"
                                               : "aggregates or drops gradients");
    void *st = calloc(1, o->state_size ? o->state_size : 1);
    if (!st)
        return sw_fail(err, SW_ENOMEM, "out of memory for policy state");
    rc = o->init ? o->init(st, &spec, &e->view, &e->env, err) : 0;
    if (!rc)
        rc = sw_policy_spec_finish(&spec, o, err);
    if (rc) {
        if (o->fini)
            o->fini(st);
        free(st);
        return rc;
    }
    *ops = o;
    *state = st;
    *lr = (float)spec_lr;
    *wants = w;
    return 0;
}

int sw_engine_switch_policy(sw_engine *e, const char *policy, double t, sw_engine_result *out,
                            char *err)
{
    *out = (sw_engine_result){.wake_at = e->wake_at, .released = e->released};
    if (e->broken[0])
        return sw_fail(err, SW_EBUG, "%s", e->broken);
    if (sw__engine_spec_bad(policy, err))
        return SW_EINVAL;
    if (!sw__engine_time_ok(e, t))
        return sw_fail(err, SW_ESTATE, "engine: a switch at t=%g, before the last event's "
                       "time (%g)", t, e->last_t);
    const sw_policy_ops *ops;
    void *state;
    float lr;
    unsigned wants;
    e->view.now = t;
    int rc = sw__engine_make_policy(e, policy, NULL, &ops, &state, &lr, &wants, err);
    if (rc)
        return rc;
    if (e->ops->fini)
        e->ops->fini(e->state);
    free(e->state);
    e->ops = ops;
    e->state = state;
    e->policy_lr = lr;
    e->view.lr = sw_engine_lr(e);
    e->wants = wants;
    e->wake_at = -1; /* the old policy's wake-up means nothing to the new one */
    snprintf(e->spec, sizeof e->spec, "%s", policy);
    sw__engine_emit(e, &(sw_event){.kind = SW_EV_SWITCH, .t = t, .V = e->view.version, .reason = e->spec});
    rc = sw__engine_tick(e, t, out);
    return rc ? sw_fail(err, rc, "%s", e->broken) : 0;
}

