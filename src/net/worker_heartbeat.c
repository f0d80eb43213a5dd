/* A worker process's heartbeats: a thread with a socket of its own sends one every heartbeat_s
 * while the worker has an id, so that a long step never looks like a crash, and reads the
 * server's echoes: when the server heard from last, and whether it still knows us. */
#include <math.h>

#include "syncwise/clock.h"
#include "syncwise/log.h"
#include "worker_internal.h"

/* Our heartbeat: the token read between two equal reads of the id belongs to that membership
 * (joining clears the id before it stores the token and sets the new id after). */
static void beat(worker *k, sw_sock *hb)
{
    uint32_t id = atomic_load(&k->id);
    uint64_t token = atomic_load(&k->token);
    if (id == SW_NO_WORKER || id != atomic_load(&k->id))
        return;
    sw_frame *f = sw_frame_new(SW_PROTO_HEADER);
    if (!f)
        return;
    sw_msg m = {.type = SW_MSG_HEARTBEAT, .worker = id, .version = token};
    sw_msg_encode(&m, sw_frame_data(f));
    sw_send(hb, NULL, 0, f);
}

/* An answer on a heartbeat socket: the server lives. "Unknown worker" means it restarted,
 * unless it answers a heartbeat of our previous membership, sent before we joined again (the
 * new server may give us the same id). */
static bool heard(worker *k, sw_frame *f)
{
    sw_msg m;
    if (sw_msg_decode(sw_frame_data(f), sw_frame_size(f), 1 << 16, &m, NULL) != 0)
        return false;
    atomic_store(&k->heard_us, (unsigned long long)(sw_clock_now_s() * 1e6));
    if (m.type == SW_MSG_ERROR && (m.flags & SW_FLAG_UNKNOWN) && m.worker == atomic_load(&k->id) &&
        m.worker != SW_NO_WORKER && m.version == atomic_load(&k->token))
        atomic_store(&k->rejoin, true);
    return true;
}

/* Beats unanswered for REDIAL_AFTER periods (REDIAL_MIN_S at least) dial the server afresh. A
 * link that was cut holds what a connection sent meanwhile until TCP's next retransmission
 * after it heals, and those come further apart the longer the cut (3, 6, 12, 25, 51 s after
 * it): heartbeats left on that connection reached the server seconds after the link came back,
 * and a cut of half the --heartbeat-timeout dropped us. A fresh connection gets through as soon
 * as the link heals (the server ties heartbeats to our token, not to a connection). The old one
 * is kept, and beaten on, until one of them is answered (a server that was only paused answers
 * on it), and an attempt that is not answered is replaced after a wait that doubles up to
 * REDIAL_MAX_S, so that a handshake over a slow link has the time it takes. */
#define REDIAL_AFTER 2
#define REDIAL_MIN_S 1.0
#define REDIAL_MAX_S 8.0

typedef struct beats {
    sw_sock *socks[2]; /* the connection in use, and one dialled afresh (or NULL) */
    double echoed;     /* when an answer last came, or the membership began */
    double dialled;    /* when socks[1] was dialled */
    double attempt_s;  /* how long it may go unanswered before it is replaced (0: none yet) */
} beats;

static int dial_heartbeats(worker *k, sw_sock **hb)
{
    sw_dial_params dp = {.endpoint = k->p->connect,
                         .max_frame = 1 << 16,
                         .curve_key = k->p->curve_key,
                         .curve_server = k->p->curve_server,
                         .dead_link_s = k->p->dead_link_s,
                         .linger_s = 0}; /* beats still queued are stale: dropped */
    return sw_dial(k->net, hb, &dp, NULL);
}

/* The server silent for `quiet`: a fresh connection, or the unanswered attempt replaced. */
static void redial_if_quiet(worker *k, beats *b, double now)
{
    double quiet = fmax(REDIAL_AFTER * k->p->heartbeat_s, REDIAL_MIN_S);
    if (now - b->echoed < quiet || (b->socks[1] && now - b->dialled < b->attempt_s))
        return;
    sw_sock *fresh = NULL;
    if (dial_heartbeats(k, &fresh))
        return;
    sw_log(SW_LOG_DEBUG, "no echo of our heartbeats for %.1f s: dialling the server afresh "
           "for them", now - b->echoed);
    sw_sock_close(b->socks[1]);
    b->socks[1] = fresh;
    b->dialled = now;
    b->attempt_s = b->attempt_s > 0 ? fmin(2 * b->attempt_s, REDIAL_MAX_S) : quiet;
}

/* An answer came on socks[which]: that connection is the one in use, the other goes. */
static void answered(beats *b, int which, double now)
{
    b->echoed = now;
    b->attempt_s = 0;
    if (!b->socks[1])
        return;
    sw_sock_close(b->socks[which ? 0 : 1]);
    b->socks[0] = b->socks[which];
    b->socks[1] = NULL;
}

/* How soon the thread sees that the worker is done: the transport cannot wake one thread from
 * another, so it waits in slices this long (a worker's exit waited up to a heartbeat period). */
#define QUIT_CHECK_S 0.02

static void *heartbeats(void *arg)
{
    worker *k = arg;
    beats b = {.echoed = sw_net_now(k->net)};
    if (dial_heartbeats(k, &b.socks[0]))
        return NULL; /* the main socket dialled the same: this cannot fail but for memory */
    while (!atomic_load(&k->quit)) {
        double now = sw_net_now(k->net);
        if (atomic_load(&k->id) == SW_NO_WORKER)
            b.echoed = now; /* no membership, no beats to answer: silence counts from one */
        redial_if_quiet(k, &b, now);
        for (int i = 0; i < 2 && b.socks[i]; i++)
            beat(k, b.socks[i]);
        double until = now + k->p->heartbeat_s;
        while (!atomic_load(&k->quit) && sw_net_now(k->net) < until) {
            bool ready[2];
            sw_delivery d;
            size_t n = b.socks[1] ? 2 : 1;
            double slice = sw_net_now(k->net) + QUIT_CHECK_S;
            if (sw_net_wait(k->net, b.socks, n, slice < until ? slice : until, ready, NULL))
                break;
            int echoed_on = -1;
            for (size_t i = 0; i < n; i++)
                while (sw_recv(b.socks[i], &d) == 0) {
                    if (heard(k, d.frame))
                        echoed_on = (int)i;
                    sw_frame_unref(d.frame);
                }
            if (echoed_on >= 0)
                answered(&b, echoed_on, sw_net_now(k->net));
        }
    }
    sw_sock_close(b.socks[0]);
    sw_sock_close(b.socks[1]);
    return NULL;
}

int sw__worker_heartbeat_start(worker *k, char *err)
{
    if (pthread_create(&k->heartbeat, NULL, heartbeats, k) != 0)
        return sw_fail(err, SW_ENOMEM, "cannot start the heartbeat thread");
    k->beating = true;
    return 0;
}

void sw__worker_heartbeat_stop(worker *k)
{
    if (!k->beating)
        return;
    atomic_store(&k->quit, true);
    pthread_join(k->heartbeat, NULL);
    k->beating = false;
}
