/* The server's decisions in a sharded run (server_shards.h): a push is decided once every shard
 * it went to holds its slice (and, for a policy that reads them, once the last apply's norms are
 * in); the engine's events become the APPLY orders every shard carries out alike, and a push
 * dropped is forgotten everywhere. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server_internal.h"
#include "syncwise/bytes.h"
#include "syncwise/policy.h"

/* ---- Forgetting a push --------------------------------------------------------------------- */

/* The order to forget push (w, token, seq): to every shard, or to shard `only` (a shard that
 * never had it passes it over). */
static void forget(server *s, uint32_t w, uint64_t token, uint64_t seq, uint32_t only)
{
    const sw__shards *h = &s->shards;
    uint8_t pay[8 + sizeof h->deciding];
    sw_put_f32(pay, 0);
    sw_put_u32(pay + 4, 1);
    sw_shard_set all = sw_shard_set_all(h->n);
    sw_shard_entry_put(pay + 8, w, token, seq, &all, h->n);
    sw_msg m = {.type = SW_MSG_SHARD_APPLY, .worker = SW_NO_WORKER, .flags = SW_FLAG_DROPPED,
                .payload = pay, .payload_len = 8 + h->entry};
    if (only == SW_SHARDS_MAX)
        sw__shards_send_all(s, &m);
    else
        sw__shards_send_to(s, only, &m, NULL);
}

void sw__shards_drop_everywhere(server *s, uint32_t w, uint64_t token, uint64_t seq)
{
    forget(s, w, token, seq, SW_SHARDS_MAX);
}

/* ---- Apply orders -------------------------------------------------------------------------- */

/* The APPLY payload being built: f32 lr and u32 n are written when it goes, the entries as
 * the pushes come (room doubling as needed). */
static uint8_t *order_entry(const sw__shards *h, uint32_t k)
{
    return h->order + 8 + h->entry * k;
}

static bool order_add(sw__shards *h)
{
    if (h->n_order == h->cap_order) {
        uint32_t cap = h->cap_order ? 2 * h->cap_order : 16;
        uint8_t *more = realloc(h->order, 8 + h->entry * cap);
        if (!more)
            return false;
        h->order = more;
        h->cap_order = cap;
    }
    memcpy(order_entry(h, h->n_order++), h->deciding, h->entry);
    return true;
}

/* The apply that makes version V awaits its norms from every shard. */
static void await_norms(sw__shards *h, uint64_t V)
{
    h->reports[V % SW_SHARDS_REPORTS] =
        (sw__apply_report){.norms = {.version = V, .n = h->n_order}};
}

static void send_apply(server *s, const sw_event *ev)
{
    sw__shards *h = &s->shards;
    if (ev->n != h->n_order || h->n_order == 0) {
        char why[SW_ERR_LEN];
        snprintf(why, sizeof why, "the engine applied %u gradients where the shards hold %u "
                 "in order (a bug)", ev->n, h->n_order);
        sw__server_fail(s, SW_EBUG, why);
        return;
    }
    sw_put_f32(h->order, sw_engine_lr(s->engine) * ev->lr_scale);
    sw_put_u32(h->order + 4, h->n_order);
    /* Only a policy that reads the applies' norms costs every shard a pass and an answer. */
    bool norms = sw_engine_policy_wants(s->engine, SW_WANT_SQ_NORM);
    sw_msg m = {.type = SW_MSG_SHARD_APPLY, .worker = SW_NO_WORKER,
                .flags = norms ? SW_FLAG_WANT_NORMS : 0, .version = ev->V, .payload = h->order,
                .payload_len = 8 + h->entry * h->n_order};
    sw__shards_send_all(s, &m);
    if (norms) {
        await_norms(h, ev->V);
        h->norms_due = ev->V;
    }
    h->n_order = 0;
}

void sw__shards_event(server *s, const sw_event *ev)
{
    sw__shards *h = &s->shards;
    if (ev->kind == SW_EV_PUSH && !order_add(h)) {
        sw__server_fail(s, SW_ENOMEM, "out of memory for an apply order");
    } else if (ev->kind == SW_EV_DROP && h->n_order > 0) { /* the push just added */
        const uint8_t *e = order_entry(h, --h->n_order);
        sw__shards_drop_everywhere(s, sw_get_u32(e), sw_get_u64(e + 4), sw_get_u64(e + 12));
    } else if (ev->kind == SW_EV_APPLY) {
        send_apply(s, ev);
    }
}

/* ---- Deciding ------------------------------------------------------------------------------ */

/* Where a member's answers go: the route its messages to the server came by. */
static peer member_route(const server *s, const conn *c)
{
    return (peer){.route = c->route, .route_len = c->route_len, .sock = s->sock};
}

/* The engine decides on worker w's push, as on an unsharded push. */
static void decide(server *s, uint32_t w, const sw__reporting *r)
{
    conn *c = &s->conns[w];
    sw__server_check_limits(s); /* one batch of reports may complete many pushes */
    if (s->done || !c->live || c->token != r->token) { /* the run or the membership is over */
        sw__shards_drop_everywhere(s, w, r->token, r->seq);
        return;
    }
    peer from = member_route(s, c);
    sw_msg m = {.type = SW_MSG_PUSH, .worker = w, .flags = r->flags, .version = r->version};
    sw_shard_entry_put(s->shards.deciding, w, r->token, r->seq, &r->to, s->shards.n);
    if (sw__server_push_allowed(s, &from, &m)) {
        /* every shard has the worker's connection: it reported the push, since the last
         * restore (a resumed shard knows no connection from before) */
        c->routed |= sw_shard_set_full(&r->shards, s->shards.n) &&
                     r->restore_no == s->shards.restore_no;
        sw__server_accept_push(s, &from, &m, NULL, 0);
    } else
        sw__shards_drop_everywhere(s, w, r->token, r->seq);
}

/* ---- Norms: a push waits for the last apply's ------------------------------------------------ */

/* The pushes that waited, in the order they came, until one of them makes an apply whose norms
 * are due in turn. */
bool sw__shards_paused(const server *s)
{
    return s->shards.norms_due || s->shards.gathering;
}

void sw__shards_decide_held(server *s)
{
    sw__shards *h = &s->shards;
    while (h->n_held && !sw__shards_paused(s) && !s->rc) {
        sw__held x = h->held[h->held_first];
        h->held_first = (h->held_first + 1) % h->cap_held;
        h->n_held--;
        decide(s, x.worker, &x.push);
    }
}

/* Every shard holds worker w's push: the engine decides on it, once it has the norms of the
 * last apply if the policy reads them (DBW chooses k for a version from the apply that made
 * it; a push deciding before they came would choose from the apply before, which an unsharded
 * engine never does). The wait is one round trip to the shards after an apply, and only
 * pushes that come in it pay it. */
void sw__shards_counted(server *s, uint32_t w, const sw__reporting *r)
{
    sw__shards *h = &s->shards;
    if (!sw__shards_paused(s) && !h->n_held) {
        decide(s, w, r);
    } else if (h->n_held == h->cap_held) { /* a worker pushing before its answer: it may not */
        sw__shards_drop_everywhere(s, w, r->token, r->seq);
    } else {
        h->held[(h->held_first + h->n_held++) % h->cap_held] = (sw__held){.worker = w, .push = *r};
        if (h->norms_due) /* else behind an evaluation's gather, whatever the policy reads */
            h->waited++;
        else
            h->waited_gather++;
    }
}

void sw__shards_stop_waiting_for_norms(server *s)
{
    s->shards.norms_due = 0;
    sw__shards_decide_held(s);
}

/* Whether a counted push is still to be applied: waiting for an apply's norms, or in the
 * next apply's list. */
static bool still_due(const sw__shards *h, uint32_t w, uint64_t token, uint64_t seq)
{
    for (uint32_t i = 0; i < h->n_held; i++) {
        const sw__held *x = &h->held[(h->held_first + i) % h->cap_held];
        if (x->worker == w && x->push.token == token && x->push.seq == seq)
            return true;
    }
    for (uint32_t k = 0; k < h->n_order; k++) {
        const uint8_t *e = order_entry(h, k);
        if (sw_get_u32(e) == w && sw_get_u64(e + 4) == token && sw_get_u64(e + 12) == seq)
            return true;
    }
    return false;
}

/* A shard holds its slice of a push: once every shard the push went to has said so, the
 * engine decides on it. */
void sw__shards_reported(server *s, uint32_t j, const sw_msg *m)
{
    bool sized = m->payload_len == 16 + sw_shard_set_bytes(s->shards.n);
    sw_shard_set to;
    if (!sized || !sw_shard_set_get(m->payload + 16, s->shards.n, &to) ||
        m->worker >= s->slots || !sw_shard_set_has(&to, j)) {
        sw__shards_failed(s, j, "reported a push the protocol does not allow", 0, "");
        return;
    }
    if (sw_shard_set_has(&s->shards.restoring, j))
        return; /* sent before shard j took the last RESTORE (its STATE comes first after it),
                 * maybe by the process the restore replaced, over a connection since broken:
                 * the restore counted or dropped what was known, and a worker unanswered sends
                 * its push again, which the shard then reports again */
    uint64_t token = sw_get_u64(m->payload), seq = sw_get_u64(m->payload + 8);
    sw__reporting *r = &s->shards.reporting[m->worker];
    if (!r->open && r->token == token && r->seq == seq) {
        /* Sent again by a worker that heard no answer yet, counted (or dropped) already: a
         * shard that restarted from an older file took it afresh, and holds it for nothing
         * unless an apply is still to name it. */
        if (!still_due(&s->shards, m->worker, token, seq))
            forget(s, m->worker, token, seq, j);
        return;
    }
    if (!r->open || r->token != token || r->seq != seq) {
        if (r->open) /* a push that never reached every shard, replaced by the next */
            sw__shards_drop_everywhere(s, m->worker, r->token, r->seq);
        *r = (sw__reporting){.token = token, .seq = seq, .version = m->version, .to = to,
                             .open = true, .flags = m->flags & SW_FLAG_WANT_MODEL,
                             .restore_no = s->shards.restore_no};
    }
    if (m->version != r->version || !sw_shard_set_equal(&to, &r->to)) { /* slices disagree */
        sw__shards_drop_everywhere(s, m->worker, token, seq);
        r->open = false;
        const conn *c = &s->conns[m->worker]; /* no worker sends them: refused and counted, */
        if (c->live && c->token == token) {   /* as any push the server will not take */
            peer to_member = member_route(s, c);
            sw__server_refuse(s, &to_member, m->worker, 0,
                              "the slices of one push name different versions or shards");
        }
        return;
    }
    if (sw_shard_set_has(&r->shards, j))
        return; /* said twice */
    sw_shard_set_add(&r->shards, j);
    if (sw_shard_set_equal(&r->shards, &r->to)) {
        r->open = false;
        sw__shards_counted(s, m->worker, r);
    }
}

/* Shard j's share of the norms of the apply that made m->version: once all are in, the
 * engine has them (an apply a restore undid, or one of before a restart, is passed over). */
void sw__shards_measured(server *s, uint32_t j, const sw_msg *m)
{
    bool sized = m->payload_len == 16;
    double sum_sq = sized ? sw_get_f64(m->payload) : -1,
           each_sq = sized ? sw_get_f64(m->payload + 8) : -1;
    if (!(sum_sq >= 0) || !isfinite(sum_sq) || !(each_sq >= 0) || !isfinite(each_sq)) {
        sw__shards_failed(s, j, "reported an apply's norm the protocol does not allow", 0, "");
        return;
    }
    sw__apply_report *a = &s->shards.reports[m->version % SW_SHARDS_REPORTS];
    if (a->norms.version != m->version || a->norms.n == 0 || sw_shard_set_has(&a->shards, j))
        return;
    sw_shard_set_add(&a->shards, j);
    a->norms.sum_sq += sum_sq;
    a->norms.sq_norms += each_sq;
    if (!sw_shard_set_full(&a->shards, s->shards.n))
        return;
    sw_engine_apply_norms(s->engine, &a->norms);
    if (m->version == s->shards.norms_due)
        sw__shards_stop_waiting_for_norms(s);
}
