/* A shard's pulls (shard_pull.c) on the in-process network, driven by the test server and
 * workers of shard_test_rig.h: one frame for every puller of a version, one waiting pull per
 * member, and the slices the server orders sent unasked. */
#define _POSIX_C_SOURCE 200809L
#include "shard_test_rig.h"

static void pullers_of_a_version_share_one_frame(void **state)
{
    rig *g = *state;
    const float theta[LEN] = {1, 2, 3, 4, 5}, g1[LEN] = {3, 1, 1, -2, 0.25f};
    start_run(g, theta);
    uint8_t tok[2][8];
    sw_put_u64(tok[0], 100);
    sw_put_u64(tok[1], 200);
    for (uint32_t w = 0; w < 2; w++)
        send_raw(g->w[w], SW_MSG_SHARD_PULL, w, 0, 7, tok[w], 8);
    settle(g);
    sw_msg m[2];
    sw_frame *f[2];
    for (uint32_t w = 0; w < 2; w++) {
        assert_true(next(g->w[w], &m[w], &f[w]));
        assert_int_equal(m[w].type, SW_MSG_SHARD_SLICE);
        assert_int_equal(m[w].worker, SW_NO_WORKER);
    }
    assert_ptr_equal(sw_frame_data(f[0]), sw_frame_data(f[1]));
    push_kept(g, 1, 200, 1, 7, g1, LEN);
    apply(g, 0, 8, 0.5f, (uint32_t[]){1}, (uint64_t[]){1}, 1);
    send_raw(g->w[0], SW_MSG_SHARD_PULL, 0, 0, 8, tok[0], 8);
    settle(g);
    sw_msg later;
    sw_frame *next_frame;
    assert_true(next(g->w[0], &later, &next_frame));
    assert_int_equal(later.version, 8);
    assert_ptr_not_equal(sw_frame_data(next_frame), sw_frame_data(f[0]));
    sw_frame_unref(next_frame);
    for (uint32_t w = 0; w < 2; w++) { /* the version 7 frame still holds version 7 */
        assert_int_equal(sw_msg_decode(sw_frame_data(f[w]), sw_frame_size(f[w]), 1 << 20, &m[w],
                                       NULL), 0);
        assert_int_equal(m[w].version, 7);
        sw_frame_unref(f[w]);
    }
}

/* Worker 0's push g0 applied alone at lr 0.1 to reach version 8, from θ0 = theta: the slice
 * then expected, in want. */
static void apply_alone(rig *g, const float *theta, const float *g0, float *want)
{
    apply(g, 0, 8, 0.1f, (uint32_t[]){0}, (uint64_t[]){1}, 1);
    settle(g);
    memcpy(want, theta, LEN * sizeof *want);
    sw_sgd_step(want, g0, LEN, 0.1f, 0);
}

static void waiting_pulls_stay_one_per_member(void **state)
{
    rig *g = *state;
    const float theta[LEN] = {0}, g0[LEN] = {1, 2, 3, 4, 5};
    start_run(g, theta);
    uint8_t tok[8];
    sw_put_u64(tok, 100);
    for (int i = 0; i < 100; i++)
        send_raw(g->w[0], SW_MSG_SHARD_PULL, 0, 0, 8, tok, 8);
    sw_put_u64(tok, 200);
    send_raw(g->w[1], SW_MSG_SHARD_PULL, 1, 0, 8, tok, 8);
    settle(g);
    send_raw(g->server, SW_MSG_SHARD_MEMBER, 1, SW_FLAG_DONE, 0, NULL, 0); /* worker 1 leaves */
    push_kept(g, 0, 100, 1, 7, g0, LEN);
    float want[LEN];
    apply_alone(g, theta, g0, want);
    expect_slice_values(g->w[0], 8, want, LEN);
    sw_msg m;
    sw_frame *f;
    assert_false(next(g->w[0], &m, &f));
    assert_false(next(g->w[1], &m, &f));
}

/* A SEND order naming n members (worker w[k], token tok[k]) of `version`. */
static void send_order(sw_sock *from, uint64_t version, const uint32_t *w,
                       const uint64_t *tok, uint32_t n)
{
    uint8_t pay[4 + 12 * 4];
    sw_put_u32(pay, n);
    for (uint32_t k = 0; k < n; k++) {
        sw_put_u32(pay + 4 + 12 * k, w[k]);
        sw_put_u64(pay + 8 + 12 * k, tok[k]);
    }
    send_raw(from, SW_MSG_SHARD_SEND, SW_NO_WORKER, 0, version, pay, 4 + 12 * n);
}

/* The server orders a released member's slice sent: it goes, unasked, by the connection of the
 * member's last push, once the shard holds the version; a member whose connection the shard
 * has not seen, or a token of another membership, is passed over; only the server may order
 * it, and a malformed order is refused. */
static void slices_the_server_orders_sent(void **state)
{
    rig *g = *state;
    const float theta[LEN] = {1, 2, 3, 4, 5}, g0[LEN] = {1, 0, -1, 2, 0.5f};
    start_run(g, theta);
    send_order(g->server, 7, (uint32_t[]){0, 1}, (uint64_t[]){100, 200}, 2);
    settle(g);
    sw_msg m;
    sw_frame *f;
    assert_false(next(g->w[0], &m, &f)); /* no push yet: no connection known */
    assert_false(next(g->w[1], &m, &f));
    push_kept(g, 0, 100, 1, 7, g0, LEN);
    /* ordered before the apply it names arrives, and a stale token beside it */
    send_order(g->server, 8, (uint32_t[]){0, 1}, (uint64_t[]){100, 999}, 2);
    settle(g);
    assert_false(next(g->w[0], &m, &f)); /* waits for version 8 */
    float want[LEN];
    apply_alone(g, theta, g0, want);
    expect_slice_values(g->w[0], 8, want, LEN);
    assert_false(next(g->w[0], &m, &f)); /* once */
    assert_false(next(g->w[1], &m, &f));
    send_order(g->server, 8, (uint32_t[]){0}, (uint64_t[]){100}, 1); /* held: at once */
    settle(g);
    expect_slice_values(g->w[0], 8, want, LEN);
    /* a pull tells the shard a member's connection too; a new membership's is unknown */
    send_raw(g->w[1], SW_MSG_SHARD_PULL, 1, 0, 8, (uint8_t[]){200, 0, 0, 0, 0, 0, 0, 0}, 8);
    settle(g);
    expect_slice_values(g->w[1], 8, want, LEN);
    send_order(g->server, 8, (uint32_t[]){1}, (uint64_t[]){200}, 1);
    settle(g);
    expect_slice_values(g->w[1], 8, want, LEN);
    send_raw(g->server, SW_MSG_SHARD_MEMBER, 1, 0, 300, NULL, 0); /* slot 1 joined again */
    send_order(g->server, 8, (uint32_t[]){1}, (uint64_t[]){300}, 1);
    settle(g);
    assert_false(next(g->w[1], &m, &f));
    send_order(g->w[0], 8, (uint32_t[]){0}, (uint64_t[]){100}, 1);
    expect_refused(g, g->w[0], "only the server");
    send_raw(g->server, SW_MSG_SHARD_SEND, SW_NO_WORKER, 0, 8, (uint8_t[]){2, 0, 0, 0}, 4);
    expect_refused(g, g->server, "wrong length");
    assert_int_equal(g->r.pulls, 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(pullers_of_a_version_share_one_frame, setup, teardown),
        cmocka_unit_test_setup_teardown(waiting_pulls_stay_one_per_member, setup, teardown),
        cmocka_unit_test_setup_teardown(slices_the_server_orders_sent, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
