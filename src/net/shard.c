/* A server shard (syncwise/shard.h): one slice of θ, the gradients' slices the workers pushed,
 * and the applies the server's engine ordered. An agent of the loop, with a handler per
 * message type; every frame checked before anything reads it. This file is its messages (who
 * may say what), its members and its turns; shard_init.c, shard_apply.c, shard_pull.c and
 * shard_recover.c hold the rest (shard_internal.h). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shard_internal.h"
#include "syncwise/bytes.h"
#include "syncwise/err.h"
#include "syncwise/file.h"
#include "syncwise/log.h"
#include "syncwise/team.h"

#define BURST 64

typedef struct sw_shard shard;
typedef sw__from from;

/* ---- Sending -------------------------------------------------------------------------------- */

static void send_frame(shard *h, const from *to, sw_frame *f)
{
    if (!f)
        return; /* lost, as on a network: the other side's timeout decides */
    h->r->bytes_out += sw_frame_size(f);
    sw_send(h->sock, to->route, to->route_len, f);
}

/* The batch's way out: to the server's route as it is when the batch goes. */
static void send_to_server(void *ctx, sw_frame *f)
{
    shard *h = ctx;
    send_frame(h, &(from){h->server, h->server_len}, f);
}

/* A frame built already: to the server alone after its turn's batch, to anyone else at once. */
void sw__shard_send_frame(shard *h, const from *to, sw_frame *f)
{
    if (sw__shard_is_server(h, to))
        sw__batch_send_alone(&h->to_server, f);
    else
        send_frame(h, to, f);
}

/* To the server, by way of the turn's batch; to anyone else at once. */
void sw__shard_send(shard *h, const from *to, sw_msg_type type, uint32_t worker, uint32_t flags,
                    uint64_t version, const void *payload, size_t len)
{
    sw_msg m = {.type = type, .worker = worker, .flags = flags | sw__shard_link_flags(h),
                .version = version, .payload = payload, .payload_len = len};
    if (sw__shard_is_server(h, to)) {
        h->to_server.flags = sw__shard_link_flags(h);
        sw__batch_post(&h->to_server, &m);
    } else {
        send_frame(h, to, sw__msg_frame(&m, NULL));
    }
}

/* A server's order (or a gather's pull), as a refused shard hears them from its server. */
static bool is_order(sw_msg_type type)
{
    switch (type) {
    case SW_MSG_SHARD_INIT: case SW_MSG_SHARD_SET: case SW_MSG_SHARD_MEMBER:
    case SW_MSG_SHARD_APPLY: case SW_MSG_SHARD_PULL: case SW_MSG_SHARD_PING:
    case SW_MSG_SHARD_SAVE: case SW_MSG_SHARD_RESTORE: case SW_MSG_SHARD_SEND:
    case SW_MSG_BATCH:
        return true;
    default:
        return false;
    }
}

/* ERROR to the sender; SW_FLAG_UNKNOWN in `flags` says it is no member (yet: a worker's first
 * pull may overtake the server's MEMBER, and is sent again). */
/* How the shard names itself in its log: its index is INIT's word, none before. */
static const char *own_name(const shard *h, char out[40])
{
    if (h->configured)
        snprintf(out, 40, "shard %u", h->index);
    else
        snprintf(out, 40, "this shard (in no run yet)");
    return out;
}

void sw__shard_refuse_flagged(shard *h, const from *to, const sw_msg *m, uint32_t flags,
                              const char *why)
{
    char name[40];
    if (!h->configured && h->refused_run[0] && m && m->worker == SW_NO_WORKER &&
        is_order(m->type) && m->type != SW_MSG_SHARD_INIT) /* an INIT says its own */
        why = h->refused_run; /* the server's next orders after the INIT it refused */
    sw_log_counted(SW_LOG_INFO, &h->r->refused, "%s refused a message: %s", own_name(h, name),
                   why);
    sw__shard_send(h, to, SW_MSG_ERROR, m ? m->worker : SW_NO_WORKER, flags, m ? m->version : 0,
                   why, strlen(why));
}

/* A worker's push or pull before this shard holds its run's slice (before the INIT, or between
 * it and the SET; shards that start after their workers, as a launcher's pods may): not
 * refused but told to ask again, and counted apart, so that an operator does not take a late
 * start for an attack. Without a slice a shard does not judge tokens: a stranger's message is
 * counted here too. */
bool sw__shard_too_early(shard *h, const from *to, const sw_msg *m)
{
    if (h->ready)
        return false;
    static const char why[] = "this shard has no run's slice yet: ask again";
    char name[40];
    sw_log_counted(SW_LOG_INFO, &h->r->early, "%s: a message before its run's slice came (asked "
                   "again)", own_name(h, name));
    sw__shard_send(h, to, SW_MSG_ERROR, m->worker, SW_FLAG_UNKNOWN, m->version, why,
                   sizeof why - 1);
    return true;
}

void sw__shard_refuse(shard *h, const from *to, const sw_msg *m, const char *why)
{
    sw__shard_refuse_flagged(h, to, m, 0, why);
}

/* ---- Who may say what ----------------------------------------------------------------------- */

/* An order only the server gives. One from another route is a stranger's, or a restarted
 * server's whose RESTORE has not reached us (lost with a link that broke; what the network kept
 * comes before the restore sent in its place): flagged DROPPED, which such a server takes as
 * moot until we answer its restore. */
void sw__shard_refuse_order(shard *h, const from *f, const sw_msg *m, const char *why)
{
    bool elsewhere = h->configured && !sw__shard_is_server(h, f);
    sw__shard_refuse_flagged(h, f, m, elsewhere ? SW_FLAG_DROPPED : 0, why);
}

static bool same_route(const uint8_t *route, size_t len, const from *f)
{
    return len && f->route_len == len && !memcmp(f->route, route, len);
}

static bool is_run_over(const sw_msg *m)
{
    return m->type == SW_MSG_SHARD_MEMBER && m->worker == SW_NO_WORKER &&
           (m->flags & SW_FLAG_DONE);
}

/* From the server whose well-formed INIT this shard refused: its pings go on until its run
 * ends. */
static bool refused_run_of(const shard *h, const from *f)
{
    return !h->configured && h->refused_run[0] && isfinite(h->heard) && /* its INIT heard */
           same_route(h->refused_server, h->refused_server_len, f);
}

/* The end of the run whose orders this shard, holding no run, refused: the end of its own. */
static bool ends_refused_run(const shard *h, const from *f, const sw_msg *m)
{
    return !h->configured && is_run_over(m) &&
           same_route(h->refused_server, h->refused_server_len, f);
}

void sw__shard_refuse_run(shard *h, const from *f, const sw_msg *m, const char *why)
{
    /* The first such server only, said once: a stranger's later orders (plain TCP) take
     * nothing over and say nothing more. A shard that refused its INIT said why already, and
     * the end of a run whose orders never came is none of this shard's business. */
    if ((!h->configured || h->awaiting) && !h->refused_server_len && !h->refused_run[0] &&
        !is_run_over(m)) {
        memcpy(h->refused_server, f->route, f->route_len);
        h->refused_server_len = f->route_len;
        if (h->configured)
            sw_log(SW_LOG_WARN, "shard %u refused the orders of a server whose run is not the "
                   "one it resumed: %s. It waits on for its own run's server", h->index, why);
        else
            sw_log(SW_LOG_WARN, "this shard refused a server's orders: %s. It ends when that "
                   "server's run does", why);
    }
    sw__shard_refuse(h, f, m, why);
}

bool sw__shard_is_server(const shard *h, const from *f)
{
    return h->configured && same_route(h->server, h->server_len, f);
}

/* A worker's message: a member's id and its token, read from the payload's first 8 bytes. */
bool sw__shard_is_member(const shard *h, const sw_msg *m)
{
    return h->ready && m->worker < h->slots && m->payload_len >= 8 &&
           h->tokens[m->worker] != 0 && sw_get_u64(m->payload) == h->tokens[m->worker];
}

void sw__shard_note_route(shard *h, uint32_t w, const from *f)
{
    sw__route *r = &h->routes[w];
    if (f->route_len > SW_ROUTE_MAX)
        return;
    memcpy(r->bytes, f->route, f->route_len);
    r->len = f->route_len;
}

/* ---- Members ------------------------------------------------------------------------------- */

void sw__shard_set_token(shard *h, uint32_t w, uint64_t token)
{
    if (h->tokens[w] != token) { /* a new membership numbers its pushes afresh, and the old
                                  * one's pull is nobody's */
        h->next_seq[w] = 0;
        h->routes[w].len = 0;
        sw__shard_forget_pull(h, w);
    }
    h->tokens[w] = token;
}

/* The run is over: failed, with the server's reason (a shard that refused the run's INIT
 * fails with its own). */
static void run_over(shard *h, const sw_msg *m)
{
    h->r->done = true;
    if (m->payload_len) {
        size_t n = m->payload_len < sizeof h->r->failed ? m->payload_len
                                                         : sizeof h->r->failed - 1;
        for (size_t i = 0; i < n; i++) { /* printed as it came: no control bytes */
            unsigned char c = m->payload[i];
            h->r->failed[i] = c < 0x20 || c == 0x7f ? '?' : (char)c;
        }
        h->r->failed[n] = '\0';
    } else if (!h->configured) {
        snprintf(h->r->failed, sizeof h->r->failed, "%s",
                 h->refused_run[0] ? h->refused_run
                                   : "the run whose orders this shard refused is over");
    }
}

static void on_member(shard *h, const from *f, const sw_msg *m)
{
    bool over = is_run_over(m);
    /* a shard that refused its run's INIT knows no server: the one it refused ends it too (a
     * stranger could have given it an INIT before that, so it could as well end it); so does
     * the server whose orders a shard that holds no run refused (started again afresh) */
    if ((over && !h->configured && h->refused_run[0]) || ends_refused_run(h, f, m) ||
        (over && sw__shard_is_server(h, f))) {
        run_over(h, m);
        sw__shard_say_bye(h, f);
    } else if (!sw__shard_is_server(h, f)) {
        sw__shard_refuse_order(h, f, m, "only the server names members");
    } else if (m->worker >= h->slots || (!(m->flags & SW_FLAG_DONE) && m->version == 0)) {
        sw__shard_refuse(h, f, m, "no such worker slot, or no token");
    } else {
        /* What the old membership pushed stays: the engine may still hold it in its buffer
         * (a worker that left), and the server orders it applied or dropped. */
        sw__shard_set_token(h, m->worker, m->flags & SW_FLAG_DONE ? 0 : m->version);
    }
}

/* ---- Turns ---------------------------------------------------------------------------------- */

typedef void (*handler)(shard *h, const from *f, const sw_msg *m);

static void on_batch(shard *h, const from *f, const sw_msg *m);

static const handler handlers[SW_MSG_TYPE_MAX + 1] = {
    [SW_MSG_SHARD_INIT] = sw__shard_on_init, [SW_MSG_SHARD_SET] = sw__shard_on_set,
    [SW_MSG_SHARD_MEMBER] = on_member, [SW_MSG_SHARD_APPLY] = sw__shard_on_apply,
    [SW_MSG_SHARD_PUSH] = sw__shard_on_push, [SW_MSG_SHARD_PULL] = sw__shard_on_pull,
    [SW_MSG_SHARD_PUSH_SPARSE] = sw__shard_on_push_sparse,
    [SW_MSG_SHARD_PING] = sw__shard_on_ping, [SW_MSG_SHARD_SAVE] = sw__shard_on_save,
    [SW_MSG_SHARD_RESTORE] = sw__shard_on_restore, [SW_MSG_BATCH] = on_batch,
    [SW_MSG_SHARD_SEND] = sw__shard_on_send,
};

/* Whether the shard knows how its run's links are checked: from the run's INIT, taken or
 * refused (a refused run's orders still come, its end among them). */
static bool knows_link(const shard *h)
{
    return h->configured || h->refused_run[0];
}

/* The messages only the server sends: all but a worker's push and pull (a pull of no worker
 * is the server's gather). */
static bool from_server(const sw_msg *m)
{
    if (m->type == SW_MSG_SHARD_PULL)
        return m->worker == SW_NO_WORKER;
    return m->type != SW_MSG_SHARD_PUSH && m->type != SW_MSG_SHARD_PUSH_SPARSE;
}

/* A shard without its run yet reads what comes (it is in memory already) so that it can tell a
 * worker UNKNOWN, which the worker asks again after, rather than refuse its size. */
static uint64_t payload_limit(const shard *h)
{
    return h->configured ? sw__shard_run_payload(h) : SW_PROTO_MAX_PAYLOAD;
}

/* A server's order to a shard that holds no run and refused no run's INIT: it started afresh
 * and missed its run's INIT (restarted without --resume), and says so whichever order comes
 * first (a gather's pull, an apply, a ping), until that run's end, which ends it too. A
 * worker's own pull is asked again instead. */
static bool holds_no_run(const shard *h, const from *f, const sw_msg *m)
{
    return !h->configured && !h->refused_run[0] && is_order(m->type) &&
           !ends_refused_run(h, f, m) &&
           m->type != SW_MSG_SHARD_INIT && m->type != SW_MSG_BATCH &&
           (m->type != SW_MSG_SHARD_PULL || m->worker == SW_NO_WORKER);
}

/* A message checked as a frame, to its handler, whether it came alone or in a batch (d NULL):
 * refused by a shard that holds no run, kept by a resumed one until its RESTORE. */
static void dispatch(shard *h, const from *f, const sw_msg *m, const sw_delivery *d)
{
    if (holds_no_run(h, f, m))
        sw__shard_refuse_run(h, f, m, SW__SHARD_NO_RUN);
    else if (!(h->awaiting && sw__shard_awaits(h, d, m)))
        handlers[m->type](h, f, m);
}

/* A batch of the server's orders, checked whole (a malformed one is refused, none of it
 * carried out), then taken one by one, in order, as if each had come alone: each handler judges
 * who may send it (a restarted server's RESTORE comes from a route the shard does not know
 * yet), and a resumed shard drops the orders before its RESTORE. */
static void on_batch(shard *h, const from *f, const sw_msg *m)
{
    char why[SW_ERR_LEN];
    if (sw__batch_check(m, payload_limit(h), true, why)) {
        sw__shard_refuse(h, f, m, why);
        return;
    }
    sw_msg sub;
    for (size_t at = 0; !h->r->done && sw__batch_next(m, &at, &sub);)
        dispatch(h, f, &sub, NULL);
}

/* Why a message no shard takes is refused, with where it should go when a worker or ctl was
 * pointed at a shard. */
static const char *not_for_a_shard(sw_msg_type type)
{
    if (type == SW_MSG_JOIN)
        return "not a message for a shard: this endpoint is a shard of a sharded run; workers "
               "join its server (the process started with --shards)";
    if (type == SW_MSG_CTL)
        return "not a message for a shard: this is a shard of a sharded run; ask its server, "
               "whose status shows every shard";
    return "not a message for a shard";
}

void sw__shard_take(shard *h, const sw_delivery *d)
{
    from f = {d->route, d->route_len};
    sw_msg m;
    char why[SW_ERR_LEN];
    size_t len = sw_frame_size(d->frame);
    if (d->multipart)
        sw__shard_refuse(h, &f, NULL, "a message must be a single frame");
    else if (sw_msg_decode(sw_frame_data(d->frame), len, payload_limit(h), &m, why))
        sw__shard_refuse(h, &f, NULL, why);
    else if (handlers[m.type] && h->p->curve_key && !d->by_operator && from_server(&m))
        sw__shard_refuse(h, &f, &m, "only the server's CURVE key may give a shard orders");
    else if ((m.flags & SW_FLAG_UNCHECKED) && !h->configured && !from_server(&m))
        /* a worker told by WELCOME may reach a shard before the server's INIT does: it asks
         * again (a shard with no INIT holds no slice: always early) */
        sw__shard_too_early(h, &f, &m);
    else if ((m.flags & SW_FLAG_UNCHECKED) && !knows_link(h) && m.type != SW_MSG_SHARD_INIT &&
             !ends_refused_run(h, &f, &m))
        sw__shard_refuse_run(h, &f, &m, SW__SHARD_NO_RUN); /* an order of a run it never had */
    else if ((m.flags & SW_FLAG_UNCHECKED) && (!knows_link(h) || !h->unchecked) &&
             !ends_refused_run(h, &f, &m))
        sw__shard_refuse(h, &f, &m, "a message without a checksum: this run checks them");
    else if (!handlers[m.type])
        sw__shard_refuse(h, &f, &m, not_for_a_shard(m.type));
    else {
        h->body = d->frame;
        dispatch(h, &f, &m, d);
        h->body = NULL;
    }
    if (h->configured ? sw__shard_is_server(h, &f) /* after: INIT or RESTORE names it */
                      : refused_run_of(h, &f))
        h->heard = h->now;
}

/* The run given up when its server has been silent too long (it pings every 0.25 s): a
 * server that died would otherwise leave its shards holding the run for ever. A shard that
 * refused its run's INIT waits for that server's end of the run, which a link ZeroMQ closed
 * (a SET over --max-frame) can lose, or the server's death: it ends after a short silence,
 * having nothing to keep. The time of the next look, or INFINITY. */
static double server_silence(shard *h, double now)
{
    bool refused = !h->configured && h->refused_run[0];
    double limit = h->p->server_timeout_s;
    if (refused && limit > SW_SHARD_REFUSED_SILENCE_S)
        limit = SW_SHARD_REFUSED_SILENCE_S;
    if (h->configured && !isfinite(h->heard)) /* resumed: its server's silence counts from now */
        h->heard = now;
    if (!(limit > 0) || !(h->configured || refused) || !isfinite(h->heard) || h->r->done)
        return INFINITY;
    if (now < h->heard + limit) /* as the loop compares: now - heard < limit may round so */
        return h->heard + limit;
    h->r->done = true;
    if (refused) {
        int room = (int)sizeof h->r->failed - 96; /* the reason, cut, and the end said */
        snprintf(h->r->failed, sizeof h->r->failed, "%.*s (this shard refused the run, and its "
                 "server has been silent %g s since)", room, h->refused_run, limit);
        return INFINITY;
    }
    snprintf(h->r->failed, sizeof h->r->failed,
             !h->server_len /* resumed, and no server came */
                 ? "no server of its run has come in %g s (--server-timeout): its checkpoint "
                   "stays; start this shard again with --checkpoint FILE --resume once its "
                   "server runs with --resume (or give --server-timeout 0 to wait for ever)"
             : h->checkpointed
                 ? "the server has been silent for %g s (--server-timeout): to go on from the "
                   "run's last checkpoint, start this shard again with --checkpoint FILE "
                   "--resume, and the server with --resume"
                 : "the server has been silent for %g s (--server-timeout), and the run keeps "
                   "no checkpoints: nothing can resume it",
             limit);
    sw_log(SW_LOG_WARN, "shard %u gives up its run: %s", h->index, h->r->failed);
    return INFINITY;
}

static double turn(void *ctx, double now)
{
    shard *h = ctx;
    sw_delivery d;
    h->now = now;
    for (int k = 0; k < BURST && !h->r->done && sw_recv(h->sock, &d) == 0; k++) {
        h->r->bytes_in += d.frame ? sw_frame_size(d.frame) : 0;
        if (!d.gone)
            sw__shard_take(h, &d);
        sw_frame_unref(d.frame);
    }
    sw__batch_flush(&h->to_server);
    h->r->version = h->version;
    h->r->in_run = h->configured && !h->r->done;
    h->r->server_heard = h->server_len != 0;
    h->r->saved = h->saved;
    double next = server_silence(h, now);
    return h->r->done ? SW_AGENT_DONE : next;
}

/* ---- Life ----------------------------------------------------------------------------------- */

int sw_shard_new(sw_shard **out, sw_net *net, const sw_shard_params *p, sw_shard_result *r,
                 char *err)
{
    shard *h = calloc(1, sizeof *h);
    if (!h)
        return sw_fail(err, SW_ENOMEM, "no memory for a shard");
    memset(r, 0, sizeof *r);
    *h = (shard){.p = p, .r = r, .net = net, .saved = SW_SHARD_NONE,
                 .saved_before = SW_SHARD_NONE, .ckpt_lock = -1, .ep_lock = -1,
                 .heard = -INFINITY,
                 .to_server = {.send = send_to_server, .ctx = h}};
    /* Killed before its first save, a shard has nothing to resume: it starts afresh, and its
     * server (started again too, from its start record) configures it as before. */
    bool resume = p->resume;
    int rc = p->checkpoint ? sw_file_claim_checkpoint(p->checkpoint, "shard", &resume,
                                                      &h->ckpt_lock, &h->lock_made, err)
                           : 0;
    if (!rc && p->endpoint_file)
        rc = sw_file_claim(p->endpoint_file, "--endpoint-file", &h->ep_lock, err);
    char prev[4096]; /* where the checkpoint before goes: refused now, not at the first save */
    if (!rc && p->checkpoint) {
        sw__shard_prev_path(h, prev);
        rc = sw_file_check_writable(prev, "--checkpoint's FILE.prev", err);
    }
    /* As the server; FILE.prev too, which may be the only copy left (a save that failed on a
     * full disk, a kill as it saved). */
    if (!rc && p->checkpoint && !p->resume)
        rc = sw_file_refuse_fresh_start(p->checkpoint, true, "an earlier run's slice", "shard",
                                        err);
    if (!rc && p->apply_threads > SW_SHARD_THREADS_MAX)
        rc = sw_fail(err, SW_EINVAL, "--apply-threads %u: at most %d", p->apply_threads,
                     SW_SHARD_THREADS_MAX);
    if (!rc && p->apply_threads > 1)
        rc = sw_team_new(&h->team, p->apply_threads, err);
    if (!rc && resume)
        rc = sw__shard_resume(h, err);
    /* The server holds this listener's own key pair: that key alone is an operator here. A
     * resumed shard knows its run's largest message, and reads none larger from anyone; one
     * started afresh learns it only at INIT, after it binds (ZeroMQ fixes the limit there). */
    sw_listen_params lp = {.endpoint = p->bind,
                           .linger_s = 1,
                           .curve_key = p->curve_key,
                           .curve_clients = p->curve_clients,
                           .curve_operators = p->curve_key,
                           .max_frame = p->max_frame    ? p->max_frame
                                        : h->configured ? sw_msg_size(sw__shard_run_payload(h))
                                                        : sw_msg_size(SW_PROTO_MAX_PAYLOAD)};
    if (!rc)
        rc = sw_listen(net, &h->sock, &lp, err);
    if (!rc && p->endpoint_file)
        rc = sw_file_write_line(p->endpoint_file, sw_sock_endpoint(h->sock), "endpoint file", err);
    if (rc) {
        sw_shard_end(h);
        return rc;
    }
    sw_log(SW_LOG_INFO, "shard on %s (%s), waiting for its server", sw_sock_endpoint(h->sock),
           sw_endpoint_security(sw_sock_endpoint(h->sock), p->curve_key));
    if (h->team)
        sw_log(SW_LOG_INFO, "%u threads apply, each a part of at least %d floats",
               sw_team_size(h->team), SW_SHARD_PART_MIN);
    h->agent = (sw_agent){.turn = turn, .ctx = h, .socks = {h->sock}, .n_socks = 1};
    *out = h;
    return 0;
}

sw_agent *sw_shard_agent(sw_shard *h) { return &h->agent; }

const char *sw_shard_endpoint(const sw_shard *h) { return sw_sock_endpoint(h->sock); }

void sw_shard_end(sw_shard *h)
{
    sw_sock_close(h->sock);
    for (size_t i = 0; i < h->n_held; i++)
        sw__shard_let_go(&h->held[i]);
    free(h->held);
    free(h->applying);
    sw_team_free(h->team);
    for (size_t i = 0; i < h->n_pulls; i++)
        free(h->pulls[i].idx);
    free(h->pulls);
    sw_frame_unref(h->slice);
    sw__lender_free(&h->lender);
    free(h->sum);
    free(h->tokens);
    free(h->next_seq);
    free(h->routes);
    sw_optim_free(&h->opt);
    sw__shard_free_recovery(h);
    sw_file_release_claim(h->p->checkpoint, h->ckpt_lock, h->lock_made);
    sw_file_release_removing(h->p->endpoint_file, h->ep_lock);
    free(h);
}

int sw_shard_run(const sw_shard_params *p, sw_shard_result *r, char *err)
{
    sw_net *net;
    sw_shard *h = NULL;
    sw_loop *loop = NULL;
    int rc = sw_net_zmq_new(&net, err);
    if (rc)
        return rc;
    if (!(rc = sw_shard_new(&h, net, p, r, err)) && !(rc = sw_loop_new(&loop, net, err)) &&
        !(rc = sw_loop_add(loop, sw_shard_agent(h), err)))
        rc = sw_loop_run(loop, p->stop, INFINITY, err);
    if (h)
        sw_shard_end(h);
    sw_loop_free(loop);
    sw_net_free(net);
    return rc;
}
