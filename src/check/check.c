/* The promise checker's core: the replay of engine events, the rules every run keeps, and the
 * hand-over to the promise of the policy in force (see syncwise/check.h, docs/promises.md).
 *
 * Events come in engine calls: a push, join, departure, switch or tick starts one, and the drop,
 * apply, grants, releases and wake-up its decision made follow it. The checker judges a call
 * when the next one starts (or the stream ends), when the decision is known whole.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_internal.h"
#include "syncwise/run.h"
#include "syncwise/policy.h"
#include "syncwise/roster.h"

int sw_check_new(sw_check **out, const char *policy, uint32_t slots, uint64_t version,
                 char *err)
{
    *out = NULL;
    if (!policy)
        return sw_fail(err, SW_EINVAL, "check: no policy spec");
    if (slots == 0 || slots > (1u << 24))
        return sw_fail(err, SW_EINVAL, "check: %u worker slots is not in [1, %u]", slots,
                       1u << 24);
    sw_check *c = calloc(1, sizeof *c);
    if (!c || !(c->w = calloc(slots, sizeof *c->w)) || !(c->live = calloc(slots, 4)) ||
        !(c->buf = malloc(64 * sizeof *c->buf))) {
        sw_check_free(c);
        return sw_fail(err, SW_ENOMEM, "out of memory for a checker of %u workers", slots);
    }
    c->slots = slots;
    c->V = version;
    c->cap_buf = 64;
    c->buf_twice = UINT32_MAX;
    c->wake_at = -1;
    int rc = sw__ck_start_promise(c, policy, err);
    if (rc) {
        sw_check_free(c);
        return rc;
    }
    *out = c;
    return 0;
}

void sw_check_free(sw_check *c)
{
    if (!c)
        return;
    sw__ck_stop_promise(c);
    free(c->w);
    free(c->live);
    free(c->buf);
    free(c->waits);
    free(c);
}

/* The decision starts releasing (or ends without releases): what it saw is fixed. */
static void decide(sw_check *c)
{
    if (c->g.decided)
        return;
    c->g.decided = true;
    c->g.waiting_at_decision = c->n_waiting;
    c->g.live_at_decision = c->n_live;
}

/* The engine call is over: nobody may be left waiting with nothing in flight, unless a wake-up
 * is due; then the promise judges the whole decision. */
static int end_group(sw_check *c, char *err)
{
    decide(c);
    int rc = 0;
    if (c->n_live > 0 && c->n_waiting == c->n_live && c->wake_at < 0)
        rc = sw__ck_engine_broke(err,
                             "stalled: all %u live workers wait, none computes, and no "
                             "wake-up is due",
                             c->n_live);
    else if (c->g.liveness > 0 && c->n_waiting > 0) /* the rule releases everyone at once */
        rc = sw__ck_engine_broke(err, "the liveness rule released %u of the %u waiting workers",
                             c->g.liveness, c->g.liveness + c->n_waiting);
    if (!rc && c->promise && c->promise->on_end)
        rc = c->promise->on_end(c->pstate, c, err);
    c->g = (ck_group){0};
    return rc;
}

static bool starts_call(sw_event_kind k)
{
    return k == SW_EV_PUSH || k == SW_EV_JOIN || k == SW_EV_LEAVE || k == SW_EV_CRASH ||
           k == SW_EV_SWITCH || k == SW_EV_TICK;
}

/* The order of an engine call's lines (docs/log.md): its starting event, a drop, the apply, the
 * grants, the policy's releases, a wake-up request, the liveness rule's releases. -1 for the
 * driver's notes (evaluations, restores), which belong to no call. */
static int call_phase(const sw_event *ev)
{
    switch (ev->kind) {
    case SW_EV_DROP: return 1;
    case SW_EV_APPLY: return 2;
    case SW_EV_GRANT: return 3;
    case SW_EV_RELEASE: return ev->reason && !strcmp(ev->reason, "liveness") ? 6 : 4;
    case SW_EV_WAKE: return 5;
    case SW_EV_EVAL:
    case SW_EV_RESTORE: return -1;
    default: return 0; /* starts a call */
    }
}

/* Each line of a call comes in the call's order, a step at most once where it is one line
 * (drop, apply, wake), and only within a call. */
static int in_call_order(sw_check *c, const sw_event *ev, char *err)
{
    int phase = call_phase(ev);
    if (phase <= 0)
        return 0;
    const char *name = sw_event_kind_name(ev->kind);
    if (!c->g.started)
        return sw__ck_engine_broke(err, "a %s outside any engine call", name);
    bool once = ev->kind == SW_EV_DROP || ev->kind == SW_EV_APPLY || ev->kind == SW_EV_WAKE;
    if (phase < c->g.phase || (once && phase == c->g.phase))
        return sw__ck_engine_broke(err,
                               "a %s out of the engine call's order (drop, apply, grants, "
                               "releases, wake, liveness releases)",
                               name);
    c->g.phase = phase;
    return 0;
}

static int live_worker(const sw_check *c, uint32_t w, char *err)
{
    if (w >= c->slots)
        return sw__ck_engine_broke(err, "worker %u is outside the table of %u slots", w, c->slots);
    if (c->w[w].state == SW_WORKER_ABSENT)
        return sw__ck_engine_broke(err, "worker %u is not live", w);
    return 0;
}

static int on_push(sw_check *c, const sw_event *ev, char *err)
{
    ck_worker *k = &c->w[ev->worker];
    int rc = live_worker(c, ev->worker, err);
    if (rc)
        return rc;
    if (k->state != SW_WORKER_RUNNING)
        return sw__ck_engine_broke(err, "worker %u pushed while waiting: it was not released",
                               ev->worker);
    if (ev->clock != k->clock + 1)
        return sw__ck_engine_broke(err, "worker %u pushed step %llu after step %llu", ev->worker,
                               (unsigned long long)ev->clock, (unsigned long long)k->clock);
    if (ev->ver > c->V)
        return sw__ck_engine_broke(err, "a gradient of version %llu reached a server at version %llu",
                               (unsigned long long)ev->ver, (unsigned long long)c->V);
    if (ev->ver < k->pulled)
        return sw__ck_engine_broke(err,
                               "worker %u pushed a gradient of version %llu after one of "
                               "version %llu: its parameters went back",
                               ev->worker, (unsigned long long)ev->ver,
                               (unsigned long long)k->pulled);
    if (c->simulated && ev->ver > k->released_V)
        return sw__ck_engine_broke(err,
                               "worker %u pushed a gradient of version %llu, released at "
                               "version %llu: a simulated worker pulls only when released",
                               ev->worker, (unsigned long long)ev->ver,
                               (unsigned long long)k->released_V);
    k->pulled = ev->ver;
    if (c->n_buf == c->cap_buf) {
        ck_grad *grown = realloc(c->buf, 2 * (size_t)c->cap_buf * sizeof *grown);
        if (!grown)
            return sw_fail(err, SW_ENOMEM, "out of memory");
        c->buf = grown;
        c->cap_buf *= 2;
    }
    c->buf[c->n_buf++] = (ck_grad){.worker = ev->worker, .ver = ev->ver, .epoch = c->epoch};
    c->n_buf_own++;
    if (++k->own_in_buffer == 2 && c->buf_twice == UINT32_MAX)
        c->buf_twice = ev->worker;
    bool was_at_min = sw__ck_at_min(c, k);
    k->clock = ev->clock;
    if (was_at_min)
        sw__ck_left_min(c);
    k->state = SW_WORKER_WAITING;
    c->n_waiting++;
    c->pushes++;
    if (sw__ck_wait_at(c, ev->worker))
        return sw_fail(err, SW_ENOMEM, "out of memory");
    c->g.worker = ev->worker;
    c->g.push_ver = ev->ver;
    c->g.push_V = c->V;
    return 0;
}

static int on_drop(sw_check *c, const sw_event *ev, char *err)
{
    if (c->g.start != SW_EV_PUSH || c->g.worker != ev->worker || c->g.dropped || c->g.applied ||
        c->g.decided || ev->ver != c->g.push_ver)
        return sw__ck_engine_broke(err, "a drop of worker %u that does not follow its push",
                               ev->worker);
    ck_worker *k = &c->w[ev->worker];
    c->n_buf--;
    c->n_buf_own--; /* the push just made, under the policy in force */
    if (k->own_in_buffer-- == 2 && c->buf_twice == ev->worker) {
        c->buf_twice = UINT32_MAX; /* another worker may hold two as well */
        for (uint32_t i = 0; i < c->n_buf && c->buf_twice == UINT32_MAX; i++)
            if (c->w[c->buf[i].worker].own_in_buffer >= 2)
                c->buf_twice = c->buf[i].worker;
    }
    k->clock--; /* a refused gradient is not a step */
    if (k->clock < c->min_clock)
        sw__ck_recount_min(c);
    else
        c->n_at_min += k->clock == c->min_clock;
    c->g.dropped = true;
    return sw__ck_wait_at(c, ev->worker) ? sw_fail(err, SW_ENOMEM, "out of memory") : 0;
}

/* The barrier roster: a live worker released under the policy in force since the last apply
 * with no gradient in the buffer, or UINT32_MAX. */
static uint32_t missing_from_buffer(const sw_check *c)
{
    for (uint32_t i = 0; i < c->n_live; i++) {
        const ck_worker *k = &c->w[c->live[i]];
        if (!k->fresh && k->released_epoch == c->epoch && k->released_at == c->applies &&
            k->own_in_buffer == 0)
            return c->live[i];
    }
    return UINT32_MAX;
}

/* What the buffer holds, as the promises judge an apply. */
static ck_apply describe_apply(const sw_check *c, const sw_event *ev)
{
    ck_apply a = {.n = c->n_buf, .twice = c->buf_twice, .missing = UINT32_MAX,
                  .all_waiting = c->n_waiting == c->n_live, .lr_scale = ev->lr_scale};
    for (uint32_t i = 0; i < c->n_buf; i++) {
        const ck_grad *g = &c->buf[i];
        a.carried += g->epoch != c->epoch;
        a.stale += g->epoch == c->epoch && g->ver < c->V; /* the old policy accepted the rest */
    }
    if (c->promise && c->promise->judges_barriers)
        a.missing = missing_from_buffer(c);
    return a;
}

static int on_apply(sw_check *c, const sw_event *ev, char *err)
{
    if (ev->V != c->V + 1)
        return sw__ck_engine_broke(err, "an apply took the version from %llu to %llu",
                               (unsigned long long)c->V, (unsigned long long)ev->V);
    if (ev->n == 0 || ev->n != c->n_buf)
        return sw__ck_engine_broke(err, "an apply of %u gradients with %u accepted since the last one",
                               ev->n, c->n_buf);
    if (c->g.applied || c->g.decided)
        return sw__ck_engine_broke(err, "an apply after the decision's releases");
    c->g.apply = describe_apply(c, ev);
    c->g.applied = true;
    for (uint32_t i = 0; i < c->n_buf; i++)
        c->w[c->buf[i].worker].own_in_buffer = 0;
    c->n_buf = c->n_buf_own = 0;
    c->buf_twice = UINT32_MAX;
    c->V++;
    c->applies++;
    return 0;
}

static int on_release(sw_check *c, const sw_event *ev, char *err)
{
    int rc = live_worker(c, ev->worker, err);
    if (rc)
        return rc;
    ck_worker *k = &c->w[ev->worker];
    if (k->state != SW_WORKER_WAITING)
        return sw__ck_engine_broke(err, "worker %u was released while not waiting", ev->worker);
    /* A joiner starts at the slowest started clock (its own when none has started). */
    uint64_t want = k->fresh && c->n_at_min > 0 ? c->min_clock : k->clock;
    if (ev->clock != want)
        return sw__ck_engine_broke(err, "worker %u was released at step %llu, not %llu", ev->worker,
                               (unsigned long long)ev->clock, (unsigned long long)want);
    bool liveness = ev->reason && strcmp(ev->reason, "liveness") == 0;
    decide(c);
    if (liveness && (c->g.waiting_at_decision != c->g.live_at_decision || c->wake_at >= 0 ||
                     c->g.released > 0))
        return sw__ck_engine_broke(err,
                               "a liveness release of worker %u while some worker computed "
                               "or a wake-up was due",
                               ev->worker);
    if (!liveness && c->g.liveness)
        return sw__ck_engine_broke(err, "a policy release after the liveness rule's");
    if (k->fresh) {
        k->clock = ev->clock;
        if (c->n_at_min++ == 0)
            c->min_clock = k->clock;
        c->fresh_waiting--;
    }
    k->state = SW_WORKER_RUNNING;
    k->fresh = false;
    k->released_epoch = c->epoch;
    k->released_at = c->applies;
    k->released_V = c->V;
    c->n_waiting--;
    if (liveness)
        c->g.liveness++;
    else
        c->g.released++;
    if (c->g.start == SW_EV_PUSH && ev->worker == c->g.worker)
        c->g.pusher_released = true;
    return 0;
}

static int on_join(sw_check *c, const sw_event *ev, char *err)
{
    if (ev->worker >= c->slots)
        return sw__ck_engine_broke(err, "worker %u is outside the table of %u slots", ev->worker,
                               c->slots);
    ck_worker *k = &c->w[ev->worker];
    if (k->state != SW_WORKER_ABSENT)
        return sw__ck_engine_broke(err, "worker %u joined while live", ev->worker);
    if (ev->clock != c->min_clock)
        return sw__ck_engine_broke(err,
                               "worker %u joined at step %llu, not the slowest started step "
                               "%llu",
                               ev->worker, (unsigned long long)ev->clock,
                               (unsigned long long)c->min_clock);
    /* A gradient the slot's last worker left in the buffer stays the slot's: one per apply */
    *k = (ck_worker){.state = SW_WORKER_WAITING, .clock = ev->clock, .fresh = true,
                     .wait_seq = k->wait_seq, .own_in_buffer = k->own_in_buffer};
    c->fresh_waiting++;
    sw_roster_add(c->live, &c->n_live, ev->worker);
    c->n_waiting++;
    c->g.worker = ev->worker;
    return 0;
}

static int on_leave(sw_check *c, const sw_event *ev, char *err)
{
    int rc = live_worker(c, ev->worker, err);
    if (rc)
        return rc;
    ck_worker *k = &c->w[ev->worker];
    if (ev->clock != k->clock)
        return sw__ck_engine_broke(err, "worker %u left at step %llu, not %llu", ev->worker,
                               (unsigned long long)ev->clock, (unsigned long long)k->clock);
    bool was_at_min = sw__ck_at_min(c, k);
    if (k->state == SW_WORKER_WAITING)
        c->n_waiting--;
    if (k->state == SW_WORKER_WAITING && k->fresh)
        c->fresh_waiting--;
    k->state = SW_WORKER_ABSENT;
    sw_roster_remove(c->live, &c->n_live, ev->worker);
    if (was_at_min)
        sw__ck_left_min(c);
    c->g.worker = ev->worker;
    return 0;
}

static int on_grant(sw_check *c, const sw_event *ev, char *err)
{
    c->g.granted = true;
    if (c->promise && !c->promise->grants)
        return sw__ck_broken(c, err, "granted worker %u steps, which it never does", ev->worker);
    int rc = live_worker(c, ev->worker, err);
    if (rc)
        return rc;
    ck_worker *k = &c->w[ev->worker];
    k->grants_in_call = k->granted_call == c->g.where ? k->grants_in_call + 1 : 1;
    k->granted_call = c->g.where;
    return 0;
}

static int on_switch(sw_check *c, const sw_event *ev, char *err)
{
    c->switches++;
    c->epoch++;
    c->wake_at = -1; /* the engine forgets the old policy's wake-up */
    for (uint32_t i = 0; i < c->n_buf; i++) /* pushed under the old policy, all of it */
        c->w[c->buf[i].worker].own_in_buffer = 0;
    c->n_buf_own = 0;
    c->buf_twice = UINT32_MAX;
    int rc = sw__ck_start_promise(c, ev->reason, err);
    return rc == SW_EINVAL ? sw__ck_engine_broke(err, "a switch to a bad spec '%s'", ev->reason) : rc;
}

/* Replays ev into the state, checking the rules every run keeps. */
static int replay(sw_check *c, const sw_event *ev, char *err)
{
    uint64_t V = ev->kind == SW_EV_APPLY ? c->V + 1 : c->V;
    /* An evaluation may read a model a little older than the latest version: a sharded server
     * evaluates what it gathered from its shards while they went on. */
    bool ok = ev->kind == SW_EV_EVAL && !c->simulated ? ev->V <= V : ev->V == V;
    if (!ok)
        return sw__ck_engine_broke(err, "the %s says version %llu, the version is %llu",
                               sw_event_kind_name(ev->kind), (unsigned long long)ev->V,
                               (unsigned long long)V);
    switch (ev->kind) {
    case SW_EV_PUSH: return on_push(c, ev, err);
    case SW_EV_DROP: return on_drop(c, ev, err);
    case SW_EV_APPLY: return on_apply(c, ev, err);
    case SW_EV_RELEASE: return on_release(c, ev, err);
    case SW_EV_JOIN: return on_join(c, ev, err);
    case SW_EV_LEAVE:
    case SW_EV_CRASH: return on_leave(c, ev, err);
    case SW_EV_SWITCH: return on_switch(c, ev, err);
    case SW_EV_GRANT: return on_grant(c, ev, err);
    case SW_EV_WAKE:
        /* The engine refuses one at or before the tick; a log's times, rounded to 9 digits,
         * tell only the ones before it (a request a microsecond on may print as the tick's). */
        if (c->g.start == SW_EV_TICK && ev->at < ev->t)
            return sw__ck_engine_broke(err, "a wake-up's tick asked for a wake-up due already "
                                       "(at t=%.9g): the ticks would follow one another for "
                                       "ever", ev->at);
        c->wake_at = ev->at;
        c->wake_due = ev->at > ev->t ? ev->at : ev->t;
        return 0;
    case SW_EV_TICK:
        if (c->wake_at < 0 || ev->t < c->wake_at)
            return sw__ck_engine_broke(err, "a tick with no wake-up due");
        if (c->simulated && ev->t != c->wake_due)
            return sw__ck_engine_broke(err,
                                   "a tick at t=%.9g, due at t=%.9g (on a virtual clock a "
                                   "tick comes on time)",
                                   ev->t, c->wake_due);
        c->wake_at = -1;
        return 0;
    case SW_EV_EVAL: return 0;
    case SW_EV_RESTORE:
        if (c->simulated)
            return sw__ck_engine_broke(err, "a restore in a simulator's log (only a sharded server's "
                                        "shards restore)");
        if (ev->ver > ev->V)
            return sw__ck_engine_broke(err, "a restore to version %llu, ahead of it",
                                   (unsigned long long)ev->ver);
        /* Pulls may now return the older parameters of the restored version. */
        for (uint32_t i = 0; i < c->n_live; i++) { /* a joiner's starts anew */
            ck_worker *k = &c->w[c->live[i]];
            k->pulled = k->pulled < ev->ver ? k->pulled : ev->ver;
        }
        return 0;
    }
    return sw__ck_engine_broke(err, "an event of unknown kind %d", (int)ev->kind);
}

static bool names_a_worker(sw_event_kind k)
{
    return k == SW_EV_PUSH || k == SW_EV_DROP || k == SW_EV_RELEASE || k == SW_EV_JOIN ||
           k == SW_EV_LEAVE || k == SW_EV_CRASH || k == SW_EV_GRANT;
}

/* Where a broken promise shows: an event, or a whole engine call (its starting event). */
static int broken_at(sw_check *c, int rc, double t, sw_event_kind kind, uint32_t w,
                     uint64_t where, const char *scope, const char *why, char *err)
{
    const char *name = sw_event_kind_name(kind) ? sw_event_kind_name(kind) : "?";
    char who[32] = "";
    if (names_a_worker(kind))
        snprintf(who, sizeof who, " of worker %u", w);
    snprintf(c->broken, sizeof c->broken, "t=%.9g, %s%s%s: %s", t, name, who, scope, why);
    c->broken_where = where;
    return sw_fail(err, rc, "%s", c->broken);
}

static int judge_group(sw_check *c, char *err)
{
    char why[SW_ERR_LEN];
    ck_group g = c->g; /* end_group clears it */
    int rc = end_group(c, why);
    return rc ? broken_at(c, rc, g.t, g.start, g.worker, g.where,
                          " (its decision as a whole)", why, err)
              : 0;
}

int sw_check_event(sw_check *c, const sw_event *ev, char *err)
{
    return sw_check_event_at(c, ev, c->events + 1, err);
}

uint64_t sw_check_where(const sw_check *c) { return c->broken_where; }

void sw_check_simulated(sw_check *c)
{
    c->simulated = true;
}

int sw_check_event_at(sw_check *c, const sw_event *ev, uint64_t where, char *err)
{
    if (c->broken[0])
        return sw_fail(err, SW_EPROMISE, "%s", c->broken);
    c->events++;
    char why[SW_ERR_LEN];
    int rc = 0;
    if (!sw_event_kind_name(ev->kind))
        rc = sw__ck_engine_broke(why, "an event of unknown kind %d", (int)ev->kind);
    else if (ev->t < c->last_t)
        rc = sw__ck_engine_broke(why, "time went back from %.9g", c->last_t);
    else if (c->simulated && c->wake_at >= 0 && ev->kind != SW_EV_TICK && ev->t > c->wake_due)
        rc = sw__ck_engine_broke(why,
                             "a wake-up due at t=%.9g had not come (on a virtual clock a "
                             "tick comes on time)",
                             c->wake_at);
    if (rc)
        return broken_at(c, rc, ev->t, ev->kind, ev->worker, where, "", why, err);
    c->last_t = ev->t;
    if (starts_call(ev->kind)) {
        if (c->g.started && (rc = judge_group(c, err)))
            return rc;
        c->g = (ck_group){.started = true, .start = ev->kind, .t = ev->t, .worker = ev->worker,
                          .where = where};
    }
    rc = in_call_order(c, ev, why);
    if (!rc)
        rc = replay(c, ev, why);
    bool driver_note = ev->kind == SW_EV_EVAL || ev->kind == SW_EV_RESTORE; /* no engine call */
    if (!rc && !driver_note && c->promise && c->promise->on_event)
        rc = c->promise->on_event(c->pstate, c, ev, why);
    else if (!rc && !c->promise) /* a policy of no known promise keeps rule 5 all the same */
        rc = sw__ck_no_liveness(c, ev, why);
    return rc ? broken_at(c, rc, ev->t, ev->kind, ev->worker, where, "", why, err) : 0;
}

int sw_check_end(sw_check *c, char *err)
{
    if (c->broken[0])
        return sw_fail(err, SW_EPROMISE, "%s", c->broken);
    int rc = c->g.started ? judge_group(c, err) : 0;
    /* Due at the request for a time already past: a log that ends with it owes no tick. */
    if (!rc && c->wake_at >= 0 && c->wake_due < c->last_t) {
        char why[SW_ERR_LEN];
        sw__ck_engine_broke(why, "a wake-up due at t=%.9g never came", c->wake_at);
        rc = broken_at(c, SW_EPROMISE, c->last_t, SW_EV_WAKE, 0, c->events, "", why, err);
    }
    return rc;
}

int sw_check_end_line(sw_check *c, double t, uint64_t V, const char *why, uint64_t where,
                      char *err)
{
    if (c->broken[0])
        return sw_fail(err, SW_EPROMISE, "%s", c->broken);
    char what[SW_ERR_LEN] = "";
    if (t < c->last_t)
        sw__ck_engine_broke(what, "the end line's time went back from %.9g", c->last_t);
    else if (V != c->V)
        sw__ck_engine_broke(what, "the end line says version %llu, the version is %llu",
                        (unsigned long long)V, (unsigned long long)c->V);
    if (what[0]) {
        snprintf(c->broken, sizeof c->broken, "t=%.9g, end: %s", t, what);
        c->broken_where = where;
        return sw_fail(err, SW_EPROMISE, "%s", c->broken);
    }
    bool cut = !strncmp(why, SW_END_FAILED, strlen(SW_END_FAILED)) &&
               strncmp(why, SW_END_DIVERGED, strlen(SW_END_DIVERGED));
    return cut ? 0 : sw_check_end(c, err);
}

sw_worker_state sw_check_worker(const sw_check *c, uint32_t w, uint64_t *clock)
{
    *clock = w < c->slots ? c->w[w].clock : 0;
    return w < c->slots ? c->w[w].state : SW_WORKER_ABSENT;
}

uint64_t sw_check_lead(const sw_check *c, uint32_t w)
{
    return w < c->slots ? sw__ck_lead(c, w) : 0;
}

uint64_t sw_check_count(const sw_check *c) { return c->events; }
const char *sw_check_unknown_policy(const sw_check *c) { return c->unknown; }
