/* The rig of the shard's tests (shard_test.c, shard_recover_test.c): a shard on the
 * in-process network, a test server and two test workers dialled to it, and the messages they
 * send and expect. Included by test files only. */
#ifndef SW_NET_SHARD_TEST_RIG_H
#define SW_NET_SHARD_TEST_RIG_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "syncwise/bytes.h"
#include "syncwise/err.h"
#include "syncwise/optim.h"
#include "syncwise/proto.h"
#include "syncwise/shard.h"
#include "syncwise/transport.h"
#include "batch.h"

enum { N = 10, SLOTS = 2 }; /* 10 parameters over 2 shards: this one holds [5, 10) */
/* An APPLY or RESTORE entry in a run of up to 64 shards: worker, token, seq, one word of shards. */
enum { ENTRY = 28 };
#define LEN 5

typedef struct rig {
    sw_net *net;
    sw_loop *loop;
    sw_shard *shard;
    sw_shard_params p;
    sw_shard_result r;
    sw_sock *server, *w[SLOTS], *stranger;
} rig;

/* A batch the shard sent (batch.h), handed out one message at a time. */
static struct {
    sw_sock *sock;
    sw_frame *frame;
    sw_msg batch;
    size_t at;
} rig_batch;

static inline sw_sock *dial(rig *g, const char *who)
{
    sw_sock *s;
    sw_dial_params dp = {.endpoint = sw_shard_endpoint(g->shard), .identity = who};
    assert_int_equal(sw_dial(g->net, &s, &dp, NULL), 0);
    return s;
}

static inline int setup(void **state)
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

static inline int teardown(void **state)
{
    rig *g = *state;
    sw_frame_unref(rig_batch.frame);
    rig_batch.frame = NULL;
    sw_sock_close(g->server);
    sw_sock_close(g->w[0]);
    sw_sock_close(g->w[1]);
    sw_sock_close(g->stranger);
    sw_shard_end(g->shard);
    sw_loop_free(g->loop);
    sw_net_free(g->net);
    return 0;
}

static inline void send_raw(sw_sock *s, sw_msg_type type, uint32_t worker, uint32_t flags,
                     uint64_t version, const void *payload, size_t len)
{
    sw_frame *f = sw_frame_new(sw_msg_size(len));
    sw_msg m = {.type = type, .worker = worker, .flags = flags, .version = version,
                .payload = payload, .payload_len = len};
    sw_msg_encode(&m, sw_frame_data(f));
    sw_send(s, NULL, 0, f);
}

/* Lets the shard take what was sent. */
static inline void settle(rig *g)
{
    assert_int_equal(sw_loop_run(g->loop, NULL, sw_net_now(g->net) + 0.01, NULL), 0);
}

/* The next message s received, decoded into *m (its frame in *f, to unref); false: none. The
 * messages of a batch come out one by one, as if each had come alone. */
static inline bool next(sw_sock *s, sw_msg *m, sw_frame **f)
{
    if (rig_batch.frame && rig_batch.sock == s) {
        if (sw__batch_next(&rig_batch.batch, &rig_batch.at, m)) {
            *f = sw_frame_ref(rig_batch.frame);
            return true;
        }
        sw_frame_unref(rig_batch.frame);
        rig_batch.frame = NULL;
    }
    sw_delivery d;
    if (sw_recv(s, &d) != 0)
        return false;
    *f = d.frame;
    assert_int_equal(sw_msg_decode(sw_frame_data(d.frame), sw_frame_size(d.frame), 1 << 20, m, NULL),
                     0);
    if (m->type != SW_MSG_BATCH)
        return true;
    assert_int_equal(sw__batch_check(m, 1 << 20, false, NULL), 0);
    rig_batch.sock = s;
    rig_batch.frame = d.frame;
    rig_batch.batch = *m;
    rig_batch.at = 0;
    return next(s, m, f);
}

static inline sw_msg_type expect_one(sw_sock *s, sw_msg *m, uint8_t *payload, size_t cap)
{
    sw_frame *f = NULL;
    assert_true(next(s, m, &f));
    assert_true(m->payload_len <= cap);
    memcpy(payload, m->payload, m->payload_len);
    m->payload = payload;
    sw_frame_unref(f);
    return m->type;
}

static inline void expect_refused(rig *g, sw_sock *s, const char *why)
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

/* The next message on s is a SLICE at `version` carrying k floats (k <= 2 LEN) close to want;
 * its restore mark. */
static inline uint64_t expect_slice_values(sw_sock *s, uint64_t version, const float *want,
                                           size_t k)
{
    sw_msg m, floats;
    uint8_t pay[64];
    float got[2 * LEN];
    uint64_t mark;
    assert_int_equal(expect_one(s, &m, pay, sizeof pay), SW_MSG_SHARD_SLICE);
    assert_int_equal(m.version, version);
    assert_int_equal(sw_msg_get_slice(&m, &mark, &floats, NULL), 0);
    assert_int_equal(sw_msg_get_floats(&floats, got, k, NULL), 0);
    for (size_t i = 0; i < k; i++)
        assert_true(fabsf(got[i] - want[i]) <= 1e-6f * (1 + fabsf(want[i])));
    return mark;
}

/* The APPLIED the server hears after the apply that made `version`: the squared norm of the
 * shard's slice of the gradients' sum, `sum` (NULL: every slice counted as zero), and the sum
 * of the slices' own squared norms, `each`. */
static inline void expect_applied(sw_sock *s, uint64_t version, const float *sum, double each)
{
    sw_msg m;
    uint8_t pay[16];
    assert_int_equal(expect_one(s, &m, pay, sizeof pay), SW_MSG_SHARD_APPLIED);
    assert_int_equal(m.version, version);
    assert_int_equal(m.payload_len, 16);
    double want = sum ? sw_sq_norm(sum, LEN) : 0;
    assert_true(fabs(sw_get_f64(pay) - want) <= 1e-6 * (1 + want));
    assert_true(fabs(sw_get_f64(pay + 8) - each) <= 1e-6 * (1 + each));
}

static inline void push(rig *g, uint32_t w, uint64_t token, uint64_t seq, uint64_t version,
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

/* A push the shard keeps: the server hears of it (its report is not looked at here). */
static inline void push_kept(rig *g, uint32_t w, uint64_t token, uint64_t seq, uint64_t version,
                             const float *slice, size_t n)
{
    push(g, w, token, seq, version, slice, n);
    settle(g);
    sw_msg m;
    uint8_t pay[64];
    assert_int_equal(expect_one(g->server, &m, pay, sizeof pay), SW_MSG_SHARD_PUSHED);
}

/* An APPLY of n pushes (worker w[k], its start_run token, seq[k]) that went to the shards
 * to[k] (NULL: both). */
static inline size_t apply_payload(uint8_t *pay, float lr, const uint32_t *w,
                                   const uint64_t *seq, const uint64_t *to, uint32_t n)
{
    static const uint64_t tokens[SLOTS] = {100, 200}; /* start_run's */
    uint8_t *e = pay + 8;
    sw_put_f32(pay, lr);
    sw_put_u32(pay + 4, n);
    for (uint32_t k = 0; k < n; k++, e += ENTRY) {
        sw_put_u32(e, w[k]);
        sw_put_u64(e + 4, tokens[w[k] % SLOTS]);
        sw_put_u64(e + 12, seq[k]);
        sw_put_u64(e + 20, to ? to[k] : 3);
    }
    return 8 + ENTRY * n;
}

static inline void apply_to(rig *g, uint32_t flags, uint64_t version, float lr, const uint32_t *w,
                     const uint64_t *seq, const uint64_t *to, uint32_t n)
{
    uint8_t pay[8 + ENTRY * 8];
    size_t len = apply_payload(pay, lr, w, seq, to, n);
    send_raw(g->server, SW_MSG_SHARD_APPLY, SW_NO_WORKER, flags, version, pay, len);
}

static inline void apply(rig *g, uint32_t flags, uint64_t version, float lr, const uint32_t *w,
                  const uint64_t *seq, uint32_t n)
{
    apply_to(g, flags, version, lr, w, seq, NULL, n);
}

static inline void start_run(rig *g, const float *theta)
{
    uint64_t refused = g->r.refused;
    const char *init = "run=9\nshard=1\nshards=2\nparams=10\nslots=2\nchunk=5\nfirst=0,1\nwd=0\n";
    send_raw(g->server, SW_MSG_SHARD_INIT, SW_NO_WORKER, 0, 7, init, strlen(init));
    uint8_t pay[4 * LEN];
    sw_msg_put_floats(pay, theta, LEN);
    send_raw(g->server, SW_MSG_SHARD_SET, SW_NO_WORKER, 0, 7, pay, sizeof pay);
    send_raw(g->server, SW_MSG_SHARD_MEMBER, 0, 0, 100, NULL, 0);
    send_raw(g->server, SW_MSG_SHARD_MEMBER, 1, 0, 200, NULL, 0);
    settle(g);
    assert_int_equal(g->r.refused, refused);
}

#endif
