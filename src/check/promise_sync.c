/* The promises of the policies that aggregate several gradients per apply: bsp (one per live
 * worker, at a barrier), backup workers and DBW (the first k of each version; the late ones
 * dropped), and ElasticDL's synchronous mode (the mean of grads_to_wait current ones). */
#include <string.h>

#include "check_internal.h"
#include "syncwise/policy.h"

/* An apply holds only gradients of the version it updates. */
static int all_current(const sw_check *c, char *err)
{
    const ck_apply *a = &c->g.apply;
    if (a->stale)
        return sw__ck_broken(c, err, "applied %u gradients of a version older than %llu", a->stale,
                         (unsigned long long)(c->V - 1));
    return 0;
}

/* ... and at most one per worker among those pushed under the policy in force. */
static int current_and_once(const sw_check *c, char *err)
{
    int rc = all_current(c, err);
    if (!rc && c->g.apply.twice != UINT32_MAX)
        rc = sw__ck_broken(c, err, "applied two gradients of worker %u together", c->g.apply.twice);
    return rc;
}

/* bsp: an apply only at a barrier (every live worker waits), holding one gradient of every
 * worker released since the last one; then everyone is released, and nobody before. A joiner
 * starts at once only when nobody has pushed since the last barrier (not even a worker that
 * left since). */
typedef struct bsp_promise {
    bool mean;
} bsp_promise;

static int bsp_init(void *state, sw_spec *spec, sw_check *c, char *err)
{
    (void)c, (void)err;
    ((bsp_promise *)state)->mean = sw__ck_agg_mean(spec);
    return 0;
}

static int bsp_event(void *state, sw_check *c, const sw_event *ev, char *err)
{
    const bsp_promise *st = state;
    int rc = sw__ck_no_liveness(c, ev, err);
    if (rc || ev->kind != SW_EV_APPLY || (rc = sw__ck_agg_scale(c, st->mean, err)))
        return rc;
    const ck_apply *a = &c->g.apply;
    if (!a->all_waiting)
        return sw__ck_broken(c, err, "applied before the barrier: not every live worker waited");
    if (a->missing != UINT32_MAX)
        return sw__ck_broken(c, err, "applied at the barrier without a gradient of worker %u",
                         a->missing);
    return a->twice != UINT32_MAX
               ? sw__ck_broken(c, err, "applied two gradients of worker %u in one superstep",
                           a->twice)
               : 0;
}

static int bsp_end(void *state, sw_check *c, char *err)
{
    (void)state;
    const ck_group *g = &c->g;
    if (g->released == 0)
        return 0;
    if (g->start == SW_EV_JOIN && g->released == 1 && g->waiting_at_decision == 1 &&
        c->n_buf == 0)
        return 0; /* a joiner at a superstep's start: nobody waits, nothing is buffered */
    if (g->waiting_at_decision != g->live_at_decision || g->released != g->waiting_at_decision)
        return sw__ck_broken(c, err, "released %u of %u waiting workers, %u live: only a barrier "
                         "releases, and all at once", g->released, g->waiting_at_decision,
                         g->live_at_decision);
    if (c->n_buf > 0)
        return sw__ck_broken(c, err, "passed a barrier without applying its %u gradients", c->n_buf);
    return 0;
}

const ck_promise sw__promise_bsp = {
    .policy = "bsp", .state_size = sizeof(bsp_promise), .judges_barriers = true, .init = bsp_init,
    .on_event = bsp_event, .on_end = bsp_end,
};

/* backup:k|b, dbw and bdbw: k-of-n. A push of an older version is dropped and its worker
 * released to pull; a current one waits. An apply holds only current gradients, one per worker;
 * decided on a push it holds exactly k (backup: min(k, live), with k = live - b under b=B;
 * dbw: some k in [1, live]), fewer only when nobody computes; after it everyone waiting goes on.
 * Gradients a departure or a switch left (carried over, or of a worker gone) may make an apply
 * decided then hold more. */
typedef struct kofn_promise {
    long k, b;    /* backup: one of them, the other < 0; dbw: both < 0 */
    bool mean;
} kofn_promise;

static int backup_init(void *state, sw_spec *spec, sw_check *c, char *err)
{
    kofn_promise *st = state;
    st->k = st->b = -1;
    st->mean = sw__ck_agg_mean(spec);
    int rc = sw_spec_int(spec, "k", 1, 1 << 24, &st->k, err);
    if (!rc)
        rc = sw_spec_int(spec, "b", 0, 1 << 24, &st->b, err);
    if (!rc && (st->k < 0) == (st->b < 0))
        rc = sw__ck_broken(c, err, "a spec no engine takes: give exactly one of k and b");
    return rc;
}

static int dbw_init(void *state, sw_spec *spec, sw_check *c, char *err)
{
    (void)c, (void)err;
    kofn_promise *st = state;
    st->k = st->b = -1;
    st->mean = sw__ck_agg_mean(spec);
    return 0;
}

/* The number of gradients an apply decided on a push must hold; 0 when only [1, live] is known. */
static uint32_t kofn_need(const kofn_promise *st, uint32_t live)
{
    if (st->k < 0 && st->b < 0)
        return 0;
    uint32_t k = st->k >= 0 ? (uint32_t)st->k
                 : live > (uint32_t)st->b + 1 ? live - (uint32_t)st->b : 1;
    return k < live ? k : live;
}

static int kofn_count(const kofn_promise *st, const sw_check *c, char *err)
{
    const ck_apply *a = &c->g.apply;
    uint32_t live = c->n_live, need = kofn_need(st, live);
    if (a->carried > 0)
        return 0; /* the first apply after a switch: its count is the old policy's doing */
    if (c->g.start != SW_EV_PUSH) { /* a departure: apply once k are in, or nobody computes */
        if (need == 0 || a->n >= need || a->all_waiting)
            return 0;
        return sw__ck_broken(c, err, "applied %u gradients on a departure, fewer than k = %u, while "
                         "workers still computed", a->n, need);
    }
    if (need == 0 ? a->n <= live : a->n == need || (a->n < need && a->all_waiting))
        return 0;
    if (need == 0)
        return sw__ck_broken(c, err, "applied %u gradients with %u live workers: k is in [1, live]",
                         a->n, live);
    return sw__ck_broken(c, err, "applied %u gradients, not k = %u (%u live)", a->n, need, live);
}

/* A release: the dropped pusher, everyone after an apply, everyone when nobody computes and
 * nothing is buffered, or a joiner, which starts at once. */
static int kofn_release(const sw_check *c, const sw_event *ev, char *err)
{
    const ck_group *g = &c->g;
    bool dropped_pusher = g->dropped && ev->worker == g->worker;
    if (g->start == SW_EV_JOIN && ev->worker == g->worker && !g->applied &&
        c->w[ev->worker].own_in_buffer > 0)
        return sw__ck_broken(c, err, "released joiner %u while its slot's gradient waits in the "
                         "buffer: it goes on at the next apply", ev->worker);
    if (g->start == SW_EV_JOIN && ev->worker == g->worker)
        return 0;
    bool settle = !g->applied && g->waiting_at_decision == g->live_at_decision &&
                  c->n_buf == 0;
    if (ev->reason[0] == 'l' || dropped_pusher || g->applied || settle)
        return 0;
    return sw__ck_broken(c, err, "released worker %u with no apply and no drop", ev->worker);
}

static int kofn_event(void *state, sw_check *c, const sw_event *ev, char *err)
{
    const kofn_promise *st = state;
    int rc = sw__ck_no_liveness(c, ev, err);
    if (rc)
        return rc;
    if (ev->kind == SW_EV_RELEASE)
        return kofn_release(c, ev, err);
    if (ev->kind != SW_EV_APPLY)
        return 0;
    if ((rc = current_and_once(c, err)) || (rc = sw__ck_agg_scale(c, st->mean, err)))
        return rc;
    return kofn_count(st, c, err);
}

static int kofn_end(void *state, sw_check *c, char *err)
{
    const kofn_promise *st = state;
    const ck_group *g = &c->g;
    int rc = sw__ck_drops_exactly_late(c, err);
    if (rc)
        return rc;
    uint32_t need = kofn_need(st, c->n_live), held = c->n_buf_own; /* pushed under it */
    if (need > 0 && held >= need)
        return sw__ck_broken(c, err, "kept %u current gradients unapplied with k = %u", held, need);
    if (g->dropped && !g->pusher_released)
        return sw__ck_broken(c, err, "kept worker %u waiting after dropping its gradient", g->worker);
    if (g->applied && g->released != g->waiting_at_decision)
        return sw__ck_broken(c, err, "released %u of %u waiting workers after an apply",
                         g->released, g->waiting_at_decision);
    /* Without an apply, beyond the dropped pusher or the joiner, only everyone goes on */
    bool one_allowed = g->dropped || g->start == SW_EV_JOIN;
    if (!g->applied && g->released > (one_allowed ? 1u : 0u) &&
        g->released != g->waiting_at_decision)
        return sw__ck_broken(c, err, "released %u of %u waiting workers without an apply: with "
                         "nothing buffered, all go on together", g->released,
                         g->waiting_at_decision);
    return 0;
}

const ck_promise sw__promise_backup = {
    .policy = "backup", .state_size = sizeof(kofn_promise), .init = backup_init,
    .on_event = kofn_event, .on_end = kofn_end,
};

const ck_promise sw__promise_dbw = {
    .policy = "dbw", .state_size = sizeof(kofn_promise), .init = dbw_init,
    .on_event = kofn_event, .on_end = kofn_end,
};

const ck_promise sw__promise_bdbw = {
    .policy = "bdbw", .state_size = sizeof(kofn_promise), .init = dbw_init,
    .on_event = kofn_event, .on_end = kofn_end,
};

/* sync:grads_to_wait=k (ElasticDL): a push of an older version is dropped; nobody ever waits;
 * an apply is the mean of exactly k gradients of the current version (more only when it holds
 * gradients carried over a switch). */
typedef struct sync_promise {
    uint32_t k;
} sync_promise;

static int sync_init(void *state, sw_spec *spec, sw_check *c, char *err)
{
    long k = SW_SYNC_DEFAULT_GRADS;
    int rc = sw_spec_int(spec, "grads_to_wait", 1, 1 << 24, &k, err);
    ((sync_promise *)state)->k = (uint32_t)k;
    if (!rc && k > (long)c->slots)
        rc = sw__ck_broken(c, err, "grads_to_wait=%ld exceeds the %u worker slots, which the policy "
                       "refuses", k, c->slots);
    return rc;
}

static int sync_event(void *state, sw_check *c, const sw_event *ev, char *err)
{
    const sync_promise *st = state;
    int rc = sw__ck_no_liveness(c, ev, err);
    if (rc || ev->kind != SW_EV_APPLY)
        return rc;
    const ck_apply *a = &c->g.apply;
    if ((rc = all_current(c, err)) || (rc = sw__ck_agg_scale(c, true, err)))
        return rc;
    if (a->n == st->k || (a->n > st->k && a->carried > 0))
        return 0;
    return sw__ck_broken(c, err, "applied %u gradients, not grads_to_wait=%u", a->n, st->k);
}

static int sync_end(void *state, sw_check *c, char *err)
{
    (void)state;
    int rc = sw__ck_drops_exactly_late(c, err);
    return rc ? rc : sw__ck_nobody_waits(c, err);
}

const ck_promise sw__promise_sync = {
    .policy = "sync", .state_size = sizeof(sync_promise), .init = sync_init,
    .on_event = sync_event, .on_end = sync_end,
};
