/* A hostile client for the server tests: it sends malformed, oversized, wrong-version and
 * wrong-dimension frames, a NaN gradient, pushes under another worker's id, a heartbeat without
 * its membership's token, multi-frame messages and an operator command from a stranger, and
 * checks that each is answered with ERROR (the server stays up for the others).
 *   net_hostile ENDPOINT               exit 0 when every hostile message was refused
 *   net_hostile ENDPOINT haunt SECONDS  never joins; every 0.2 s for SECONDS names workers 0-7
 *                                      in heartbeats (without their tokens), pulls and leaves,
 *                                      which must neither keep a dead worker alive nor drop a
 *                                      live one
 *   net_hostile ENDPOINT peer          to a decentralized peer, as a non-member: STOP ("target
 *                                      reached") and MEMBERS naming fake peers, 5 times each
 *   net_hostile ENDPOINT orders KEY PUB  to a shard under CURVE, admitted with a worker's key
 *                                      pair KEY (PUB: the server's public key): every order only
 *                                      the server may give, each of which must be refused
 *   net_hostile ENDPOINT flood BYTES   one frame of BYTES (a push's header claiming them all),
 *                                      then a second later leaves: a receiver's size limit must
 *                                      drop it unread */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "syncwise/bytes.h"
#include "syncwise/curve.h"
#include "syncwise/err.h"
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

/* Messages naming workers 0-7 that are not ours, for `seconds`; the answers are not read. */
static int haunt(double seconds)
{
    uint8_t buf[SW_PROTO_HEADER];
    static const sw_msg_type types[] = {SW_MSG_HEARTBEAT, SW_MSG_PULL, SW_MSG_LEAVE};
    for (int round = 0; round < (int)(seconds * 5); round++) {
        for (uint32_t w = 0; w < 8; w++)
            for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
                send_raw(buf, make(buf, types[t], w, NULL, 0));
        zmq_msg_t f;
        zmq_pollitem_t item = {.socket = sock, .events = ZMQ_POLLIN};
        while (zmq_poll(&item, 1, 0) > 0) { /* drop the refusals */
            zmq_msg_init(&f);
            zmq_msg_recv(&f, sock, 0);
            zmq_msg_close(&f);
        }
        zmq_poll(NULL, 0, 200);
    }
    printf("haunted workers 0-7 for %.1f s\n", seconds);
    return 0;
}

/* A non-member's STOP and MEMBERS to a peer (the peer decides; nothing comes back). */
static int false_peer(void)
{
    uint8_t buf[SW_PROTO_HEADER + 64];
    const char *fake = "tcp://127.0.0.1:9\ntcp://127.0.0.1:10\n";
    for (int i = 0; i < 5; i++) {
        send_raw(buf, make(buf, SW_MSG_PEER_STOP, SW_NO_WORKER, "reached", 7));
        send_raw(buf, make(buf, SW_MSG_PEER_MEMBERS, SW_NO_WORKER, fake, strlen(fake)));
        zmq_poll(NULL, 0, 100);
    }
    printf("sent 5 stops and 5 member lists as a non-member\n");
    return 0;
}

/* One frame of `bytes` (at least a header): a push whose header claims the rest. */
static int flood(size_t bytes)
{
    size_t len = bytes > SW_PROTO_HEADER ? bytes - SW_PROTO_HEADER : 0;
    uint8_t *frame = malloc(sw_msg_size(len)), *zeros = calloc(len ? len : 1, 1);
    if (!frame || !zeros)
        return 2;
    sw_msg m = {.type = SW_MSG_PUSH, .worker = 0, .payload = zeros, .payload_len = len};
    sw_msg_encode(&m, frame);
    send_raw(frame, sw_msg_size(len));
    zmq_poll(NULL, 0, 1000);
    free(frame);
    free(zeros);
    printf("sent a frame of %zu bytes\n", bytes);
    return 0;
}

/* A worker's key pair giving a shard the server's orders: each is refused. */
static int false_server(void)
{
    static const sw_msg_type orders[] = {SW_MSG_SHARD_INIT,  SW_MSG_SHARD_SET,
                                         SW_MSG_SHARD_MEMBER, SW_MSG_SHARD_APPLY,
                                         SW_MSG_SHARD_PING,   SW_MSG_SHARD_SAVE,
                                         SW_MSG_SHARD_RESTORE, SW_MSG_BATCH};
    uint8_t buf[SW_PROTO_HEADER + 64], pay[64] = {0};
    for (size_t i = 0; i < sizeof orders / sizeof *orders; i++) {
        send_raw(buf, make(buf, orders[i], SW_NO_WORKER, pay, sizeof pay));
        expect_error(sw_msg_type_name(orders[i]));
    }
    return refused == sent ? 0 : 1;
}

/* CURVE as a client with the key pair in key_path, to the server whose public key is in
 * pub_path. */
static int curve_client(const char *key_path, const char *pub_path)
{
    sw_curve_keys mine, theirs;
    char err[SW_ERR_LEN];
    if (sw_curve_read(key_path, 1, &mine, err) || sw_curve_read(pub_path, 0, &theirs, err)) {
        fprintf(stderr, "net_hostile: %s\n", err);
        return 1;
    }
    zmq_setsockopt(sock, ZMQ_CURVE_SERVERKEY, theirs.pub, 40);
    zmq_setsockopt(sock, ZMQ_CURVE_PUBLICKEY, mine.pub, 40);
    zmq_setsockopt(sock, ZMQ_CURVE_SECRETKEY, mine.sec, 40);
    return 0;
}

int main(int argc, char **argv)
{
    bool haunting = argc == 4 && !strcmp(argv[2], "haunt");
    bool peer = argc == 3 && !strcmp(argv[2], "peer");
    bool orders = argc == 5 && !strcmp(argv[2], "orders");
    bool flooding = argc == 4 && !strcmp(argv[2], "flood");
    if (argc != 2 && !haunting && !peer && !orders && !flooding) {
        fprintf(stderr, "usage: net_hostile ENDPOINT [haunt SECONDS | peer | orders KEY PUB | "
                        "flood BYTES]\n");
        return 2;
    }
    void *ctx = zmq_ctx_new();
    sock = zmq_socket(ctx, ZMQ_DEALER);
    int linger = 500, patience = 500;
    zmq_setsockopt(sock, ZMQ_LINGER, &linger, sizeof linger);
    /* A listener that never lets us in (CURVE) leaves no connection to queue on: a send gives
     * up instead of blocking the test for good. */
    zmq_setsockopt(sock, ZMQ_SNDTIMEO, &patience, sizeof patience);
    if (peer) /* a peer sees a sender's routing id as its endpoint: claim one nobody has */
        zmq_setsockopt(sock, ZMQ_ROUTING_ID, "tcp://127.0.0.1:9", 17);
    if (orders && curve_client(argv[3], argv[4]))
        return 2;
    zmq_connect(sock, argv[1]);
    if (haunting || peer || orders || flooding) {
        int rc = haunting ? haunt(atof(argv[3]))
                 : peer   ? false_peer()
                 : orders ? false_server()
                          : flood(strtoull(argv[3], NULL, 10));
        zmq_close(sock);
        zmq_ctx_term(ctx);
        return rc;
    }
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
    sw_msg unchecked = {.type = SW_MSG_PUSH, .worker = 0, .flags = SW_FLAG_UNCHECKED,
                        .payload = (const uint8_t *)"abcd", .payload_len = 4};
    sw_msg_encode(&unchecked, buf);
    send_raw(buf, sw_msg_size(4));
    expect_error("no checksum, on a checked run");
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
    n = make(buf, SW_MSG_CTL, SW_NO_WORKER, "policy asp", 10);
    send_raw(buf, n);
    expect_error("a stranger's operator command");

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
