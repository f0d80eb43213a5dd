/* Promises of one's own: a policy registered by a caller or a plugin may bring the predicate it
 * promises (sw_promise_ops, syncwise/check.h). One adapter runs any of them as the checker runs
 * its own promises: the callbacks see the replay through the public accessors, and what they
 * find broken is reported and placed as a built-in promise's is. */
#include <stdlib.h>
#include <string.h>

#include "check_internal.h"
#include "syncwise/policy.h"

static const sw_promise_ops *registered[SW_POLICY_MAX_REGISTERED];
static int n_registered;

const sw_promise_ops *sw__ck_own_promise(const char *policy)
{
    for (int i = 0; i < n_registered; i++)
        if (strcmp(registered[i]->policy, policy) == 0)
            return registered[i];
    return NULL;
}

int sw_check_register_promise(const sw_promise_ops *ops, char *err)
{
    if (!ops || !ops->policy || !sw_policy_find(ops->policy))
        return sw_fail(err, SW_EINVAL, "a promise names a registered policy ('%s' is not one)",
                       ops && ops->policy ? ops->policy : "");
    const ck_promise *known = sw__ck_promise_for(ops->policy);
    if (known)
        return sw_fail(err, SW_EINVAL, "'%s' has %s", ops->policy,
                       known == &sw__promise_own ? "a promise already"
                                                 : "the checker's own promise");
    if (n_registered == SW_POLICY_MAX_REGISTERED)
        return sw_fail(err, SW_ERANGE, "more than %d promises of one's own",
                       SW_POLICY_MAX_REGISTERED);
    registered[n_registered++] = ops;
    return 0;
}

void sw_check_call_facts(const sw_check *c, sw_check_call *out)
{
    const ck_group *g = &c->g;
    *out = (sw_check_call){.started = g->started,
                           .start = g->start,
                           .worker = g->worker,
                           .push_version = g->push_ver,
                           .push_V = g->push_V,
                           .dropped = g->dropped,
                           .applied = g->applied,
                           .applied_n = g->applied ? g->apply.n : 0,
                           .lr_scale = g->applied ? g->apply.lr_scale : 1,
                           .released = g->released,
                           .liveness = g->liveness,
                           .pusher_released = g->pusher_released,
                           .live_at_decision = g->decided ? g->live_at_decision : c->n_live,
                           .live = c->n_live,
                           .waiting = c->n_waiting,
                           .buffered = c->n_buf,
                           .slots = c->slots,
                           .V = c->V};
}

/* The adapter's state: whose promise, and that promise's own state. */
typedef struct own_promise {
    const sw_promise_ops *ops;
    void *state;
} own_promise;

static int own_init(void *state, sw_spec *spec, sw_check *c, char *err)
{
    (void)c;
    own_promise *p = state;
    p->ops = sw__ck_own_promise(spec->name);
    if (!(p->state = calloc(1, p->ops->state_size ? p->ops->state_size : 1)))
        return sw_fail(err, SW_ENOMEM, "out of memory");
    char why[SW_ERR_LEN] = "";
    if (p->ops->init && p->ops->init(p->state, spec, why))
        return sw_fail(err, SW_EINVAL, "%s", why[0] ? why : "its promise refused the spec");
    return 0;
}

/* A callback's verdict: 0, or the broken promise as the checker reports its own. */
static int verdict(const sw_check *c, int rc, const char *why, char *err)
{
    return rc ? sw__ck_broken(c, err, "%s", why[0] ? why : "broke its promise (it said no more)") : 0;
}

/* Rule 5 first (docs/promises.md): a policy of one's own never leans on the liveness rule,
 * whatever its promise says or leaves unsaid. */
static int own_event(void *state, sw_check *c, const sw_event *ev, char *err)
{
    const own_promise *p = state;
    char why[SW_ERR_LEN] = "";
    int rc = sw__ck_no_liveness(c, ev, err);
    if (rc || !p->ops->on_event)
        return rc;
    return verdict(c, p->ops->on_event(p->state, c, ev, why), why, err);
}

static int own_end(void *state, sw_check *c, char *err)
{
    const own_promise *p = state;
    char why[SW_ERR_LEN] = "";
    return p->ops->on_end ? verdict(c, p->ops->on_end(p->state, c, why), why, err) : 0;
}

static void own_fini(void *state)
{
    own_promise *p = state;
    if (p->ops && p->ops->fini && p->state)
        p->ops->fini(p->state);
    free(p->state);
}

/* The policy's grants are its own promise's to judge, as its barriers are. */
const ck_promise sw__promise_own = {
    .policy = "",
    .state_size = sizeof(own_promise),
    .grants = true,
    .init = own_init,
    .on_event = own_event,
    .on_end = own_end,
    .fini = own_fini,
};
