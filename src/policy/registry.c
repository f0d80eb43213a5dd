/* The policy registry (name -> operations) and helpers every policy shares. */
#include <string.h>

#include "syncwise/policy.h"

extern const sw_policy_ops sw_policy_bsp, sw_policy_asp, sw_policy_ssp, sw_policy_sync,
    sw_policy_actions, sw_policy_dssp, sw_policy_ebsp, sw_policy_backup, sw_policy_dbw,
    sw_policy_bdbw, sw_policy_rlp;

const sw_policy_ops *const sw_policies[] = {
    &sw_policy_bsp,  &sw_policy_asp,    &sw_policy_ssp, &sw_policy_sync,
    &sw_policy_dssp, &sw_policy_ebsp,   &sw_policy_backup, &sw_policy_dbw,
    &sw_policy_bdbw, &sw_policy_actions, &sw_policy_rlp, NULL,
};

const sw_policy_ops *sw_policy_find(const char *name)
{
    for (int i = 0; sw_policies[i]; i++)
        if (strcmp(sw_policies[i]->name, name) == 0)
            return sw_policies[i];
    return NULL;
}

const char *sw_policy_names(void)
{
    static char names[256];
    if (!names[0])
        for (int i = 0; sw_policies[i]; i++) {
            if (i)
                strncat(names, ", ", sizeof names - strlen(names) - 1);
            strncat(names, sw_policies[i]->name, sizeof names - strlen(names) - 1);
        }
    return names;
}

void sw_policy_release_all(const sw_engine_view *v, sw_decision *d)
{
    for (uint32_t w = 0; w < v->n_slots; w++)
        if (v->workers[w].state == SW_WORKER_WAITING)
            sw_decision_release(d, w);
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
    for (uint32_t w = 0; w < v->n_slots; w++) {
        const sw_worker_info *k = &v->workers[w];
        /* A joiner starts at the slowest clock: no step ahead. */
        if (k->state == SW_WORKER_WAITING && (k->fresh || k->clock - v->min_live_clock <= bound))
            sw_decision_release(d, w);
    }
}

bool sw_policy_all_waiting(const sw_engine_view *v)
{
    return v->n_live > 0 && v->n_waiting == v->n_live;
}
