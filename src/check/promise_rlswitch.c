/* rlswitch: each stretch is decided by bsp, ssp:s=4 or asp, which the log does not name, so the
 * promise is what all three keep and their hand-overs too: no gradient is dropped, the liveness
 * rule is never needed, and an apply scales the learning rate by 1 (the policies that apply on
 * arrival, and the first apply of one taking over bsp's buffer) or, in a barrier with every live
 * worker waiting, by its gradients (bsp's agg=sum).
 *
 * With choose=once the first pick decides the whole run, so the log must keep one of the three
 * policies' own promises from end to end: each is followed alongside, and the run breaks the
 * promise when the last of them breaks. */
#include <stddef.h>
#include <string.h>

#include "check_internal.h"
#include "syncwise/rl.h"

extern const ck_promise sw__promise_bsp, sw__promise_ssp, sw__promise_asp;

typedef struct rlswitch_promise {
    bool once;
    const ck_promise *sub[SW_RL_ACTIONS];
    /* each sub-promise's state (sizes checked at init), aligned for any of its fields */
    _Alignas(max_align_t) uint8_t state[SW_RL_ACTIONS][64];
    bool kept[SW_RL_ACTIONS];
    char broke[SW_RL_ACTIONS][SW_ERR_LEN];
} rlswitch_promise;

static int start_subs(rlswitch_promise *st, sw_check *c, char *err)
{
    static const ck_promise *const promises[] = {&sw__promise_bsp, &sw__promise_ssp,
                                                 &sw__promise_asp};
    for (int a = 0; a < SW_RL_ACTIONS; a++) {
        sw_spec spec;
        int rc = sw_spec_parse(&spec, sw_rl_stretch_policies[a], err);
        if (rc)
            return rc;
        st->sub[a] = promises[a];
        if (strcmp(spec.name, st->sub[a]->policy) || st->sub[a]->state_size > sizeof st->state[a])
            return sw_fail(err, SW_ESTATE, "rlswitch's promise: action %d is not %s", a,
                           st->sub[a]->policy);
        if (st->sub[a]->init && (rc = st->sub[a]->init(st->state[a], &spec, c, err)))
            return rc;
        st->kept[a] = true;
    }
    return 0;
}

static int rlswitch_init(void *state, sw_spec *spec, sw_check *c, char *err)
{
    rlswitch_promise *st = state;
    st->once = strcmp(sw_spec_str(spec, "choose", "stretch"), "once") == 0;
    return st->once ? start_subs(st, c, err) : 0;
}

/* Follows each promise still kept through one of its calls (on_event when ev is not NULL, else
 * on_end); broken when none is kept any more. */
static int follow(rlswitch_promise *st, sw_check *c, const sw_event *ev, char *err)
{
    int kept = 0, last = 0;
    for (int a = 0; a < SW_RL_ACTIONS; a++) {
        if (!st->kept[a])
            continue;
        const ck_promise *p = st->sub[a];
        int rc = ev ? (p->on_event ? p->on_event(st->state[a], c, ev, st->broke[a]) : 0)
                    : (p->on_end ? p->on_end(st->state[a], c, st->broke[a]) : 0);
        st->kept[a] = rc == 0;
        kept += st->kept[a];
        last = rc ? a : last;
    }
    if (kept)
        return 0;
    return sw__ck_broken(c, err,
                     "choose=once kept none of its policies' promises to the end; the "
                     "last to break: %s",
                     st->broke[last]);
}

static int rlswitch_event(void *state, sw_check *c, const sw_event *ev, char *err)
{
    rlswitch_promise *st = state;
    if (st->once)
        return follow(st, c, ev, err);
    if (ev->kind == SW_EV_DROP)
        return sw__ck_broken(c, err, "dropped the gradient of worker %u", ev->worker);
    return sw__ck_no_liveness(c, ev, err);
}

static int rlswitch_end(void *state, sw_check *c, char *err)
{
    rlswitch_promise *st = state;
    if (st->once)
        return follow(st, c, NULL, err);
    const ck_apply *a = &c->g.apply;
    if (!c->g.applied || a->lr_scale == 1.0f || (a->all_waiting && a->lr_scale == (float)a->n))
        return 0;
    return sw__ck_broken(c, err,
                     "applied %u gradients with the learning rate scaled by %g: neither 1 nor, "
                     "in a barrier of every live worker, their number",
                     a->n, (double)a->lr_scale);
}

static void rlswitch_fini(void *state)
{
    rlswitch_promise *st = state;
    for (int a = 0; a < SW_RL_ACTIONS; a++)
        if (st->once && st->sub[a] && st->sub[a]->fini)
            st->sub[a]->fini(st->state[a]);
}

const ck_promise sw__promise_rlswitch = {
    .policy = "rlswitch",
    .state_size = sizeof(rlswitch_promise),
    .judges_barriers = true, /* bsp's promise, followed when it chooses once */
    .init = rlswitch_init,
    .on_event = rlswitch_event,
    .on_end = rlswitch_end,
    .fini = rlswitch_fini,
};
