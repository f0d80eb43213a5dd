/* What a peer receives (peer_internal.h): members' messages handled, a stranger's HELLO
 * judged, messages from senders not yet members held until a member list names them, and
 * everything else refused and counted. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "peer_internal.h"
#include "syncwise/bytes.h"
#include "syncwise/err.h"
#include "syncwise/log.h"
#include "syncwise/net.h"

/* Pairs of a payload (added to our weights for DELTA, set for SLICE). */
static void take_pairs(sw__peer *pe, const sw_msg *m, bool add)
{
    size_t nnz;
    char why[SW_ERR_LEN];
    if (sw_msg_get_pairs(m, (uint32_t)pe->n, pe->idx, pe->val, pe->n, &nnz, why)) {
        sw_log(SW_LOG_WARN, "ignoring a bad %s: %s", sw_msg_type_name(m->type), why);
        return;
    }
    int me = sw__peer_my_rank(pe);
    for (size_t k = 0; k < nnz; k++) {
        uint32_t j = pe->idx[k];
        pe->theta[j] = add ? pe->theta[j] + pe->val[k] : pe->val[k];
        if (add && sw__peer_owner(pe, j) == me)
            sw__peer_mark_changed(pe, j);
    }
}

/* Our whole replica as SLICE pairs, for a member that just said hello. */
static void send_replica(sw__peer *pe, int rank)
{
    size_t k = 0;
    for (uint32_t j = 0; j < pe->n; j++)
        if (pe->theta[j] != 0.0f) {
            pe->idx[k] = j;
            pe->val[k++] = pe->theta[j];
        }
    sw_msg_put_pairs(pe->pay, pe->idx, pe->val, k);
    sw__peer_send(pe, rank, SW_MSG_PEER_SLICE, pe->pay, 8 * k);
}

/* A message refused: counted, and said for the first few only (a stranger's flood would
 * drown the log), with the sender's name made safe to print. */
static void refuse(sw__peer *pe, const char *from, const char *why)
{
    char name[SW_PEER_EP_LEN];
    sw_printable(name, sizeof name, from, strlen(from));
    sw_log_counted(SW_LOG_WARN, &pe->r->refused, "ignoring a message from %s: %s", name, why);
}

/* A HELLO's payload: the endpoint, a newline, the run (both cut to fit). */
static void read_hello(const sw_msg *m, char *ep, size_t ep_cap, char *run, size_t run_cap)
{
    const char *text = (const char *)m->payload, *nl = memchr(text, '\n', m->payload_len);
    size_t ep_len = nl ? (size_t)(nl - text) : m->payload_len;
    size_t run_len = nl ? m->payload_len - ep_len - 1 : 0;
    snprintf(ep, ep_cap, "%.*s", (int)(ep_len < ep_cap ? ep_len : ep_cap - 1), text);
    snprintf(run, run_cap, "%.*s", (int)(run_len < run_cap ? run_len : run_cap - 1),
             nl ? nl + 1 : "");
}

/* The value of `key` in a run ("model=... params=... data=... seed=..."), into out. */
static void run_field(const char *run, const char *key, char *out, size_t cap)
{
    size_t klen = strlen(key);
    const char *at = run;
    while (*at && !(strncmp(at, key, klen) == 0 && at[klen] == '='))
        at += strcspn(at, " ") + (at[strcspn(at, " ")] == ' ');
    size_t len = *at ? strcspn(at + klen + 1, " ") : 0;
    snprintf(out, cap, "%.*s", (int)len, *at ? at + klen + 1 : "");
}

/* A peer whose run is not ours would train another model on our weights: it is told how it
 * differs (each field that does), and not admitted. */
static bool same_run(sw__peer *pe, const char *from, const char *ep, const char *run)
{
    if (!strcmp(run, pe->run))
        return true;
    static const char *const keys[] = {"model", "params", "data", "seed"};
    char why[SW_PEER_RUN_LEN + 64] = "its run is not the group's:";
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
        char theirs[SW_PEER_RUN_LEN], ours[SW_PEER_RUN_LEN];
        run_field(run, keys[k], theirs, sizeof theirs);
        run_field(pe->run, keys[k], ours, sizeof ours);
        size_t len = strlen(why);
        if (strcmp(theirs, ours))
            snprintf(why + len, sizeof why - len, " %s %.60s, the group's %.60s;", keys[k],
                     *theirs ? theirs : "(none)", ours);
    }
    why[strlen(why) - 1] = '\0'; /* the last separator */
    refuse(pe, from, why);
    sw__peer_tell(pe, ep, SW_MSG_ERROR, why, strlen(why));
    return false;
}

static void on_hello(sw__peer *pe, const char *from, const sw_msg *m)
{
    char ep[SW_PEER_EP_LEN], run[SW_PEER_RUN_LEN];
    read_hello(m, ep, sizeof ep, run, sizeof run);
    if (sw__peer_rank(pe, ep) < 0 && !same_run(pe, from, ep, run))
        return;
    int rank = sw__peer_add(pe, ep);
    if (rank < 0) {
        char why[SW_PEER_EP_LEN + 64];
        sw_printable(why, sizeof why, ep, strlen(ep));
        snprintf(why + strlen(why), sizeof why - strlen(why), ": not admitted (full, or not an "
                 "endpoint)");
        refuse(pe, from, why);
        return;
    }
    pe->m[rank].heard = sw__peer_now(pe);
    char text[SW_PEER_MEMBERS_LEN];
    size_t n = sw__peer_members_text(pe, text, sizeof text);
    sw__peer_broadcast(pe, SW_MSG_PEER_MEMBERS, text, n);
    send_replica(pe, sw__peer_rank(pe, ep));
}

/* A member's message (or anyone's HELLO: take and replay_held decide which). */
static void handle(sw__peer *pe, const char *from, const sw_msg *m)
{
    int rank = sw__peer_rank(pe, from);
    if (rank >= 0)
        pe->m[rank].last_seen = pe->m[rank].heard = sw__peer_now(pe);
    switch (m->type) {
    case SW_MSG_PEER_HELLO: on_hello(pe, from, m); break;
    case SW_MSG_PEER_MEMBERS: sw__peer_merge_members(pe, m); break;
    case SW_MSG_PEER_DELTA:
        take_pairs(pe, m, true);
        pe->started |= !pe->training; /* a member trains: the group was whole for it */
        break;
    case SW_MSG_PEER_SLICE:
        take_pairs(pe, m, false);
        pe->have_replica = true;
        break;
    case SW_MSG_PEER_STOP:
        pe->done = true;
        pe->r->reached = m->payload_len == 7 && !memcmp(m->payload, "reached", 7);
        break;
    case SW_MSG_PEER_BYE: sw__peer_remove(pe, rank, "left"); break;
    case SW_MSG_ERROR: /* our contact turned us away while we join; or a member dropped us */
        if (pe->training && rank >= 0 && !pe->cut_off[0]) {
            char said[121]; /* the wire's bytes, printable */
            sw_printable_text(said, sizeof said, m->payload, m->payload_len);
            snprintf(pe->cut_off, sizeof pe->cut_off, "member %s says: %s", from, said);
            pe->done = true;
        } else if (!pe->have_replica && pe->p->join && !strcmp(from, pe->p->join))
            sw_printable_text(pe->refused, sizeof pe->refused, m->payload, m->payload_len);
        break;
    default: sw_log(SW_LOG_WARN, "ignoring a '%s' message", sw_msg_type_name(m->type));
    }
}

/* A member we dropped as silent speaks on, and no member list names it again: it was slow, not
 * dead, and would train on as a second group (and judge). Told once (ERROR), it ends. */
static void tell_if_dropped(sw__peer *pe, const char *from)
{
    static const char why[] = "dropped from the group as silent for longer than --timeout";
    if (sw__peer_forget_dropped(pe, from))
        sw__peer_tell(pe, from, SW_MSG_ERROR, why, sizeof why - 1);
}

/* A held message given up: pushed out by newer ones, or held --timeout unclaimed (expired:
 * only then is its sender, if we dropped it, told so; one that was pushed out may be a
 * member again whose list has not come yet). */
static void refuse_held(sw__peer *pe, const sw__held *h, bool expired)
{
    char why[64];
    snprintf(why, sizeof why, "a '%s' from a non-member", sw_msg_type_name(h->type));
    refuse(pe, h->from, why);
    if (expired)
        tell_if_dropped(pe, h->from);
    sw_frame_unref(h->frame);
}

/* Only members speak for the group: a stranger may say HELLO to join, and nothing else counts
 * (a non-member's STOP would end the run, its MEMBERS add fake peers). But a member's DELTA can
 * outrun the MEMBERS that names its sender (they come on different connections): it is held,
 * SW_PEER_HELD at most, until a member list names the sender (replay_held) or --timeout passes,
 * and only then refused. The oldest makes room, so that a stranger's flood holds little. */
static void hold(sw__peer *pe, const char *from, sw_frame *frame, sw_msg_type type)
{
    if (pe->n_held == SW_PEER_HELD) {
        refuse_held(pe, &pe->held[0], false);
        memmove(pe->held, pe->held + 1, (size_t)--pe->n_held * sizeof *pe->held);
    }
    sw__held *h = &pe->held[pe->n_held++];
    snprintf(h->from, sizeof h->from, "%s", from);
    h->frame = sw_frame_ref(frame);
    h->type = type;
    h->at = sw__peer_now(pe);
}

/* A frame read whole: handled, held or refused. */
static void take_frame(sw__peer *pe, const char *from, sw_frame *frame)
{
    sw_msg m;
    char why[SW_ERR_LEN];
    if (sw_msg_decode(sw_frame_data(frame), sw_frame_size(frame),
                      8 * (uint64_t)pe->n + SW_PEER_MEMBERS_LEN, &m, why) != 0)
        refuse(pe, from, why);
    else if (sw__peer_rank(pe, from) < 0 && m.type != SW_MSG_PEER_HELLO)
        hold(pe, from, frame, m.type);
    else
        handle(pe, from, &m);
}

/* Handles the held messages whose senders are members now, in the order they came (one may
 * be the MEMBERS that names the next one's sender), and refuses those held past --timeout. */
static void replay_held(sw__peer *pe)
{
    for (bool more = true; more;) {
        more = false;
        int kept = 0;
        for (int i = 0; i < pe->n_held; i++) {
            sw__held h = pe->held[i];
            if (sw__peer_rank(pe, h.from) >= 0) {
                take_frame(pe, h.from, h.frame);
                sw_frame_unref(h.frame);
                more = true;
            } else if (sw__peer_now(pe) - h.at > pe->p->timeout_s) {
                refuse_held(pe, &h, true);
            } else {
                pe->held[kept++] = h;
            }
        }
        pe->n_held = kept;
    }
}

/* One delivery: a single frame, named by its route. */
static void take(sw__peer *pe, const sw_delivery *d)
{
    char from[SW_PEER_EP_LEN];
    size_t len = d->route_len < sizeof from - 1 ? d->route_len : sizeof from - 1;
    memcpy(from, d->route, len);
    from[len] = '\0';
    if (d->multipart)
        refuse(pe, from, "a message must be a single frame");
    else if (!d->gone)
        take_frame(pe, from, d->frame);
}

void sw__peer_receive_all(sw__peer *pe, double wait_s)
{
    bool ready;
    if (wait_s > 0 && sw_net_wait(pe->net, &pe->in, 1, sw_net_now(pe->net) + wait_s, &ready, NULL))
        return;
    sw_delivery d;
    while (sw_recv(pe->in, &d) == 0) {
        take(pe, &d);
        sw_frame_unref(d.frame);
    }
    replay_held(pe);
}

void sw__peer_refuse_all_held(sw__peer *pe)
{
    for (int i = 0; i < pe->n_held; i++) /* their senders never became members */
        refuse_held(pe, &pe->held[i], false);
    pe->n_held = 0;
}
