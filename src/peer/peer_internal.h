/* The decentralized peer's state, shared by its membership code (members.c) and its training
 * loop (peer.c). */
#ifndef SW_PEER_INTERNAL_H
#define SW_PEER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "syncwise/peer.h"
#include "syncwise/proto.h"
#include "syncwise/task.h"
#include "syncwise/transport.h"

#define SW_PEER_MAX_MEMBERS 64
#define SW_PEER_EP_LEN 128
/* PEER_MEMBERS' text: the endpoints, then a `wait=N` line. */
#define SW_PEER_MEMBERS_LEN (SW_PEER_MAX_MEMBERS * SW_PEER_EP_LEN + 32)
#define SW_PEER_RUN_LEN 256     /* a run's identity in a HELLO */
#define SW_PEER_HELD 16         /* messages held from endpoints not (yet) members */

typedef struct sw__member {
    char ep[SW_PEER_EP_LEN];
    sw_sock *out; /* a dialer connected to it; NULL for ourselves */
    double last_seen; /* when it was added or last spoke to us */
    double heard;     /* when it last spoke to us itself (0: never; hearsay proves nothing) */
} sw__member;

/* A message from an endpoint that is not a member yet (peer.c: hold). */
typedef struct sw__held {
    char from[SW_PEER_EP_LEN];
    sw_frame *frame; /* our reference */
    sw_msg_type type;
    double at;       /* when it came */
} sw__held;

typedef struct sw__peer {
    const sw_peer_params *p;
    sw_peer_result *r;
    sw_net *net;
    sw_sock *in; /* our listener: everyone sends here */
    char me[SW_PEER_EP_LEN];
    int ep_lock; /* the lock that claims --endpoint-file, or -1: one file, one process */
    sw__member m[SW_PEER_MAX_MEMBERS]; /* sorted by endpoint, ourselves included */
    int n_members;
    sw_task_data data;
    sw_task *task;
    sw_learner *learner;
    sw_grad grad;
    uint32_t *all; /* 0 .. n-1: the indices of a dense gradient */
    size_t n;      /* weights */
    float *theta, *best;
    uint8_t *changed; /* per weight of our slice: changed since our last SLICE */
    uint32_t *changed_list;
    size_t n_changed;
    uint32_t *idx;
    float *val;
    uint8_t *pay; /* an encoded payload: up to n pairs */
    double t0;
    bool done, have_replica;
    bool alone;       /* left alone by silence, and cut off from the group or not its judge */
    double last_tick; /* when our training loop last turned (it sends every step) */
    double next_beat; /* while the group waits to be whole: when we next say who we know */
    bool was_silent;  /* we were, once, longer than --timeout: the others may have dropped us */
    bool training;    /* the group was whole (--wait-peers): we train */
    bool started;     /* a member's DELTA came while we waited: the group trains already */
    uint32_t group_wait; /* the members the group waits for, as a waiting member's MEMBERS say */
    /* What every member must share, said in our HELLO (docs/protocol.md): the model, its
     * weights, the data's fingerprint and the seed. */
    char run[SW_PEER_RUN_LEN];
    char refused[SW_PEER_RUN_LEN + 128]; /* joining: why the contact turned us away, or "" */
    sw__held held[SW_PEER_HELD]; /* in the order they came */
    int n_held;
    /* Members we dropped as silent, the newest SW_PEER_HELD: one that speaks on (it was slow,
     * not dead) is told so once, and ends rather than train on as a second run. */
    char dropped[SW_PEER_HELD][SW_PEER_EP_LEN];
    int n_dropped;
    char cut_off[SW_PEER_EP_LEN + 200]; /* a member told us we are none of its: why, or "" */
} sw__peer;

double sw__peer_now(const sw__peer *pe);
int sw__peer_rank(const sw__peer *pe, const char *ep); /* -1 if not a member */
int sw__peer_my_rank(const sw__peer *pe);
/* Whether member `rank` is ourselves or spoke to us itself within `s` seconds. */
bool sw__peer_heard_within(const sw__peer *pe, int rank, double s);
int sw__peer_owner(const sw__peer *pe, uint32_t j); /* rank of the owner of weight j */

/* Adds a member (connecting to it) or refreshes its last_seen; -1 when the table is full. */
int sw__peer_add(sw__peer *pe, const char *ep);
void sw__peer_remove(sw__peer *pe, int rank, const char *why);
/* Takes ep off the members we dropped as silent: whether it was there. */
bool sw__peer_forget_dropped(sw__peer *pe, const char *ep);
/* Drops members silent for longer than the timeout. */
void sw__peer_remove_silent(sw__peer *pe);
/* The same in training, where a peer so left alone may have to end (pe->alone). */
void sw__peer_drop_silent(sw__peer *pe);
/* How many members the group waits for before anyone trains: ours, or a waiting member's. */
uint32_t sw__peer_wait_for(const sw__peer *pe);
/* A HELLO's payload: our endpoint, a newline, our run. */
size_t sw__peer_hello(const sw__peer *pe, char *out, size_t cap);

/* The wait for the group to be whole (wait.c): the members heard from lately, ourselves
 * included, and one turn of the wait. */
int sw__peer_live(const sw__peer *pe);
void sw__peer_wait_turn(sw__peer *pe);
/* Handles everything waiting, or waits up to wait_s for the first message (receive.c). */
void sw__peer_receive_all(sw__peer *pe, double wait_s);
/* Refuses (counts) the messages still held, whose senders never became members. */
void sw__peer_refuse_all_held(sw__peer *pe);

/* Weight j of our slice changed since our last SLICE. */
static inline void sw__peer_mark_changed(sw__peer *pe, uint32_t j)
{
    if (!pe->changed[j]) {
        pe->changed[j] = 1;
        pe->changed_list[pe->n_changed++] = j;
    }
}

/* Sends one message to an endpoint that is no member (a joiner turned away), on a socket of its
 * own, closed once the message is sent (or the silence timeout passed); nothing to an endpoint
 * sw__peer_add would not take. */
void sw__peer_tell(sw__peer *pe, const char *ep, sw_msg_type type, const void *payload, size_t len);
/* Sends one message to member `rank` (never blocks: a full queue loses it). */
void sw__peer_send(sw__peer *pe, int rank, sw_msg_type type, const void *payload, size_t len);
void sw__peer_broadcast(sw__peer *pe, sw_msg_type type, const void *payload, size_t len);
/* The member list as text, one endpoint per line. */
size_t sw__peer_members_text(const sw__peer *pe, char *out, size_t cap);
/* Adds every endpoint of a MEMBERS payload. */
void sw__peer_merge_members(sw__peer *pe, const sw_msg *m);

#endif
