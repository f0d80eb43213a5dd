/* A worker process's heartbeats: a thread with a socket of its own sends one every heartbeat_s
 * while the worker has an id, so that a long step never looks like a crash, and reads the
 * server's echoes: when the server heard from last, and whether it still knows us. */
#include <math.h>

#include "syncwise/clock.h"
#include "syncwise/log.h"
#include "worker_internal.h"

/* Our heartbeat: the token read between two equal reads of the id belongs to that membership
 * (joining clears the id before it stores the token and sets the new id after). False when we
 * have no membership to beat for. */
static bool beat(worker *k, sw_sock *hb)
{
    uint32_t id = atomic_load(&k->id);
    uint64_t token = atomic_load(&k->token);
    if (id == SW_NO_WORKER || id != atomic_load(&k->id))
        return false;
    sw_frame *f = sw_frame_new(SW_PROTO_HEADER);
    if (!f)
        return true;
    sw_msg m = {.type = SW_MSG_HEARTBEAT, .worker = id, .version = token};
    sw_msg_encode(&m, sw_frame_data(f));
    sw_send(hb, NULL, 0, f);
    return true;
}

/* An answer on the heartbeat socket: the server lives. "Unknown worker" means it restarted,
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

/* Beats unanswered this many periods dial the server afresh, and again as often while it is
 * silent. A link that was cut holds what a connection sent meanwhile until TCP's next
 * retransmission after it heals, and those come further apart the longer the cut (3, 6, 12, 25,
 * 51 s after it): heartbeats left on that connection would reach the server seconds after the
 * link came back, and a cut of half the --heartbeat-timeout drop us. A fresh connection gets
 * through as soon as the link heals (the server ties heartbeats to our token, not to a
 * connection). A server that is only slow costs a connection a second. */
#define REDIAL_AFTER_BEATS 2

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

/* How soon the thread sees that the worker is done: the transport cannot wake one thread from
 * another, so it waits in slices this long (a worker's exit waited up to a heartbeat period). */
#define QUIT_CHECK_S 0.02

static void *heartbeats(void *arg)
{
    worker *k = arg;
    sw_sock *hb = NULL;
    if (dial_heartbeats(k, &hb))
        return NULL; /* the main socket dialled the same: this cannot fail but for memory */
    unsigned unanswered = 0;
    while (!atomic_load(&k->quit)) {
        if (unanswered >= REDIAL_AFTER_BEATS) {
            sw_sock *fresh = NULL;
            if (!dial_heartbeats(k, &fresh)) {
                sw_log(SW_LOG_DEBUG, "no echo of our last %u heartbeats: dialling the server "
                       "afresh for them", unanswered);
                sw_sock_close(hb);
                hb = fresh;
            }
            unanswered = 0;
        }
        unanswered += beat(k, hb);
        double until = sw_net_now(k->net) + k->p->heartbeat_s;
        while (!atomic_load(&k->quit) && sw_net_now(k->net) < until) {
            bool ready;
            sw_delivery d;
            double slice = sw_net_now(k->net) + QUIT_CHECK_S;
            if (sw_net_wait(k->net, &hb, 1, slice < until ? slice : until, &ready, NULL))
                break;
            while (sw_recv(hb, &d) == 0) {
                if (heard(k, d.frame))
                    unanswered = 0;
                sw_frame_unref(d.frame);
            }
        }
    }
    sw_sock_close(hb);
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
