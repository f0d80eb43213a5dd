/* The promises of the policies that apply every gradient on arrival and differ in whom they let
 * go on: asp (everyone), ssp (a bounded lead), dssp (a bounded lead stretched by logged grants),
 * and the RLP action space (nobody, the pusher or all). */
#include <stdlib.h>
#include <string.h>

#include "check_internal.h"
#include "syncwise/policy.h"

/* asp: every gradient applied at once, nobody ever waits; lr_mod=staleness divides the learning
 * rate by the gradient's staleness. */
typedef struct asp_promise {
    bool staleness_lr;
} asp_promise;

static int asp_init(void *state, sw_spec *spec, sw_check *c, char *err)
{
    (void)c, (void)err;
    ((asp_promise *)state)->staleness_lr =
        strcmp(sw_spec_str(spec, "lr_mod", "none"), "staleness") == 0;
    return 0;
}

static int asp_event(void *state, sw_check *c, const sw_event *ev, char *err)
{
    const asp_promise *st = state;
    if (ev->kind != SW_EV_APPLY)
        return sw__ck_no_liveness(c, ev, err);
    if (c->g.start != SW_EV_PUSH)
        return sw__ck_broken(c, err, "applied outside a push");
    uint64_t staleness = c->g.push_V - c->g.push_ver;
    float want = st->staleness_lr && staleness > 0 ? 1.0f / (float)staleness : 1.0f;
    if (ev->lr_scale != want)
        return sw__ck_broken(c, err, "scaled the learning rate by %g for a gradient %llu versions "
                         "stale, not %g", (double)ev->lr_scale, (unsigned long long)staleness,
                         (double)want);
    return 0;
}

static int asp_end(void *state, sw_check *c, char *err)
{
    (void)state;
    int rc = sw__ck_push_applied_at_once(c, err);
    return rc ? rc : sw__ck_nobody_waits(c, err);
}

const ck_promise sw__promise_asp = {
    .policy = "asp", .state_size = sizeof(asp_promise), .init = asp_init,
    .on_event = asp_event, .on_end = asp_end,
};

/* ssp:s and dssp:lo,hi share the bound: no release more than `bound` steps ahead of the slowest
 * live worker, and no worker left waiting within it. */
static int lead_within(sw_check *c, uint32_t w, uint64_t bound, const char *name, char *err)
{
    uint64_t lead = sw__ck_lead(c, w);
    if (lead > bound)
        return sw__ck_broken(c, err, "released worker %u %llu steps ahead of the slowest live "
                         "worker (%s=%llu)", w, (unsigned long long)lead, name,
                         (unsigned long long)bound);
    return 0;
}

static int none_waits_within(sw_check *c, uint64_t bound, const char *name, char *err)
{
    uint32_t w = sw__ck_waiting_within(c, bound);
    if (w == UINT32_MAX)
        return 0;
    return sw__ck_broken(c, err, "left worker %u waiting %llu steps ahead of the slowest live "
                     "worker, within %s=%llu", w, (unsigned long long)sw__ck_lead(c, w), name,
                     (unsigned long long)bound);
}

typedef struct ssp_promise {
    uint64_t s;
} ssp_promise;

static int ssp_init(void *state, sw_spec *spec, sw_check *c, char *err)
{
    (void)c;
    long s = SW_SSP_DEFAULT_S;
    int rc = sw_spec_int(spec, "s", 0, 1000000, &s, err);
    ((ssp_promise *)state)->s = (uint64_t)s;
    return rc;
}

static int ssp_event(void *state, sw_check *c, const sw_event *ev, char *err)
{
    const ssp_promise *st = state;
    int rc = sw__ck_no_liveness(c, ev, err);
    if (!rc)
        rc = sw__ck_unit_scale(c, ev, err);
    if (!rc && ev->kind == SW_EV_RELEASE)
        rc = lead_within(c, ev->worker, st->s, "s", err);
    return rc;
}

static int ssp_end(void *state, sw_check *c, char *err)
{
    const ssp_promise *st = state;
    int rc = sw__ck_push_applied_at_once(c, err);
    return rc ? rc : none_waits_within(c, st->s, "s", err);
}

const ck_promise sw__promise_ssp = {
    .policy = "ssp", .state_size = sizeof(ssp_promise), .init = ssp_init,
    .on_event = ssp_event, .on_end = ssp_end,
};

/* dssp: ssp with s = lo, and grants (logged) beyond it. A grant goes to a pusher that is the
 * fastest live worker, more than lo ahead and with no granted step left, and is at most
 * min(hi - lo, hi - lead + 1) steps, its release being the first; a granted step is spent on
 * every push of its worker (thesis 002, Algorithm 1) and lost when the worker leaves. No
 * release is ever more than hi ahead. */
typedef struct dssp_promise {
    uint64_t lo, hi;
    uint32_t *quota; /* per worker: granted steps left */
    bool spent;      /* the push being decided spent a granted step */
} dssp_promise;

static int dssp_init(void *state, sw_spec *spec, sw_check *c, char *err)
{
    dssp_promise *st = state;
    long lo = SW_DSSP_DEFAULT_LO, hi = SW_DSSP_DEFAULT_HI;
    int rc;
    if ((rc = sw_spec_int(spec, "lo", 0, 1000000, &lo, err)) ||
        (rc = sw_spec_int(spec, "hi", 0, 1000000, &hi, err)))
        return rc;
    st->lo = (uint64_t)lo;
    st->hi = (uint64_t)hi;
    return (st->quota = calloc(c->slots, sizeof *st->quota)) ? 0 : SW_ENOMEM;
}

static int dssp_grant(dssp_promise *st, sw_check *c, const sw_event *ev, char *err)
{
    uint32_t w = ev->worker;
    uint64_t lead = sw__ck_lead(c, w);
    if (c->g.start != SW_EV_PUSH || w != c->g.worker)
        return sw__ck_broken(c, err, "granted worker %u steps outside its own push", w);
    if (c->w[w].grants_in_call > 1) /* a second would replace the first in the log's reading */
        return sw__ck_broken(c, err, "granted worker %u steps twice in one decision", w);
    if (st->spent || lead <= st->lo || c->w[w].clock != sw__ck_max_clock(c))
        return sw__ck_broken(c, err, "granted worker %u steps when it %s", w,
                         st->spent ? "still held granted steps"
                         : lead <= st->lo ? "was within lo" : "was not the fastest");
    uint64_t cap = st->hi - st->lo, fit = lead <= st->hi ? st->hi - lead + 1 : 0;
    cap = fit < cap ? fit : cap;
    if (ev->n == 0)
        return sw__ck_broken(c, err, "granted worker %u 0 steps: a grant is of 1 step at least", w);
    if (ev->n > cap)
        return sw__ck_broken(c, err, "granted worker %u, %llu steps ahead, %u steps: at most %llu "
                         "keep it within hi=%llu", w, (unsigned long long)lead, ev->n,
                         (unsigned long long)cap, (unsigned long long)st->hi);
    st->quota[w] = ev->n - 1; /* the release this grant comes with is its first step */
    return 0;
}

/* A release: within hi always; beyond lo only for the pusher, on a granted step. */
static int dssp_release(dssp_promise *st, sw_check *c, const sw_event *ev, char *err)
{
    int rc = lead_within(c, ev->worker, st->hi, "hi", err);
    bool pusher = c->g.start == SW_EV_PUSH && ev->worker == c->g.worker;
    if (!rc && sw__ck_lead(c, ev->worker) > st->lo && !(pusher && (st->spent || c->g.granted)))
        rc = sw__ck_broken(c, err, "released worker %u %llu steps ahead, beyond lo=%llu, without a "
                       "granted step", ev->worker, (unsigned long long)sw__ck_lead(c, ev->worker),
                       (unsigned long long)st->lo);
    return rc;
}

static int dssp_event(void *state, sw_check *c, const sw_event *ev, char *err)
{
    dssp_promise *st = state;
    int rc = sw__ck_no_liveness(c, ev, err);
    if (!rc)
        rc = sw__ck_unit_scale(c, ev, err);
    if (rc)
        return rc;
    switch (ev->kind) {
    case SW_EV_PUSH:
        st->spent = st->quota[ev->worker] > 0;
        st->quota[ev->worker] -= st->spent;
        return 0;
    case SW_EV_GRANT: return dssp_grant(st, c, ev, err);
    case SW_EV_RELEASE: return ev->reason[0] == 'l' ? 0 : dssp_release(st, c, ev, err);
    case SW_EV_JOIN:
    case SW_EV_LEAVE:
    case SW_EV_CRASH: st->quota[ev->worker] = 0; return 0;
    default: return 0;
    }
}

static int dssp_end(void *state, sw_check *c, char *err)
{
    dssp_promise *st = state;
    int rc = sw__ck_push_applied_at_once(c, err);
    if (!rc && c->g.start == SW_EV_PUSH && (st->spent || c->g.granted) &&
        !c->g.pusher_released && sw__ck_lead(c, c->g.worker) <= st->hi)
        rc = sw__ck_broken(c, err, "kept worker %u waiting with a granted step", c->g.worker);
    st->spent = false;
    return rc ? rc : none_waits_within(c, st->lo, "lo", err);
}

static void dssp_free(void *state) { free(((dssp_promise *)state)->quota); }

const ck_promise sw__promise_dssp = {
    .policy = "dssp", .state_size = sizeof(dssp_promise), .grants = true, .init = dssp_init,
    .on_event = dssp_event, .on_end = dssp_end, .fini = dssp_free,
};

/* actions and rlp: every gradient applied at once; after it, nobody, the pusher, or every idle
 * worker goes on; a joiner starts at once; departures and switches release no one. */
static int actions_end(void *state, sw_check *c, char *err)
{
    (void)state;
    int rc = sw__ck_push_applied_at_once(c, err);
    const ck_group *g = &c->g;
    if (rc || g->released == 0)
        return rc;
    switch (g->start) {
    case SW_EV_PUSH:
        if ((g->released == 1 && g->pusher_released) || g->released == g->waiting_at_decision)
            return 0;
        return sw__ck_broken(c, err, "released %u of %u idle workers after the push of worker %u: "
                         "neither nobody, the pusher nor all", g->released,
                         g->waiting_at_decision, g->worker);
    case SW_EV_JOIN:
        if (g->released == 1 && c->w[g->worker].state == SW_WORKER_RUNNING)
            return 0;
        return sw__ck_broken(c, err, "released others than the joiner %u", g->worker);
    default:
        return sw__ck_broken(c, err, "released %u workers without a push", g->released);
    }
}

static int actions_join(void *state, sw_check *c, char *err)
{
    int rc = actions_end(state, c, err);
    if (!rc && c->g.start == SW_EV_JOIN && c->w[c->g.worker].state == SW_WORKER_WAITING)
        rc = sw__ck_broken(c, err, "kept the joiner %u waiting", c->g.worker);
    return rc;
}

static int actions_event(void *state, sw_check *c, const sw_event *ev, char *err)
{
    (void)state;
    return sw__ck_unit_scale(c, ev, err);
}

const ck_promise sw__promise_actions = {
    .policy = "actions", .on_event = actions_event, .on_end = actions_join,
};

const ck_promise sw__promise_rlp = {
    .policy = "rlp", .on_event = actions_event, .on_end = actions_join,
};
