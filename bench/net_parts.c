/* Would a push and its answer cut into parts go faster (net_parts.h)? ZeroMQ alone carries
 * syncwise frames, and each end does the work syncwise does on them: the client's gradient
 * checksummed and sent, the server's check of each frame (CRC-32C and finiteness, one pass),
 * its SGD step, the parameters checksummed and sent back, the client's check. In one part the
 * frames are lent where the floats lie (the header in the room before them), as today; in P
 * parts each part is copied into a frame of its own as it is checksummed (one pass: a header
 * cannot sit in front of floats that follow others), and the client copies each part of the
 * answer into its parameters as a worker of several shards does. */
#define _POSIX_C_SOURCE 200809L
#include "net_parts.h"

#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "net_baselines.h"
#include "net_placement.h"
#include "syncwise/clock.h"
#include "syncwise/optim.h"
#include "syncwise/proto.h"

enum { ROOM = 64 }; /* the lent buffer's room for a header, as lend.c keeps it */

typedef struct cut {
    zmq_echo e;
    size_t n;
    int parts;
    uint32_t flags; /* SW_FLAG_UNCHECKED without checksums */
} cut;

/* n floats with ROOM bytes before them, zeroed (aligned_alloc wants a multiple of ROOM). */
static uint8_t *roomy(size_t n)
{
    size_t size = (ROOM + 4 * n + ROOM - 1) / ROOM * ROOM;
    uint8_t *b = aligned_alloc(ROOM, size);
    if (!b)
        abort();
    memset(b, 0, size);
    return b;
}

/* The floats v[lo, hi) sent as one frame: lent where they lie when they are the whole buffer
 * (its room holds the header), else copied into a frame as they are checksummed. */
static void send_part(void *sock, const cut *c, sw_msg_type type, float *v, size_t lo, size_t hi,
                      bool more)
{
    sw_msg m = {.type = type, .flags = c->flags, .version = lo, /* the part's place: ours */
                .payload_len = 4 * (hi - lo)};
    zmq_msg_t z;
    if (c->parts == 1) {
        uint8_t *at = (uint8_t *)v - SW_PROTO_HEADER;
        sw_msg_encode(&m, at); /* the payload is in place: only checksummed */
        zmq_msg_init_data(&z, at, sw_msg_size(m.payload_len), NULL, NULL);
    } else {
        zmq_msg_init_size(&z, sw_msg_size(m.payload_len));
        sw_msg_encode_floats(&m, v + lo, zmq_msg_data(&z));
    }
    zmq_msg_send(&z, sock, more ? ZMQ_SNDMORE : 0);
}

/* The next frame on sock checked (checksum and finiteness in one pass, as syncwise decodes);
 * its floats, held by z until it is closed. */
static const float *receive_part(void *sock, zmq_msg_t *z, size_t *lo, size_t *k)
{
    sw_msg m;
    const float *v;
    zmq_msg_init(z);
    if (zmq_msg_recv(z, sock, 0) < 0 ||
        sw_msg_decode(zmq_msg_data(z), zmq_msg_size(z), (uint64_t)1 << 31, &m, NULL) ||
        !(v = sw_msg_floats_in_place(&m, m.payload_len / 4, NULL)))
        abort();
    *lo = m.version;
    *k = m.payload_len / 4;
    return v;
}

static void *server(void *arg)
{
    cut *c = arg;
    sw_bench_place_server();
    void *s = zmq_socket(c->e.ctx, ZMQ_ROUTER);
    zmq_bind(s, "tcp://127.0.0.1:*");
    size_t len = sizeof c->e.ep;
    zmq_getsockopt(s, ZMQ_LAST_ENDPOINT, c->e.ep, &len);
    __atomic_store_n(&c->e.bound, 1, __ATOMIC_RELEASE);
    uint8_t *buf = roomy(c->n);
    float *theta = (float *)(buf + ROOM);
    zmq_msg_t *got = calloc((size_t)c->parts, sizeof *got), id;
    if (!got)
        abort();
    for (int r = 0; r < c->e.rounds; r++) {
        for (int p = 0; p < c->parts; p++) { /* each part checked as it comes */
            size_t lo, k;
            zmq_msg_init(&id);
            zmq_msg_recv(&id, s, 0);
            if (p + 1 < c->parts)
                zmq_msg_close(&id);
            receive_part(s, &got[p], &lo, &k);
        }
        for (int p = 0; p < c->parts; p++) { /* then stepped and sent back part by part */
            size_t lo = c->n * (size_t)p / (size_t)c->parts;
            size_t hi = c->n * (size_t)(p + 1) / (size_t)c->parts;
            sw_sgd_step(theta + lo, (const float *)((uint8_t *)zmq_msg_data(&got[p]) +
                                                    SW_PROTO_HEADER), hi - lo, 0.01f, 0);
            zmq_msg_close(&got[p]);
            zmq_msg_t to;
            zmq_msg_init(&to);
            zmq_msg_copy(&to, &id);
            zmq_msg_send(&to, s, ZMQ_SNDMORE);
            send_part(s, c, SW_MSG_RELEASE, theta, lo, hi, false);
        }
        zmq_msg_close(&id);
    }
    zmq_close(s);
    free(got);
    return buf; /* the last answer may still be leaving: freed once the context is gone */
}

double zmq_parts_mbps(size_t n, int parts, bool checksum, int rounds)
{
    cut c = {.e = {.ctx = zmq_ctx_new(), .rounds = rounds}, .n = n, .parts = parts,
             .flags = checksum ? 0 : SW_FLAG_UNCHECKED};
    pthread_t th;
    pthread_create(&th, NULL, server, &c);
    await_bound(&c.e);
    void *ctx = zmq_ctx_new(), *sock = zmq_socket(ctx, ZMQ_DEALER);
    zmq_connect(sock, c.e.ep);
    uint8_t *grad = roomy(n);
    float *theta = calloc(n, sizeof *theta), *g = (float *)(grad + ROOM);
    if (!theta)
        abort();
    double t0 = sw_clock_now_s();
    for (int r = 0; r < rounds; r++) {
        for (int p = 0; p < parts; p++)
            send_part(sock, &c, SW_MSG_PUSH, g, n * (size_t)p / (size_t)parts,
                      n * (size_t)(p + 1) / (size_t)parts, false);
        for (int p = 0; p < parts; p++) {
            zmq_msg_t z;
            size_t lo, k;
            const float *v = receive_part(sock, &z, &lo, &k);
            if (parts > 1) /* one part is read where it landed, as a one-shard worker does */
                memcpy(theta + lo, v, 4 * k);
            zmq_msg_close(&z);
        }
    }
    double dt = sw_clock_now_s() - t0;
    void *lent;
    pthread_join(th, &lent);
    zmq_close(sock);
    zmq_ctx_term(ctx);
    zmq_ctx_term(c.e.ctx);
    free(lent);
    free(grad);
    free(theta);
    return 2.0 * 4 * (double)n * rounds / dt / 1e6;
}
