/* A shard on the in-process network, driven by a test server and two test workers: what it
 * keeps, what it tells the server, the apply it is ordered (the engine's arithmetic), pulls
 * answered once the version is there, and every message it must refuse. */
#define _POSIX_C_SOURCE 200809L
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

/* The APPLIED the server hears after the apply that made `version`: the squared norm of the
 * shard's slice of the gradients' sum, `sum` (NULL: every slice counted as zero). */
static void expect_applied(sw_sock *s, uint64_t version, const float *sum)
{
    sw_msg m;
    uint8_t pay[16];
    assert_int_equal(expect_one(s, &m, pay, sizeof pay), SW_MSG_SHARD_APPLIED);
    assert_int_equal(m.version, version);
    assert_int_equal(m.payload_len, 8);
    double want = sum ? sw_sq_norm(sum, LEN) : 0;
    assert_true(fabs(sw_get_f64(pay) - want) <= 1e-6 * (1 + want));
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

/* An APPLY of n pushes (worker w[k], its start_run token, seq[k]) that went to the shards
 * to[k] (NULL: both). */
static void apply_to(rig *g, uint32_t flags, uint64_t version, float lr, const uint32_t *w,
                     const uint64_t *seq, const uint64_t *to, uint32_t n)
{
    static const uint64_t tokens[SLOTS] = {100, 200}; /* start_run's */
    uint8_t pay[8 + SW_SHARD_ENTRY * 8], *e = pay + 8;
    sw_put_f32(pay, lr);
    sw_put_u32(pay + 4, n);
    for (uint32_t k = 0; k < n; k++, e += SW_SHARD_ENTRY) {
        sw_put_u32(e, w[k]);
        sw_put_u64(e + 4, tokens[w[k] % SLOTS]);
        sw_put_u64(e + 12, seq[k]);
        sw_put_u64(e + 20, to ? to[k] : 3);
    }
    send_raw(g->server, SW_MSG_SHARD_APPLY, SW_NO_WORKER, flags, version, pay,
             8 + SW_SHARD_ENTRY * n);
}

static void apply(rig *g, uint32_t flags, uint64_t version, float lr, const uint32_t *w,
                  const uint64_t *seq, uint32_t n)
{
    apply_to(g, flags, version, lr, w, seq, NULL, n);
}

static void start_run(rig *g, const float *theta)
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
    expect_applied(g->server, 8, sum);
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
    expect_applied(g->server, 9, g1);
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

/* A sparse push of `nnz` pairs (global indices) that went to the shards `to`. */
static void push_sparse(rig *g, uint32_t w, uint64_t seq, uint64_t to, const uint32_t *idx,
                        const float *val, size_t nnz)
{
    uint8_t pay[24 + 8 * 8];
    sw_put_u64(pay, w == 0 ? 100 : 200);
    sw_put_u64(pay + 8, seq);
    sw_put_u64(pay + 16, to);
    sw_msg_put_pairs(pay + 24, idx, val, nnz);
    send_raw(g->w[w], SW_MSG_SHARD_PUSH_SPARSE, w, 0, 7 + (seq > 1), pay, 24 + 8 * nnz);
}

static void pull_sparse(rig *g, uint32_t w, uint64_t version, const uint32_t *idx, size_t k)
{
    uint8_t pay[8 + 4 * 8];
    sw_put_u64(pay, w == 0 ? 100 : 200);
    sw_msg_put_indices(pay + 8, idx, k);
    send_raw(g->w[w], SW_MSG_SHARD_PULL, w, 0, version, pay, 8 + 4 * k);
}

/* The values a sparse pull brought: k floats at `version`. */
static void expect_values(sw_sock *s, uint64_t version, const float *want, size_t k)
{
    sw_msg m;
    uint8_t pay[64];
    float got[8];
    assert_int_equal(expect_one(s, &m, pay, sizeof pay), SW_MSG_SHARD_SLICE);
    assert_int_equal(m.version, version);
    assert_int_equal(sw_msg_get_floats(&m, got, k, NULL), 0);
    for (size_t i = 0; i < k; i++)
        assert_true(fabsf(got[i] - want[i]) <= 1e-6f * (1 + fabsf(want[i])));
}

/* A sparse push keeps its pairs in this shard's slice and tells the server which shards it
 * went to; an apply counts a push that went elsewhere as zero here; a lone sparse push is
 * applied as the engine applies it; a sparse pull answers the values asked, at once or when
 * the version comes; pairs or indices outside the slice, and shards that are not the run's,
 * are refused. */
static void sparse_pushes_pulls_and_applies(void **state)
{
    rig *g = *state;
    const float theta[LEN] = {1, 2, 3, 4, 5};
    start_run(g, theta);
    push_sparse(g, 0, 1, 3, (uint32_t[]){6, 9}, (float[]){1, 2}, 2);
    settle(g);
    sw_msg m;
    uint8_t pay[64];
    assert_int_equal(expect_one(g->server, &m, pay, sizeof pay), SW_MSG_SHARD_PUSHED);
    assert_int_equal(m.payload_len, 32);
    assert_true(fabs(sw_get_f64(pay + 16) - 5) < 1e-9);
    assert_int_equal(sw_get_u64(pay + 24), 3);
    /* Worker 1's push went to shard 0 only: zero here. */
    apply_to(g, 0, 8, 0.5f, (uint32_t[]){0, 1}, (uint64_t[]){1, 1}, (uint64_t[]){3, 1}, 2);
    settle(g);
    expect_applied(g->server, 8, (float[]){0, 1, 0, 0, 2});
    pull_sparse(g, 0, 8, (uint32_t[]){6, 9}, 2);
    settle(g);
    expect_values(g->w[0], 8, (float[]){2 - 0.25f, 5 - 0.5f}, 2);
    /* A pull of a version to come waits; a lone sparse push, applied, answers it. */
    pull_sparse(g, 1, 9, (uint32_t[]){5, 6}, 2);
    push_sparse(g, 1, 2, 2, (uint32_t[]){5}, (float[]){4}, 1);
    settle(g);
    assert_int_equal(expect_one(g->server, &m, pay, sizeof pay), SW_MSG_SHARD_PUSHED);
    apply_to(g, 0, 9, 0.1f, (uint32_t[]){1}, (uint64_t[]){2}, (uint64_t[]){2}, 1);
    settle(g);
    expect_applied(g->server, 9, (float[]){4, 0, 0, 0, 0});
    expect_values(g->w[1], 9, (float[]){1 - 0.4f, 2 - 0.25f}, 2);
    assert_int_equal(g->r.refused, 0);
    push_sparse(g, 0, 3, 3, (uint32_t[]){3}, (float[]){1}, 1); /* shard 0's place */
    expect_refused(g, g->w[0], "outside this shard's slice");
    push_sparse(g, 0, 4, 3, (uint32_t[]){10}, (float[]){1}, 1); /* past the model */
    expect_refused(g, g->w[0], "index");
    push_sparse(g, 0, 5, 1, (uint32_t[]){6}, (float[]){1}, 1); /* not sent to this shard */
    expect_refused(g, g->w[0], "shards that are not");
    push_sparse(g, 0, 6, 7, (uint32_t[]){6}, (float[]){1}, 1); /* a third shard */
    expect_refused(g, g->w[0], "shards that are not");
    push_sparse(g, 0, 7, 3, (uint32_t[]){7, 6}, (float[]){1, 1}, 2);
    expect_refused(g, g->w[0], "ascend");
    pull_sparse(g, 0, 9, (uint32_t[]){4}, 1);
    expect_refused(g, g->w[0], "outside this shard's slice");
    assert_int_equal(g->r.pushes, 2);
}

static void hostile_messages_are_refused_and_counted(void **state)
{
    rig *g = *state;
    const float theta[LEN] = {0}, g0[LEN] = {1, 1, 1, 1, 1};
    float bad[LEN] = {1, 1, NAN, 1, 1};
    const char *init = "run=7\nshard=0\nshards=2\nparams=10\nslots=2\nchunk=5\nfirst=0,1\n";
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

/* ---- Checkpoints and restores --------------------------------------------------------- */

static char ckpt_dir[64], ckpt_path[96];

static int setup_with_checkpoint(void **state)
{
    snprintf(ckpt_dir, sizeof ckpt_dir, "/tmp/sw_shard_test.XXXXXX");
    assert_non_null(mkdtemp(ckpt_dir));
    snprintf(ckpt_path, sizeof ckpt_path, "%s/slice.ckpt", ckpt_dir);
    int rc = setup(state);
    rig *g = *state;
    g->p.checkpoint = ckpt_path; /* read only when it saves or resumes */
    return rc;
}

static int teardown_with_checkpoint(void **state)
{
    char prev[128];
    snprintf(prev, sizeof prev, "%s.prev", ckpt_path);
    remove(ckpt_path);
    remove(prev);
    rmdir(ckpt_dir);
    return teardown(state);
}

/* The STATE s received next: its version, and payload fields (run, saved, ..., restores,
 * awaiting). */
static uint64_t expect_state(sw_sock *s, uint64_t *saved, uint64_t *restores, uint64_t *awaiting)
{
    sw_msg m;
    uint8_t pay[64];
    assert_int_equal(expect_one(s, &m, pay, sizeof pay), SW_MSG_SHARD_STATE);
    assert_int_equal(m.payload_len, 56);
    *saved = sw_get_u64(pay + 8);
    *restores = sw_get_u64(pay + 40);
    *awaiting = sw_get_u64(pay + 48);
    return m.version;
}

/* RESTORE from version `from`, going on as `version`, with the tokens of start_run and one lost
 * push (worker 0, token 100, seq 5). */
static void restore(sw_sock *s, uint64_t run, uint64_t from, uint64_t version, uint64_t number)
{
    uint8_t pay[28 + 8 * SLOTS + 4 + SW_SHARD_ENTRY];
    sw_put_u64(pay, run);
    sw_put_u64(pay + 8, from);
    sw_put_u64(pay + 16, number);
    sw_put_u32(pay + 24, SLOTS);
    sw_put_u64(pay + 28, 100);
    sw_put_u64(pay + 36, 200);
    sw_put_u32(pay + 44, 1);
    sw_put_u32(pay + 48, 0);
    sw_put_u64(pay + 52, 100);
    sw_put_u64(pay + 60, 5);
    sw_put_u64(pay + 68, 3);
    send_raw(s, SW_MSG_SHARD_RESTORE, SW_NO_WORKER, 0, version, pay, sizeof pay);
}

static void expect_slice(rig *g, sw_sock *s, uint32_t w, uint64_t version, const float *want)
{
    uint8_t tok[8];
    sw_put_u64(tok, w == 0 ? 100 : 200);
    send_raw(s, SW_MSG_SHARD_PULL, w, 0, version, tok, 8);
    settle(g);
    sw_msg m;
    uint8_t pay[64];
    float got[LEN];
    assert_int_equal(expect_one(s, &m, pay, sizeof pay), SW_MSG_SHARD_SLICE);
    assert_int_equal(m.version, version);
    assert_int_equal(sw_msg_get_floats(&m, got, LEN, NULL), 0);
    for (int i = 0; i < LEN; i++)
        assert_true(fabsf(got[i] - want[i]) <= 1e-6f * (1 + fabsf(want[i])));
}

/* A checkpoint ordered at the shard's version; a restore of it from a later version goes on at
 * the version the server says, counting the lost push as zero and ignoring its slice; a shard
 * resumed from the file keeps workers' messages until its RESTORE, and answers them after. */
static void checkpoints_restores_and_a_resume(void **state)
{
    rig *g = *state;
    const float theta[LEN] = {1, 2, 3, 4, 5}, g0[LEN] = {1, 0, -1, 2, 0.5f};
    uint64_t saved, restores, awaiting;
    start_run(g, theta);
    send_raw(g->server, SW_MSG_SHARD_SAVE, SW_NO_WORKER, 0, 6, NULL, 0);
    expect_refused(g, g->server, "does not hold");
    send_raw(g->server, SW_MSG_SHARD_SAVE, SW_NO_WORKER, 0, 7, NULL, 0);
    settle(g);
    assert_int_equal(expect_state(g->server, &saved, &restores, &awaiting), 7);
    assert_int_equal(saved, 7);
    push(g, 1, 200, 1, 7, g0, LEN);
    apply(g, 0, 8, 0.5f, (uint32_t[]){1}, (uint64_t[]){1}, 1); /* θ moves on to version 8 */
    settle(g);
    sw_msg m;
    uint8_t pay[256];
    assert_int_equal(expect_one(g->server, &m, pay, sizeof pay), SW_MSG_SHARD_PUSHED);
    expect_applied(g->server, 8, g0);
    /* Back to version 7's θ, going on as 12; the lost push counts as zero. */
    restore(g->stranger, 8, 7, 12, 1); /* another run's id */
    expect_refused(g, g->stranger, "another run");
    restore(g->server, 9, 7, 12, 1);
    settle(g);
    assert_int_equal(expect_state(g->server, &saved, &restores, &awaiting), 12);
    assert_int_equal(restores, 1);
    expect_slice(g, g->w[0], 0, 12, theta);
    push(g, 0, 100, 5, 12, g0, LEN); /* the lost push's slice: ignored */
    apply(g, 0, 13, 0.5f, (uint32_t[]){0}, (uint64_t[]){5}, 1);
    settle(g);
    expect_applied(g->server, 13, NULL); /* its slice counted as zero */
    assert_false(next(g->server, &m, &(sw_frame *){NULL}));
    assert_int_equal(g->r.refused, 2); /* the save of version 6 and the stranger's restore */
    expect_slice(g, g->w[1], 1, 13, theta); /* a zero step */
    send_raw(g->server, SW_MSG_SHARD_SAVE, SW_NO_WORKER, 0, 13, NULL, 0);
    settle(g);
    assert_int_equal(expect_state(g->server, &saved, &restores, &awaiting), 13);

    /* A shard resumed from the file: it waits for a RESTORE, keeping a worker's pull. */
    sw_shard *again;
    sw_shard_result r;
    sw_shard_params p = {.bind = "shard1", .checkpoint = ckpt_path, .resume = true};
    assert_int_equal(sw_shard_new(&again, g->net, &p, &r, NULL), 0);
    assert_int_equal(sw_loop_add(g->loop, sw_shard_agent(again), NULL), 0);
    sw_sock *server, *w0;
    sw_dial_params dp = {.endpoint = "shard1", .identity = "server2"};
    assert_int_equal(sw_dial(g->net, &server, &dp, NULL), 0);
    dp.identity = "w0";
    assert_int_equal(sw_dial(g->net, &w0, &dp, NULL), 0);
    uint8_t tok[8];
    sw_put_u64(tok, 100);
    send_raw(w0, SW_MSG_SHARD_PULL, 0, 0, 13, tok, 8);
    send_raw(server, SW_MSG_SHARD_APPLY, SW_NO_WORKER, 0, 14, "12345678", 8); /* stale: ignored */
    send_raw(server, SW_MSG_SHARD_PING, SW_NO_WORKER, 0, 0, (uint8_t[]){9, 0, 0, 0, 0, 0, 0, 0}, 8);
    settle(g);
    assert_false(next(w0, &m, &(sw_frame *){NULL}));
    assert_int_equal(expect_state(server, &saved, &restores, &awaiting), 13);
    assert_int_equal(saved, 13);
    assert_int_equal(awaiting, 1);
    restore(server, 9, 13, 20, 2);
    settle(g);
    assert_int_equal(expect_state(server, &saved, &restores, &awaiting), 20);
    assert_int_equal(awaiting, 0);
    assert_int_equal(expect_one(w0, &m, pay, sizeof pay), SW_MSG_SHARD_SLICE);
    assert_int_equal(m.version, 20);
    assert_int_equal(r.refused, 0);
    sw_sock_close(server);
    sw_sock_close(w0);
    sw_shard_end(again);
}

/* A damaged newest checkpoint: a resume reads the one before. */
static void a_resume_falls_back_to_the_previous_checkpoint(void **state)
{
    rig *g = *state;
    const float theta[LEN] = {1, 2, 3, 4, 5};
    uint64_t saved, restores, awaiting;
    start_run(g, theta);
    send_raw(g->server, SW_MSG_SHARD_SAVE, SW_NO_WORKER, 0, 7, NULL, 0);
    restore(g->server, 9, 7, 8, 1); /* version 8 */
    send_raw(g->server, SW_MSG_SHARD_SAVE, SW_NO_WORKER, 0, 8, NULL, 0);
    settle(g);
    for (uint64_t v = 7; v <= 8; v++) {
        assert_int_equal(expect_state(g->server, &saved, &restores, &awaiting), v);
        if (v == 8) /* the restore's, then the save's */
            assert_int_equal(expect_state(g->server, &saved, &restores, &awaiting), v);
        assert_int_equal(saved, v);
    }
    FILE *f = fopen(ckpt_path, "r+b");
    assert_non_null(f);
    fseek(f, 60, SEEK_SET);
    fputc('!', f);
    fclose(f);
    sw_shard *again;
    sw_shard_result r;
    char err[SW_ERR_LEN];
    sw_shard_params p = {.bind = "shard1", .checkpoint = ckpt_path, .resume = true};
    assert_int_equal(sw_shard_new(&again, g->net, &p, &r, err), 0);
    assert_int_equal(sw_loop_add(g->loop, sw_shard_agent(again), NULL), 0);
    sw_sock *server;
    assert_int_equal(sw_dial(g->net, &server, &(sw_dial_params){.endpoint = "shard1"}, NULL), 0);
    send_raw(server, SW_MSG_SHARD_PING, SW_NO_WORKER, 0, 0, (uint8_t[]){9, 0, 0, 0, 0, 0, 0, 0}, 8);
    settle(g);
    assert_int_equal(expect_state(server, &saved, &restores, &awaiting), 7);
    assert_int_equal(awaiting, 1);
    sw_sock_close(server);
    sw_shard_end(again);
    p.checkpoint = "/nonexistent/slice.ckpt";
    assert_int_not_equal(sw_shard_new(&again, g->net, &p, &r, err), 0);
    assert_non_null(strstr(err, "slice.ckpt"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(pushes_applies_and_pulls, setup, teardown),
        cmocka_unit_test_setup_teardown(dropped_gradients_are_forgotten, setup, teardown),
        cmocka_unit_test_setup_teardown(a_gone_members_gradient_is_kept_until_ordered, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(sparse_pushes_pulls_and_applies, setup, teardown),
        cmocka_unit_test_setup_teardown(hostile_messages_are_refused_and_counted, setup, teardown),
        cmocka_unit_test_setup_teardown(checkpoints_restores_and_a_resume, setup_with_checkpoint,
                                        teardown_with_checkpoint),
        cmocka_unit_test_setup_teardown(a_resume_falls_back_to_the_previous_checkpoint,
                                        setup_with_checkpoint, teardown_with_checkpoint),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
