/* A shard on the in-process network, driven by a test server and two test workers: what it
 * keeps, what it tells the server, the apply it is ordered (the engine's arithmetic), pulls
 * answered once the version is there, and every message it must refuse. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "syncwise/bytes.h"
#include "syncwise/err.h"
#include "syncwise/optim.h"
#include "syncwise/proto.h"
#include "syncwise/shard.h"
#include "syncwise/transport.h"

enum { N = 10, SLOTS = 2 }; /* 10 parameters over 2 shards: this one holds [5, 10) */
#define LEN 5

typedef struct rig {
    sw_net *net;
    sw_loop *loop;
    sw_shard *shard;
    sw_shard_params p;
    sw_shard_result r;
    sw_sock *server, *w[SLOTS], *stranger;
} rig;

static sw_sock *dial(rig *g, const char *who)
{
    sw_sock *s;
    sw_dial_params dp = {.endpoint = sw_shard_endpoint(g->shard), .identity = who};
    assert_int_equal(sw_dial(g->net, &s, &dp, NULL), 0);
    return s;
}

static int setup(void **state)
{
    static rig g;
    memset(&g, 0, sizeof g);
    assert_int_equal(sw_net_inproc_new(&g.net, &(sw_inproc_params){.latency_s = 1e-4}, NULL), 0);
    g.p.bind = "shard0";
    assert_int_equal(sw_shard_new(&g.shard, g.net, &g.p, &g.r, NULL), 0);
    assert_int_equal(sw_loop_new(&g.loop, g.net, NULL), 0);
    assert_int_equal(sw_loop_add(g.loop, sw_shard_agent(g.shard), NULL), 0);
    g.server = dial(&g, "server");
    g.w[0] = dial(&g, "w0");
    g.w[1] = dial(&g, "w1");
    g.stranger = dial(&g, "stranger");
    *state = &g;
    return 0;
}

static int teardown(void **state)
{
    rig *g = *state;
    sw_sock_close(g->server);
    sw_sock_close(g->w[0]);
    sw_sock_close(g->w[1]);
    sw_sock_close(g->stranger);
    sw_shard_end(g->shard);
    sw_loop_free(g->loop);
    sw_net_free(g->net);
    return 0;
}

static void send_raw(sw_sock *s, sw_msg_type type, uint32_t worker, uint32_t flags,
                     uint64_t version, const void *payload, size_t len)
{
    sw_frame *f = sw_frame_new(sw_msg_size(len));
    sw_msg m = {.type = type, .worker = worker, .flags = flags, .version = version,
                .payload = payload, .payload_len = len};
    sw_msg_encode(&m, sw_frame_data(f));
    sw_send(s, NULL, 0, f);
}

/* Lets the shard take what was sent. */
static void settle(rig *g)
{
    assert_int_equal(sw_loop_run(g->loop, NULL, sw_net_now(g->net) + 0.01, NULL), 0);
}

/* The next message s received, decoded into *m (its frame in *f, to unref); false: none. */
static bool next(sw_sock *s, sw_msg *m, sw_frame **f)
{
    sw_delivery d;
    if (sw_recv(s, &d) != 0)
        return false;
    *f = d.frame;
    assert_int_equal(sw_msg_decode(sw_frame_data(d.frame), sw_frame_size(d.frame), 1 << 20, m, NULL),
                     0);
    return true;
}

static sw_msg_type expect_one(sw_sock *s, sw_msg *m, uint8_t *payload, size_t cap)
{
    sw_frame *f = NULL;
    assert_true(next(s, m, &f));
    assert_true(m->payload_len <= cap);
    memcpy(payload, m->payload, m->payload_len);
    m->payload = payload;
    sw_frame_unref(f);
    return m->type;
}

static void expect_refused(rig *g, sw_sock *s, const char *why)
{
    uint64_t before = g->r.refused;
    settle(g);
    sw_msg m;
    uint8_t pay[512];
    assert_int_equal(expect_one(s, &m, pay, sizeof pay), SW_MSG_ERROR);
    pay[m.payload_len < sizeof pay ? m.payload_len : sizeof pay - 1] = '\0';
    if (!strstr((const char *)pay, why))
        fail_msg("'%s' lacks '%s'", (const char *)pay, why);
    assert_int_equal(g->r.refused, before + 1);
}

static void push(rig *g, uint32_t w, uint64_t token, uint64_t seq, uint64_t version,
                 const float *slice, size_t n)
{
    uint8_t pay[16 + 4 * 64];
    sw_put_u64(pay, token);
    sw_put_u64(pay + 8, seq);
    sw_msg_put_floats(pay + 16, slice, n);
    /* Worker 0 asks for the parameters with its release, worker 1 does not. */
    uint32_t flags = w == 0 ? SW_FLAG_WANT_MODEL : 0;
    send_raw(g->w[w], SW_MSG_SHARD_PUSH, w, flags, version, pay, 16 + 4 * n);
}

static void apply(rig *g, uint32_t flags, uint64_t version, float lr, const uint32_t *w,
                  const uint64_t *seq, uint32_t n)
{
    static const uint64_t tokens[SLOTS] = {100, 200}; /* start_run's */
    uint8_t pay[8 + 20 * 8];
    sw_put_f32(pay, lr);
    sw_put_u32(pay + 4, n);
    for (uint32_t k = 0; k < n; k++) {
        sw_put_u32(pay + 8 + 20 * k, w[k]);
        sw_put_u64(pay + 12 + 20 * k, tokens[w[k] % SLOTS]);
        sw_put_u64(pay + 20 + 20 * k, seq[k]);
    }
    send_raw(g->server, SW_MSG_SHARD_APPLY, SW_NO_WORKER, flags, version, pay, 8 + 20 * n);
}

static void start_run(rig *g, const float *theta)
{
    uint64_t refused = g->r.refused;
    const char *init = "shard=1\nshards=2\nparams=10\nslots=2\nchunk=5\nfirst=0,1\nwd=0\n";
    send_raw(g->server, SW_MSG_SHARD_INIT, SW_NO_WORKER, 0, 7, init, strlen(init));
    uint8_t pay[4 * LEN];
    sw_msg_put_floats(pay, theta, LEN);
    send_raw(g->server, SW_MSG_SHARD_SET, SW_NO_WORKER, 0, 7, pay, sizeof pay);
    send_raw(g->server, SW_MSG_SHARD_MEMBER, 0, 0, 100, NULL, 0);
    send_raw(g->server, SW_MSG_SHARD_MEMBER, 1, 0, 200, NULL, 0);
    settle(g);
    assert_int_equal(g->r.refused, refused);
}

static void pushes_applies_and_pulls(void **state)
{
    rig *g = *state;
    const float theta[LEN] = {1, 2, 3, 4, 5}, g0[LEN] = {1, 0, -1, 2, 0.5f},
                g1[LEN] = {3, 1, 1, -2, 0.25f};
    start_run(g, theta);
    /* A pull of the next version waits for it. */
    uint8_t tok[8];
    sw_put_u64(tok, 100);
    send_raw(g->w[0], SW_MSG_SHARD_PULL, 0, 0, 8, tok, 8);
    push(g, 0, 100, 1, 7, g0, LEN);
    push(g, 1, 200, 1, 7, g1, LEN);
    settle(g);
    sw_msg m;
    uint8_t pay[256];
    for (int k = 0; k < 2; k++) { /* the server hears of both, with each slice's norm */
        assert_int_equal(expect_one(g->server, &m, pay, sizeof pay), SW_MSG_SHARD_PUSHED);
        const float *gk = m.worker == 0 ? g0 : g1;
        assert_int_equal(sw_get_u64(pay), m.worker == 0 ? 100 : 200); /* the token */
        assert_int_equal(sw_get_u64(pay + 8), 1);
        assert_int_equal(m.version, 7);
        assert_int_equal(m.flags & SW_FLAG_WANT_MODEL, m.worker == 0 ? SW_FLAG_WANT_MODEL : 0);
        assert_true(fabs(sw_get_f64(pay + 16) - sw_sq_norm(gk, LEN)) < 1e-9);
    }
    sw_frame *f = NULL;
    assert_false(next(g->w[0], &m, &f)); /* still waiting for version 8 */
    apply(g, 0, 8, 0.1f, (uint32_t[]){0, 1}, (uint64_t[]){1, 1}, 2);
    settle(g);
    assert_int_equal(expect_one(g->w[0], &m, pay, sizeof pay), SW_MSG_SHARD_SLICE);
    assert_int_equal(m.version, 8);
    float got[LEN], want[LEN], sum[LEN];
    assert_int_equal(sw_msg_get_floats(&m, got, LEN, NULL), 0);
    memcpy(want, theta, sizeof want);
    memcpy(sum, g0, sizeof sum);
    sw_vec_add(sum, g1, LEN);
    sw_sgd_step(want, sum, LEN, 0.1f / 2, 0);
    for (int i = 0; i < LEN; i++)
        assert_true(fabsf(got[i] - want[i]) <= 1e-6f * (1 + fabsf(want[i])));
    assert_int_equal(g->r.applies, 1);
    /* A lone gradient is applied as it is (the engine's arithmetic with a count of one). */
    push(g, 1, 200, 2, 8, g1, LEN);
    settle(g);
    assert_int_equal(expect_one(g->server, &m, pay, sizeof pay), SW_MSG_SHARD_PUSHED);
    apply(g, 0, 9, 0.5f, (uint32_t[]){1}, (uint64_t[]){2}, 1);
    send_raw(g->w[1], SW_MSG_SHARD_PULL, 1, 0, 9, (uint8_t[]){200, 0, 0, 0, 0, 0, 0, 0}, 8);
    settle(g);
    assert_int_equal(expect_one(g->w[1], &m, pay, sizeof pay), SW_MSG_SHARD_SLICE);
    assert_int_equal(sw_msg_get_floats(&m, got, LEN, NULL), 0);
    sw_sgd_step(want, g1, LEN, 0.5f, 0);
    for (int i = 0; i < LEN; i++)
        assert_true(fabsf(got[i] - want[i]) <= 1e-6f * (1 + fabsf(want[i])));
    /* Applied gradients are gone: naming them again is refused. */
    apply(g, 0, 10, 0.1f, (uint32_t[]){0}, (uint64_t[]){1}, 1);
    expect_refused(g, g->server, "does not hold");
}

static void dropped_gradients_are_forgotten(void **state)
{
    rig *g = *state;
    const float theta[LEN] = {0}, g0[LEN] = {1, 1, 1, 1, 1};
    start_run(g, theta);
    push(g, 0, 100, 5, 7, g0, LEN);
    settle(g);
    sw_msg m;
    uint8_t pay[256];
    assert_int_equal(expect_one(g->server, &m, pay, sizeof pay), SW_MSG_SHARD_PUSHED);
    apply(g, SW_FLAG_DROPPED, 0, 0, (uint32_t[]){0}, (uint64_t[]){5}, 1);
    apply(g, 0, 8, 0.1f, (uint32_t[]){0}, (uint64_t[]){5}, 1);
    expect_refused(g, g->server, "does not hold");
    assert_int_equal(g->r.applies, 0);
}

/* A worker that leaves may have a gradient in the engine's buffer: the shard keeps it, under
 * the membership it came from, even when the slot is given to a newcomer, until the server
 * orders it applied. */
static void a_gone_members_gradient_is_kept_until_ordered(void **state)
{
    rig *g = *state;
    const float theta[LEN] = {0}, g0[LEN] = {1, 2, 3, 4, 5};
    start_run(g, theta);
    push(g, 0, 100, 3, 7, g0, LEN);
    send_raw(g->server, SW_MSG_SHARD_MEMBER, 0, SW_FLAG_DONE, 0, NULL, 0);
    send_raw(g->server, SW_MSG_SHARD_MEMBER, 0, 0, 300, NULL, 0); /* a newcomer in slot 0 */
    push(g, 0, 100, 4, 7, g0, LEN); /* the old membership can push no more */
    settle(g);
    sw_msg m;
    uint8_t pay[256];
    assert_int_equal(expect_one(g->server, &m, pay, sizeof pay), SW_MSG_SHARD_PUSHED);
    assert_int_equal(expect_one(g->w[0], &m, pay, sizeof pay), SW_MSG_ERROR);
    assert_true(m.flags & SW_FLAG_UNKNOWN); /* no member: a worker may ask again */
    apply(g, 0, 8, 1.0f, (uint32_t[]){0}, (uint64_t[]){3}, 1); /* token 100: the old one */
    settle(g);
    assert_int_equal(g->r.applies, 1);
    assert_int_equal(g->r.refused, 1);
}

static void hostile_messages_are_refused_and_counted(void **state)
{
    rig *g = *state;
    const float theta[LEN] = {0}, g0[LEN] = {1, 1, 1, 1, 1};
    float bad[LEN] = {1, 1, NAN, 1, 1};
    const char *init = "shard=0\nshards=2\nparams=10\nslots=2\nchunk=5\nfirst=0,1\n";
    send_raw(g->stranger, SW_MSG_SHARD_SET, SW_NO_WORKER, 0, 1, NULL, 0);
    expect_refused(g, g->stranger, "only the server");
    start_run(g, theta);
    send_raw(g->stranger, SW_MSG_SHARD_INIT, SW_NO_WORKER, 0, 0, init, strlen(init));
    expect_refused(g, g->stranger, "another server");
    push(g, 0, 999, 1, 7, g0, LEN); /* not its token */
    expect_refused(g, g->w[0], "no member");
    push(g, 0, 100, 1, 7, g0, LEN - 1); /* a short slice */
    expect_refused(g, g->w[0], "floats");
    push(g, 0, 100, 1, 7, bad, LEN);
    expect_refused(g, g->w[0], "not finite");
    push(g, 0, 100, 1, 99, g0, LEN); /* a version to come */
    expect_refused(g, g->w[0], "version to come");
    send_raw(g->stranger, SW_MSG_SHARD_PULL, 1, 0, 0, "12345678", 8);
    expect_refused(g, g->stranger, "no member");
    send_raw(g->stranger, SW_MSG_SHARD_MEMBER, 0, 0, 5, NULL, 0);
    expect_refused(g, g->stranger, "only the server");
    apply(g, 0, 9, 0.1f, NULL, NULL, 0); /* from the server, but skipping a version */
    expect_refused(g, g->server, "next version");
    send_raw(g->w[1], SW_MSG_SHARD_APPLY, 1, 0, 8, "abcdefgh", 8);
    expect_refused(g, g->w[1], "only the server");
    send_raw(g->w[1], SW_MSG_PUSH, 1, 0, 7, NULL, 0); /* a server's message type */
    expect_refused(g, g->w[1], "not a message for a shard");
    send_raw(g->w[1], SW_MSG_SHARD_PULL, 1, SW_FLAG_UNCHECKED, 7, "12345678", 8);
    expect_refused(g, g->w[1], "checksum");
    sw_frame *f = sw_frame_new(12);
    memcpy(sw_frame_data(f), "not a frame!", 12);
    sw_send(g->stranger, NULL, 0, f);
    expect_refused(g, g->stranger, "shorter than a header");
    assert_int_equal(g->r.pushes, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(pushes_applies_and_pulls, setup, teardown),
        cmocka_unit_test_setup_teardown(dropped_gradients_are_forgotten, setup, teardown),
        cmocka_unit_test_setup_teardown(a_gone_members_gradient_is_kept_until_ordered, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(hostile_messages_are_refused_and_counted, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
