/* The in-process network (syncwise/transport.h): sockets are queues of arrivals ordered by the
 * fake time they land, then by when they were sent; a wait moves the clock to the first arrival
 * its sockets have. One thread: nothing here locks.
 *
 * A listener closed (a process killed) loses what was queued for it, as a host's socket
 * buffers are lost, and what it sent that has not landed yet; its dialers keep what they send
 * meanwhile and connect again to the next listener bound at their endpoint, which gets what
 * they kept, as ZeroMQ does. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "syncwise/err.h"
#include "transport_internal.h"

typedef struct arrival {
    double at;
    uint64_t seq;
    sw_frame *frame; /* NULL: the sender is gone */
    uint8_t route[SW_ROUTE_MAX];
    size_t route_len;
    struct arrival *next;
} arrival;

typedef struct isock isock;
struct isock {
    sw_sock base;
    bool listener;
    size_t max_frame;
    arrival *queue; /* by (at, seq) */
    isock *next;    /* a listener: the next one of the network; a dialer: of its listener */
    /* A listener's dialers; a dialer's listener (NULL once it closed), route and the last
     * arrival time each way, so that no frame overtakes an earlier one. */
    isock *dialers, *peer;
    arrival *held, **held_end; /* a dialer without a listener: what it sent since, in order */
    size_t n_held, max_held;
    uint8_t route[SW_ROUTE_MAX];
    size_t route_len;
    double last_up, last_down;
    /* A listener's sw_net_inproc_stall: frames its side (itself, or its dialers) reads
     * before the clock jumps. */
    unsigned stall_after;
    double stall_s;
    bool stall_dialers;
};

typedef struct inet {
    sw_net base;
    sw_inproc_params p;
    double now;
    uint64_t seq;
    uint32_t routes; /* made-up routes so far */
    isock *listeners;
    isock *orphans; /* dialers whose listener closed, waiting for another at their endpoint */
} inet;

int sw_net_inproc_new(sw_net **out, const sw_inproc_params *p, char *err)
{
    *out = NULL;
    if (!(p->latency_s >= 0) || !(p->bandwidth >= 0) || isinf(p->latency_s))
        return sw_fail(err, SW_EINVAL, "latency and bandwidth must be finite and not negative");
    inet *n = calloc(1, sizeof *n);
    if (!n)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    n->base.ops = &sw__net_inproc;
    n->p = *p;
    *out = &n->base;
    return 0;
}

static void free_net(sw_net *n)
{
    free(n);
}

static inet *net_of(const isock *s)
{
    return (inet *)s->base.net;
}

/* Queues an arrival at the latest of `at` and the connection's last one (*last). */
static bool deliver(isock *to, double at, double *last, sw_frame *f, const uint8_t *route,
                    size_t route_len)
{
    inet *n = net_of(to);
    arrival *a = calloc(1, sizeof *a);
    if (!a) {
        sw_frame_unref(f); /* lost, as a full queue loses it */
        errno = ENOMEM;
        return false;
    }
    a->at = *last = at > *last ? at : *last;
    a->seq = n->seq++;
    a->frame = f;
    a->route_len = route_len;
    if (route_len)
        memcpy(a->route, route, route_len);
    arrival **p = &to->queue;
    while (*p && ((*p)->at < a->at || ((*p)->at == a->at && (*p)->seq < a->seq)))
        p = &(*p)->next;
    a->next = *p;
    *p = a;
    return true;
}

static double arrives_at(const inet *n, size_t bytes)
{
    return n->now + n->p.latency_s + (n->p.bandwidth > 0 ? (double)bytes / n->p.bandwidth : 0);
}

static isock *new_sock(inet *n, bool listener, const char *endpoint, size_t max_frame)
{
    isock *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->base.net = &n->base;
    s->listener = listener;
    s->max_frame = max_frame;
    snprintf(s->base.endpoint, sizeof s->base.endpoint, "%s", endpoint);
    return s;
}

static isock *listener_at(const inet *n, const char *endpoint)
{
    for (isock *l = n->listeners; l; l = l->next)
        if (!strcmp(l->base.endpoint, endpoint))
            return l;
    return NULL;
}

/* What a dialer keeps while its listener is gone, unless its queue says: ZeroMQ's default
 * high-water mark. */
#define HELD_DEFAULT 1000

static void unlink_sock(isock **list, isock *s);

static void attach(isock *d, isock *l)
{
    d->peer = l;
    d->next = l->dialers;
    l->dialers = d;
}

/* What the killed listener sent that has not landed yet is lost with it (a frame still in a
 * killed process's queue, or reset away): before the dialer connects again, as over TCP. */
static void drop_in_flight(isock *d, double now)
{
    arrival **p = &d->queue;
    while (*p) {
        arrival *a = *p;
        if (a->at <= now) {
            p = &a->next;
            continue;
        }
        *p = a->next;
        sw_frame_unref(a->frame);
        free(a);
    }
}

static void drop_held(isock *d)
{
    while (d->held) {
        arrival *a = d->held;
        d->held = a->next;
        sw_frame_unref(a->frame);
        free(a);
    }
    d->n_held = 0;
}

/* The dialers waiting for l's endpoint connect to l, as ZeroMQ's redial does, and send what
 * they kept. Each keeps its route (ZeroMQ makes up a new one unless the dialer names its own). */
static void reconnect_orphans(inet *n, isock *l)
{
    isock **p = &n->orphans;
    while (*p) {
        isock *d = *p;
        if (strcmp(d->base.endpoint, l->base.endpoint)) {
            p = &d->next;
            continue;
        }
        *p = d->next;
        attach(d, l);
        d->base.reconnects++;
        for (arrival *a = d->held; a; a = a->next) {
            size_t size = sw_frame_size(a->frame);
            if (!l->max_frame || size <= l->max_frame) /* else lost, as a frame sent is */
                deliver(l, arrives_at(n, size), &d->last_up, a->frame, d->route, d->route_len);
            else
                sw_frame_unref(a->frame);
            a->frame = NULL; /* the listener's now, or gone */
        }
        drop_held(d);
    }
}

static int listen_inproc(sw_net *net, sw_sock **out, const sw_listen_params *p, char *err)
{
    inet *n = (inet *)net;
    if (p->curve_key)
        return sw_fail(err, SW_EINVAL, "CURVE needs ZeroMQ: the in-process network has none");
    if (listener_at(n, p->endpoint))
        return sw_fail(err, SW_EIO, "cannot bind %s: in use", p->endpoint);
    isock *s = new_sock(n, true, p->endpoint, p->max_frame);
    if (!s)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    s->next = n->listeners;
    n->listeners = s;
    reconnect_orphans(n, s);
    *out = &s->base;
    return 0;
}

static int dial_inproc(sw_net *net, sw_sock **out, const sw_dial_params *p, char *err)
{
    inet *n = (inet *)net;
    if (p->curve_key)
        return sw_fail(err, SW_EINVAL, "CURVE needs ZeroMQ: the in-process network has none");
    isock *l = listener_at(n, p->endpoint);
    if (!l)
        return sw_fail(err, SW_ENOTFOUND, "cannot connect to %s: nobody listens there",
                       p->endpoint);
    isock *s = new_sock(n, false, p->endpoint, p->max_frame);
    if (!s)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    if (p->identity) {
        s->route_len = strlen(p->identity) < SW_ROUTE_MAX ? strlen(p->identity) : SW_ROUTE_MAX;
        memcpy(s->route, p->identity, s->route_len);
    } else { /* as ZeroMQ makes them up: a zero byte, then a count */
        uint32_t id = ++n->routes;
        s->route_len = 5;
        for (int i = 0; i < 4; i++)
            s->route[1 + i] = (uint8_t)(id >> (24 - 8 * i));
    }
    s->max_held = p->queue ? p->queue : HELD_DEFAULT;
    attach(s, l);
    *out = &s->base;
    return 0;
}

static void drop_queue(isock *s)
{
    while (s->queue) {
        arrival *a = s->queue;
        s->queue = a->next;
        sw_frame_unref(a->frame);
        free(a);
    }
}

static void unlink_sock(isock **list, isock *s)
{
    for (isock **p = list; *p; p = &(*p)->next)
        if (*p == s) {
            *p = s->next;
            return;
        }
}

static void close_sock(sw_sock *sock)
{
    isock *s = (isock *)sock;
    inet *n = net_of(s);
    if (s->listener) {
        for (isock *d = s->dialers, *next; d; d = next) {
            next = d->next;
            drop_in_flight(d, n->now);
            d->peer = NULL;
            d->next = n->orphans;
            n->orphans = d;
        }
        unlink_sock(&n->listeners, s);
    } else if (s->peer) { /* the listener hears that this connection closed */
        deliver(s->peer, arrives_at(n, 0), &s->last_up, NULL, s->route, s->route_len);
        unlink_sock(&s->peer->dialers, s);
    } else {
        unlink_sock(&n->orphans, s);
        drop_held(s);
    }
    drop_queue(s);
    free(s);
}

/* Keeps what dialer d sends while its listener is gone, up to its queue (EAGAIN past it). */
static bool hold(isock *d, sw_frame *f)
{
    arrival *a = d->n_held < d->max_held ? calloc(1, sizeof *a) : NULL;
    if (!a) {
        errno = d->n_held < d->max_held ? ENOMEM : EAGAIN;
        sw_frame_unref(f);
        return false;
    }
    a->frame = f;
    if (!d->held)
        d->held_end = &d->held;
    *d->held_end = a;
    d->held_end = &a->next;
    d->n_held++;
    return true;
}

static isock *inproc_listener(sw_sock *s)
{
    isock *l = (isock *)s;
    return l && l->base.net->ops == &sw__net_inproc && l->listener ? l : NULL;
}

void sw_net_inproc_cut(sw_sock *listener)
{
    isock *l = inproc_listener(listener);
    if (!l)
        return;
    inet *n = net_of(l);
    drop_queue(l);
    for (isock *d = l->dialers, *next; d; d = next) {
        next = d->next;
        drop_queue(d);
        d->peer = NULL;
        d->next = n->orphans;
        n->orphans = d;
    }
    l->dialers = NULL;
}

void sw_net_inproc_mend(sw_sock *listener)
{
    isock *l = inproc_listener(listener);
    if (l)
        reconnect_orphans(net_of(l), l);
}

void sw_net_inproc_break(sw_sock *listener)
{
    sw_net_inproc_cut(listener);
    sw_net_inproc_mend(listener);
}

void sw_net_inproc_stall(sw_net *net, const char *endpoint, bool dialers, unsigned after,
                         double s)
{
    isock *l = net->ops == &sw__net_inproc ? listener_at((inet *)net, endpoint) : NULL;
    if (l && after > 0 && s > 0 && isfinite(s)) {
        l->stall_after = after;
        l->stall_s = s;
        l->stall_dialers = dialers;
    }
}

/* A frame read by s: the clock jumps if it is the stall's frame. */
static void count_toward_stall(isock *s)
{
    isock *l = s->listener ? s : s->peer;
    if (l && l->stall_s > 0 && l->stall_dialers == !s->listener && --l->stall_after == 0) {
        net_of(s)->now += l->stall_s; /* the reader stood still as it read */
        l->stall_s = 0;
    }
}

static isock *dialer_of(const isock *l, const uint8_t *route, size_t len)
{
    for (isock *d = l->dialers; d; d = d->next)
        if (d->route_len == len && !memcmp(d->route, route, len))
            return d;
    return NULL;
}

static bool send_inproc(sw_sock *sock, const uint8_t *route, size_t route_len, sw_frame *f)
{
    isock *s = (isock *)sock;
    inet *n = net_of(s);
    if (!s->listener && !s->peer)
        return hold(s, f);
    isock *to = s->listener ? dialer_of(s, route, route_len) : s->peer;
    size_t size = sw_frame_size(f);
    if (!to || (to->max_frame && size > to->max_frame)) {
        sw_frame_unref(f); /* nobody there, or too long: lost */
        errno = to ? EMSGSIZE : EHOSTUNREACH;
        return false;
    }
    double at = arrives_at(n, size);
    if (s->listener)
        return deliver(to, at, &to->last_down, f, NULL, 0);
    return deliver(to, at, &s->last_up, f, s->route, s->route_len);
}

static int recv_inproc(sw_sock *sock, sw_delivery *d)
{
    isock *s = (isock *)sock;
    memset(d, 0, sizeof *d);
    arrival *a = s->queue;
    if (!a || a->at > net_of(s)->now)
        return 1;
    s->queue = a->next;
    d->frame = a->frame;
    d->gone = !a->frame;
    d->route_len = a->route_len;
    if (a->route_len)
        memcpy(d->route, a->route, a->route_len);
    if (s->listener)
        snprintf(d->address, sizeof d->address, "inproc");
    free(a);
    count_toward_stall(s);
    return 0;
}

static int wait_inproc(sw_net *net, sw_sock **socks, size_t k, double until, bool *ready, char *err)
{
    inet *n = (inet *)net;
    double first = INFINITY;
    for (size_t i = 0; i < k; i++) {
        const arrival *a = ((isock *)socks[i])->queue;
        if (a && a->at < first)
            first = a->at;
    }
    double t = first < until ? first : until;
    if (isinf(t))
        return sw_fail(err, SW_ESTATE,
                       "nothing left to happen: every party waits for a "
                       "message that nobody will send");
    if (t > n->now)
        n->now = t;
    for (size_t i = 0; i < k; i++) {
        const arrival *a = ((isock *)socks[i])->queue;
        ready[i] = a && a->at <= n->now;
    }
    return 0;
}

static double now_inproc(const sw_net *n)
{
    return ((const inet *)n)->now;
}

static unsigned long long refused_inproc(const sw_net *n)
{
    (void)n;
    return 0;
}

const sw__net_ops sw__net_inproc = {
    .listen = listen_inproc,
    .dial = dial_inproc,
    .close = close_sock,
    .send = send_inproc,
    .recv = recv_inproc,
    .wait = wait_inproc,
    .now = now_inproc,
    .refused = refused_inproc,
    .free = free_net,
};
