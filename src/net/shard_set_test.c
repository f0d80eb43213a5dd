/* Sets of shards on the wire: their width follows the run's shards (one word up to 64, as the
 * protocol's first version), they read back as written, and a set naming a shard the run does
 * not have is refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "shard_set.h"

static void widths_follow_the_shards(void **state)
{
    (void)state;
    assert_int_equal(sw_shard_set_bytes(1), 8);
    assert_int_equal(sw_shard_set_bytes(64), 8);
    assert_int_equal(sw_shard_set_bytes(65), 16);
    assert_int_equal(sw_shard_set_bytes(SW_SHARDS_MAX), 8 * SW_SHARD_SET_WORDS);
    assert_int_equal(sw_shard_entry_bytes(2), 28); /* u32 worker, u64 token, u64 seq, a word */
    assert_int_equal(sw_shard_entry_bytes(130), 44);
}

static void all_names_each_shard_once(void **state)
{
    (void)state;
    static const uint32_t counts[] = {1, 63, 64, 65, 128, 129, SW_SHARDS_MAX};
    for (size_t c = 0; c < sizeof counts / sizeof *counts; c++) {
        sw_shard_set all = sw_shard_set_all(counts[c]);
        for (uint32_t j = 0; j < SW_SHARDS_MAX; j++)
            assert_int_equal(sw_shard_set_has(&all, j), j < counts[c]);
    }
}

static void round_trips_at_every_width(void **state)
{
    (void)state;
    static const uint32_t counts[] = {2, 64, 65, 130, SW_SHARDS_MAX};
    for (size_t c = 0; c < sizeof counts / sizeof *counts; c++) {
        uint32_t n = counts[c];
        sw_shard_set s = {{0}}, back;
        for (uint32_t j = 0; j < n; j += 3)
            sw_shard_set_add(&s, j);
        sw_shard_set_add(&s, n - 1);
        uint8_t wire[8 * SW_SHARD_SET_WORDS + 1] = {0};
        wire[sw_shard_set_bytes(n)] = 0xAB; /* nothing is written past the set */
        sw_shard_set_put(wire, &s, n);
        assert_int_equal(wire[sw_shard_set_bytes(n)], 0xAB);
        assert_true(sw_shard_set_get(wire, n, &back));
        assert_true(sw_shard_set_equal(&s, &back));
        for (uint32_t j = 0; j < n; j++)
            assert_int_equal(sw_shard_set_wire_has(wire, j), sw_shard_set_has(&s, j));
        sw_shard_set_remove(&back, n - 1);
        assert_false(sw_shard_set_has(&back, n - 1));
        assert_false(sw_shard_set_equal(&s, &back));
    }
}

/* A bit at the run's shard count or beyond names no shard of the run: a hostile or broken
 * sender, refused. */
static void shards_beyond_the_run_are_refused(void **state)
{
    (void)state;
    static const uint32_t counts[] = {3, 64, 70, 200};
    for (size_t c = 0; c < sizeof counts / sizeof *counts; c++) {
        uint32_t n = counts[c];
        size_t bytes = sw_shard_set_bytes(n);
        for (uint32_t bit = n; bit < 8 * bytes; bit++) {
            uint8_t wire[8 * SW_SHARD_SET_WORDS] = {0};
            wire[bit / 8] = (uint8_t)(1u << (bit % 8));
            sw_shard_set s;
            assert_false(sw_shard_set_get(wire, n, &s));
        }
    }
    sw_shard_set empty;
    uint8_t zeros[8 * SW_SHARD_SET_WORDS] = {0};
    assert_true(sw_shard_set_get(zeros, 70, &empty));
    assert_true(sw_shard_set_empty(&empty));
}

static void entries_put_their_fields(void **state)
{
    (void)state;
    sw_shard_set to = {{0}};
    sw_shard_set_add(&to, 66);
    uint8_t e[64] = {0};
    sw_shard_entry_put(e, 7, 0x1122334455667788ULL, 42, &to, 70);
    assert_int_equal(sw_get_u32(e), 7);
    assert_int_equal(sw_get_u64(e + 4), 0x1122334455667788ULL);
    assert_int_equal(sw_get_u64(e + 12), 42);
    assert_int_equal(sw_get_u64(e + 20), 0);
    assert_int_equal(sw_get_u64(e + 28), 1ULL << 2);
    assert_true(sw_shard_set_wire_has(e + 20, 66));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(widths_follow_the_shards),
        cmocka_unit_test(all_names_each_shard_once),
        cmocka_unit_test(round_trips_at_every_width),
        cmocka_unit_test(shards_beyond_the_run_are_refused),
        cmocka_unit_test(entries_put_their_fields),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
