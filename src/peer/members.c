/* A peer's member table: sorted endpoints (which decide who owns which slice), a dialer to
 * each, and when each was last heard from. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "peer_internal.h"
#include "syncwise/log.h"

double sw__peer_now(const sw__peer *pe)
{
    return sw_net_now(pe->net) - pe->t0;
}

int sw__peer_rank(const sw__peer *pe, const char *ep)
{
    for (int k = 0; k < pe->n_members; k++)
        if (strcmp(pe->m[k].ep, ep) == 0)
            return k;
    return -1;
}

int sw__peer_my_rank(const sw__peer *pe)
{
    return sw__peer_rank(pe, pe->me);
}

int sw__peer_owner(const sw__peer *pe, uint32_t j)
{
    return (int)((uint64_t)j * (uint64_t)pe->n_members / pe->n);
}

/* A dialer to a member, named by our endpoint: receivers see who we are. Closing it waits (up
 * to the silence timeout) for what is still queued: a judge's STOP sent just before it exits
 * must reach everyone, or they would train on without it. */
static sw_sock *connect_to(sw__peer *pe, const char *ep)
{
    sw_sock *s = NULL;
    sw_dial_params dp = {.endpoint = ep,
                         .identity = pe->me,
                         .queue = 10000,
                         .linger_s = pe->p->timeout_s,
                         .curve_key = pe->p->curve_key, /* every member listens with the pair */
                         .curve_server = pe->p->curve_key};
    return sw_dial(pe->net, &s, &dp, NULL) ? NULL : s;
}

/* An endpoint we would dial: short enough, and no space or control character (no endpoint
 * has one, and every log line names members). */
static bool endpoint_ok(const char *ep)
{
    if (strlen(ep) >= SW_PEER_EP_LEN)
        return false;
    for (const char *c = ep; *c; c++)
        if (*c <= ' ' || *c >= 127)
            return false;
    return true;
}

bool sw__peer_forget_dropped(sw__peer *pe, const char *ep)
{
    for (int i = 0; i < pe->n_dropped; i++)
        if (!strcmp(pe->dropped[i], ep)) {
            memmove(pe->dropped + i, pe->dropped + i + 1,
                    (size_t)(--pe->n_dropped - i) * sizeof *pe->dropped);
            return true;
        }
    return false;
}

int sw__peer_add(sw__peer *pe, const char *ep)
{
    int k = sw__peer_rank(pe, ep);
    if (k >= 0) {
        pe->m[k].last_seen = sw__peer_now(pe);
        return k;
    }
    if (pe->n_members == SW_PEER_MAX_MEMBERS || !endpoint_ok(ep))
        return -1;
    sw__member nm = {.last_seen = sw__peer_now(pe)};
    snprintf(nm.ep, sizeof nm.ep, "%s", ep);
    sw__peer_forget_dropped(pe, ep); /* a member again: never told it was dropped */
    if (strcmp(ep, pe->me) != 0 && !(nm.out = connect_to(pe, ep)))
        return -1;
    int at = 0;
    while (at < pe->n_members && strcmp(pe->m[at].ep, ep) < 0)
        at++;
    memmove(&pe->m[at + 1], &pe->m[at], (size_t)(pe->n_members - at) * sizeof nm);
    pe->m[at] = nm;
    pe->n_members++;
    /* While we join, the members we learn of (the contact first, before it answered) are
     * the group as it was, not newcomers: join() says how it went. */
    bool in_group = !pe->p->join || pe->have_replica;
    if (strcmp(ep, pe->me) != 0 && in_group)
        sw_log(SW_LOG_INFO, "peer %s joined: %d members", ep, pe->n_members);
    return at;
}

void sw__peer_remove(sw__peer *pe, int rank, const char *why)
{
    if (rank < 0 || rank >= pe->n_members || !pe->m[rank].out)
        return;
    sw_log(SW_LOG_INFO, "dropped peer %s (%s): %d members", pe->m[rank].ep, why, pe->n_members - 1);
    if (!strcmp(why, "silent")) {
        if (pe->n_dropped == SW_PEER_HELD) { /* the oldest gives way */
            memmove(pe->dropped, pe->dropped + 1, (SW_PEER_HELD - 1) * sizeof *pe->dropped);
            pe->n_dropped--;
        }
        memcpy(pe->dropped[pe->n_dropped++], pe->m[rank].ep, sizeof *pe->dropped); /* same size */
    }
    sw_sock_discard(pe->m[rank].out); /* it is gone: what we queued for it would hold our exit */
    sw_sock_close(pe->m[rank].out);
    memmove(&pe->m[rank], &pe->m[rank + 1], (size_t)(pe->n_members - rank - 1) * sizeof pe->m[0]);
    pe->n_members--;
    pe->r->dropped_peers++;
}

void sw__peer_remove_silent(sw__peer *pe)
{
    double now = sw__peer_now(pe);
    for (int k = pe->n_members - 1; k >= 0; k--)
        if (pe->m[k].out && now - pe->m[k].last_seen > pe->p->timeout_s)
            sw__peer_remove(pe, k, "silent");
}

/* Left alone by silence, a peer ends its part (pe->alone) when it was once itself silent
 * longer than --timeout (pe->was_silent: stopped, or one step that long; the others dropped it
 * and went on, one by one perhaps, and training on would split the run in two, each judging)
 * or when it was no judge (the group it trained for is gone). A judge that never was is left
 * with members that died: it goes on. */
void sw__peer_drop_silent(sw__peer *pe)
{
    bool judged = sw__peer_my_rank(pe) == 0;
    int was = pe->n_members;
    sw__peer_remove_silent(pe);
    if (pe->n_members == 1 && was > 1 && (pe->was_silent || !judged))
        pe->alone = pe->done = true;
}

static void send_on(sw__peer *pe, sw_sock *out, sw_msg_type type, const void *payload, size_t len)
{
    sw_frame *f = sw_frame_new(sw_msg_size(len));
    if (!f)
        return;
    sw_msg m = {.type = type, .worker = SW_NO_WORKER, .payload = payload, .payload_len = len};
    sw_msg_encode(&m, sw_frame_data(f));
    if (sw_send(out, NULL, 0, f))
        pe->r->bytes_sent += sw_msg_size(len);
}

void sw__peer_send(sw__peer *pe, int rank, sw_msg_type type, const void *payload, size_t len)
{
    if (rank >= 0 && rank < pe->n_members && pe->m[rank].out)
        send_on(pe, pe->m[rank].out, type, payload, len);
}

void sw__peer_tell(sw__peer *pe, const char *ep, sw_msg_type type, const void *payload, size_t len)
{
    sw_sock *out = endpoint_ok(ep) ? connect_to(pe, ep) : NULL;
    if (!out)
        return;
    send_on(pe, out, type, payload, len);
    sw_sock_close(out);
}

void sw__peer_broadcast(sw__peer *pe, sw_msg_type type, const void *payload, size_t len)
{
    for (int k = 0; k < pe->n_members; k++)
        sw__peer_send(pe, k, type, payload, len);
}

uint32_t sw__peer_wait_for(const sw__peer *pe)
{
    return pe->p->wait_peers > pe->group_wait ? pe->p->wait_peers : pe->group_wait;
}

size_t sw__peer_hello(const sw__peer *pe, char *out, size_t cap)
{
    int len = snprintf(out, cap, "%s\n%s", pe->me, pe->run);
    return len < 0 ? 0 : (size_t)len < cap ? (size_t)len : cap - 1;
}

bool sw__peer_heard_within(const sw__peer *pe, int rank, double s)
{
    const sw__member *m = &pe->m[rank];
    return !m->out || (m->heard > 0 && sw__peer_now(pe) - m->heard <= s);
}

/* The members we heard from ourselves within --timeout (hearsay passed on would keep a dead
 * member in the group: each member that dropped it would learn it again from one that had not
 * yet), and while we wait for the group to be whole, how many it waits for: a member that
 * joins a waiting group waits with it, though only the first peer was given --wait-peers. */
size_t sw__peer_members_text(const sw__peer *pe, char *out, size_t cap)
{
    size_t len = 0;
    for (int k = 0; k < pe->n_members && len < cap; k++)
        if (sw__peer_heard_within(pe, k, pe->p->timeout_s))
            len += (size_t)snprintf(out + len, cap - len, "%s\n", pe->m[k].ep);
    if (!pe->training && sw__peer_wait_for(pe) > 1 && len < cap)
        len += (size_t)snprintf(out + len, cap - len, "wait=%u\n", sw__peer_wait_for(pe));
    return len < cap ? len : cap;
}

void sw__peer_merge_members(sw__peer *pe, const sw_msg *m)
{
    char text[SW_PEER_MEMBERS_LEN];
    size_t len = m->payload_len < sizeof text - 1 ? m->payload_len : sizeof text - 1;
    memcpy(text, m->payload, len);
    text[len] = '\0';
    for (char *save, *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
        if ((strncmp(line, "tcp://", 6) == 0 || strncmp(line, "ipc://", 6) == 0) &&
            sw__peer_rank(pe, line) < 0) /* hearsay adds a member but proves nobody alive */
            sw__peer_add(pe, line);
        else if (strncmp(line, "wait=", 5) == 0 && !pe->training) {
            unsigned long n = strtoul(line + 5, NULL, 10);
            if (n <= SW_PEER_MAX_MEMBERS && n > pe->group_wait)
                pe->group_wait = (uint32_t)n;
        }
}
