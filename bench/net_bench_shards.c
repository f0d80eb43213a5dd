/* bench_net's sharded part (net_bench_shards.h): a real control-plane server and one real
 * shard, each a thread of this process, and a client that makes a sharded step's messages the
 * way syncwise's worker does (src/net/worker_shards.c): its gradient to the shard (SHARD_PUSH),
 * the server's answer (RELEASE, which carries no floats), then the slice back: sent unasked
 * when the release says SW_FLAG_SENT (the server ordered it), else pulled (SHARD_PULL). Like
 * the worker it sends again what has had no answer within a second (docs/protocol.md): the
 * shard reads its server's and its workers' connections in no set order, so a first push can
 * overtake the server's word that we are members and be refused, and a client that waited for
 * ever on it once hung CI's run of this part. */
#define _POSIX_C_SOURCE 200809L
#include "net_bench_shards.h"
#include "net_placement.h"
#include "net_served.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

#include "syncwise/bytes.h"
#include "syncwise/clock.h"
#include "syncwise/net.h"
#include "syncwise/proto.h"
#include "syncwise/shard.h"
#include "syncwise/transport.h"
#include "lend.h"

struct sharded {
    sw_server_params sp;
    sw_server_result sr;
    sw_shard_params hp;
    sw_shard_result hr;
    sw_stop_flag stop_server, stop_shard;
    pthread_t server_th, shard_th;
    char server_ep[256], shard_ep[256], server_file[64], shard_file[64], data[128];
    char server_err[256], shard_err[256];
    /* the client */
    void *ctx, *to_server, *to_shard;
    uint32_t id, flags;
    uint64_t token, seq, version;
    size_t n;
    sw__lender lender; /* the gradient's buffers, as a worker's (lend.h) */
    float *grad;
    double to_release_s, to_slice_s; /* summed over `trips` since sw_bench_sharded_legs */
    long trips;
};

static void *serve(void *arg)
{
    sharded *s = arg;
    sw_bench_place_server();
    sw_server_run(&s->sp, &s->sr, s->server_err);
    return NULL;
}

static void *hold_slice(void *arg)
{
    sharded *s = arg;
    sw_bench_place_server();
    sw_shard_run(&s->hp, &s->hr, s->shard_err);
    return NULL;
}

static void start_shard(sharded *s)
{
    sw_bench_endpoint_file(s->shard_file, sizeof s->shard_file);
    s->hp = (sw_shard_params){.bind = "tcp://127.0.0.1:*", .endpoint_file = s->shard_file,
                              .stop = &s->stop_shard};
    pthread_create(&s->shard_th, NULL, hold_slice, s);
    sw_bench_await_endpoint(s->shard_file, s->shard_ep, sizeof s->shard_ep, "shard",
                            s->shard_err);
}

static void start_server(sharded *s, size_t params, sw_checksum_mode checksum)
{
    sw_bench_endpoint_file(s->server_file, sizeof s->server_file);
    s->sp = sw_bench_server_params(params, s->data, sizeof s->data, s->server_file, "asp",
                                   &s->stop_server);
    s->sp.shards = s->shard_ep;
    s->sp.checksum = checksum;
    pthread_create(&s->server_th, NULL, serve, s);
    sw_bench_await_endpoint(s->server_file, s->server_ep, sizeof s->server_ep, "server",
                            s->server_err);
}

/* A step with no answer this long is given up: the run is broken, and the bench says where. */
#define GIVE_UP_S 60.0

/* As long as the worker waits before it asks again (worker_shards.c's first wait). */
static int again_ms(const sharded *s)
{
    return (int)(1000 + 4 * (double)s->n / 100e6 * 1000);
}

/* Opens a socket to ep that gives up a receive after again_ms and drops what is unsent when
 * closed (a message sent again may be for a peer already gone). */
static void *dial(sharded *s, const char *ep)
{
    void *sock = zmq_socket(s->ctx, ZMQ_DEALER);
    int ms = again_ms(s), linger = 0;
    zmq_setsockopt(sock, ZMQ_RCVTIMEO, &ms, sizeof ms);
    zmq_setsockopt(sock, ZMQ_LINGER, &linger, sizeof linger);
    zmq_connect(sock, ep);
    return sock;
}

static void give_up_after(double since, const char *what, const sharded *s)
{
    if (sw_clock_now_s() - since < GIVE_UP_S)
        return;
    fprintf(stderr, "bench_net: no %s within %.0f s (worker %u, version %llu, push %llu): the "
            "sharded run is stuck\n", what, GIVE_UP_S, s->id, (unsigned long long)s->version,
            (unsigned long long)(s->seq ? s->seq - 1 : 0)); /* the last sent */
    exit(1);
}

/* The next message on sock, decoded (its checksum and floats checked as a worker checks them);
 * f holds its bytes until closed. 1 when none came within again_ms, -1 when one came that
 * does not decode. */
static int receive(void *sock, sw_msg *m, zmq_msg_t *f)
{
    zmq_msg_init(f);
    if (zmq_msg_recv(f, sock, 0) < 0)
        return 1;
    return sw_msg_decode(zmq_msg_data(f), zmq_msg_size(f), (uint64_t)1 << 31, m, NULL) ? -1 : 0;
}

static void unref_frame(void *data, void *hint)
{
    (void)data;
    sw_frame_unref(hint);
}

/* f lent to ZeroMQ, which lets go of it once sent. */
static void send_frame(void *sock, sw_frame *f)
{
    zmq_msg_t m;
    if (zmq_msg_init_data(&m, sw_frame_data(f), sw_frame_size(f), unref_frame, f) != 0)
        sw_frame_unref(f);
    else if (zmq_msg_send(&m, sock, 0) < 0)
        zmq_msg_close(&m); /* gives the frame back */
}

/* A message to the shard with the token (and more, `len` payload bytes in all) opening its
 * payload, as the worker builds it; fill writes the rest. */
static sw_frame *to_shard(sharded *s, size_t len, uint8_t **pay)
{
    sw_frame *f = sw_frame_new(sw_msg_size(len));
    if (!f)
        abort();
    *pay = sw_frame_data(f) + SW_PROTO_HEADER;
    sw_put_u64(*pay, s->token);
    return f;
}

static void send_to_shard(sharded *s, sw_frame *f, sw_msg_type type, uint32_t flags, size_t len)
{
    sw_msg m = {.type = type, .worker = s->id, .flags = flags | s->flags, .version = s->version,
                .payload_len = len};
    sw_msg_encode(&m, sw_frame_data(f));
    send_frame(s->to_shard, f);
}

static void welcome(sharded *s, const sw_msg *m)
{
    char text[4096];
    snprintf(text, sizeof text, "%.*s", (int)m->payload_len, (const char *)m->payload);
    s->id = m->worker;
    s->flags = strstr(text, "checksum=off") ? SW_FLAG_UNCHECKED : 0;
    const char *t = strstr(text, "token="), *ep = strstr(text, "shards=");
    unsigned long long token = 0;
    if (!t || !ep || sscanf(t, "token=%llu", &token) != 1) {
        fprintf(stderr, "a sharded welcome without its token or shards: %s\n", text);
        exit(1);
    }
    s->token = token;
}

/* JOIN, WELCOME, the first RELEASE; then the shard is dialled. */
static void join(sharded *s)
{
    s->ctx = zmq_ctx_new();
    s->to_server = dial(s, s->server_ep);
    uint8_t head[SW_PROTO_HEADER];
    sw_msg j = {.type = SW_MSG_JOIN, .worker = SW_NO_WORKER};
    sw_msg_encode(&j, head);
    zmq_send(s->to_server, head, sizeof head, 0);
    double since = sw_clock_now_s();
    for (bool released = false; !released; give_up_after(since, "welcome", s)) {
        sw_msg m;
        zmq_msg_t f;
        if (receive(s->to_server, &m, &f) == 0) {
            if (m.type == SW_MSG_WELCOME)
                welcome(s, &m);
            released = m.type == SW_MSG_RELEASE;
            s->version = m.version;
        }
        zmq_msg_close(&f);
    }
    s->to_shard = dial(s, s->shard_ep);
}

sharded *sw_bench_sharded_open(size_t params, sw_checksum_mode checksum)
{
    sharded *s = calloc(1, sizeof *s);
    s->n = params;
    sw__lender_init(&s->lender, params);
    start_shard(s);
    start_server(s, params, checksum);
    join(s);
    for (int i = 0; i < 3; i++) /* warm up */
        sw_bench_sharded_trip(s);
    double a, b;
    sw_bench_sharded_legs(s, &a, &b);
    return s;
}

/* The release's answer to our push: WAIT (none under asp) or RELEASE; whether the shard was
 * ordered to send the slice. The push (p, its head, over grad) is sent again while none comes
 * (the shard reports a push it holds again, and counts it once), in a copy: the first frame is
 * let go of when sent, as the worker's, for a frame held longer kept its buffer from the next
 * step's gradient and slowed the checksum-off trials by a third. */
static bool await_release(sharded *s, const sw_msg *p, size_t head, const float *grad)
{
    for (double since = sw_clock_now_s();; give_up_after(since, "release", s)) {
        sw_msg m;
        zmq_msg_t f;
        int rc = receive(s->to_server, &m, &f);
        bool released = rc == 0 && m.type == SW_MSG_RELEASE;
        if (released)
            s->version = m.version;
        zmq_msg_close(&f);
        if (released)
            return m.flags & SW_FLAG_SENT;
        sw_frame *again = rc == 1 ? sw__frame_build_head(NULL, p, head, grad) : NULL;
        if (again)
            send_frame(s->to_shard, again);
    }
}

/* A pull of the slice at the release's version. */
static void pull(sharded *s)
{
    uint8_t *pay;
    sw_frame *f = to_shard(s, 8, &pay);
    send_to_shard(s, f, SW_MSG_SHARD_PULL, 0, 8);
}

/* The slice at the release's version, checked and read where it landed, as the worker of a
 * one-shard run reads it (src/net/worker_shards.c); pulled again while none comes. */
static void await_slice(sharded *s)
{
    for (double since = sw_clock_now_s();; give_up_after(since, "slice", s)) {
        sw_msg m, floats;
        zmq_msg_t f;
        uint64_t mark;
        int rc = receive(s->to_shard, &m, &f);
        bool sliced = rc == 0 && m.type == SW_MSG_SHARD_SLICE && m.version >= s->version &&
                      sw_msg_get_slice(&m, &mark, &floats, NULL) == 0 &&
                      sw_msg_floats_in_place(&floats, s->n, NULL) != NULL;
        zmq_msg_close(&f);
        if (sliced)
            return;
        if (rc == 1)
            pull(s);
    }
}

void sw_bench_sharded_trip(sharded *s)
{
    uint8_t head[16];
    sw_put_u64(head, s->token);
    sw_put_u64(head + 8, s->seq++);
    sw_msg p = {.type = SW_MSG_SHARD_PUSH, .worker = s->id,
                .flags = SW_FLAG_WANT_MODEL | s->flags, .version = s->version, .payload = head,
                .payload_len = sizeof head + 4 * s->n};
    double t0 = sw_clock_now_s();
    float *g = s->grad;
    s->grad = sw__lender_writable(&s->lender, g, false); /* where a worker computes */
    if (s->grad != g)
        memset(s->grad, 0, 4 * s->n);
    sw_frame *push = sw__frame_build_head(&s->lender, &p, sizeof head, s->grad);
    if (!push)
        abort();
    send_frame(s->to_shard, push);
    bool sent = await_release(s, &p, sizeof head, s->grad);
    double t1 = sw_clock_now_s();
    if (!sent)
        pull(s);
    await_slice(s);
    s->to_release_s += t1 - t0;
    s->to_slice_s += sw_clock_now_s() - t1;
    s->trips++;
}

void sw_bench_sharded_legs(sharded *s, double *to_release_us, double *to_slice_us)
{
    *to_release_us = s->trips ? s->to_release_s / (double)s->trips * 1e6 : 0;
    *to_slice_us = s->trips ? s->to_slice_s / (double)s->trips * 1e6 : 0;
    s->to_release_s = s->to_slice_s = 0;
    s->trips = 0;
}

void sw_bench_sharded_close(sharded *s)
{
    zmq_close(s->to_shard);
    zmq_close(s->to_server);
    zmq_ctx_term(s->ctx);
    s->stop_server = 1; /* the server ends the run, and with it the shard */
    pthread_join(s->server_th, NULL);
    s->stop_shard = 1;
    pthread_join(s->shard_th, NULL);
    unlink(s->server_file);
    unlink(s->shard_file);
    sw__lender_free(&s->lender);
    free(s);
}
