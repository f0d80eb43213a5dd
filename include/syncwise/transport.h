/* How syncwise's processes talk: frames between sockets, behind one small interface with two
 * implementations, and one loop that gives the parties their turns.
 *
 *   ZeroMQ      real processes over tcp:// or ipc:// on the real clock, with CURVE security;
 *   in-process  every party in one process and one thread, on a fake clock that jumps from one
 *               event to the next: a frame arrives a latency (plus its size over a bandwidth)
 *               after it was sent, in order per connection, and a closed connection is told
 *               to its listener. Runs are deterministic, so the server and its workers can be
 *               tested on a scripted cluster without sleeps (tests/sim_net_rig.c).
 *
 * Two kinds of socket, as ZeroMQ's ROUTER and DEALER: a listener binds an endpoint and hears
 * many dialers, each named by a route that comes with its frames and addresses the answers; a
 * dialer connects to one listener. Sending never blocks: a frame that cannot be queued is lost,
 * as on a network, and the protocol's timeouts decide. Frames are reference-counted buffers, so
 * one frame can go to many receivers (a barrier's release), and a received frame is read where
 * it landed and handed on (to an apply thread) without a copy.
 *
 * A party (the server, a worker) is an agent: a turn handles what arrived on its sockets and
 * what is due, and says when it next wants a turn. sw_loop_run gives turns to a set of agents on
 * either network: the same code runs a real server and an in-process one.
 */
#ifndef SYNCWISE_TRANSPORT_H
#define SYNCWISE_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "syncwise/stop.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Frames -------------------------------------------------------------------------------- */

typedef struct sw_frame sw_frame;

/* A frame of `size` bytes of its own (aligned for any type); NULL when memory runs out. */
sw_frame *sw_frame_new(size_t size);
/* A frame over the caller's bytes, which must stay as they are until done(ctx) is called, from
 * whichever thread drops the last reference (ZeroMQ's I/O thread, say). NULL on no memory (done
 * is not called). */
sw_frame *sw_frame_lend(void *data, size_t size, void (*done)(void *ctx), void *ctx);
/* Another reference to f (thread-safe), and giving one up (NULL is ignored). */
sw_frame *sw_frame_ref(sw_frame *f);
void sw_frame_unref(sw_frame *f);
uint8_t *sw_frame_data(const sw_frame *f);
size_t sw_frame_size(const sw_frame *f);

/* ---- Networks and sockets ------------------------------------------------------------------ */

typedef struct sw_net sw_net;
typedef struct sw_sock sw_sock;

/* ZeroMQ: one context. Its sockets may be used from several threads, one thread per socket. */
int sw_net_zmq_new(sw_net **out, char *err);

/* The in-process network: one thread, a fake clock from 0. A frame of n bytes arrives
 * latency_s + n / bandwidth seconds after it was sent (bandwidth 0: no limit), never before an
 * earlier frame on the same connection. */
typedef struct sw_inproc_params {
    double latency_s, bandwidth;
} sw_inproc_params;
int sw_net_inproc_new(sw_net **out, const sw_inproc_params *p, char *err);
/* Network faults, for tests, on an in-process listener (closing it instead is a process
 * killed). Cut: every connection of the listener breaks; whatever was queued either way (read
 * by neither end yet) is lost, as a host's buffers are when a connection is reset, and its
 * dialers keep what they send meanwhile. Mend: they connect again, count the break
 * (sw_sock_reconnects) and deliver what they kept first, as ZeroMQ does. Break: both at once. */
void sw_net_inproc_cut(sw_sock *listener);
void sw_net_inproc_mend(sw_sock *listener);
void sw_net_inproc_break(sw_sock *listener);
/* A process stopped as it read (SIGSTOP, a frozen machine): the clock jumps s seconds as the
 * listener bound at `endpoint` (or, with `dialers`, any of the sockets connected to it, counted
 * together) takes its `after`-th frame from now, in the middle of a turn. */
void sw_net_inproc_stall(sw_net *net, const char *endpoint, bool dialers, unsigned after,
                         double s);

/* Keeps freed memory for the next message. Messages of the same few sizes come and go every
 * step; by default glibc gives a freed one's pages back to the kernel (it trims a heap whose
 * free top passes a threshold, with MADV_DONTNEED) and the next message faults every page in
 * again. In a shard of a 4-worker run of 512 KB messages those faults took a fifth of its CPU,
 * and the run moved less than half the pushes it moves without them
 * (docs/results/shards.md). This serves blocks of up to SW_NET_HEAP_BLOCK_MAX bytes from the
 * heaps and keeps up to SW_NET_KEEP_FREED bytes of free memory at a heap's top, for the
 * process's life (mallopt; nothing without glibc). It sets the whole process's allocator, so
 * it is for programs to call at start (syncwise's server, shard, worker and peer commands,
 * and the network benchmarks), not something a library embedding syncwise gets unasked. */
#define SW_NET_HEAP_BLOCK_MAX (32 << 20) /* glibc's largest on 64-bit: half a thread's heap */
#define SW_NET_KEEP_FREED (256 << 20)
void sw_net_keep_freed_memory(void);

/* Frees the network; close its sockets first. */
void sw_net_free(sw_net *n);

/* Seconds on the network's clock: monotonic real time, or the fake clock. */
double sw_net_now(const sw_net *n);

/* Connections refused for an unknown CURVE key so far (ZeroMQ; 0 in process). */
unsigned long long sw_net_refused(const sw_net *n);

typedef struct sw_listen_params {
    const char *endpoint; /* tcp://HOST:PORT (port * picks a free one), ipc://PATH; in process,
                           * any name */
    size_t max_frame;     /* longer frames are dropped unread (0: no limit) */
    double linger_s;      /* how long closing waits for frames still queued */
    /* CURVE (ZeroMQ only): our key pair file, and the public keys of the clients we admit and
     * of the operators among them (may be NULL); curve_key NULL: no CURVE. */
    const char *curve_key, *curve_clients, *curve_operators;
    bool curve_group; /* admit only holders of curve_key's own pair (peers sharing one): no
                       * clients' file */
    /* TCP: a connection whose peer's host has acknowledged nothing for this long (data sent,
     * or keepalive probes while it is idle) is closed, and a dialer's made again: a link a
     * middlebox or a dead host dropped without a word is found. 0: the system's (about 15
     * minutes with data unacknowledged; never while idle). Not for a link to a process that
     * may be stopped longer with its buffers full: its host stops taking data, and that
     * counts too. */
    double dead_link_s;
} sw_listen_params;

typedef struct sw_dial_params {
    const char *endpoint;
    const char *identity; /* the route the listener knows us by (NULL: one it makes up) */
    size_t max_frame;
    size_t queue;         /* frames queued for sending before more are lost (0: the default) */
    double linger_s;
    const char *curve_key, *curve_server; /* CURVE: our key pair file, the server's public key */
    double dead_link_s; /* as sw_listen_params' */
} sw_dial_params;

/* Opens a listener or a dialer. Fails with a message on a bad or busy endpoint, a key file that
 * cannot be read, CURVE where there is none, or (in process) no listener to dial. */
int sw_listen(sw_net *n, sw_sock **out, const sw_listen_params *p, char *err);
int sw_dial(sw_net *n, sw_sock **out, const sw_dial_params *p, char *err);
/* Closes a socket (NULL is ignored); in process, its listener hears that the dialer is gone. */
void sw_sock_close(sw_sock *s);
/* Gives up what a socket still has queued for sending (its peer is gone for good), so that
 * closing it and freeing the network do not wait out its linger. */
void sw_sock_discard(sw_sock *s);
/* The endpoint a listener is bound to (with the port it picked). */
const char *sw_sock_endpoint(const sw_sock *s);
/* How many times a dialer's connection broke and was made again (ZeroMQ: handshakes completed
 * after its first, counted as its waits see them; in process: listeners bound at its endpoint
 * after the one before closed): what was on its way then may be lost, in either direction,
 * and what the dialer sent while it had no connection reaches the new listener. */
unsigned sw_sock_reconnects(const sw_sock *s);

/* Sends f, and gives up the caller's reference: from a listener to the dialer its route names,
 * from a dialer to its listener (route NULL). Never blocks; a frame that cannot go is lost, and
 * false says so, errno why: EAGAIN its queue full (a dialer without a connection keeps what it
 * sends, up to its queue, until it connects again);
 * EHOSTUNREACH no such route; EMSGSIZE over the receiver's limit; ENOMEM (f NULL, from a failed
 * allocation, is lost too). */
bool sw_send(sw_sock *s, const uint8_t *route, size_t route_len, sw_frame *f);

#define SW_ROUTE_MAX 255

/* What a socket received. */
typedef struct sw_delivery {
    sw_frame *frame;                /* the caller's reference; NULL when `gone` */
    uint8_t route[SW_ROUTE_MAX];    /* a listener's: the sender */
    size_t route_len;
    bool by_operator; /* the sender proved an operator's CURVE key */
    bool multipart; /* it came in several frames (ZeroMQ): only the first is kept */
    bool gone;      /* the sender's connection closed (in process; ZeroMQ cannot tell) */
    char address[48]; /* a listener's: where the sender is ("127.0.0.1", "inproc"); may be "" */
} sw_delivery;

/* Takes what arrived first: 0 and a delivery, 1 when nothing has. */
int sw_recv(sw_sock *s, sw_delivery *d);

/* Waits until one of socks[0..k) has something or the clock reaches `until` (INFINITY: no
 * limit), and says which are ready. A signal ends the wait early. In process, the fake clock
 * moves to the first arrival or to `until`; with neither, nothing will ever happen, and it
 * fails with SW_ESTATE. */
int sw_net_wait(sw_net *n, sw_sock **socks, size_t k, double until, bool *ready, char *err);

/* ---- Agents and the loop ------------------------------------------------------------------- */

/* The most sockets an agent waits on: a sharded server's listener, operators and a dialer per
 * shard, or a worker's server and shards (syncwise/shard.h checks SW_SHARDS_MAX fits). */
#define SW_AGENT_SOCKS 264
#define SW_AGENT_DONE (-1.0)

typedef struct sw_agent {
    /* Handles what arrived on the agent's sockets and what is due at `now`; returns the time of
     * the next turn it wants without a message (INFINITY: only on one), or SW_AGENT_DONE. */
    double (*turn)(void *ctx, double now);
    void *ctx;
    sw_sock *socks[SW_AGENT_SOCKS];
    size_t n_socks;
    double due; /* the loop's: when its next turn is due */
} sw_agent;

typedef struct sw_loop sw_loop;

int sw_loop_new(sw_loop **out, sw_net *n, char *err);
void sw_loop_free(sw_loop *l);
/* Adds an agent (borrowed until removed or done); its first turn is at once. */
int sw_loop_add(sw_loop *l, sw_agent *a, char *err);
/* Removes an agent, even from within another's turn: it gets no more turns. */
void sw_loop_remove(sw_loop *l, sw_agent *a);

/* Gives turns, in the order the agents were added, to each agent whose socket has something or
 * whose turn is due, until every agent is done, *stop is set (may be NULL), or the clock reaches
 * `until` (INFINITY: none). Fails only when the network does. */
int sw_loop_run(sw_loop *l, const sw_stop_flag *stop, double until, char *err);

/* ---- Endpoints ----------------------------------------------------------------------------- */

/* Checks an endpoint a user gave and writes the one to use into out: tcp://HOST:PORT with PORT
 * in [1, 65535] (or * when binding), HOST an address (IPv6 in brackets), or, when binding, a
 * host name (resolved to its first IPv4 address) or a network interface; ipc://PATH as it is
 * (to bind, no process may listen there already). Fails with a message naming what is wrong. */
int sw_endpoint_check(const char *ep, bool bind, char *out, size_t cap, char *err);
/* How a listener's links are kept, for its first words: "CURVE: encrypted, known keys only",
 * or plain TCP (or IPC), no CURVE. */
const char *sw_endpoint_security(const char *ep, bool curve);

#ifdef __cplusplus
}
#endif

#endif
