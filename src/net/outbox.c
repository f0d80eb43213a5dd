/* What the server sends: answers, refusals, and the releases an engine decision calls for.
 *
 * Every message is built in a frame that the network then sends without another copy, and the
 * parameters are lent to it as they are when nothing else reads them (lend.h).
 */
#include <errno.h>
#include <string.h>

#include "server_internal.h"
#include "syncwise/bytes.h"
#include "syncwise/log.h"

/* The frame of message m (payload copied from m->payload, or the parameters when it is NULL
 * and m->payload_len is not zero). The parameters are lent as they are when nothing else reads
 * them (lend.h): the cost is their checksum. Otherwise they are written straight into the frame
 * with their checksum, in one pass. NULL when memory ran out. */
static sw_frame *build_frame(server *s, const sw_msg *m)
{
    const float *params = !m->payload && m->payload_len ? sw__server_params(s) : NULL;
    sw_frame *f = sw__frame_build(s->lending ? &s->lender : NULL, m, params);
    if (!f)
        sw_log(SW_LOG_WARN, "no memory for a %zu-byte message", sw_msg_size(m->payload_len));
    return f;
}

/* A member whose route found no connection: marked, and dropped at the next turn (the send may
 * be one of an engine decision's, which must not be re-entered). */
static void route_gone(server *s, const peer *to)
{
    uint32_t w = sw__server_worker_at(s, to->route, to->route_len);
    if (w < s->slots)
        s->conns[w].unreachable = true;
}

/* Sends a frame to a peer, on the socket it came from, and gives it up. A full peer queue
 * only loses it; a peer whose connection is gone is a member lost. */
static void send_frame(server *s, const peer *to, sw_frame *f)
{
    s->r->bytes_out += sw_frame_size(f);
    sw_sock *sock = to->sock ? to->sock : s->sock;
    if (!sw_send(sock, to->route, to->route_len, f) && errno == EHOSTUNREACH && sock == s->sock)
        route_gone(s, to);
}

void sw__server_send_at(server *s, const peer *to, sw_msg_type type, uint32_t worker,
                        uint32_t flags, uint64_t version, const void *payload, size_t len)
{
    sw_msg m = {.type = type, .worker = worker, .flags = flags | sw__server_link_flags(s),
                .version = version, .payload = payload, .payload_len = len};
    sw_frame *f = build_frame(s, &m);
    if (f)
        send_frame(s, to, f);
}

void sw__server_send(server *s, const peer *to, sw_msg_type type, uint32_t worker,
                     uint32_t flags, const void *payload, size_t len)
{
    sw__server_send_at(s, to, type, worker, flags, sw_engine_version(s->engine), payload, len);
}

void sw__server_refuse_echo(server *s, const peer *to, const sw_msg *m, uint32_t flags,
                            const char *why)
{
    sw_log_counted(SW_LOG_INFO, &s->r->refused, "refused a message: %s", why);
    sw__server_send_at(s, to, SW_MSG_ERROR, m->worker, flags, m->version, why, strlen(why));
}

void sw__server_refuse(server *s, const peer *to, uint32_t worker, uint32_t flags,
                       const char *why)
{
    sw_msg m = {.worker = worker, .version = sw_engine_version(s->engine)};
    sw__server_refuse_echo(s, to, &m, flags, why);
}

/* Sends a RELEASE with the parameters to `to`. Every worker released by one engine result gets
 * the same bytes, so they share one frame per value of the flags (references to one buffer),
 * with SW_NO_WORKER for the worker id: a bsp barrier of N workers costs one checksum of the
 * parameters and no copy, not N of each. */
static void release_with_model(server *s, const peer *to, uint32_t flags, sw_frame **shared)
{
    if (!*shared) {
        sw_msg m = {.type = SW_MSG_RELEASE, .worker = SW_NO_WORKER,
                    .flags = flags | sw__server_link_flags(s),
                    .version = sw_engine_version(s->engine), .payload_len = 4 * s->n};
        if (!(*shared = build_frame(s, &m)))
            return;
    }
    send_frame(s, to, sw_frame_ref(*shared));
}

/* The members one engine decision releases with the model, named to every shard (SHARD_SEND)
 * in orders of at most SEND_MAX, each small enough to travel in the turn's batch. */
#define SEND_MAX 160
typedef struct send_order {
    uint8_t payload[4 + 12 * SEND_MAX];
    uint32_t n;
} send_order;

/* Sends what o gathered (nothing when it is empty), at the engine's version. */
static void send_ordered(server *s, send_order *o)
{
    if (!o->n)
        return;
    sw_put_u32(o->payload, o->n);
    sw_msg m = {.type = SW_MSG_SHARD_SEND, .worker = SW_NO_WORKER,
                .version = sw_engine_version(s->engine), .payload = o->payload,
                .payload_len = 4 + 12 * (size_t)o->n};
    sw__shards_send_all(s, &m);
    o->n = 0;
}

static void order_send(server *s, send_order *o, uint32_t w, uint64_t token)
{
    if (o->n == SEND_MAX)
        send_ordered(s, o);
    uint8_t *at = o->payload + 4 + 12 * (size_t)o->n++;
    sw_put_u32(at, w);
    sw_put_u64(at + 4, token);
}

/* A sharded release with the model: the shards send the worker their slices unasked, so that
 * the order travels beside the RELEASE and the worker's pulls are spared (SW_FLAG_SENT), once
 * each knows the worker's connection (from a push) and while every shard can serve (one that
 * cannot keeps the workers' pulls until it can). */
static uint32_t sharded_release(server *s, const conn *c, uint32_t w, send_order *sends)
{
    if (!c->wants_model || !c->routed || sw__shards_any_out(s))
        return 0;
    order_send(s, sends, w, c->token);
    return SW_FLAG_SENT;
}

void sw__server_follow(server *s, const sw_engine_result *res)
{
    sw_frame *shared[2] = {NULL, NULL}; /* by SW_FLAG_DROPPED */
    send_order sends = {0};
    for (uint32_t i = 0; i < res->n_released; i++) {
        uint32_t w = res->released[i];
        conn *c = &s->conns[w];
        if (!c->live)
            continue;
        peer to = {.route = c->route, .route_len = c->route_len, .sock = s->sock};
        uint32_t flags = (c->wants_model ? SW_FLAG_MODEL : 0) | (c->dropped ? SW_FLAG_DROPPED : 0);
        if (s->shards.n)
            flags |= sharded_release(s, c, w, &sends);
        if (c->wants_model && !s->shards.n)
            release_with_model(s, &to, flags, &shared[c->dropped]);
        else
            sw__server_send(s, &to, SW_MSG_RELEASE, w, flags, NULL, 0);
        c->dropped = false;
    }
    send_ordered(s, &sends);
    sw_frame_unref(shared[0]);
    sw_frame_unref(shared[1]);
    s->wake_at = res->wake_at;
}
