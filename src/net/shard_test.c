/* A shard on the in-process network, driven by a test server and two test workers: what it
 * keeps, what it tells the server, the apply it is ordered (the engine's arithmetic), pulls
 * answered once the version is there, and every message it must refuse. Its checkpoints and
 * restores are in shard_recover_test.c, the frames pullers share, the pulls that wait and the
 * slices the server orders sent in shard_pull_test.c. */
#define _POSIX_C_SOURCE 200809L
#include "shard_test_rig.h"

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
    for (int k = 0; k < 2; k++) { /* the server hears of both, and the shards they went to */
        assert_int_equal(expect_one(g->server, &m, pay, sizeof pay), SW_MSG_SHARD_PUSHED);
        assert_int_equal(m.payload_len, 24);
        assert_int_equal(sw_get_u64(pay), m.worker == 0 ? 100 : 200); /* the token */
        assert_int_equal(sw_get_u64(pay + 8), 1);
        assert_int_equal(sw_get_u64(pay + 16), 3); /* both of the run's shards */
        assert_int_equal(m.version, 7);
        assert_int_equal(m.flags & SW_FLAG_WANT_MODEL, m.worker == 0 ? SW_FLAG_WANT_MODEL : 0);
    }
    sw_frame *f = NULL;
    assert_false(next(g->w[0], &m, &f)); /* still waiting for version 8 */
    apply(g, SW_FLAG_WANT_NORMS, 8, 0.1f, (uint32_t[]){0, 1}, (uint64_t[]){1, 1}, 2);
    settle(g);
    float want[LEN], sum[LEN];
    memcpy(want, theta, sizeof want);
    memcpy(sum, g0, sizeof sum);
    sw_vec_add(sum, g1, LEN);
    sw_sgd_step(want, sum, LEN, 0.1f / 2, 0);
    assert_int_equal(expect_slice_values(g->w[0], 8, want, LEN), 0); /* no restore yet */
    expect_applied(g->server, 8, sum, sw_sq_norm(g0, LEN) + sw_sq_norm(g1, LEN));
    assert_int_equal(g->r.applies, 1);
    /* A lone gradient is applied as it is (the engine's arithmetic with a count of one). */
    push_kept(g, 1, 200, 2, 8, g1, LEN);
    apply(g, SW_FLAG_WANT_NORMS, 9, 0.5f, (uint32_t[]){1}, (uint64_t[]){2}, 1);
    send_raw(g->w[1], SW_MSG_SHARD_PULL, 1, 0, 9, (uint8_t[]){200, 0, 0, 0, 0, 0, 0, 0}, 8);
    settle(g);
    sw_sgd_step(want, g1, LEN, 0.5f, 0);
    expect_slice_values(g->w[1], 9, want, LEN);
    expect_applied(g->server, 9, g1, sw_sq_norm(g1, LEN));
    /* Once an order asked for norms, pushes are measured as they come: the same norms. */
    push_kept(g, 0, 100, 2, 9, g1, LEN);
    push_kept(g, 1, 200, 3, 9, g0, LEN);
    apply(g, SW_FLAG_WANT_NORMS, 10, 0.1f, (uint32_t[]){0, 1}, (uint64_t[]){2, 3}, 2);
    settle(g);
    memcpy(sum, g1, sizeof sum);
    sw_vec_add(sum, g0, LEN);
    expect_applied(g->server, 10, sum, sw_sq_norm(g0, LEN) + sw_sq_norm(g1, LEN));
    /* Applied gradients are gone: naming them again is refused. */
    apply(g, 0, 11, 0.1f, (uint32_t[]){0}, (uint64_t[]){1}, 1);
    expect_refused(g, g->server, "does not hold");
}

/* A full slice goes from where θ lies (lent, not copied): an apply while a puller still holds
 * that frame writes elsewhere, so the slice it got keeps the version it says. */
static void a_slice_held_keeps_its_values_while_theta_moves_on(void **state)
{
    rig *g = *state;
    const float theta[LEN] = {1, 2, 3, 4, 5}, g1[LEN] = {3, 1, 1, -2, 0.25f};
    start_run(g, theta);
    uint8_t tok[8];
    sw_put_u64(tok, 100);
    send_raw(g->w[0], SW_MSG_SHARD_PULL, 0, 0, 7, tok, 8);
    settle(g);
    sw_msg m, floats;
    sw_frame *held = NULL;
    uint64_t mark;
    assert_true(next(g->w[0], &m, &held)); /* kept unread, as a slow worker's socket keeps it */
    assert_int_equal(m.type, SW_MSG_SHARD_SLICE);
    push_kept(g, 1, 200, 1, 7, g1, LEN);
    apply(g, 0, 8, 0.5f, (uint32_t[]){1}, (uint64_t[]){1}, 1);
    settle(g);
    float got[LEN], want[LEN];
    assert_int_equal(sw_msg_decode(sw_frame_data(held), sw_frame_size(held), 1 << 20, &m, NULL),
                     0); /* its checksum still holds */
    assert_int_equal(m.version, 7);
    assert_int_equal(sw_msg_get_slice(&m, &mark, &floats, NULL), 0);
    assert_int_equal(sw_msg_get_floats(&floats, got, LEN, NULL), 0);
    assert_memory_equal(got, theta, sizeof got);
    memcpy(want, theta, sizeof want);
    sw_sgd_step(want, g1, LEN, 0.5f, 0);
    send_raw(g->w[0], SW_MSG_SHARD_PULL, 0, 0, 8, tok, 8);
    settle(g);
    expect_slice_values(g->w[0], 8, want, LEN); /* the apply was not lost either */
    sw_frame_unref(held);
}

/* Every puller of one version gets the one frame of the whole slice, naming no worker, as a
 * barrier's workers get one RELEASE; a new version is a new frame. */
/* A SET the shard refuses (short, or with a non-finite value) leaves θ as it was, also while a
 * slice frame holds θ's buffer. */
static void a_refused_set_leaves_theta_alone(void **state)
{
    rig *g = *state;
    const float theta[LEN] = {1, 2, 3, 4, 5};
    start_run(g, theta);
    uint8_t tok[8];
    sw_put_u64(tok, 100);
    send_raw(g->w[0], SW_MSG_SHARD_PULL, 0, 0, 7, tok, 8);
    settle(g);
    sw_msg m;
    sw_frame *held = NULL;
    assert_true(next(g->w[0], &m, &held)); /* θ's buffer is in this frame */
    uint8_t pay[4 * LEN];
    sw_msg_put_floats(pay, (const float[]){9, 9, 9, 9, 9}, LEN);
    send_raw(g->server, SW_MSG_SHARD_SET, SW_NO_WORKER, 0, 7, pay, sizeof pay - 4);
    expect_refused(g, g->server, "floats were expected");
    sw_msg_put_floats(pay, (const float[]){9, 9, NAN, 9, 9}, LEN);
    send_raw(g->server, SW_MSG_SHARD_SET, SW_NO_WORKER, 0, 7, pay, sizeof pay);
    expect_refused(g, g->server, "not finite");
    sw_frame_unref(held);
    send_raw(g->w[0], SW_MSG_SHARD_PULL, 0, 0, 7, tok, 8);
    settle(g);
    expect_slice_values(g->w[0], 7, theta, LEN);
    sw_msg_put_floats(pay, (const float[]){9, 9, NAN, 9, 9}, LEN); /* θ's buffer idle now */
    send_raw(g->server, SW_MSG_SHARD_SET, SW_NO_WORKER, 0, 7, pay, sizeof pay);
    expect_refused(g, g->server, "not finite");
    send_raw(g->w[0], SW_MSG_SHARD_PULL, 0, 0, 7, tok, 8);
    settle(g);
    expect_slice_values(g->w[0], 7, theta, LEN);
}

static void dropped_gradients_are_forgotten(void **state)
{
    rig *g = *state;
    const float theta[LEN] = {0}, g0[LEN] = {1, 1, 1, 1, 1};
    start_run(g, theta);
    push_kept(g, 0, 100, 5, 7, g0, LEN);
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

/* A worker's message that comes before the server's INIT (it learnt of the shard from
 * WELCOME, over another connection) is answered as from no member yet, so that the worker asks
 * again, even without a checksum, whose choice the shard does not know yet, and counted as
 * early, not refused (a shard started late is no attack); an order from the server without one
 * is refused outright. */
static void a_worker_ahead_of_the_run_is_told_to_ask_again(void **state)
{
    rig *g = *state;
    uint8_t tok[8];
    sw_put_u64(tok, 100);
    /* a large model's push to a shard that has no run yet (one started again without
     * --resume): not refused for its size, which a worker would take for fatal */
    static uint8_t big[16 + 4 * 4096];
    sw_put_u64(big, 100);
    send_raw(g->w[0], SW_MSG_SHARD_PUSH, 0, 0, 8, big, sizeof big);
    settle(g);
    sw_msg first;
    uint8_t text[256];
    assert_int_equal(expect_one(g->w[0], &first, text, sizeof text), SW_MSG_ERROR);
    assert_true(first.flags & SW_FLAG_UNKNOWN);
    assert_int_equal(g->r.early, 1);
    assert_int_equal(g->r.refused, 0);
    send_raw(g->w[0], SW_MSG_SHARD_PULL, 0, SW_FLAG_UNCHECKED, 8, tok, 8);
    send_raw(g->w[1], SW_MSG_SHARD_PULL, 1, 0, 8, tok, 8);
    const char *init = "run=9\nshard=1\nshards=2\nparams=10\nslots=2\nchunk=5\nfirst=0,1\n";
    send_raw(g->server, SW_MSG_SHARD_INIT, SW_NO_WORKER, SW_FLAG_UNCHECKED, 7, init,
             strlen(init));
    settle(g);
    sw_msg m;
    uint8_t pay[256];
    for (int w = 0; w < 2; w++) {
        assert_int_equal(expect_one(g->w[w], &m, pay, sizeof pay), SW_MSG_ERROR);
        assert_true(m.flags & SW_FLAG_UNKNOWN);
    }
    assert_int_equal(g->r.early, 3);
    assert_int_equal(expect_one(g->server, &m, pay, sizeof pay), SW_MSG_ERROR);
    assert_false(m.flags & SW_FLAG_UNKNOWN);
    char why[256];
    snprintf(why, sizeof why, "%.*s", (int)m.payload_len, (const char *)pay);
    assert_non_null(strstr(why, "checksum"));
    /* an order without a checksum (a run under CURVE) to a shard with no run: the shard says it
     * holds none, as it does for a checked one, not that checksums are missing */
    send_raw(g->server, SW_MSG_SHARD_PING, SW_NO_WORKER, SW_FLAG_UNCHECKED, 0, tok, 8);
    settle(g);
    assert_int_equal(expect_one(g->server, &m, pay, sizeof pay), SW_MSG_ERROR);
    snprintf(why, sizeof why, "%.*s", (int)m.payload_len, (const char *)pay);
    assert_non_null(strstr(why, "holds no run"));
    /* the server's gather pull, the first order a shard restarted afresh may get: the same
     * reason, not "no member", and not to be asked again */
    send_raw(g->server, SW_MSG_SHARD_PULL, SW_NO_WORKER, 0, 7, tok, 8);
    settle(g);
    assert_int_equal(expect_one(g->server, &m, pay, sizeof pay), SW_MSG_ERROR);
    assert_false(m.flags & SW_FLAG_UNKNOWN);
    snprintf(why, sizeof why, "%.*s", (int)m.payload_len, (const char *)pay);
    assert_non_null(strstr(why, "holds no run"));
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
    assert_int_equal(m.payload_len, 24);
    assert_int_equal(sw_get_u64(pay + 16), 3);
    /* Worker 1's push went to shard 0 only: zero here. */
    apply_to(g, SW_FLAG_WANT_NORMS, 8, 0.5f, (uint32_t[]){0, 1}, (uint64_t[]){1, 1},
             (uint64_t[]){3, 1}, 2);
    settle(g);
    expect_applied(g->server, 8, (float[]){0, 1, 0, 0, 2}, 5);
    pull_sparse(g, 0, 8, (uint32_t[]){6, 9}, 2);
    settle(g);
    expect_slice_values(g->w[0], 8, (float[]){2 - 0.25f, 5 - 0.5f}, 2);
    /* A pull of a version to come waits; a lone sparse push, applied, answers it. */
    pull_sparse(g, 1, 9, (uint32_t[]){5, 6}, 2);
    push_sparse(g, 1, 2, 2, (uint32_t[]){5}, (float[]){4}, 1);
    settle(g);
    assert_int_equal(expect_one(g->server, &m, pay, sizeof pay), SW_MSG_SHARD_PUSHED);
    /* An order that does not ask for norms is applied without an answer. */
    apply_to(g, 0, 9, 0.1f, (uint32_t[]){1}, (uint64_t[]){2}, (uint64_t[]){2}, 1);
    settle(g);
    assert_false(next(g->server, &m, &(sw_frame *){NULL}));
    expect_slice_values(g->w[1], 9, (float[]){1 - 0.4f, 2 - 0.25f}, 2);
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

/* A worker numbers its pushes upwards within a membership: its last push sent again (it heard
 * no answer: a shard may have died with it, or a report been lost) is neither kept twice nor
 * refused, and reported again while held; a push numbered
 * below the last one kept is refused (it would be applied twice); a new membership numbers
 * afresh. */
static void a_replayed_push_is_refused(void **state)
{
    rig *g = *state;
    const float theta[LEN] = {0}, g0[LEN] = {1, 2, 3, 4, 5};
    start_run(g, theta);
    sw_msg m;
    sw_frame *f;
    uint8_t pay[64];
    push_kept(g, 0, 100, 5, 7, g0, LEN);
    push(g, 0, 100, 5, 7, g0, LEN); /* the same push again, held: reported again, in case */
    settle(g);                      /* the first report was lost with a broken connection */
    assert_int_equal(expect_one(g->server, &m, pay, sizeof pay), SW_MSG_SHARD_PUSHED);
    assert_int_equal(sw_get_u64(pay), 100);
    assert_int_equal(sw_get_u64(pay + 8), 5);
    apply(g, SW_FLAG_WANT_NORMS, 8, 0.1f, (uint32_t[]){0}, (uint64_t[]){5}, 1);
    settle(g);
    push(g, 0, 100, 5, 8, g0, LEN); /* and once applied */
    settle(g);
    assert_false(next(g->w[0], &m, &f));
    assert_int_equal(g->r.refused, 0);
    assert_int_equal(g->r.pushes, 1);
    expect_applied(g->server, 8, g0, sw_sq_norm(g0, LEN)); /* the one apply, of one copy */
    assert_false(next(g->server, &m, &f)); /* and no report of a second */
    push(g, 0, 100, 4, 8, g0, LEN); /* gone back */
    expect_refused(g, g->w[0], "sequence number");
    push(g, 0, 100, UINT64_MAX, 8, g0, LEN); /* the next could not be told from 0 */
    expect_refused(g, g->w[0], "sequence number");
    push_kept(g, 0, 100, 6, 8, g0, LEN);
    send_raw(g->server, SW_MSG_SHARD_MEMBER, 0, 0, 300, NULL, 0); /* worker 0 joins again */
    push(g, 0, 300, 0, 8, g0, LEN);
    settle(g);
    assert_int_equal(expect_one(g->server, &m, pay, sizeof pay), SW_MSG_SHARD_PUSHED);
    assert_int_equal(sw_get_u64(pay), 300);
    assert_int_equal(g->r.pushes, 3);
}

/* A member's pull asked again replaces the one before: a hundred pulls for a version to come
 * are answered once when it comes (they were kept, and scanned, without bound), and a member
 * gone takes its waiting pull with it. */
static void send_on(void *ctx, sw_frame *f) { sw_send(ctx, NULL, 0, f); }

/* Two APPLYs of one lone gradient each, making versions 8 and 9, in one batch from `from`. */
static void two_applies_in_a_batch(sw_sock *from)
{
    sw__batch b = {.send = send_on, .ctx = from};
    uint8_t pay[2][8 + ENTRY];
    for (uint32_t k = 0; k < 2; k++) {
        size_t len = apply_payload(pay[k], 0.1f, (uint32_t[]){k}, (uint64_t[]){1}, NULL, 1);
        sw_msg m = {.type = SW_MSG_SHARD_APPLY, .worker = SW_NO_WORKER, .version = 8 + k,
                    .payload = pay[k], .payload_len = len};
        sw__batch_post(&b, &m);
    }
    sw__batch_flush(&b);
}

/* A turn's reports to the server leave as one frame, and a batch of the server's orders is
 * taken as the same orders one by one. */
static void reports_and_orders_travel_in_batches(void **state)
{
    rig *g = *state;
    const float theta[LEN] = {1, 2, 3, 4, 5}, g0[LEN] = {1, 0, -1, 2, 0.5f},
                g1[LEN] = {3, 1, 1, -2, 0.25f};
    start_run(g, theta);
    push(g, 0, 100, 1, 7, g0, LEN);
    push(g, 1, 200, 1, 7, g1, LEN);
    settle(g);
    sw_delivery d;
    sw_msg m;
    assert_int_equal(sw_recv(g->server, &d), 0);
    assert_int_equal(sw_msg_decode(sw_frame_data(d.frame), sw_frame_size(d.frame), 1 << 20, &m,
                                   NULL), 0);
    assert_int_equal(m.type, SW_MSG_BATCH); /* both reports in one frame */
    sw_frame_unref(d.frame);
    assert_true(sw_recv(g->server, &d) != 0);
    two_applies_in_a_batch(g->server);
    send_raw(g->w[1], SW_MSG_SHARD_PULL, 1, 0, 9, (uint8_t[]){200, 0, 0, 0, 0, 0, 0, 0}, 8);
    settle(g);
    float want[LEN];
    memcpy(want, theta, sizeof want);
    sw_sgd_step(want, g0, LEN, 0.1f, 0);
    sw_sgd_step(want, g1, LEN, 0.1f, 0);
    expect_slice_values(g->w[1], 9, want, LEN);
    assert_int_equal(g->r.applies, 2);
}

static void hostile_batches_are_refused_and_counted(void **state)
{
    rig *g = *state;
    const float theta[LEN] = {0}, g0[LEN] = {1, 1, 1, 1, 1};
    start_run(g, theta);
    push_kept(g, 0, 100, 1, 7, g0, LEN);
    sw_msg m;
    uint8_t pay[256];
    uint64_t refused = g->r.refused;
    two_applies_in_a_batch(g->stranger); /* each order judged as if alone: not the server's */
    settle(g);
    for (int k = 0; k < 2; k++) {
        assert_int_equal(expect_one(g->stranger, &m, pay, sizeof pay - 1), SW_MSG_ERROR);
        pay[m.payload_len] = '\0';
        assert_non_null(strstr((const char *)pay, "only the server"));
    }
    assert_int_equal(g->r.refused, refused + 2);
    assert_int_equal(g->r.applies, 0);
    sw__batch b = {.send = send_on, .ctx = g->server};
    sw_msg member = {.type = SW_MSG_SHARD_MEMBER, .worker = 0, .version = 5};
    sw__batch_post(&b, &member);
    sw__batch_post(&b, &member);
    sw__batch_flush(&b);
    expect_refused(g, g->server, "names a worker");
    send_raw(g->server, SW_MSG_BATCH, SW_NO_WORKER, 0, 0, NULL, 0);
    expect_refused(g, g->server, "a batch of 0 bytes");
    /* A good APPLY, then padding that is not zero: refused whole, the APPLY not carried out. */
    uint8_t order[8 + ENTRY], bad[128] = {0};
    size_t len = apply_payload(order, 0.1f, (uint32_t[]){0}, (uint64_t[]){1}, NULL, 1);
    sw_msg_encode(&(sw_msg){.type = SW_MSG_SHARD_APPLY, .worker = SW_NO_WORKER, .version = 8,
                            .payload = order, .payload_len = len},
                  bad);
    bad[sw_msg_size(len)] = 1;
    send_raw(g->server, SW_MSG_BATCH, SW_NO_WORKER, 0, 0, bad, 80);
    expect_refused(g, g->server, "padding");
    send_raw(g->server, SW_MSG_BATCH, SW_NO_WORKER, 0, 0, "0123456789abcdef", 16);
    expect_refused(g, g->server, "header");
    assert_int_equal(g->r.applies, 0);
}

static void hostile_messages_are_refused_and_counted(void **state)
{
    rig *g = *state;
    const float theta[LEN] = {0}, g0[LEN] = {1, 1, 1, 1, 1};
    float bad[LEN] = {1, 1, NAN, 1, 1};
    const char *init = "run=7\nshard=0\nshards=2\nparams=10\nslots=2\nchunk=5\nfirst=0,1\n";
    /* before any INIT a shard cannot tell a stranger from a server whose INIT it missed */
    send_raw(g->stranger, SW_MSG_SHARD_SET, SW_NO_WORKER, 0, 1, NULL, 0);
    expect_refused(g, g->stranger, "holds no run");
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
    apply(g, 0, 9, 0.1f, NULL, NULL, 0); /* an apply of nothing */
    expect_refused(g, g->server, "a malformed apply");
    apply(g, 0, 9, 0.1f, (uint32_t[]){0}, (uint64_t[]){1}, 1); /* skipping a version */
    expect_refused(g, g->server, "not the next one");
    apply_to(g, 0, 8, 0.1f, (uint32_t[]){0}, (uint64_t[]){1}, (uint64_t[]){1u << 5}, 1);
    expect_refused(g, g->server, "shards that are not the run's"); /* shard 5 of 2 */
    send_raw(g->w[1], SW_MSG_SHARD_APPLY, 1, 0, 8, "abcdefgh", 8);
    expect_refused(g, g->w[1], "only the server");
    send_raw(g->w[1], SW_MSG_PUSH, 1, 0, 7, NULL, 0); /* a server's message type */
    expect_refused(g, g->w[1], "not a message for a shard");
    send_raw(g->stranger, SW_MSG_CTL, SW_NO_WORKER, 0, 0, "status", 6); /* ctl at a shard */
    expect_refused(g, g->stranger, "ask its server");
    send_raw(g->w[1], SW_MSG_SHARD_PULL, 1, SW_FLAG_UNCHECKED, 7, "12345678", 8);
    expect_refused(g, g->w[1], "checksum");
    sw_frame *f = sw_frame_new(12);
    memcpy(sw_frame_data(f), "not a frame!", 12);
    sw_send(g->stranger, NULL, 0, f);
    expect_refused(g, g->stranger, "shorter than a header");
    assert_int_equal(g->r.pushes, 0);
}

/* More apply threads than a plan has parts for are refused, not overrun; --help's figure is the
 * one the shard uses. */
static void too_many_apply_threads_are_refused(void **state)
{
    (void)state;
    sw_net *net;
    assert_int_equal(sw_net_inproc_new(&net, &(sw_inproc_params){.latency_s = 1e-4}, NULL), 0);
    sw_shard_params p = {.bind = "many", .apply_threads = SW_SHARD_THREADS_MAX + 1};
    sw_shard_result r;
    sw_shard *h = NULL;
    char err[SW_ERR_LEN] = "";
    assert_int_equal(sw_shard_new(&h, net, &p, &r, err), SW_EINVAL);
    assert_non_null(strstr(err, "--apply-threads"));
    sw_net_free(net);
    char text[32];
    snprintf(text, sizeof text, "%d", SW_SHARD_PART_MIN);
    assert_string_equal(text, SW_SHARD_PART_MIN_TEXT);
}

/* An INIT is the first message anyone may send a fresh shard: one whose slice would need
 * frames over the protocol's 2 GiB is refused before the shard allocates the slice (without
 * --max-frame, a 150-byte INIT once made a shard take gigabytes), and so is one whose values
 * the protocol does not know (a NaN weight decay would make every weight NaN). */
static void impossible_inits_are_refused(void **state)
{
    rig *g = *state;
    const char *run = "run=9\nshard=0\nshards=1\nslots=2\n";
    const char *small = "params=10\nchunk=5\nfirst=0\n";
    const struct {
        const char *table, *extra, *why;
    } cases[] = {
        {"params=600000000\nchunk=1048576\nfirst=0\n", "", "over the protocol's 2 GiB"},
        /* 2^62 floats: 8 bytes each would wrap to a small size */
        {"params=4611686018427387904\nchunk=2147483648\nfirst=0\n", "", "over the protocol's"},
        {"params=99999999999999999999999\nchunk=5\nfirst=0\n", "", "impossible"},
        {small, "wd=nan\n", "wd, checksum"},
        {small, "wd=-1\n", "wd, checksum"},
        {small, "wd=1e39\n", "wd, checksum"},
        {small, "wd=\n", "wd, checksum"},
        {small, "checksum=maybe\n", "wd, checksum"},
        {small, "checksum=offline\n", "wd, checksum"},
        {small, "checkpoints=yes\n", "wd, checksum"},
    };
    char init[256];
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        snprintf(init, sizeof init, "%s%s%s", run, cases[i].table, cases[i].extra);
        send_raw(g->stranger, SW_MSG_SHARD_INIT, SW_NO_WORKER, 0, 7, init, strlen(init));
        expect_refused(g, g->stranger, cases[i].why);
    }
    /* the run's own INIT is still taken, with a decay of -0 as a server prints `--wd -0` */
    snprintf(init, sizeof init, "%s%swd=-0\nchecksum=on\n", run, small);
    send_raw(g->server, SW_MSG_SHARD_INIT, SW_NO_WORKER, 0, 7, init, strlen(init));
    settle(g);
    sw_msg m;
    sw_frame *f;
    assert_false(next(g->server, &m, &f));
    assert_int_equal(g->r.refused, sizeof cases / sizeof *cases);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(pushes_applies_and_pulls, setup, teardown),
        cmocka_unit_test_setup_teardown(a_slice_held_keeps_its_values_while_theta_moves_on, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(a_refused_set_leaves_theta_alone, setup, teardown),
        cmocka_unit_test_setup_teardown(dropped_gradients_are_forgotten, setup, teardown),
        cmocka_unit_test_setup_teardown(a_gone_members_gradient_is_kept_until_ordered, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(sparse_pushes_pulls_and_applies, setup, teardown),
        cmocka_unit_test_setup_teardown(a_worker_ahead_of_the_run_is_told_to_ask_again, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(a_replayed_push_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(hostile_messages_are_refused_and_counted, setup, teardown),
        cmocka_unit_test_setup_teardown(reports_and_orders_travel_in_batches, setup, teardown),
        cmocka_unit_test_setup_teardown(hostile_batches_are_refused_and_counted, setup, teardown),
        cmocka_unit_test_setup_teardown(impossible_inits_are_refused, setup, teardown),
        cmocka_unit_test(too_many_apply_threads_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
