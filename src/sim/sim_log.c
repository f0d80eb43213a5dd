/* The simulator's event sink: per-worker statistics, the JSONL event log (docs/log.md), and the
 * promise checker, which ends the run on a broken promise.
 *
 * Statistics follow the events rather than the engine's internals, so the same sink would serve
 * any driver: idle time runs from a worker's push (or join) to its release; the staleness of a
 * gradient is the version it is applied at minus the version it was computed at.
 */
#include <stdlib.h>

#include "sim_internal.h"

static int remember_version(sim *s, uint64_t ver)
{
    if (s->n_pending == s->cap_pending) {
        size_t cap = s->cap_pending ? 2 * s->cap_pending : 64;
        uint64_t *g = realloc(s->pending_ver, cap * sizeof *g);
        if (!g)
            return -1;
        s->pending_ver = g;
        s->cap_pending = cap;
    }
    s->pending_ver[s->n_pending++] = ver;
    return 0;
}

static void stop_waiting(sim *s, uint32_t w, double t)
{
    sim_worker *k = &s->w[w];
    if (k->wait_since >= 0)
        s->r->idle_s[w] += t - k->wait_since;
    k->wait_since = -1;
}

static void count(sim *s, const sw_event *ev)
{
    sw_sim_result *r = s->r;
    sim_worker *k = ev->worker < s->n_slots ? &s->w[ev->worker] : NULL;
    switch (ev->kind) {
    case SW_EV_PUSH:
        r->pushes++;
        r->steps[ev->worker]++;
        k->wait_since = ev->t;
        if (remember_version(s, ev->ver))
            sw__sim_fail(s, SW_ENOMEM, "out of memory for the staleness statistics");
        break;
    case SW_EV_DROP:
        r->drops++;
        r->steps[ev->worker]--;
        s->n_pending--; /* the drop follows its own push at once */
        break;
    case SW_EV_APPLY:
        r->applies++;
        for (size_t i = 0; i < s->n_pending; i++) {
            uint64_t stale = ev->V - 1 - s->pending_ver[i];
            r->stale_hist[stale < SW_STALE_BINS - 1 ? stale : SW_STALE_BINS - 1]++;
        }
        s->n_pending = 0;
        break;
    case SW_EV_RELEASE:
        stop_waiting(s, ev->worker, ev->t);
        break;
    case SW_EV_JOIN:
        k->live = true;
        k->joined_t = ev->t;
        k->wait_since = ev->t;
        break;
    case SW_EV_LEAVE:
    case SW_EV_CRASH:
        stop_waiting(s, ev->worker, ev->t);
        r->live_s[ev->worker] += ev->t - k->joined_t;
        k->live = false;
        break;
    default:
        break;
    }
}

void sw__sim_sink(void *ctx, const sw_event *ev)
{
    sim *s = ctx;
    count(s, ev);
    if (s->c->log)
        sw_event_write_jsonl(s->c->log, ev);
    char why[SW_ERR_LEN];
    if (s->check && !s->rc && sw_check_event(s->check, ev, why))
        sw__sim_fail(s, SW_EPROMISE, "%s", why);
}
