/* The wire protocol: round trips of every message type, and refusal of every malformed frame. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "syncwise/bytes.h"
#include "syncwise/err.h"
#include "syncwise/proto.h"

static uint8_t buf[SW_PROTO_HEADER + 64];

static size_t make(sw_msg_type type, const void *payload, size_t len)
{
    sw_msg m = {.type = type, .worker = 7, .flags = SW_FLAG_MODEL, .version = 1234567890123ULL,
                .payload = payload, .payload_len = len};
    sw_msg_encode(&m, buf);
    return sw_msg_size(len);
}

static void every_type_round_trips(void **state)
{
    (void)state;
    const char text[] = "hello";
    for (int t = 1; t <= SW_MSG_TYPE_MAX; t++) {
        size_t n = make((sw_msg_type)t, text, 5);
        sw_msg m;
        char err[SW_ERR_LEN];
        assert_int_equal(sw_msg_decode(buf, n, 1 << 20, &m, err), 0);
        assert_int_equal(m.type, t);
        assert_int_equal(m.worker, 7);
        assert_int_equal(m.flags, SW_FLAG_MODEL);
        assert_true(m.version == 1234567890123ULL);
        assert_int_equal(m.payload_len, 5);
        assert_memory_equal(m.payload, "hello", 5);
        assert_string_not_equal(sw_msg_type_name(t), "?");
    }
}

static void floats_round_trip_exactly(void **state)
{
    (void)state;
    const float v[4] = {1.5f, -0.0f, 3.4e38f, 1e-45f};
    uint8_t pay[16];
    sw_msg_put_floats(pay, v, 4);
    size_t n = make(SW_MSG_PUSH, pay, 16);
    sw_msg m;
    float back[4];
    assert_int_equal(sw_msg_decode(buf, n, 1 << 20, &m, NULL), 0);
    assert_int_equal(sw_msg_get_floats(&m, back, 4, NULL), 0);
    assert_memory_equal(back, v, sizeof v);
    char err[SW_ERR_LEN];
    assert_int_equal(sw_msg_get_floats(&m, back, 3, err), SW_EFORMAT); /* wrong dimension */
    assert_non_null(strstr(err, "3 floats"));
}

static void non_finite_gradients_are_refused(void **state)
{
    (void)state;
    const float bad[2][2] = {{1.0f, NAN}, {INFINITY, 0}};
    for (int i = 0; i < 2; i++) {
        uint8_t pay[8];
        sw_msg_put_floats(pay, bad[i], 2);
        size_t n = make(SW_MSG_PUSH, pay, 8);
        sw_msg m;
        float out[2];
        char err[SW_ERR_LEN];
        assert_int_equal(sw_msg_decode(buf, n, 1 << 20, &m, NULL), 0);
        assert_int_equal(sw_msg_get_floats(&m, out, 2, err), SW_EFORMAT);
        assert_non_null(strstr(err, "not finite"));
    }
}

/* The one-pass float encoder gives the same frame as copying then encoding, across its block
 * boundaries and tails. */
static void float_encoder_matches_the_plain_one(void **state)
{
    (void)state;
    const size_t sizes[] = {0, 1, 8191, 8192, 8193, 20001};
    for (size_t t = 0; t < sizeof sizes / sizeof *sizes; t++) {
        size_t n = sizes[t], len = sw_msg_size(4 * n);
        float *v = malloc(4 * n + 4);
        uint8_t *a = malloc(len), *b = malloc(len);
        for (size_t i = 0; i < n; i++)
            v[i] = (float)i * 0.37f - 11.0f;
        sw_msg m = {.type = SW_MSG_RELEASE, .worker = 3, .flags = SW_FLAG_MODEL, .version = 9,
                    .payload_len = 4 * n};
        sw_msg_encode_floats(&m, v, a);
        sw_msg_put_floats(b + SW_PROTO_HEADER, v, n);
        sw_msg_encode(&m, b);
        assert_memory_equal(a, b, len);
        sw_msg d;
        assert_int_equal(sw_msg_decode(a, len, 1 << 20, &d, NULL), 0);
        free(v);
        free(a);
        free(b);
    }
}

/* The decoder finds a bad value in its checksum's pass, block by block: in any block of a
 * payload longer than one (the last one short), read in place or copied. */
static void non_finite_values_are_found_in_every_block(void **state)
{
    (void)state;
    enum { N = 3 * 8192 + 77 };
    float *v = malloc(4 * N), *copy = malloc(4 * N);
    uint8_t *frame = malloc(sw_msg_size(4 * N));
    const size_t at[] = {0, 8191, 8192, 2 * 8192 + 5, N - 1};
    for (size_t t = 0; t <= sizeof at / sizeof *at; t++) {
        for (size_t i = 0; i < N; i++)
            v[i] = (float)i;
        if (t < sizeof at / sizeof *at)
            v[at[t]] = NAN;
        sw_msg m = {.type = SW_MSG_PUSH, .payload_len = 4 * N}, d;
        sw_msg_encode_floats(&m, v, frame);
        char err[SW_ERR_LEN] = "";
        assert_int_equal(sw_msg_decode(frame, sw_msg_size(4 * N), 1 << 20, &d, NULL), 0);
        bool clean = t == sizeof at / sizeof *at;
        assert_true(d.finite == clean);
        assert_true((sw_msg_floats_in_place(&d, N, err) != NULL) == clean);
        assert_int_equal(sw_msg_get_floats(&d, copy, N, err), clean ? 0 : SW_EFORMAT);
        if (!clean) {
            char want[64];
            snprintf(want, sizeof want, "value %zu is not finite", at[t]);
            assert_non_null(strstr(err, want));
        }
    }
    free(v);
    free(copy);
    free(frame);
}

/* Every position of a bad value is found, whatever vector width the check runs at. */
static void non_finite_values_are_found_anywhere(void **state)
{
    (void)state;
    enum { N = 131 };
    static float v[N];
    uint8_t *frame = malloc(sw_msg_size(4 * N));
    for (size_t bad = 0; bad < N; bad++) {
        for (size_t i = 0; i < N; i++)
            v[i] = i == bad ? (bad % 2 ? NAN : -INFINITY) : 1.0f;
        sw_msg m = {.type = SW_MSG_PUSH, .payload_len = 4 * N};
        sw_msg_encode_floats(&m, v, frame);
        sw_msg d;
        char err[SW_ERR_LEN];
        assert_int_equal(sw_msg_decode(frame, sw_msg_size(4 * N), 1 << 20, &d, NULL), 0);
        assert_null(sw_msg_floats_in_place(&d, N, err));
        char want[64];
        snprintf(want, sizeof want, "value %zu is not finite", bad);
        assert_non_null(strstr(err, want));
    }
    free(frame);
}

static void sparse_payloads_round_trip_and_are_checked(void **state)
{
    (void)state;
    const uint32_t idx[3] = {0, 5, 4000000000u};
    const float val[3] = {-1.5f, 2e-40f, 7.0f};
    uint8_t pay[24];
    sw_msg_put_pairs(pay, idx, val, 3);
    size_t n = make(SW_MSG_PUSH_SPARSE, pay, 24);
    sw_msg m;
    uint32_t bi[4];
    float bv[4];
    size_t nnz;
    char err[SW_ERR_LEN];
    assert_int_equal(sw_msg_decode(buf, n, 1 << 20, &m, NULL), 0);
    assert_int_equal(sw_msg_get_pairs(&m, UINT32_MAX, bi, bv, 4, &nnz, err), 0);
    assert_int_equal(nnz, 3);
    assert_memory_equal(bi, idx, sizeof idx);
    assert_memory_equal(bv, val, sizeof val);
    /* An index at the limit, too many pairs, a ragged length: refused. */
    assert_int_equal(sw_msg_get_pairs(&m, 4000000000u, bi, bv, 4, &nnz, err), SW_EFORMAT);
    assert_non_null(strstr(err, "ascending"));
    assert_int_equal(sw_msg_get_pairs(&m, UINT32_MAX, bi, bv, 2, &nnz, err), SW_EFORMAT);
    m.payload_len = 20;
    assert_int_equal(sw_msg_get_pairs(&m, UINT32_MAX, bi, bv, 4, &nnz, err), SW_EFORMAT);
    /* Indices that repeat or go down, and NaN values. */
    const uint32_t down[2] = {3, 3};
    const float nan2[2] = {0, NAN};
    sw_msg_put_pairs(pay, down, val, 2);
    n = make(SW_MSG_PUSH_SPARSE, pay, 16);
    assert_int_equal(sw_msg_decode(buf, n, 1 << 20, &m, NULL), 0);
    assert_int_equal(sw_msg_get_pairs(&m, 10, bi, bv, 4, &nnz, err), SW_EFORMAT);
    sw_msg_put_pairs(pay, idx, nan2, 2);
    n = make(SW_MSG_PUSH_SPARSE, pay, 16);
    assert_int_equal(sw_msg_decode(buf, n, 1 << 20, &m, NULL), 0);
    assert_int_equal(sw_msg_get_pairs(&m, 10, bi, bv, 4, &nnz, err), SW_EFORMAT);
    assert_non_null(strstr(err, "not finite"));
    /* Index lists. */
    sw_msg_put_indices(pay, idx, 2);
    n = make(SW_MSG_PULL_SPARSE, pay, 8);
    assert_int_equal(sw_msg_decode(buf, n, 1 << 20, &m, NULL), 0);
    assert_int_equal(sw_msg_get_indices(&m, 6, bi, 4, &nnz, err), 0);
    assert_int_equal(nnz, 2);
    assert_int_equal(bi[1], 5);
    assert_int_equal(sw_msg_get_indices(&m, 5, bi, 4, &nnz, err), SW_EFORMAT);
}

static void expect(const uint8_t *frame, size_t len, int code, const char *why)
{
    sw_msg m;
    char err[SW_ERR_LEN] = "";
    assert_int_equal(sw_msg_decode(frame, len, 64, &m, err), code);
    if (!strstr(err, why))
        fail_msg("'%s' lacks '%s'", err, why);
}

/* A frame flagged unchecked carries a zero checksum field and decodes whatever its payload
 * holds; both float encoders leave the sum out alike, and a checksum on such a frame is refused
 * (a frame is one or the other). */
static void unchecked_frames_skip_only_the_payload_sum(void **state)
{
    (void)state;
    enum { N = 5 };
    const float v[N] = {1, 2, 3, 4, 5};
    uint8_t a[SW_PROTO_HEADER + 4 * N], b[sizeof a];
    sw_msg m = {.type = SW_MSG_PUSH, .worker = 1, .flags = SW_FLAG_UNCHECKED, .payload_len = 4 * N};
    sw_msg_encode_floats(&m, v, a);
    sw_msg_put_floats(b + SW_PROTO_HEADER, v, N);
    sw_msg_encode(&m, b);
    assert_memory_equal(a, b, sizeof a);
    assert_int_equal(sw_get_u32(a + 32), 0);
    sw_msg d;
    char err[SW_ERR_LEN];
    a[SW_PROTO_HEADER] ^= 1; /* not noticed: that is what unchecked means */
    assert_int_equal(sw_msg_decode(a, sizeof a, 1 << 20, &d, err), 0);
    assert_true(d.flags & SW_FLAG_UNCHECKED);
    sw_put_u32(a + 32, 1);
    assert_int_equal(sw_msg_decode(a, sizeof a, 1 << 20, &d, err), SW_EFORMAT);
    assert_non_null(strstr(err, "unchecked"));
    m.flags = 0; /* the same frame checked: the flipped bit is caught */
    sw_msg_encode(&m, b);
    b[SW_PROTO_HEADER] ^= 1;
    assert_int_equal(sw_msg_decode(b, sizeof b, 1 << 20, &d, err), SW_ECHECKSUM);
}

static void malformed_frames_are_refused(void **state)
{
    (void)state;
    uint8_t b[sizeof buf];
    size_t n = make(SW_MSG_PUSH, "abcd", 4);
    memcpy(b, buf, n);
    expect(b, 10, SW_EFORMAT, "shorter than a header");
    expect(b, 0, SW_EFORMAT, "shorter");
    b[0] = 'X';
    expect(b, n, SW_EFORMAT, "magic");
    memcpy(b, buf, n);
    b[4] = 2;
    expect(b, n, SW_EVERSION, "version 2");
    memcpy(b, buf, n);
    b[6] = 0;
    expect(b, n, SW_EFORMAT, "type 0");
    b[6] = 99;
    expect(b, n, SW_EFORMAT, "type 99");
    memcpy(b, buf, n);
    sw_put_u32(b + 12, 1u << 20);
    expect(b, n, SW_EFORMAT, "flags");
    memcpy(b, buf, n);
    b[37] = 1;
    expect(b, n, SW_EFORMAT, "reserved");
    memcpy(b, buf, n);
    sw_put_u64(b + 24, 5); /* claims more than follows */
    expect(b, n, SW_EFORMAT, "5 but 4 bytes");
    sw_put_u64(b + 24, UINT64_MAX); /* absurd */
    expect(b, n, SW_EFORMAT, "over the limit");
    memcpy(b, buf, n);
    expect(b, n - 1, SW_EFORMAT, "but 3 bytes"); /* truncated payload */
    b[n - 1] ^= 1;
    expect(b, n, SW_ECHECKSUM, "checksum");
    uint8_t big[SW_PROTO_HEADER + 100] = {0};
    sw_msg m = {.type = SW_MSG_PUSH, .payload_len = 100};
    sw_msg_encode(&m, big);
    expect(big, sizeof big, SW_EFORMAT, "over the limit"); /* above the caller's 64 */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_type_round_trips),
        cmocka_unit_test(floats_round_trip_exactly),
        cmocka_unit_test(non_finite_gradients_are_refused),
        cmocka_unit_test(float_encoder_matches_the_plain_one),
        cmocka_unit_test(non_finite_values_are_found_anywhere),
        cmocka_unit_test(non_finite_values_are_found_in_every_block),
        cmocka_unit_test(sparse_payloads_round_trip_and_are_checked),
        cmocka_unit_test(malformed_frames_are_refused),
        cmocka_unit_test(unchecked_frames_skip_only_the_payload_sum),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
