/* bench_net's baselines (net_baselines.h): raw TCP and ZeroMQ alone. */
#define _POSIX_C_SOURCE 200809L
#include "net_baselines.h"
#include "net_placement.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "syncwise/clock.h"
#include "syncwise/optim.h"
#include "syncwise/proto.h"

/* Raw TCP on loopback: 4n bytes one way, 4n back, as a ping-pong. */
typedef struct tcp_echo {
    int fd;
    size_t bytes;
    int rounds;
} tcp_echo;

static void xfer(int fd, char *buf, size_t len, int sending)
{
    for (size_t done = 0; done < len;) {
        ssize_t k = sending ? write(fd, buf + done, len - done) : read(fd, buf + done, len - done);
        if (k <= 0)
            exit(1);
        done += (size_t)k;
    }
}

static void *echo_server(void *arg)
{
    tcp_echo *e = arg;
    sw_bench_place_server();
    int c = accept(e->fd, NULL, NULL);
    char *buf = malloc(e->bytes);
    for (int i = 0; i < e->rounds; i++) {
        xfer(c, buf, e->bytes, 0);
        xfer(c, buf, e->bytes, 1);
    }
    free(buf);
    close(c);
    return NULL;
}

double raw_tcp_mbps(size_t bytes, int rounds)
{
    int l = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof a;
    bind(l, (struct sockaddr *)&a, sizeof a);
    listen(l, 1);
    getsockname(l, (struct sockaddr *)&a, &al);
    tcp_echo e = {.fd = l, .bytes = bytes, .rounds = rounds};
    pthread_t th;
    pthread_create(&th, NULL, echo_server, &e);
    int c = socket(AF_INET, SOCK_STREAM, 0);
    connect(c, (struct sockaddr *)&a, sizeof a);
    char *buf = calloc(1, bytes);
    double t0 = sw_clock_now_s();
    for (int i = 0; i < rounds; i++) {
        xfer(c, buf, bytes, 1);
        xfer(c, buf, bytes, 0);
    }
    double dt = sw_clock_now_s() - t0;
    pthread_join(th, NULL);
    close(c);
    close(l);
    free(buf);
    return 2.0 * (double)bytes * rounds / dt / 1e6;
}

/* ZeroMQ alone: a ROUTER thread sends each message straight back (no copy, no checks), the
 * client sends from one buffer without a copy: what the library itself costs. */

/* The echo's ROUTER, bound to a free loopback port that e->ep then names. */
static void *echo_socket(zmq_echo *e)
{
    sw_bench_place_server(); /* before the first socket starts the context's threads */
    void *s = zmq_socket(e->ctx, ZMQ_ROUTER);
    zmq_bind(s, "tcp://127.0.0.1:*");
    size_t len = sizeof e->ep;
    zmq_getsockopt(s, ZMQ_LAST_ENDPOINT, e->ep, &len);
    __atomic_store_n(&e->bound, 1, __ATOMIC_RELEASE);
    return s;
}

void await_bound(const zmq_echo *e)
{
    while (!__atomic_load_n(&e->bound, __ATOMIC_ACQUIRE))
        nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
}

static void *zmq_echo_server(void *arg)
{
    zmq_echo *e = arg;
    void *s = echo_socket(e);
    for (int i = 0; i < e->rounds; i++) {
        zmq_msg_t id, m;
        zmq_msg_init(&id);
        zmq_msg_init(&m);
        zmq_msg_recv(&id, s, 0);
        zmq_msg_recv(&m, s, 0);
        zmq_msg_send(&id, s, ZMQ_SNDMORE);
        zmq_msg_send(&m, s, 0);
    }
    zmq_close(s);
    return NULL;
}

/* Sends `bytes` from buf without a copy and waits for the answer. */
static void echo_round(void *sock, uint8_t *buf, size_t bytes)
{
    zmq_msg_t m;
    zmq_msg_init_data(&m, buf, bytes, NULL, NULL);
    zmq_msg_send(&m, sock, 0);
    zmq_msg_init(&m);
    zmq_msg_recv(&m, sock, 0);
    zmq_msg_close(&m);
}

/* MB/s of `rounds` ping-pongs of `bytes` each way: `round` on a DEALER against `server`, a
 * thread given `arg` whose ROUTER e names once bound. What the server returns is a buffer it
 * lent ZeroMQ, freed once its context is gone. */
static double ping_pong_mbps(void *(*server)(void *), void *arg, zmq_echo *e,
                             void (*round)(void *sock, uint8_t *buf, size_t bytes), size_t bytes,
                             int rounds)
{
    pthread_t th;
    pthread_create(&th, NULL, server, arg);
    await_bound(e);
    void *ctx = zmq_ctx_new(), *sock = zmq_socket(ctx, ZMQ_DEALER);
    zmq_connect(sock, e->ep);
    uint8_t *buf = calloc(1, bytes);
    double t0 = sw_clock_now_s();
    for (int i = 0; i < rounds; i++)
        round(sock, buf, bytes);
    double dt = sw_clock_now_s() - t0;
    void *lent;
    pthread_join(th, &lent);
    zmq_close(sock);
    zmq_ctx_term(ctx);
    zmq_ctx_term(e->ctx);
    free(lent);
    free(buf);
    return 2.0 * (double)bytes * rounds / dt / 1e6;
}

double zmq_echo_mbps(size_t bytes, int rounds)
{
    zmq_echo e = {.ctx = zmq_ctx_new(), .rounds = rounds};
    return ping_pong_mbps(zmq_echo_server, &e, &e, echo_round, bytes, rounds);
}

/* ZeroMQ alone doing a barrier's exchange: a ROUTER takes W messages, then sends one buffer back
 * to each sender, shared (zmq_msg_copy), as the fastest server could. */
void *zmq_fan_server(void *arg)
{
    zmq_echo *e = arg;
    void *s = echo_socket(e);
    for (int i = 0; i < e->rounds; i++) {
        zmq_msg_t id[W], m, back;
        for (int w = 0; w < W; w++) {
            zmq_msg_init(&id[w]);
            zmq_msg_init(&m);
            zmq_msg_recv(&id[w], s, 0);
            zmq_msg_recv(&m, s, 0);
            if (w == 0) { /* the one reply all get */
                zmq_msg_init(&back);
                zmq_msg_move(&back, &m);
            }
            zmq_msg_close(&m);
        }
        for (int w = 0; w < W; w++) {
            zmq_msg_init(&m);
            zmq_msg_copy(&m, &back);
            zmq_msg_send(&id[w], s, ZMQ_SNDMORE);
            zmq_msg_send(&m, s, 0);
        }
        zmq_msg_close(&back);
    }
    zmq_close(s);
    return NULL;
}

void *zmq_fan_worker(void *arg)
{
    barrier_client *b = arg;
    void *ctx = zmq_ctx_new(), *sock = zmq_socket(ctx, ZMQ_DEALER);
    zmq_connect(sock, b->ep);
    uint8_t *buf = calloc(1, 4 * b->n);
    pthread_barrier_wait(b->go);
    for (int i = 0; i < b->rounds; i++)
        echo_round(sock, buf, 4 * b->n);
    zmq_close(sock);
    zmq_ctx_term(ctx);
    free(buf);
    return NULL;
}

/* ZeroMQ alone doing the work a --checksum off server cannot skip: each push's header read,
 * its floats checked finite where they lie, applied to the parameters, and the parameters sent
 * back from where they lie (lent, no copy). The client reads each answer's header. */
typedef struct zmq_work {
    zmq_echo e;
    size_t n;
} zmq_work;

static void *zmq_work_server(void *arg)
{
    zmq_work *w = arg;
    void *s = echo_socket(&w->e);
    uint8_t *release = calloc(1, sw_msg_size(4 * w->n));
    float *theta = (float *)(release + SW_PROTO_HEADER);
    for (int i = 0; i < w->e.rounds; i++) {
        zmq_msg_t id, m;
        zmq_msg_init(&id);
        zmq_msg_init(&m);
        zmq_msg_recv(&id, s, 0);
        zmq_msg_recv(&m, s, 0);
        sw_msg push;
        const float *g = NULL;
        if (sw_msg_decode(zmq_msg_data(&m), zmq_msg_size(&m), (uint64_t)1 << 31, &push, NULL) ||
            !(g = sw_msg_floats_in_place(&push, w->n, NULL)))
            abort();
        sw_sgd_step(theta, g, w->n, 0.01f, 0); /* the engine's plain SGD step */
        zmq_msg_close(&m);
        sw_msg r = {.type = SW_MSG_RELEASE, .flags = SW_FLAG_MODEL | SW_FLAG_UNCHECKED,
                    .payload_len = 4 * w->n};
        sw_msg_encode(&r, release); /* the floats are in place */
        zmq_msg_init_data(&m, release, sw_msg_size(4 * w->n), NULL, NULL);
        zmq_msg_send(&id, s, ZMQ_SNDMORE);
        zmq_msg_send(&m, s, 0);
    }
    zmq_close(s);
    return release; /* the last answer may still be leaving: ping_pong_mbps frees it */
}

/* A push as syncwise's worker sends it without checksums (its header written each time), and
 * the answer's header read. */
static void work_round(void *sock, uint8_t *push, size_t bytes)
{
    sw_msg p = {.type = SW_MSG_PUSH, .flags = SW_FLAG_UNCHECKED,
                .payload_len = bytes - SW_PROTO_HEADER};
    sw_msg_encode(&p, push);
    zmq_msg_t m;
    zmq_msg_init_data(&m, push, bytes, NULL, NULL);
    zmq_msg_send(&m, sock, 0);
    zmq_msg_init(&m);
    zmq_msg_recv(&m, sock, 0);
    sw_msg r;
    if (sw_msg_decode(zmq_msg_data(&m), zmq_msg_size(&m), (uint64_t)1 << 31, &r, NULL))
        abort();
    zmq_msg_close(&m);
}

double zmq_work_mbps(size_t n, int rounds)
{
    zmq_work w = {.e = {.ctx = zmq_ctx_new(), .rounds = rounds}, .n = n};
    return ping_pong_mbps(zmq_work_server, &w, &w.e, work_round, sw_msg_size(4 * n), rounds);
}
