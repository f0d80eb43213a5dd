/* Byte helpers: little-endian round trips and the two checksums against their check values. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "syncwise/bytes.h"
#include "syncwise/rng.h"

/* The definition, one bit at a time: what the library's folded CRC-32C must agree with. */
static uint32_t crc32c_bitwise(uint32_t crc, const uint8_t *p, size_t n)
{
    crc = ~crc;
    while (n--) {
        crc ^= *p++;
        for (int k = 0; k < 8; k++)
            crc = crc & 1 ? (crc >> 1) ^ 0x82f63b78u : crc >> 1;
    }
    return ~crc;
}

static void little_endian_round_trips(void **state)
{
    (void)state;
    uint8_t b[8];
    sw_put_u32(b, 0x11223344u);
    assert_int_equal(b[0], 0x44);
    assert_int_equal(b[3], 0x11);
    assert_int_equal(sw_get_u32(b), 0x11223344u);
    sw_put_u64(b, 0x0102030405060708ULL);
    assert_int_equal(b[0], 0x08);
    assert_true(sw_get_u64(b) == 0x0102030405060708ULL);
    sw_put_f32(b, -1.5f);
    assert_float_equal(sw_get_f32(b), -1.5f, 0);
}

static void checksums_match_their_check_values(void **state)
{
    (void)state;
    const char *v = "123456789";
    assert_int_equal(sw_crc32(0, v, 9), 0xCBF43926u);
    assert_int_equal(sw_crc32c(0, v, 9), 0xE3069283u);
    assert_int_equal(crc32c_bitwise(0, (const uint8_t *)v, 9), 0xE3069283u);
    assert_int_equal(sw_crc32c(sw_crc32c(0, v, 4), v + 4, 5), 0xE3069283u); /* continues */
    assert_int_equal(sw_crc32c(0, v, 0), 0);
}

static void library_and_definition_agree(void **state)
{
    (void)state;
    static uint8_t buf[40009]; /* long enough for many folding blocks, and odd tails */
    sw_rng r;
    sw_rng_seed(&r, 1, 1);
    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = (uint8_t)sw_rng_u64(&r);
    for (size_t len = 0; len < sizeof buf; len += len < 13000 ? 997 : 4093)
        for (size_t off = 0; off < 9; off++) /* every alignment */
            assert_int_equal(sw_crc32c(7, buf + off, len - (len > off ? off : len)),
                             crc32c_bitwise(7, buf + off, len - (len > off ? off : len)));
}

/* No terminal escape, control byte, blank or non-ASCII byte from the wire reaches a log. */
static void wire_text_prints_safely(void **state)
{
    (void)state;
    char out[16];
    sw_printable(out, sizeof out, "\x1b]0;pwned\x07 \xff\n", 13);
    assert_string_equal(out, "?]0;pwned????");
    sw_printable(out, sizeof out, "", 0);
    assert_string_equal(out, "-");
    sw_printable(out, 4, "tcp://host", 10);
    assert_string_equal(out, "tcp");
    sw_printable_text(out, sizeof out, "a b\x1b[2J\n", 8); /* a sentence keeps its spaces */
    assert_string_equal(out, "a b?[2J?");
    sw_printable_text(out, sizeof out, "", 0);
    assert_string_equal(out, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(little_endian_round_trips),
        cmocka_unit_test(checksums_match_their_check_values),
        cmocka_unit_test(library_and_definition_agree),
        cmocka_unit_test(wire_text_prints_safely),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
