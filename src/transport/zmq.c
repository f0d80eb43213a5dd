/* The ZeroMQ network (syncwise/transport.h): a listener is a ROUTER, a dialer a DEALER; frames
 * travel without copies both ways (a large frame is lent to ZeroMQ, a received one is read in
 * ZeroMQ's buffer), and CURVE listeners admit clients through the network's ZAP handler, which
 * every wait serves. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "curve_internal.h"
#include "syncwise/clock.h"
#include "syncwise/err.h"
#include "syncwise/log.h"
#include "transport_internal.h"

/* Frames this short are copied into ZeroMQ's own message: lending them costs more. */
#define COPY_BELOW 1024

typedef struct znet {
    sw_net base;
    void *ctx;
    sw__zap *zap; /* the CURVE listener's client check, or NULL */
    /* A CURVE listener's failed handshakes, by kind (no key, a HELLO it cannot read, broken
     * off), each kind's first five said: a keyless client's retries do not hide a wrong key. */
    uint64_t failed_handshakes[4];
} znet;

typedef struct zsock {
    sw_sock base;
    void *sock;
    void *handshakes; /* a dialer's monitor of its handshakes (a CURVE listener's), or NULL */
    unsigned closed;  /* handshakes the listener closed in a row */
    bool listener, curve, in; /* in: a handshake succeeded */
    bool redial;      /* a handshake broke after one had succeeded: connect again */
    bool redialing;   /* and no handshake has succeeded since (one warning a streak) */
    double redialed;  /* when it last did */
    int news_rc;      /* what handshake news read in a recv said, for the next wait */
    char news_err[SW_ERR_LEN];
} zsock;

/* ZeroMQ gives a connection up for good when its handshake breaks on the protocol (a listener
 * without CURVE where CURVE is spoken, or the reverse); a dialer that was in before connects
 * again itself, at most this often, since the listener may come back right (a server restarted
 * for a moment without its CURVE options, then with them). */
#define REDIAL_S 1.0

int sw_net_zmq_new(sw_net **out, char *err)
{
    *out = NULL;
    znet *n = calloc(1, sizeof *n);
    if (!n)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    n->base.ops = &sw__net_zmq;
    if (!(n->ctx = zmq_ctx_new())) {
        free(n);
        return sw_fail(err, SW_EIO, "cannot create a ZeroMQ context: %s", zmq_strerror(errno));
    }
    *out = &n->base;
    return 0;
}

static void free_net(sw_net *net)
{
    znet *n = (znet *)net;
    sw__zap_free(n->zap);
    zmq_ctx_term(n->ctx); /* after it, ZeroMQ holds no lent frame */
    free(n);
}

/* ZeroMQ takes an IPv6 address only on a socket told so; told always, it would also bind every
 * wildcard endpoint to IPv6, which not every host has. */
static void ipv6_if_named(zsock *z, const char *endpoint)
{
    int on = 1;
    if (!strncmp(endpoint, "tcp://[", 7))
        zmq_setsockopt(z->sock, ZMQ_IPV6, &on, sizeof on);
}

static zsock *new_sock(znet *n, int type, double linger_s, size_t max_frame, char *err)
{
    zsock *z = calloc(1, sizeof *z);
    if (!z) {
        sw_fail(err, SW_ENOMEM, "out of memory");
        return NULL;
    }
    z->base.net = &n->base;
    z->listener = type == ZMQ_ROUTER;
    if (!(z->sock = zmq_socket(n->ctx, type))) {
        sw_fail(err, SW_EIO, "cannot create a ZeroMQ socket: %s", zmq_strerror(errno));
        free(z);
        return NULL;
    }
    int linger = (int)(linger_s * 1000);
    zmq_setsockopt(z->sock, ZMQ_LINGER, &linger, sizeof linger);
    if (max_frame) { /* oversized frames never land */
        int64_t max = (int64_t)max_frame;
        zmq_setsockopt(z->sock, ZMQ_MAXMSGSIZE, &max, sizeof max);
    }
    return z;
}

/* Stops watching the handshakes (the socket closes). */
static void unwatch(zsock *z)
{
    if (!z->handshakes)
        return;
    zmq_socket_monitor(z->sock, NULL, 0);
    zmq_close(z->handshakes);
    z->handshakes = NULL;
}

static void discard(sw_sock *s)
{
    int linger = 0;
    zmq_setsockopt(((zsock *)s)->sock, ZMQ_LINGER, &linger, sizeof linger);
}

static void close_sock(sw_sock *s)
{
    zsock *z = (zsock *)s;
    unwatch(z);
    zmq_close(z->sock);
    free(z);
}

/* CURVE on a listener: our key pair, and the ZAP handler admitting the listed clients, or in a
 * group the holders of our own pair. */
static int curve_listener(znet *n, zsock *z, const sw_listen_params *p, char *err)
{
    if (!sw_curve_available())
        return sw_fail(err, SW_ENOTFOUND, "this libzmq has no CURVE support");
    const char *clients = p->curve_group ? p->curve_key : p->curve_clients;
    if (!clients)
        return sw_fail(err, SW_EINVAL, "CURVE needs the authorised clients' keys");
    if (n->zap)
        return sw_fail(err, SW_ESTATE, "one CURVE listener per network");
    sw_curve_keys keys;
    int rc = sw_curve_read(p->curve_key, 1, &keys, err);
    if (!rc)
        rc = sw__zap_new(&n->zap, n->ctx, clients, p->curve_group, p->curve_operators, err);
    return rc ? rc : sw__curve_server(z->sock, &keys, err);
}

/* TCP keepalive probes on an idle connection, and a limit on unacknowledged data (Linux's
 * TCP_USER_TIMEOUT, which then also ends the probes): either way a connection whose peer's
 * host answers nothing for `s` seconds is closed. */
static void watch_dead_link(zsock *z, double s)
{
    if (!(s > 0))
        return;
    int on = 1, idle = s >= 3 ? (int)(s / 3) : 1, every = s >= 6 ? (int)(s / 6) : 1, count = 3,
        limit_ms = s < INT32_MAX / 1000 ? (int)(s * 1000) : INT32_MAX;
    zmq_setsockopt(z->sock, ZMQ_TCP_KEEPALIVE, &on, sizeof on);
    zmq_setsockopt(z->sock, ZMQ_TCP_KEEPALIVE_IDLE, &idle, sizeof idle);
    zmq_setsockopt(z->sock, ZMQ_TCP_KEEPALIVE_INTVL, &every, sizeof every);
    zmq_setsockopt(z->sock, ZMQ_TCP_KEEPALIVE_CNT, &count, sizeof count);
    zmq_setsockopt(z->sock, ZMQ_TCP_MAXRT, &limit_ms, sizeof limit_ms);
}

static int watch_handshakes(znet *n, zsock *z, char *err);

static int listen_zmq(sw_net *net, sw_sock **out, const sw_listen_params *p, char *err)
{
    znet *n = (znet *)net;
    char bind[300];
    int rc = sw_endpoint_check(p->endpoint, true, bind, sizeof bind, err);
    if (rc)
        return rc;
    zsock *z = new_sock(n, ZMQ_ROUTER, p->linger_s, p->max_frame, err);
    if (!z)
        return SW_EIO;
    if (p->curve_key && ((rc = curve_listener(n, z, p, err)) ||
                         (rc = watch_handshakes(n, z, err)))) {
        close_sock(&z->base);
        return rc;
    }
    ipv6_if_named(z, bind);
    watch_dead_link(z, p->dead_link_s);
    /* A dialer that names its route (a peer, by its endpoint) and comes back on a new
     * connection takes that route over: by default ZeroMQ refuses the newcomer while the old
     * connection seems alive, and what it sends is lost (a peer stopped, dropped and taken in
     * again was never heard, and dropped again). Made-up routes never repeat. */
    int handover = 1;
    zmq_setsockopt(z->sock, ZMQ_ROUTER_HANDOVER, &handover, sizeof handover);
    /* A frame to a route that is gone fails (EHOSTUNREACH) instead of vanishing: a listener
     * learns that a peer's connection broke under it, though that peer may not know yet. */
    int mandatory = 1;
    zmq_setsockopt(z->sock, ZMQ_ROUTER_MANDATORY, &mandatory, sizeof mandatory);
    if (zmq_bind(z->sock, bind) != 0) {
        rc = sw_fail(err, SW_EIO, "cannot bind %s: %s%s", p->endpoint, zmq_strerror(errno),
                     errno == ENODEV ? " (give an address, a host name or an interface)" : "");
        close_sock(&z->base);
        return rc;
    }
    size_t len = sizeof z->base.endpoint;
    zmq_getsockopt(z->sock, ZMQ_LAST_ENDPOINT, z->base.endpoint, &len);
    *out = &z->base;
    return 0;
}

static int curve_dialer(zsock *z, const sw_dial_params *p, char *err)
{
    if (!p->curve_server)
        return sw_fail(err, SW_EINVAL, "CURVE needs the server's public key");
    sw_curve_keys mine, theirs;
    int rc = sw_curve_read(p->curve_key, 1, &mine, err);
    if (!rc)
        rc = sw_curve_read(p->curve_server, 0, &theirs, err);
    return rc ? rc : sw__curve_client(z->sock, &mine, theirs.pub, err);
}

/* A dialer hears how its handshakes end: without this, ZeroMQ retries in silence and a worker
 * that cannot get in waits for its whole server timeout. Every wait on the socket then fails with
 * SW_EAUTH and the reason (handshake_news). */
static int watch_handshakes(znet *n, zsock *z, char *err)
{
    char ep[64];
    snprintf(ep, sizeof ep, "inproc://sw-handshakes-%p", (void *)z);
    int linger = 0, events = ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
                             ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL;
    if (!z->listener) /* a listener's unknown keys are ZAP's to count */
        events |= ZMQ_EVENT_HANDSHAKE_SUCCEEDED | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH;
    if (zmq_socket_monitor(z->sock, ep, events) != 0 ||
        !(z->handshakes = zmq_socket(n->ctx, ZMQ_PAIR)) ||
        zmq_setsockopt(z->handshakes, ZMQ_LINGER, &linger, sizeof linger) != 0 ||
        zmq_connect(z->handshakes, ep) != 0)
        return sw_fail(err, SW_EIO, "cannot watch the handshakes: %s", zmq_strerror(errno));
    return 0;
}

/* A CURVE listener that cannot read our HELLO (we hold another server key than its own) closes
 * the connection without a word; after this many such closes in a row, none succeeding, the key
 * is the likely cause (a listener restarting refuses the connection instead). */
#define CLOSES_BEFORE_BLAME 3

/* What a dialer without keys is told of a listener that speaks only CURVE. */
#define ONLY_CURVE                                                                             \
    "speaks only CURVE: a worker or operator needs its key pair and the server's public key "  \
    "(--curve-key, --curve-server), a peer its group's key, a server its shards' key pair"

/* A CURVE listener's handshake that failed before any key was checked (ZAP counts those it
 * refuses): a dialer without keys, or with another server's public key, whose HELLO cannot be
 * read; or one that closed mid-handshake. Counted among the refused connections, and said. */
static void refused_handshake(zsock *z, uint16_t event, uint32_t value)
{
    static const char *const whys[4] = {
        "closed before its handshake ended", "no CURVE key (it speaks plain ZeroMQ)",
        "a HELLO this key cannot read (another server's public key?)",
        "a CURVE handshake that broke the protocol"};
    int kind = event == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL                ? 0
               : value == ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH ? 1
               : value == ZMQ_PROTOCOL_ERROR_ZMTP_CRYPTOGRAPHIC      ? 2
                                                                     : 3;
    znet *n = (znet *)z->base.net;
    sw_log_counted(SW_LOG_WARN, &n->failed_handshakes[kind], "%s refused a connection: %s",
                   z->base.endpoint, whys[kind]);
}

/* One event of the monitor: SW_EAUTH with the reason when it shows this dialer cannot get in. */
static int handshake_event(zsock *z, uint16_t event, uint32_t value, char *err)
{
    const char *ep = z->base.endpoint;
    if (z->listener) {
        refused_handshake(z, event, value);
        return 0;
    }
    if (event == ZMQ_EVENT_HANDSHAKE_SUCCEEDED) {
        z->base.reconnects += z->in; /* connected again: the old connection broke */
        z->in = true;
        z->redialing = false;
    }
    if (event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL && z->in) {
        z->redial = true; /* the listener changed under us: try it again (REDIAL_S) */
        return 0;
    }
    if (event == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH) /* ZAP said no: value is its status */
        return sw_fail(err, SW_EAUTH,
                       "%s refused this key (CURVE, status %u): is its public key in the "
                       "server's --curve-clients file (and its shards'), or for an operator's "
                       "commands in its --curve-operators file?",
                       ep, (unsigned)value);
    if (event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL &&
        value == ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH)
        return sw_fail(err, SW_EAUTH,
                       z->curve ? "%s does not speak CURVE (a server, shard or peer without "
                                  "--curve-key?)"
                                : "%s " ONLY_CURVE, ep);
    /* The listener closed before the handshake ended. A listener of the other mechanism may
     * close before its greeting reaches us (then no mismatch is reported; seen under load), and
     * a CURVE listener that cannot read our HELLO closes without a word; but so does a proxy or
     * a port forward with nothing behind it yet. Without keys, the mismatch is what tells CURVE:
     * closes alone only earn a warning, and the caller's own timeout decides (a worker's
     * --server-timeout, a server's --shard-wait). With keys, they are the wrong key's sign. */
    if (event != ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL || z->in ||
        ++z->closed < CLOSES_BEFORE_BLAME)
        return 0;
    if (!z->curve) {
        if (z->closed == CLOSES_BEFORE_BLAME)
            sw_log(SW_LOG_WARN, "%s closed %u handshakes, none complete: nothing listening "
                   "behind it yet (a proxy or port forward closes every connection then), or "
                   "it " ONLY_CURVE "; trying on", ep, z->closed);
        return 0;
    }
    return sw_fail(err, SW_EAUTH,
                   "%s closed the CURVE handshake %u times in a row: does it hold the key "
                   "pair whose public key we were given (a worker's --curve-server; a shard "
                   "the server's --curve-key; a peer its group's --curve-key), and does it "
                   "run under CURVE?",
                   ep, z->closed);
}

/* What the monitor told since the last look (its events are read and dropped). */
static int handshake_news(zsock *z, char *err)
{
    zmq_msg_t m;
    int rc = 0;
    zmq_msg_init(&m);
    while (zmq_msg_recv(&m, z->handshakes, ZMQ_DONTWAIT) >= 0) {
        if (zmq_msg_size(&m) == 6 && !rc) { /* the event: u16 its number, u32 its value */
            const uint8_t *b = zmq_msg_data(&m);
            uint16_t event;
            uint32_t value;
            memcpy(&event, b, 2);
            memcpy(&value, b + 2, 4);
            rc = handshake_event(z, event, value, err);
        }
    }
    zmq_msg_close(&m);
    return rc;
}

/* Connects a dialer whose connection ZeroMQ gave up (z->redial) again, once REDIAL_S passed. */
static void redial(zsock *z, double now)
{
    if (!z->redial || now - z->redialed < REDIAL_S)
        return;
    if (!z->redialing)
        sw_log(SW_LOG_WARN, "%s answered a handshake in another protocol (restarted without "
               "CURVE, or with it where we have none?): connecting again every %.0f s",
               z->base.endpoint, REDIAL_S);
    z->redialing = true;
    zmq_disconnect(z->sock, z->base.endpoint); /* what is left of the old connection, if any */
    zmq_connect(z->sock, z->base.endpoint);
    z->redial = false;
    z->redialed = now;
}

static int dial_zmq(sw_net *net, sw_sock **out, const sw_dial_params *p, char *err)
{
    char connect[300];
    int rc = sw_endpoint_check(p->endpoint, false, connect, sizeof connect, err);
    if (rc)
        return rc;
    zsock *z = new_sock((znet *)net, ZMQ_DEALER, p->linger_s, p->max_frame, err);
    if (!z)
        return SW_EIO;
    if (p->identity)
        zmq_setsockopt(z->sock, ZMQ_ROUTING_ID, p->identity, strlen(p->identity));
    watch_dead_link(z, p->dead_link_s);
    if (p->queue) {
        int hwm = p->queue > INT32_MAX ? INT32_MAX : (int)p->queue;
        zmq_setsockopt(z->sock, ZMQ_SNDHWM, &hwm, sizeof hwm);
    }
    z->curve = p->curve_key != NULL;
    if (z->curve)
        rc = curve_dialer(z, p, err);
    if (!rc)
        rc = watch_handshakes((znet *)net, z, err);
    ipv6_if_named(z, connect);
    if (!rc && zmq_connect(z->sock, connect) != 0)
        rc = sw_fail(err, SW_EIO, "cannot connect to %s: %s", p->endpoint, zmq_strerror(errno));
    if (rc) {
        close_sock(&z->base);
        return rc;
    }
    size_t len =
        strlen(connect) < sizeof z->base.endpoint ? strlen(connect) : sizeof z->base.endpoint - 1;
    memcpy(z->base.endpoint, connect, len);
    z->base.endpoint[len] = '\0';
    *out = &z->base;
    return 0;
}

static void unref_frame(void *data, void *hint)
{
    (void)data;
    sw_frame_unref(hint);
}

/* The frame as a ZeroMQ message: lent as it is, or for a short one copied. */
static int message_of(sw_frame *f, zmq_msg_t *m)
{
    size_t size = sw_frame_size(f);
    if (size < COPY_BELOW) {
        if (zmq_msg_init_size(m, size) != 0)
            return -1;
        memcpy(zmq_msg_data(m), sw_frame_data(f), size);
        sw_frame_unref(f);
        return 0;
    }
    return zmq_msg_init_data(m, sw_frame_data(f), size, unref_frame, f);
}

static bool send_zmq(sw_sock *s, const uint8_t *route, size_t route_len, sw_frame *f)
{
    zsock *z = (zsock *)s;
    zmq_msg_t m;
    if (message_of(f, &m) != 0) {
        sw_frame_unref(f);
        errno = ENOMEM;
        return false;
    }
    /* A full queue or a vanished peer only loses this frame. */
    if ((z->listener && zmq_send(z->sock, route, route_len, ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0) ||
        zmq_msg_send(&m, z->sock, ZMQ_DONTWAIT) < 0) {
        int why = errno; /* ZeroMQ's */
        zmq_msg_close(&m);
        errno = why;
        return false;
    }
    return true;
}

static void close_message(void *ctx)
{
    zmq_msg_close(ctx);
    free(ctx);
}

/* Discards the rest of a multi-frame message; whether there was any. */
static bool drain(void *sock, zmq_msg_t *first)
{
    bool more = zmq_msg_more(first), extra = more;
    while (more) {
        zmq_msg_t next;
        zmq_msg_init(&next);
        int got = zmq_msg_recv(&next, sock, 0);
        more = got >= 0 && zmq_msg_more(&next);
        zmq_msg_close(&next);
    }
    return extra;
}

/* The next message's body, kept in a frame over ZeroMQ's own buffer. */
static int take_body(zsock *z, sw_delivery *d, int flags)
{
    zmq_msg_t *m = malloc(sizeof *m);
    if (!m)
        return 1;
    zmq_msg_init(m);
    if (zmq_msg_recv(m, z->sock, flags) < 0) {
        close_message(m);
        return 1;
    }
    const char *user = z->listener ? zmq_msg_gets(m, "User-Id") : NULL;
    d->by_operator = user && !strcmp(user, SW_ZAP_OPERATOR);
    const char *where = z->listener ? zmq_msg_gets(m, "Peer-Address") : NULL;
    if (where)
        snprintf(d->address, sizeof d->address, "%s", where);
    d->multipart = drain(z->sock, m);
    d->frame = sw_frame_lend(zmq_msg_data(m), zmq_msg_size(m), close_message, m);
    if (!d->frame) {
        close_message(m);
        return 1;
    }
    return 0;
}

/* The CURVE handshakes waiting on our ZAP handler, answered. A reader that never sleeps in
 * sw_net_wait (a training peer reads with no wait) would otherwise leave every new connection
 * half open: a late joiner never got in, and members joining as a group started never heard
 * each other. */
static void answer_zap(znet *n)
{
    zmq_pollitem_t item = {.socket = sw__zap_socket(n->zap), .events = ZMQ_POLLIN};
    while (zmq_poll(&item, 1, 0) > 0 && (item.revents & ZMQ_POLLIN))
        sw__zap_handle(n->zap);
}

static int recv_zmq(sw_sock *s, sw_delivery *d)
{
    zsock *z = (zsock *)s;
    memset(d, 0, sizeof *d);
    if (!z->listener) {
        int got = take_body(z, d, ZMQ_DONTWAIT);
        /* A connection made again is told of (its monitor's event) before ZeroMQ passes on
         * anything it brings: read now, the break is counted before its first message is
         * handled, so a caller mends the break first (sw_sock_reconnects). */
        if (!got && z->handshakes && !z->news_rc)
            z->news_rc = handshake_news(z, z->news_err);
        return got;
    }
    zmq_msg_t id;
    zmq_msg_init(&id);
    int rc = 1;
    if (zmq_msg_recv(&id, z->sock, ZMQ_DONTWAIT) >= 0 && zmq_msg_more(&id)) {
        d->route_len = zmq_msg_size(&id) < SW_ROUTE_MAX ? zmq_msg_size(&id) : SW_ROUTE_MAX;
        memcpy(d->route, zmq_msg_data(&id), d->route_len);
        rc = take_body(z, d, 0); /* the rest of a message is there with its first frame */
    }
    zmq_msg_close(&id);
    if (rc && ((znet *)s->net)->zap) /* once the queue is read, not on every message */
        answer_zap((znet *)s->net);
    /* A CURVE listener's failed handshakes, read as its queue is: a caller that only receives
     * (a peer's training loop) never polls, and ZeroMQ's I/O thread blocks on a full monitor,
     * and with it every connection. For a listener this counts, and never fails. */
    if (rc && z->handshakes)
        handshake_news(z, z->news_err);
    return rc;
}

static int wait_zmq(sw_net *net, sw_sock **socks, size_t k, double until, bool *ready, char *err)
{
    znet *n = (znet *)net;
    size_t watched = 0; /* dialers' handshake monitors, polled after the sockets */
    bool redials = false;
    for (size_t i = 0; i < k; i++) { /* news a recv read first */
        zsock *z = (zsock *)socks[i];
        if (z->news_rc) {
            int rc = sw_fail(err, z->news_rc, "%s", z->news_err);
            z->news_rc = 0;
            return rc;
        }
    }
    for (size_t i = 0; i < k; i++) {
        watched += ((zsock *)socks[i])->handshakes != NULL;
        redials |= ((zsock *)socks[i])->redial;
    }
    size_t cap = k + watched + 1;
    zmq_pollitem_t few[16], *items = cap <= 16 ? few : malloc(cap * sizeof *items);
    if (!items)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    for (size_t i = 0; i < k; i++)
        items[i] = (zmq_pollitem_t){.socket = ((zsock *)socks[i])->sock, .events = ZMQ_POLLIN};
    size_t total = k;
    for (size_t i = 0; i < k; i++)
        if (((zsock *)socks[i])->handshakes)
            items[total++] =
                (zmq_pollitem_t){.socket = ((zsock *)socks[i])->handshakes, .events = ZMQ_POLLIN};
    size_t zap = total;
    if (n->zap)
        items[total++] = (zmq_pollitem_t){.socket = sw__zap_socket(n->zap), .events = ZMQ_POLLIN};
    double left = until - sw_clock_now_s();
    long ms = isinf(until) ? -1 : left <= 0 ? 0 : left > 3600 ? 3600000 : (long)ceil(left * 1000);
    if (redials && (ms < 0 || ms > (long)(REDIAL_S * 1000)))
        ms = (long)(REDIAL_S * 1000); /* a connection to make again before long */
    int got = zmq_poll(items, (int)total, ms);
    int rc = got < 0 && zmq_errno() != EINTR /* a signal: the caller looks at its stop flag */
                 ? sw_fail(err, SW_EIO, "poll: %s", zmq_strerror(zmq_errno()))
                 : 0;
    for (size_t i = 0; i < k; i++)
        ready[i] = got > 0 && (items[i].revents & ZMQ_POLLIN);
    for (size_t i = 0, at = k; got > 0 && !rc && i < k; i++) {
        zsock *z = (zsock *)socks[i];
        if (z->handshakes && (items[at++].revents & ZMQ_POLLIN))
            rc = handshake_news(z, err);
    }
    for (size_t i = 0; i < k; i++)
        redial((zsock *)socks[i], sw_clock_now_s());
    if (got > 0 && n->zap && (items[zap].revents & ZMQ_POLLIN))
        answer_zap(n);
    if (items != few)
        free(items);
    return rc;
}

static double now_zmq(const sw_net *n)
{
    (void)n;
    return sw_clock_now_s();
}

static unsigned long long refused_zmq(const sw_net *net)
{
    const znet *n = (const znet *)net;
    unsigned long long failed = 0;
    for (int k = 0; k < 4; k++)
        failed += n->failed_handshakes[k];
    return (n->zap ? sw__zap_refused(n->zap) : 0) + failed;
}

const sw__net_ops sw__net_zmq = {
    .listen = listen_zmq,
    .dial = dial_zmq,
    .close = close_sock,
    .discard = discard,
    .send = send_zmq,
    .recv = recv_zmq,
    .wait = wait_zmq,
    .now = now_zmq,
    .refused = refused_zmq,
    .free = free_net,
};
