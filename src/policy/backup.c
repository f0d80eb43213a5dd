/* backup:k=K or backup:b=B — synchronous SGD with backup workers (Chen et al., in the DBW paper
 * 001): the first k gradients computed at the current version are applied and everyone waiting
 * is released; the late ones, now of an old version, are dropped. b=B names the backups
 * instead, so that k = live workers - B follows workers that join and leave (a fixed-k system
 * such as TensorFlow's SyncReplicasOptimizer cannot).
 *
 * agg=sum (default) applies lr times the sum of the k gradients, which is the DBW paper's rule of
 * a learning rate proportional to k, and makes backup:k=n exactly bsp; agg=mean applies lr times
 * their mean.
 */
#include <string.h>

#include "policy_internal.h"
#include "syncwise/err.h"
#include "syncwise/policy.h"

typedef struct backup_state {
    long k, b; /* b < 0: fixed k */
    bool mean;
} backup_state;

int sw__parse_agg(sw_spec *spec, bool *mean, char *err)
{
    const char *agg = sw_spec_str(spec, "agg", "sum");
    *mean = strcmp(agg, "mean") == 0;
    if (!*mean && strcmp(agg, "sum") != 0)
        return sw_fail(err, SW_EINVAL, "%s: agg='%s' is not sum or mean", spec->name, agg);
    return 0;
}

static int backup_init(void *state, sw_spec *spec, const sw_engine_view *v,
                       const sw_policy_env *env, char *err)
{
    (void)v, (void)env;
    backup_state *st = state;
    st->k = -1;
    st->b = -1;
    int rc;
    if ((rc = sw_spec_int(spec, "k", 1, 1 << 24, &st->k, err)) ||
        (rc = sw_spec_int(spec, "b", 0, 1 << 24, &st->b, err)) ||
        (rc = sw__parse_agg(spec, &st->mean, err)))
        return rc;
    if ((st->k < 0) == (st->b < 0))
        return sw_fail(err, SW_EINVAL, "backup: give exactly one of k=K (gradients to wait "
                                       "for) and b=B (backup workers)");
    return 0;
}

static uint32_t current_k(const backup_state *st, const sw_engine_view *v)
{
    if (st->b < 0)
        return (uint32_t)st->k;
    return v->n_live > (uint32_t)st->b + 1 ? v->n_live - (uint32_t)st->b : 1;
}

static void backup_push(void *state, const sw_engine_view *v, const sw_push *p, sw_decision *d)
{
    const backup_state *st = state;
    sw__kofn_push(current_k(st, v), st->mean, v, p, d);
}

static void backup_settle(void *state, const sw_engine_view *v, sw_decision *d)
{
    const backup_state *st = state;
    sw__kofn_settle(current_k(st, v), st->mean, v, d);
}

static void backup_leave(void *state, const sw_engine_view *v, uint32_t w, sw_decision *d)
{
    (void)w;
    backup_settle(state, v, d);
}

static void backup_join(void *state, const sw_engine_view *v, uint32_t w, sw_decision *d)
{
    const backup_state *st = state;
    sw__kofn_join(current_k(st, v), st->mean, v, w, d);
}

const sw_policy_ops sw_policy_backup = {
    .name = "backup",
    .keys = "k, b, agg",
    .help = "backup workers: apply the first k=K gradients of each version (or k = live - b), "
            "drop the late ones; agg=sum (lr proportional to k) or mean",
    .state_size = sizeof(backup_state),
    .init = backup_init,
    .on_push = backup_push,
    .on_leave = backup_leave,
    .on_join = backup_join,
    .on_tick = backup_settle,
};
