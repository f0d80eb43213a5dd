/* Batches of small messages: what goes in comes out, in order and unchanged; a lone message
 * travels as itself; a large one goes alone after what was gathered; every malformed batch is
 * refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "syncwise/bytes.h"
#include "syncwise/err.h"

/* What a batch sent, frame by frame. */
typedef struct sent {
    sw_frame *frames[64];
    int n;
} sent;

static void keep(void *ctx, sw_frame *f)
{
    sent *s = ctx;
    assert_non_null(f);
    assert_true(s->n < 64);
    s->frames[s->n++] = f;
}

static void release(sent *s)
{
    for (int i = 0; i < s->n; i++)
        sw_frame_unref(s->frames[i]);
    s->n = 0;
}

static sw_msg decoded(sw_frame *f)
{
    sw_msg m;
    assert_int_equal(sw_msg_decode(sw_frame_data(f), sw_frame_size(f), 1 << 20, &m, NULL), 0);
    return m;
}

/* A message of `len` text bytes whose fields say which it is. */
static sw_msg numbered(uint32_t k, size_t len, char *text)
{
    for (size_t i = 0; i < len; i++)
        text[i] = (char)('a' + (k + i) % 26);
    return (sw_msg){.type = SW_MSG_SHARD_STATE, .worker = k, .flags = SW_FLAG_UNCHECKED,
                    .version = 1000 + k, .payload = (const uint8_t *)text, .payload_len = len};
}

static void expect_numbered(const sw_msg *m, uint32_t k, size_t len)
{
    char text[64];
    sw_msg want = numbered(k, len, text);
    assert_int_equal(m->type, want.type);
    assert_int_equal(m->worker, k);
    assert_int_equal(m->flags, want.flags);
    assert_true(m->version == want.version);
    assert_int_equal(m->payload_len, len);
    assert_memory_equal(m->payload, text, len);
}

static void messages_come_out_in_order_and_unchanged(void **state)
{
    (void)state;
    sent out = {0};
    sw__batch b = {.send = keep, .ctx = &out, .flags = SW_FLAG_UNCHECKED};
    char text[64];
    for (uint32_t k = 0; k < 9; k++) { /* lengths 0..40: every padding */
        sw_msg m = numbered(k, 5 * k, text);
        sw__batch_post(&b, &m);
    }
    assert_int_equal(out.n, 0); /* nothing before the flush */
    sw__batch_flush(&b);
    assert_int_equal(out.n, 1);
    sw_msg batch = decoded(out.frames[0]);
    assert_int_equal(batch.type, SW_MSG_BATCH);
    assert_int_equal(batch.flags, SW_FLAG_UNCHECKED);
    assert_int_equal(sw__batch_check(&batch, 1 << 20, false, NULL), 0);
    size_t at = 0;
    sw_msg m;
    for (uint32_t k = 0; k < 9; k++) {
        assert_true(sw__batch_next(&batch, &at, &m));
        expect_numbered(&m, k, 5 * k);
        assert_int_equal((uintptr_t)(m.payload - batch.payload) % 8, 0); /* stays aligned */
    }
    assert_false(sw__batch_next(&batch, &at, &m));
    release(&out);
    sw__batch_flush(&b); /* empty: sends nothing */
    assert_int_equal(out.n, 0);
}

static void a_lone_message_travels_as_itself(void **state)
{
    (void)state;
    sent out = {0};
    sw__batch b = {.send = keep, .ctx = &out};
    char text[64];
    sw_msg m = numbered(3, 13, text);
    sw__batch_post(&b, &m);
    sw__batch_flush(&b);
    assert_int_equal(out.n, 1);
    assert_int_equal(sw_frame_size(out.frames[0]), sw_msg_size(13));
    sw_msg got = decoded(out.frames[0]);
    expect_numbered(&got, 3, 13);
    release(&out);
}

static void frames_of_floats_and_large_messages_go_alone_after_the_batch(void **state)
{
    (void)state;
    sent out = {0};
    sw__batch b = {.send = keep, .ctx = &out};
    char text[64];
    sw_msg m = numbered(1, 8, text);
    sw__batch_post(&b, &m);
    m = numbered(2, 8, text);
    sw__batch_post(&b, &m);
    float f[4] = {1, 2, 3, 4};
    sw_msg slice = {.type = SW_MSG_SHARD_SLICE, .worker = SW_NO_WORKER, .version = 5,
                    .payload_len = sizeof f};
    sw__batch_send_alone(&b, sw__msg_frame(&slice, f));
    assert_int_equal(out.n, 2); /* the two gathered, then the slice */
    assert_int_equal(decoded(out.frames[0]).type, SW_MSG_BATCH);
    sw_msg got = decoded(out.frames[1]);
    float back[4];
    assert_int_equal(sw_msg_get_floats(&got, back, 4, NULL), 0);
    assert_memory_equal(back, f, sizeof f);
    uint8_t *big = calloc(1, SW_BATCH_BYTES);
    sw_msg large = {.type = SW_MSG_SHARD_APPLY, .payload = big, .payload_len = SW_BATCH_BYTES};
    sw__batch_post(&b, &large);
    assert_int_equal(out.n, 3);
    assert_int_equal(decoded(out.frames[2]).payload_len, SW_BATCH_BYTES);
    free(big);
    release(&out);
}

static void a_full_batch_goes_before_the_next(void **state)
{
    (void)state;
    sent out = {0};
    sw__batch b = {.send = keep, .ctx = &out, .flags = SW_FLAG_UNCHECKED};
    char text[64];
    uint32_t posted = 0;
    while (out.n == 0) {
        sw_msg m = numbered(posted++, 60, text);
        sw__batch_post(&b, &m);
    }
    sw__batch_flush(&b);
    uint32_t k = 0;
    for (int i = 0; i < out.n; i++) {
        sw_msg batch = decoded(out.frames[i]), m;
        assert_true(batch.payload_len <= SW_BATCH_BYTES);
        if (batch.type != SW_MSG_BATCH) { /* the last, alone */
            expect_numbered(&batch, k++, 60);
            continue;
        }
        assert_int_equal(sw__batch_check(&batch, 1 << 20, false, NULL), 0);
        for (size_t at = 0; sw__batch_next(&batch, &at, &m);)
            expect_numbered(&m, k++, 60);
    }
    assert_int_equal(k, posted);
    release(&out);
}

/* A BATCH frame around `payload` (with `flags`), decoded. */
static sw_msg batch_of(uint8_t *frame, const uint8_t *payload, size_t len, uint32_t flags)
{
    sw_msg b = {.type = SW_MSG_BATCH, .worker = SW_NO_WORKER, .flags = flags,
                .payload = payload, .payload_len = len};
    sw_msg_encode(&b, frame);
    sw_msg m;
    assert_int_equal(sw_msg_decode(frame, sw_msg_size(len), 1 << 20, &m, NULL), 0);
    return m;
}

/* The batch of `len` bytes at payload refused, with `what` in the reason (NULL: accepted). */
static void expect_batch(uint8_t *frame, const uint8_t *payload, size_t len, uint32_t flags,
                         bool no_worker, const char *what)
{
    char why[SW_ERR_LEN] = "";
    sw_msg b = batch_of(frame, payload, len, flags);
    int rc = sw__batch_check(&b, 64, no_worker, why);
    if (!what) {
        assert_int_equal(rc, 0);
        return;
    }
    assert_true(rc < 0);
    if (!strstr(why, what))
        fail_msg("'%s' lacks '%s'", why, what);
}

static void malformed_batches_are_refused_whole(void **state)
{
    (void)state;
    static uint8_t payload[SW_BATCH_BYTES + 64], frame[SW_BATCH_BYTES + 128];
    uint8_t inner[48];
    sw_msg ping = {.type = SW_MSG_SHARD_PING, .worker = SW_NO_WORKER,
                   .payload = (const uint8_t *)"12345678", .payload_len = 8};
    sw_msg_encode(&ping, inner); /* 48 bytes */
    memcpy(payload, inner, 48);
    memcpy(payload + 48, inner, 48);
    expect_batch(frame, payload, 96, 0, true, NULL);
    expect_batch(frame, payload, 0, 0, true, "a batch of 0 bytes");
    expect_batch(frame, payload, 68, 0, true, "in the middle of a message's header");
    expect_batch(frame, payload, 95, 0, true, "runs past its end");
    expect_batch(frame, payload, SW_BATCH_BYTES + 8, 0, true, "a batch of 8200 bytes");
    /* A message whose checksum is wrong, after a good one: nothing of the batch is good. */
    payload[48 + SW_PROTO_HEADER] ^= 1;
    expect_batch(frame, payload, 96, 0, true, "checksum");
    /* Padding that is not zero: a 5-byte message is followed by 3 bytes of it. */
    sw_msg five = ping;
    five.payload_len = 5;
    memset(payload, 0, 48);
    sw_msg_encode(&five, payload);
    expect_batch(frame, payload, 48, 0, true, NULL);
    payload[46] = 1;
    expect_batch(frame, payload, 48, 0, true, "padding");
    /* What a batch may not hold: a batch, floats, a message checksummed otherwise than the
     * batch, a worker's name among orders, a message over the receiver's limit. */
    sw_msg nested = {.type = SW_MSG_BATCH, .worker = SW_NO_WORKER, .payload = inner,
                     .payload_len = 48};
    sw_msg_encode(&nested, payload);
    expect_batch(frame, payload, 88, 0, true, "cannot carry a batch message");
    sw_msg set = ping;
    set.type = SW_MSG_SHARD_SET;
    sw_msg_encode(&set, payload);
    expect_batch(frame, payload, 48, 0, true, "cannot carry a shard-set message");
    sw_msg_encode(&ping, payload);
    expect_batch(frame, payload, 48, SW_FLAG_UNCHECKED, true, "checksummed as the batch is");
    sw_msg member = {.type = SW_MSG_SHARD_MEMBER, .worker = 3, .version = 5};
    sw_msg_encode(&member, payload);
    expect_batch(frame, payload, 40, 0, true, "names a worker");
    expect_batch(frame, payload, 40, 0, false, NULL); /* a shard's reports name workers */
    uint8_t big[72] = {0};
    sw_msg wide = {.type = SW_MSG_SHARD_PING, .worker = SW_NO_WORKER, .payload = big,
                   .payload_len = sizeof big};
    sw_msg_encode(&wide, payload);
    expect_batch(frame, payload, sw_msg_size(72), 0, true, "72");
    /* A header that names a worker or a version. */
    sw_msg_encode(&ping, payload);
    sw_msg b = batch_of(frame, payload, 48, 0);
    b.version = 7;
    char why[SW_ERR_LEN];
    assert_true(sw__batch_check(&b, 64, true, why) < 0);
    assert_non_null(strstr(why, "names a worker or a version"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(messages_come_out_in_order_and_unchanged),
        cmocka_unit_test(a_lone_message_travels_as_itself),
        cmocka_unit_test(frames_of_floats_and_large_messages_go_alone_after_the_batch),
        cmocka_unit_test(a_full_batch_goes_before_the_next),
        cmocka_unit_test(malformed_batches_are_refused_whole),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
