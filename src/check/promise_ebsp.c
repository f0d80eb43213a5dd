/* The promise of ebsp:R (ElasticBSP, thesis 002, chapter 6): every gradient is applied at once.
 * Monitoring: workers go on at once until every live worker has pushed twice since the last
 * barrier. Then the barrier search's answer is logged as one grant per live worker, each of
 * 1..R steps counting the step in flight. Prediction: a worker goes on after a push while steps
 * of its grant are left, and then waits; joiners wait too; when every live worker waits, the
 * barrier releases them all together and monitoring starts again. Workers stop at the searched
 * barrier: exactly where their grants end. */
#include <stdlib.h>

#include "check_internal.h"
#include "syncwise/policy.h"

typedef struct ebsp_promise {
    uint32_t R;
    bool predicting;
    uint32_t *quota;  /* per worker: granted steps left (prediction) */
    uint32_t *since;  /* per worker: pushes since the last barrier */
    uint32_t grants;  /* grants in the engine call being judged */
    bool had_quota;   /* the push being judged spent a granted step */
} ebsp_promise;

static int ebsp_init(void *state, sw_spec *spec, sw_check *c, char *err)
{
    ebsp_promise *st = state;
    long R = SW_EBSP_DEFAULT_R;
    int rc = sw_spec_int(spec, "R", 1, 100000, &R, err);
    st->R = (uint32_t)R;
    st->quota = calloc(c->slots, sizeof *st->quota);
    st->since = calloc(c->slots, sizeof *st->since);
    return rc ? rc : st->quota && st->since ? 0 : SW_ENOMEM;
}

static void ebsp_free(void *state)
{
    ebsp_promise *st = state;
    free(st->quota);
    free(st->since);
}

static int grant(ebsp_promise *st, sw_check *c, const sw_event *ev, char *err)
{
    if (st->predicting)
        return sw__ck_broken(c, err, "granted worker %u steps before the barrier", ev->worker);
    if (ev->n == 0 || ev->n > st->R)
        return sw__ck_broken(c, err, "granted worker %u %u steps, outside [1, R=%u]", ev->worker,
                         ev->n, st->R);
    for (uint32_t i = 0; st->grants == 0 && i < c->n_live; i++)
        if (st->since[c->live[i]] < 2)
            return sw__ck_broken(c, err, "predicted before worker %u pushed twice since the barrier",
                             c->live[i]);
    if (c->w[ev->worker].grants_in_call > 1)
        return sw__ck_broken(c, err, "granted worker %u twice in one barrier search", ev->worker);
    st->quota[ev->worker] = ev->n;
    st->grants++;
    return 0;
}

/* Monitoring is over: every live worker (one at least) pushed twice since the barrier. */
static bool monitored(const ebsp_promise *st, const sw_check *c)
{
    for (uint32_t i = 0; i < c->n_live; i++)
        if (st->since[c->live[i]] < 2)
            return false;
    return c->n_live > 0;
}

/* The pusher of the engine call being judged still holds granted steps. */
static bool pusher_goes_on(const ebsp_promise *st, const sw_check *c)
{
    return c->g.start == SW_EV_PUSH && st->had_quota && st->quota[c->g.worker] > 0;
}

/* The barrier: every live worker waits, its granted steps spent. */
static bool at_barrier(const ebsp_promise *st, const sw_check *c)
{
    const ck_group *g = &c->g;
    return st->predicting && g->live_at_decision > 0 &&
           g->waiting_at_decision == g->live_at_decision && !pusher_goes_on(st, c);
}

/* A release in prediction: the pusher with steps left, or everyone at the barrier. */
static int release(ebsp_promise *st, sw_check *c, const sw_event *ev, char *err)
{
    bool pusher = c->g.start == SW_EV_PUSH && ev->worker == c->g.worker;
    if (!st->predicting || st->grants > 0 || at_barrier(st, c))
        return 0;
    if (pusher && pusher_goes_on(st, c))
        return 0;
    return sw__ck_broken(c, err, "released worker %u before the barrier, its granted steps spent",
                     ev->worker);
}

static int ebsp_event(void *state, sw_check *c, const sw_event *ev, char *err)
{
    ebsp_promise *st = state;
    int rc = sw__ck_no_liveness(c, ev, err);
    if (!rc)
        rc = sw__ck_unit_scale(c, ev, err);
    if (rc)
        return rc;
    uint32_t w = ev->worker;
    switch (ev->kind) {
    case SW_EV_PUSH:
        st->since[w]++;
        st->had_quota = st->predicting && st->quota[w] > 0;
        st->quota[w] -= st->had_quota;
        return 0;
    case SW_EV_GRANT: return grant(st, c, ev, err);
    case SW_EV_RELEASE: return release(st, c, ev, err);
    case SW_EV_JOIN: st->since[w] = st->quota[w] = 0; return 0;
    default: return 0;
    }
}

/* The engine call as a whole: grants for every live worker at once; in prediction, a pusher
 * with steps left goes on, and a barrier releases everyone and ends the superstep. */
static int ebsp_end(void *state, sw_check *c, char *err)
{
    ebsp_promise *st = state;
    const ck_group *g = &c->g;
    int rc = sw__ck_push_applied_at_once(c, err);
    bool barrier = at_barrier(st, c);
    if (!rc && st->grants > 0 && st->grants != c->n_live)
        rc = sw__ck_broken(c, err, "granted %u of %u live workers", st->grants, c->n_live);
    else if (!rc && st->grants == 0 && st->predicting && pusher_goes_on(st, c) &&
             !g->pusher_released)
        rc = sw__ck_broken(c, err, "kept worker %u waiting with granted steps left", g->worker);
    else if (!rc && st->grants == 0 && !st->predicting && monitored(st, c))
        rc = sw__ck_broken(c, err, "every live worker pushed twice since the barrier, and no "
                       "barrier search's grants followed");
    else if (!rc && !st->predicting) /* monitoring, the call of the search's grants too */
        rc = sw__ck_nobody_waits(c, err);
    if (st->grants > 0)
        st->predicting = true;
    else if (barrier || (st->predicting && c->n_live == 0)) { /* nobody left: over too */
        if (g->released != g->waiting_at_decision)
            rc = rc ? rc : sw__ck_broken(c, err, "released %u of %u at the barrier", g->released,
                                     g->waiting_at_decision);
        st->predicting = false;
        for (uint32_t i = 0; i < c->n_live; i++) /* a joiner's starts at 0 (SW_EV_JOIN) */
            st->since[c->live[i]] = 0;
    }
    st->grants = 0;
    st->had_quota = false;
    return rc;
}

const ck_promise sw__promise_ebsp = {
    .policy = "ebsp", .state_size = sizeof(ebsp_promise), .grants = true, .init = ebsp_init,
    .on_event = ebsp_event, .on_end = ebsp_end, .fini = ebsp_free,
};
