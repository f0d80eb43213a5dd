/* A hostile client for the server tests: it sends malformed, oversized, wrong-version and
 * wrong-dimension frames, a NaN gradient, pushes under another worker's id, a heartbeat without
 * its membership's token and multi-frame
 * messages, and checks that each is answered with ERROR (the server stays up for the others).
 *   net_hostile ENDPOINT      exit 0 when every hostile message was refused */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "syncwise/bytes.h"
#include "syncwise/proto.h"

static void *sock;
static int refused, sent;

/* Waits up to 5 s for a message of `type`, skipping others; 1 with it in *m (the caller then
 * closes *f), 0 if none came. */
static int await(sw_msg_type type, zmq_msg_t *f, sw_msg *m)
{
    zmq_pollitem_t item = {.socket = sock, .events = ZMQ_POLLIN};
    for (int tries = 0; tries < 50; tries++) {
        if (zmq_poll(&item, 1, 100) <= 0)
            continue;
        zmq_msg_init(f);
        zmq_msg_recv(f, sock, 0);
        if (sw_msg_decode(zmq_msg_data(f), zmq_msg_size(f), 1 << 24, m, NULL) == 0 &&
            m->type == type)
            return 1;
        zmq_msg_close(f);
    }
    return 0;
}

static int expect_error(const char *what)
{
    sent++;
    zmq_msg_t f;
    sw_msg m;
    if (!await(SW_MSG_ERROR, &f, &m)) {
        printf("NOT refused: %s\n", what);
        return 0;
    }
    printf("refused %-28s: %.*s\n", what, (int)m.payload_len, (const char *)m.payload);
    zmq_msg_close(&f);
    refused++;
    return 1;
}

static void send_raw(const void *buf, size_t len) { zmq_send(sock, buf, len, 0); }

static size_t make(uint8_t *buf, int type, uint32_t worker, const void *payload, size_t len)
{
    sw_msg m = {.type = (sw_msg_type)type, .worker = worker, .payload = payload,
                .payload_len = len};
    sw_msg_encode(&m, buf);
    return sw_msg_size(len);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: net_hostile ENDPOINT\n");
        return 2;
    }
    void *ctx = zmq_ctx_new();
    sock = zmq_socket(ctx, ZMQ_DEALER);
    int linger = 0;
    zmq_setsockopt(sock, ZMQ_LINGER, &linger, sizeof linger);
    zmq_connect(sock, argv[1]);
    static uint8_t buf[SW_PROTO_HEADER + 4 * 65536];

    send_raw("garbage!", 8);
    expect_error("a short frame");
    memset(buf, 0xAB, 100);
    send_raw(buf, 100);
    expect_error("random bytes");
    size_t n = make(buf, SW_MSG_HEARTBEAT, 0, NULL, 0);
    buf[4] = 9;
    send_raw(buf, n);
    expect_error("a wrong protocol version");
    n = make(buf, SW_MSG_PUSH, 0, "abcd", 4);
    sw_put_u64(buf + 24, (uint64_t)1 << 40);
    send_raw(buf, n);
    expect_error("a huge length claim");
    n = make(buf, SW_MSG_PUSH, 0, "abcd", 4);
    buf[n - 1] ^= 0xff;
    send_raw(buf, n);
    expect_error("a damaged payload");
    n = make(buf, SW_MSG_MODEL, 0, NULL, 0);
    send_raw(buf, n);
    expect_error("a server-only message type");
    n = make(buf, SW_MSG_PUSH, 3, "abcd", 4);
    send_raw(buf, n);
    expect_error("a push under another id");
    n = make(buf, SW_MSG_HEARTBEAT, 0, NULL, 0);
    zmq_send(sock, buf, n, ZMQ_SNDMORE);
    zmq_send(sock, buf, n, 0);
    expect_error("a two-frame message");

    /* Join properly, then push wrong-dimension and non-finite gradients. */
    n = make(buf, SW_MSG_JOIN, SW_NO_WORKER, "hostile", 7);
    send_raw(buf, n);
    uint32_t id = SW_NO_WORKER;
    size_t params = 0;
    zmq_msg_t f;
    sw_msg m;
    if (await(SW_MSG_WELCOME, &f, &m)) {
        id = m.worker;
        const char *p = strstr((const char *)m.payload, "params=");
        params = p ? strtoul(p + 7, NULL, 10) : 0;
        zmq_msg_close(&f);
    }
    if (id == SW_NO_WORKER || params == 0 || params > 65536) {
        printf("could not join (or the model is too large for this tool)\n");
        return 1;
    }
    static float g[65536];
    static uint8_t pay[4 * 65536];
    sw_msg_put_floats(pay, g, params - 1);
    n = make(buf, SW_MSG_PUSH, id, pay, 4 * (params - 1));
    send_raw(buf, n);
    expect_error("a wrong-dimension gradient");
    n = make(buf, SW_MSG_HEARTBEAT, id, NULL, 0); /* version 0, not the token WELCOME gave */
    send_raw(buf, n);
    expect_error("a heartbeat without its membership's token");
    g[params / 2] = NAN;
    sw_msg_put_floats(pay, g, params);
    n = make(buf, SW_MSG_PUSH, id, pay, 4 * params);
    send_raw(buf, n);
    expect_error("a NaN gradient");
    /* Sparse messages: indices that do not ascend, or name a weight the model lacks. */
    uint32_t idx[2] = {5, 2};
    float val[2] = {1, 1};
    sw_msg_put_pairs(pay, idx, val, 2);
    n = make(buf, SW_MSG_PUSH_SPARSE, id, pay, 16);
    send_raw(buf, n);
    expect_error("a sparse push with descending indices");
    idx[0] = 1;
    idx[1] = (uint32_t)params;
    sw_msg_put_indices(pay, idx, 2);
    n = make(buf, SW_MSG_PULL_SPARSE, id, pay, 8);
    send_raw(buf, n);
    expect_error("a sparse pull past the model");
    n = make(buf, SW_MSG_PULL_SPARSE, id, pay, 7);
    send_raw(buf, n);
    expect_error("a ragged index list");
    n = make(buf, SW_MSG_LEAVE, id, NULL, 0);
    send_raw(buf, n);
    zmq_close(sock);
    zmq_ctx_term(ctx);
    printf("%d of %d hostile messages refused\n", refused, sent);
    return refused == sent ? 0 : 1;
}
