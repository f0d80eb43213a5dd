/* The worker (syncwise/net.h): an agent whose turns handle the server's messages, one handler
 * per type, and what is due: a JOIN to send again, a step's push, a server silent too long.
 * Joining is in worker_join.c, steps in worker_step.c, heartbeats in worker_heartbeat.c. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "syncwise/log.h"
#include "worker_internal.h"

#define RECHECK_S 0.2 /* with heartbeats: how often a turn looks at what their thread heard */

sw_worker_params sw_worker_default_params(void)
{
    return (sw_worker_params){.connect = "tcp://127.0.0.1:5555", .get_model_frequency = 1,
                              .heartbeat_s = 0.5, .server_timeout_s = 30,
                              .dead_link_s = SW_PROTO_DEAD_LINK_S};
}

void sw__worker_fail(worker *k, int rc, const char *fmt, ...)
{
    if (!k->rc) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(k->msg, sizeof k->msg, fmt, ap);
        va_end(ap);
        k->rc = rc;
    }
    /* A member that cannot go on says so, or the server would hold its barriers for it until
     * its heartbeats stop counting (a shard that refused our key, a model that will not load). */
    sw_worker_leave(k);
}

void sw__worker_send(worker *k, sw_msg_type type, uint32_t flags, uint64_t version,
                     const void *payload, size_t len, const float *floats)
{
    sw_msg m = {.type = type, .worker = atomic_load(&k->id),
                .flags = flags | sw__worker_link_flags(k), .version = version,
                .payload = floats ? NULL : payload, .payload_len = len};
    /* No memory: the server's silence or ours decides what happens next. */
    sw_send(k->sock, NULL, 0, sw__frame_build(&k->lender, &m, floats));
}

/* ---- Handlers, one per message type -------------------------------------------------------- */

typedef void (*handler)(worker *k, const sw_msg *m, sw_frame *frame, double now);

static void on_welcome(worker *k, const sw_msg *m, sw_frame *frame, double now)
{
    (void)frame;
    if (k->state == JOINING)
        sw__worker_welcome(k, m, now);
}

static void on_release(worker *k, const sw_msg *m, sw_frame *frame, double now)
{
    if (k->leaving) /* the last push is in */
        sw_worker_leave(k);
    else if (k->state != JOINING) /* else an answer to what we sent before joining again */
        sw__worker_release(k, m, frame, now);
}

static void on_wait(worker *k, const sw_msg *m, sw_frame *frame, double now)
{
    (void)frame;
    if (k->leaving)
        sw_worker_leave(k);
    if (k->state == JOINING || k->state == OVER)
        return;
    k->redo |= (m->flags & SW_FLAG_DROPPED) != 0;
    k->state = HELD;
    k->since = now;
}

static void on_model_sparse(worker *k, const sw_msg *m, sw_frame *frame, double now)
{
    (void)frame;
    if (k->state == PULLING)
        sw__worker_pulled(k, m, now);
}

static int dial_server(worker *k, sw_sock **sock, char *err)
{
    sw_dial_params dp = {.endpoint = k->p->connect, .linger_s = 2,
                         .curve_key = k->p->curve_key, .curve_server = k->p->curve_server,
                         .dead_link_s = k->p->dead_link_s};
    return sw_dial(k->net, sock, &dp, err);
}

/* Our connection to the server, made afresh: one the server lost at its end may look alive at
 * ours (a middlebox that dropped it without a reset), and a JOIN on it would go nowhere. What
 * was queued on the old one is moot: we join again. */
static void dial_again(worker *k)
{
    sw_sock *fresh;
    char err[SW_ERR_LEN];
    if (dial_server(k, &fresh, err)) {
        sw_log(SW_LOG_WARN, "cannot connect to the server afresh (%s): joining on the old "
               "connection", err);
        return;
    }
    sw_sock_discard(k->sock); /* what it holds goes now, not after a linger */
    sw_sock_close(k->sock);
    k->sock = k->agent.socks[0] = fresh;
    k->reconnects = 0;
}

static void join_again(worker *k, double now)
{
    sw_log(SW_LOG_INFO, "the server does not know us (it restarted, or took our silence for a "
           "crash): joining again");
    sw__worker_join(k, now);
}

/* Our connection to the server broke and ZeroMQ made it again: the server knows us by the old
 * one's route, so its answers (a RELEASE) no longer reach us, and what was on its way either
 * way (our push, its answer) may be lost. We join again, as after a server restart: the old
 * membership ends as a crash once its heartbeats stop, and the step is done again. */
static void link_broke(worker *k, double now)
{
    if (k->state == JOINING || k->state == OVER)
        return; /* a JOIN goes again every second anyway */
    sw_log(SW_LOG_WARN, "our connection to the server at %s broke (a network fault, or the "
           "server restarted): joining again", k->p->connect);
    sw__worker_join(k, now);
}

/* Our connection broke and was made again since we last looked (a wait or a receive counts
 * it): we join again. */
static void mend_if_broken(worker *k, double now)
{
    if (sw_sock_reconnects(k->sock) != k->reconnects) {
        k->reconnects = sw_sock_reconnects(k->sock);
        link_broke(k, now);
    }
}

/* "Unknown worker" about our id: the server restarted, and we join again; about another id, an
 * answer from before we joined again. Any other refusal ends the run. */
static void on_error(worker *k, const sw_msg *m, sw_frame *frame, double now)
{
    (void)frame;
    int len = (int)m->payload_len;
    const char *why = (const char *)m->payload;
    if (m->flags & SW_FLAG_UNKNOWN) {
        if (k->state != JOINING && m->worker == atomic_load(&k->id)) {
            join_again(k, now);
        }
    } else if (k->state == JOINING && len == (int)strlen(SW_REFUSED_FULL) &&
               !memcmp(why, SW_REFUSED_FULL, (size_t)len)) {
        if (k->full_at < 0) /* JOIN goes again every second, until --server-timeout */
            sw_log(SW_LOG_INFO, "the server is full: trying again until a slot frees");
        k->full_at = now;
    } else if (k->state == JOINING) {
        sw__worker_fail(k, SW_ESTATE, "the server answered a join with '%.*s'", len, why);
    } else {
        /* Our gradient overflowed: the parameters it was computed at are far out already. */
        char text[SW_ERR_LEN];
        snprintf(text, sizeof text, "%.*s", len, why);
        sw__worker_fail(k, SW_ESTATE, "the server refused our message: %s%s", text,
                        sw__worker_divergence_hint(text));
    }
}

static const handler handlers[SW_MSG_TYPE_MAX + 1] = {
    [SW_MSG_WELCOME] = on_welcome,         [SW_MSG_RELEASE] = on_release,
    [SW_MSG_WAIT] = on_wait,               [SW_MSG_ERROR] = on_error,
    [SW_MSG_MODEL_SPARSE] = on_model_sparse,
};

/* One delivery: checked, then its handler; DONE on any message ends the run. */
static void take(worker *k, sw_frame *frame, double now)
{
    sw_msg m;
    char why[SW_ERR_LEN];
    /* the parameters, or a WELCOME when we join again, whichever is longer */
    uint64_t limit = 4 * (uint64_t)k->cfg.params;
    limit = (limit > SW_WELCOME_MAX ? limit : SW_WELCOME_MAX) + 8192;
    if (sw_msg_decode(sw_frame_data(frame), sw_frame_size(frame), limit, &m, why) != 0) {
        sw_log(SW_LOG_WARN, "ignoring a malformed message from the server: %s", why);
        return;
    }
    /* Until WELCOME we cannot know what the server agreed to (its WELCOME says). */
    if ((m.flags & SW_FLAG_UNCHECKED) && !k->cfg.unchecked && k->state != JOINING) {
        sw_log(SW_LOG_WARN, "ignoring a message without a checksum (the run checks them)");
        return;
    }
    if ((m.flags & SW_FLAG_DONE) && m.type == SW_MSG_RELEASE && m.payload_len && !k->rc)
        sw__worker_fail(k, SW_ESTATE, "the server's run failed: %.*s", (int)m.payload_len,
                        (const char *)m.payload);
    if (m.flags & SW_FLAG_DONE) {
        if (k->state == JOINING && !k->rc) /* a run in its last gather, or just over */
            sw_log(SW_LOG_INFO, "the server's run was over when we joined: nothing to train");
        k->r->done = true;
        sw_worker_leave(k); /* the goodbye the server waits for before it closes */
    } else if (handlers[m.type]) {
        handlers[m.type](k, &m, frame, now);
    } /* nothing else is meant for a worker: ignored */
}

/* ---- Turns --------------------------------------------------------------------------------- */

/* When the server's silence began to count: an answer is due from when we asked; while it
 * holds us, from the later of that and the last echo of our heartbeats. In a sharded run the
 * answer may wait on a shard that is being started again, the server's to judge: its echoes
 * count in every state. */
static double silent_since(const worker *k)
{
    double heard = (double)atomic_load(&k->heard_us) / 1e6;
    bool echoes = k->state == HELD || k->cfg.n_shards;
    return echoes && heard > k->since ? heard : k->since;
}

static void silent(worker *k, double now)
{
    sw__worker_fail(k, SW_EIO, "the server at %s has been silent for %.0f s", k->p->connect,
                    now - silent_since(k));
    k->server_gone = true;
}

/* What is due: a JOIN again, a push, a LEAVE that waited long enough, or giving up on a silent
 * server. */
static void deadlines(worker *k, double now)
{
    if (k->leaving && now >= k->leave_by) {
        sw_log(SW_LOG_WARN, "no answer to our last push in %.0f s: leaving without it",
               now - k->since);
        sw_worker_leave(k);
    } else if (k->state == JOINING)
        sw__worker_rejoin_due(k, now);
    else if (k->state == COMPUTED && now >= k->push_at)
        sw__worker_push(k, now);
    else if (now >= sw__worker_shards_again_at(k))
        sw__worker_shards_again_due(k, now);
    else if (k->state != COMPUTED && k->state != OVER &&
             now - silent_since(k) > k->p->server_timeout_s)
        silent(k, now);
}

static double next_due(const worker *k, double now)
{
    double due = k->state == JOINING    ? k->sent_at + SW_JOIN_RETRY_S
                 : k->state == COMPUTED ? k->push_at
                                        : silent_since(k) + k->p->server_timeout_s;
    due = sw__worker_shards_again_at(k) < due ? sw__worker_shards_again_at(k) : due;
    due = k->leaving && k->leave_by < due ? k->leave_by : due;
    return k->beating && due > now + RECHECK_S ? now + RECHECK_S : due;
}

void sw_worker_leave(sw_worker *k)
{
    if (k->state != JOINING && k->state != OVER)
        sw__worker_send(k, SW_MSG_LEAVE, 0, k->version, "", 0, NULL);
    k->state = OVER;
}

void sw__worker_leave_when_answered(worker *k, double now)
{
    if (!k->cfg.n_shards || k->state != ANSWER) {
        sw_worker_leave(k);
        return;
    }
    k->leaving = true;
    double wait =
        k->p->server_timeout_s < SW_LEAVE_WAIT_S ? k->p->server_timeout_s : SW_LEAVE_WAIT_S;
    k->leave_by = now + wait;
}

/* A stopped worker says goodbye; true when it is gone. */
static bool leave_if_stopped(worker *k, double now)
{
    if (sw_stop_requested(k->p->stop) && !k->leaving)
        sw__worker_leave_when_answered(k, now);
    return k->state == OVER;
}

static double turn(void *ctx, double now)
{
    worker *k = ctx;
    if (leave_if_stopped(k, now))
        return SW_AGENT_DONE;
    /* A worker waiting at a barrier sends nothing: only its heartbeats learn that a restarted
     * server does not know it, or that the server found our connection gone (a probe or an
     * answer to it found no route) and dropped us, though that connection looks alive here. */
    if (atomic_exchange(&k->rejoin, false) && k->state != JOINING && k->state != OVER) {
        dial_again(k);
        join_again(k, now);
    }
    mend_if_broken(k, now);
    sw_delivery d;
    while (k->state != OVER && sw_recv(k->sock, &d) == 0) {
        mend_if_broken(k, now); /* a receive may learn of it first: before what came after */
        if (d.frame)
            take(k, d.frame, now);
        sw_frame_unref(d.frame);
    }
    for (uint32_t j = 0; j < k->n_shard_socks; j++)
        while (k->state != OVER && sw_recv(k->shard_socks[j], &d) == 0) {
            if (d.frame)
                sw__worker_shards_take(k, j, d.frame, now);
            sw_frame_unref(d.frame);
        }
    /* Asked again: what came may have taken seconds (a WELCOME's data to load), and a signal
     * then must not be followed by a push. */
    if (leave_if_stopped(k, now))
        return SW_AGENT_DONE;
    deadlines(k, now);
    return k->state == OVER ? SW_AGENT_DONE : next_due(k, now);
}

/* ---- The worker's life --------------------------------------------------------------------- */

int sw_worker_new(sw_worker **out, sw_net *net, const sw_worker_params *p, sw_worker_result *r,
                  char *err)
{
    *out = NULL;
    memset(r, 0, sizeof *r);
    if (p->get_model_frequency == 0 || !(p->heartbeat_s > 0) || !(p->server_timeout_s > 0))
        return sw_fail(err, SW_EINVAL, "get_model_frequency, heartbeat and timeout must be "
                                       "positive");
    worker *k = calloc(1, sizeof *k);
    if (!k)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    k->p = p;
    k->r = r;
    k->net = net;
    k->full_at = -1;
    atomic_init(&k->id, SW_NO_WORKER);
    atomic_init(&k->rejoin, false);
    atomic_init(&k->token, 0);
    atomic_init(&k->heard_us, 0);
    atomic_init(&k->quit, false);
    k->cfg.params = 1 << 20; /* what we accept before WELCOME says the model's size */
    int rc = dial_server(k, &k->sock, err);
    if (rc) {
        free(k);
        return rc;
    }
    k->agent = (sw_agent){.turn = turn, .ctx = k, .socks = {k->sock}, .n_socks = 1};
    sw__worker_join(k, sw_net_now(net));
    *out = k;
    return 0;
}

sw_agent *sw_worker_agent(sw_worker *k) { return &k->agent; }

int sw_worker_end(sw_worker *k, char *err)
{
    int rc = k->rc ? sw_fail(err, k->rc, "%s", k->msg) : 0;
    sw__worker_heartbeat_stop(k);
    sw__worker_shards_close(k);
    if (k->server_gone) /* the JOINs and beats queued for it would hold the exit 2 s */
        sw_sock_discard(k->sock);
    sw_sock_close(k->sock);
    sw__worker_unload(k);
    free(k);
    return rc;
}

int sw_worker_run(const sw_worker_params *p, sw_worker_result *out, char *err)
{
    sw_net *net;
    sw_worker *k = NULL;
    sw_loop *loop = NULL;
    int rc = sw_net_zmq_new(&net, err);
    if (rc) {
        memset(out, 0, sizeof *out);
        return rc;
    }
    if (!(rc = sw_worker_new(&k, net, p, out, err)) &&
        !(rc = sw__worker_heartbeat_start(k, err)) && !(rc = sw_loop_new(&loop, net, err)) &&
        !(rc = sw_loop_add(loop, sw_worker_agent(k), err)))
        rc = sw_loop_run(loop, p->stop, INFINITY, err);
    if (k && rc)
        sw__worker_fail(k, rc, "%s", err);
    if (k && sw_stop_requested(p->stop))
        sw_worker_leave(k); /* stopped while the loop waited */
    if (k)
        rc = sw_worker_end(k, err);
    sw_loop_free(loop);
    sw_net_free(net);
    return rc;
}
