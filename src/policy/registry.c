/* The policy registry (name -> operations) and helpers every policy shares. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "syncwise/err.h"
#include "syncwise/policy.h"

extern const sw_policy_ops sw_policy_bsp, sw_policy_asp, sw_policy_ssp, sw_policy_sync,
    sw_policy_actions, sw_policy_dssp, sw_policy_ebsp, sw_policy_backup, sw_policy_dbw,
    sw_policy_bdbw, sw_policy_rlp, sw_policy_rlswitch;

const sw_policy_ops *const sw_policies[] = {
    &sw_policy_bsp,  &sw_policy_asp,      &sw_policy_ssp, &sw_policy_sync, &sw_policy_dssp,
    &sw_policy_ebsp, &sw_policy_backup,   &sw_policy_dbw, &sw_policy_bdbw, &sw_policy_actions,
    &sw_policy_rlp,  &sw_policy_rlswitch, NULL,
};

/* Policies of one's own (plugins). */
static const sw_policy_ops *registered[SW_POLICY_MAX_REGISTERED];
static int n_registered;

const sw_policy_ops *sw_policy_at(size_t i)
{
    static const size_t n_builtin = sizeof sw_policies / sizeof *sw_policies - 1;
    if (i < n_builtin)
        return sw_policies[i];
    return i - n_builtin < (size_t)n_registered ? registered[i - n_builtin] : NULL;
}

const sw_policy_ops *sw_policy_find(const char *name)
{
    const sw_policy_ops *o;
    for (size_t i = 0; (o = sw_policy_at(i)); i++)
        if (strcmp(o->name, name) == 0)
            return o;
    return NULL;
}

static bool is_builtin(const sw_policy_ops *ops)
{
    for (int i = 0; sw_policies[i]; i++)
        if (sw_policies[i] == ops)
            return true;
    return false;
}

/* A name specs and lists can carry: they are split at ':', ',', ';', '=', '@' and blanks. */
static bool good_name(const char *name)
{
    if (!name || !name[0])
        return false;
    for (const char *c = name; *c; c++)
        if (!isalnum((unsigned char)*c) && !strchr("_-.", *c))
            return false;
    return true;
}

int sw_policy_register(const sw_policy_ops *ops, char *err)
{
    if (!ops || !good_name(ops->name) || !ops->on_push)
        return sw_fail(err, SW_EINVAL, "a policy needs on_push and a name of letters, digits, "
                       "'_', '-' and '.' (specs and lists are split at the others): '%s'",
                       ops && ops->name ? ops->name : "(none)");
    const sw_policy_ops *had = sw_policy_find(ops->name);
    if (had)
        return sw_fail(err, SW_EINVAL, "a policy named '%s' exists already (%s)", ops->name,
                       had == ops ? "these very operations, registered twice"
                       : is_builtin(had) ? "built in"
                                         : "registered before");
    if (n_registered == SW_POLICY_MAX_REGISTERED)
        return sw_fail(err, SW_ERANGE, "more than %d policies of one's own",
                       SW_POLICY_MAX_REGISTERED);
    registered[n_registered++] = ops;
    return 0;
}

unsigned sw_policy_wants(const sw_policy_ops *ops, const sw_spec *spec)
{
    return ops->wants_of ? ops->wants_of(spec) : ops->wants;
}

unsigned sw_policy_spec_wants(const char *text)
{
    sw_spec spec;
    char err[SW_ERR_LEN];
    if (sw_spec_parse(&spec, text, err))
        return 0;
    const sw_policy_ops *ops = sw_policy_find(spec.name);
    return ops ? sw_policy_wants(ops, &spec) : 0;
}

int sw_policy_spec_finish(const sw_spec *spec, const sw_policy_ops *ops, char *err)
{
    char known[512];
    const char *keys = ops->keys ? ops->keys : ""; /* a plugin may name none */
    snprintf(known, sizeof known, "%s%s%s", keys, keys[0] ? ", " : "", SW_POLICY_LR_KEY);
    return sw_spec_finish(spec, known, err);
}

const char *sw_policy_names(void)
{
    static char names[1024];
    names[0] = '\0';
    const sw_policy_ops *o;
    for (size_t i = 0; (o = sw_policy_at(i)); i++)
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "",
                 o->name);
    return names;
}

void sw_policy_release_all(const sw_engine_view *v, sw_decision *d)
{
    for (uint32_t i = 0; i < v->n_live; i++)
        if (v->workers[v->live[i]].state == SW_WORKER_WAITING)
            sw_decision_release(d, v->live[i]);
}

void sw_policy_act(const sw_engine_view *v, uint32_t pusher, int action, sw_decision *d)
{
    if (action == SW_ACTION_PUSHER)
        sw_decision_release(d, pusher);
    else if (action == SW_ACTION_ALL)
        sw_policy_release_all(v, d);
}

void sw_policy_release_within(const sw_engine_view *v, uint64_t bound, sw_decision *d)
{
    for (uint32_t i = 0; i < v->n_live; i++) {
        const sw_worker_info *k = &v->workers[v->live[i]];
        /* A joiner starts at the slowest clock: no step ahead. */
        if (k->state == SW_WORKER_WAITING && (k->fresh || k->clock - v->min_live_clock <= bound))
            sw_decision_release(d, v->live[i]);
    }
}

bool sw_policy_all_waiting(const sw_engine_view *v)
{
    return v->n_live > 0 && v->n_waiting == v->n_live;
}

bool sw_policy_slot_buffered(const sw_engine_view *v, uint32_t w)
{
    return v->buffered > 0 && v->workers[w].buffered_for == v->version + 1;
}
