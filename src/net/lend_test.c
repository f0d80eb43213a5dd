/* Buffers lent to the network: a lent buffer is never handed out for writing until its frame's
 * last reference goes, its frame is a valid message, and freeing the lender while a frame holds a
 * buffer is safe (AddressSanitizer checks the last). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "lend.h"
#include "syncwise/proto.h"

enum { N = 1000 };

static sw_msg push_of(uint32_t worker) /* a push header for N floats */
{
    return (sw_msg){.type = SW_MSG_PUSH, .worker = worker, .version = 42, .payload_len = 4 * N};
}

static void fill(float *v, float x)
{
    for (int i = 0; i < N; i++)
        v[i] = x + (float)i;
}

static void a_lent_frame_is_the_message_without_a_copy(void **state)
{
    (void)state;
    sw__lender l;
    sw__lender_init(&l, N);
    float *g = sw__lender_writable(&l, NULL, false);
    assert_non_null(g);
    fill(g, 1);
    sw_msg m = push_of(3);
    sw_frame *frame = sw__lender_frame(&l, g, &m, 0);
    assert_non_null(frame);
    assert_ptr_equal(sw_frame_data(frame) + SW_PROTO_HEADER, (uint8_t *)g);
    sw_msg got;
    assert_int_equal(sw_msg_decode(sw_frame_data(frame), sw_frame_size(frame), 4 * N, &got, NULL),
                     0);
    assert_int_equal(got.type, SW_MSG_PUSH);
    assert_int_equal(got.worker, 3);
    assert_int_equal(got.payload_len, 4 * N);
    float back[N];
    assert_int_equal(sw_msg_get_floats(&got, back, N, NULL), 0); /* the checksum holds */
    assert_memory_equal(back, g, sizeof back);
    sw_frame_unref(frame);
    sw__lender_free(&l);
}

/* SHARD_SLICE's restore mark and SHARD_PUSH's token and sequence number open the payload: they
 * go in the buffer's room, between the header and the floats. */
static void a_payload_head_goes_in_front_of_the_floats(void **state)
{
    (void)state;
    sw__lender l;
    sw__lender_init(&l, N);
    float *g = sw__lender_writable(&l, NULL, false);
    fill(g, 2);
    uint8_t head[SW__LEND_HEAD_MAX + 4];
    for (size_t i = 0; i < sizeof head; i++)
        head[i] = (uint8_t)(0xa0 + i);
    sw_msg m = {.type = SW_MSG_SHARD_PUSH, .worker = 1, .version = 7, .payload = head,
                .payload_len = 16 + 4 * N};
    sw_frame *frame = sw__lender_frame(&l, g, &m, 16);
    assert_non_null(frame);
    assert_ptr_equal(sw_frame_data(frame) + SW_PROTO_HEADER + 16, (uint8_t *)g); /* no copy */
    sw_msg got;
    assert_int_equal(sw_msg_decode(sw_frame_data(frame), sw_frame_size(frame), 16 + 4 * N, &got,
                                   NULL), 0); /* the checksum covers the head too */
    assert_int_equal(got.payload_len, 16 + 4 * N);
    assert_memory_equal(got.payload, head, 16);
    sw_frame_unref(frame);
    m.payload_len = sizeof head + 4 * N; /* a head beyond the room */
    assert_null(sw__lender_frame(&l, g, &m, sizeof head));
    m.payload_len = 8 + 4 * N; /* a head without its bytes */
    m.payload = NULL;
    assert_null(sw__lender_frame(&l, g, &m, 8));
    m.payload = head;
    /* Only the buffer's first floats after a head (shard 0's slice of a gradient, whose head
     * and floats could add up to a plausible whole): never lent, whatever the lengths. */
    for (size_t short_by = 1; short_by <= 6; short_by++) {
        size_t k = N - short_by;
        m.payload_len = 16 + 4 * k;
        assert_null(sw__lender_frame(&l, g, &m, 16));
        sw_frame *part = sw__frame_build_head(&l, &m, 16, g); /* copied: head and k floats */
        sw_msg back;
        assert_int_equal(sw_msg_decode(sw_frame_data(part), sw_frame_size(part), 8 * N, &back,
                                       NULL), 0);
        assert_memory_equal(back.payload, head, 16);
        assert_memory_equal(back.payload + 16, g, 4 * k);
        sw_frame_unref(part);
    }
    /* what cannot be lent is copied, head and floats, in one frame */
    m.payload_len = 8 + 4 * N;
    sw_frame *held = sw__lender_frame(&l, g, &m, 8);
    sw_frame *copy = sw__frame_build_head(&l, &m, 8, g); /* g is in flight: copied */
    assert_non_null(copy);
    assert_ptr_not_equal(sw_frame_data(copy) + SW_PROTO_HEADER + 8, (uint8_t *)g);
    assert_int_equal(sw_frame_size(copy), sw_frame_size(held));
    assert_memory_equal(sw_frame_data(copy), sw_frame_data(held), sw_frame_size(held));
    sw_frame_unref(copy);
    sw_frame_unref(held);
    sw__lender_free(&l);
}

static void a_buffer_in_flight_is_never_written(void **state)
{
    (void)state;
    sw__lender l;
    sw__lender_init(&l, N);
    float *g = sw__lender_writable(&l, NULL, false);
    fill(g, 1);
    assert_ptr_equal(sw__lender_writable(&l, g, true), g); /* idle: itself */
    sw_msg m = push_of(1);
    sw_frame *frame = sw__lender_frame(&l, g, &m, 0);
    assert_non_null(frame);
    assert_null(sw__lender_frame(&l, g, &m, 0)); /* one frame at a time: its header */
    sw_frame *shared = sw_frame_ref(frame); /* sent to two receivers */
    float *w = sw__lender_writable(&l, g, true);
    assert_ptr_not_equal(w, g);
    assert_memory_equal(w, g, 4 * N); /* kept */
    fill(w, 100);
    float sent[N];
    fill(sent, 1);
    assert_memory_equal(sw_frame_data(frame) + SW_PROTO_HEADER, sent, sizeof sent);
    sw_frame_unref(frame);
    assert_ptr_not_equal(sw__lender_writable(&l, g, false), g); /* the other still reads it */
    sw_frame_unref(shared); /* both are done: g is free again */
    assert_ptr_equal(sw__lender_writable(&l, g, false), g);
    sw__lender_free(&l);
}

static void foreign_buffers_and_wrong_sizes_are_not_lent(void **state)
{
    (void)state;
    sw__lender l;
    sw__lender_init(&l, N);
    static float mine[N];
    sw_msg m = push_of(1);
    assert_null(sw__lender_frame(&l, mine, &m, 0));
    float *g = sw__lender_writable(&l, mine, true); /* a foreign buffer is copied in */
    assert_ptr_not_equal(g, mine);
    m.payload_len = 4 * N - 4;
    assert_null(sw__lender_frame(&l, g, &m, 0));
    sw__lender_free(&l);
}

static void a_burst_of_frames_leaves_few_buffers_behind(void **state)
{
    (void)state;
    sw__lender l;
    sw__lender_init(&l, N);
    sw_frame *frames[10];
    float *g = NULL;
    sw_msg m = push_of(1);
    for (int i = 0; i < 10; i++) {
        g = sw__lender_writable(&l, g, false);
        assert_non_null(frames[i] = sw__lender_frame(&l, g, &m, 0));
    }
    assert_int_equal(l.count, 10);
    for (int i = 0; i < 10; i++)
        sw_frame_unref(frames[i]);
    g = sw__lender_writable(&l, g, false);
    assert_true(l.count <= 3);
    sw__lender_free(&l);
}

static void freeing_the_lender_leaves_frames_readable(void **state)
{
    (void)state;
    sw__lender l;
    sw__lender_init(&l, N);
    float *g = sw__lender_writable(&l, NULL, false);
    fill(g, 7);
    sw_msg m = push_of(1);
    sw_frame *frame = sw__lender_frame(&l, g, &m, 0);
    assert_non_null(frame);
    sw__lender_free(&l); /* a frame queued for a server that is down, say */
    sw_msg got;
    assert_int_equal(sw_msg_decode(sw_frame_data(frame), sw_frame_size(frame), 4 * N, &got, NULL),
                     0);
    sw_frame_unref(frame); /* frees the buffer now */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_lent_frame_is_the_message_without_a_copy),
        cmocka_unit_test(a_payload_head_goes_in_front_of_the_floats),
        cmocka_unit_test(a_buffer_in_flight_is_never_written),
        cmocka_unit_test(foreign_buffers_and_wrong_sizes_are_not_lent),
        cmocka_unit_test(a_burst_of_frames_leaves_few_buffers_behind),
        cmocka_unit_test(freeing_the_lender_leaves_frames_readable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
