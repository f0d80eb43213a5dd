/* The chunk table: every parameter on exactly one shard, for sizes chunks do not divide; the
 * text form read back; tables that break a rule refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "syncwise/err.h"
#include "syncwise/shard.h"

/* Walks the parameters in order: each shard's slice starts where the last ended, the slices
 * cover everything, and sw_chunk_shard_of agrees with them. */
static void assert_covers_once(const sw_chunk_table *t)
{
    size_t next = 0, smallest = SIZE_MAX, largest = 0;
    for (uint32_t j = 0; j < t->n_shards; j++) {
        size_t at = sw_chunk_slice_at(t, j), len = sw_chunk_slice_len(t, j);
        assert_int_equal(at, next);
        assert_true(len > 0);
        assert_int_equal(sw_chunk_shard_of(t, at), j);
        assert_int_equal(sw_chunk_shard_of(t, at + len - 1), j);
        next = at + len;
        smallest = len < smallest ? len : smallest;
        largest = len > largest ? len : largest;
    }
    assert_int_equal(next, t->n_params);
    /* balanced to within a chunk, and the short last chunk */
    assert_true(largest - smallest <= 2 * t->chunk);
}

static void every_parameter_is_on_exactly_one_shard(void **state)
{
    (void)state;
    const size_t sizes[] = {1, 2, 7, 100, 262143, 262144, 262145, 1048576, 1000003, 3 * 262144 + 1};
    const size_t chunks[] = {0, 1, 3, 1000};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        for (size_t c = 0; c < sizeof chunks / sizeof *chunks; c++)
            for (uint32_t s = 1; s <= 5 && s <= sizes[i]; s++) {
                sw_chunk_table t;
                assert_int_equal(sw_chunk_table_init(&t, sizes[i], chunks[c], s, NULL), 0);
                assert_true(t.chunk >= 1);
                assert_true(!chunks[c] || t.chunk <= chunks[c]);
                assert_covers_once(&t);
            }
}

static void many_chunks_and_the_default_size(void **state)
{
    (void)state;
    sw_chunk_table t;
    size_t n = 3 * SW_CHUNKS_PER_SHARD * (size_t)SW_CHUNK_FLOATS + 5;
    assert_int_equal(sw_chunk_table_init(&t, n, 0, 3, NULL), 0);
    assert_int_equal(t.chunk, SW_CHUNK_FLOATS);
    assert_int_equal(t.n_chunks, 3 * SW_CHUNKS_PER_SHARD + 1);
    assert_covers_once(&t);
}

/* The largest slice over the smallest under the default rule. */
static double skew(size_t n, uint32_t shards)
{
    sw_chunk_table t;
    assert_int_equal(sw_chunk_table_init(&t, n, 0, shards, NULL), 0);
    assert_covers_once(&t);
    size_t smallest = SIZE_MAX, largest = 0;
    for (uint32_t j = 0; j < shards; j++) {
        size_t len = sw_chunk_slice_len(&t, j);
        smallest = len < smallest ? len : smallest;
        largest = len > largest ? len : largest;
    }
    return (double)largest / (double)smallest;
}

/* No shard holds much more than another, whatever the model's size: 1 MiB chunks alone cut a
 * 4 MiB model over 3 shards 1, 1 and 2 MiB. */
static void the_default_balances_the_slices(void **state)
{
    (void)state;
    const size_t sizes[] = {1048576, 1000003, 3 * 262144 + 1, 10 * 262144 + 5, 101770,
                            7654321, 64 * 262144 + 17};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        for (uint32_t s = 1; s <= 12; s++)
            if (skew(sizes[i], s) > 1.0 + 2.0 / SW_CHUNKS_PER_SHARD)
                fail_msg("%zu parameters over %u shards: the largest slice is %.2f times the "
                         "smallest", sizes[i], s, skew(sizes[i], s));
    assert_true(skew(100, 3) <= 34.0 / 33.0); /* a model too small for 16 chunks a shard */
    /* Beyond 1 MiB a shard, 16 chunks a shard or more (chunks rounded up gave some 15) */
    const struct { size_t n; uint32_t shards; } big[] = {
        {26216000, 100}, {67112960, 256}, {(size_t)SW_CHUNK_FLOATS * 3 + 1, 2}, {1u << 31, 7}};
    for (size_t i = 0; i < sizeof big / sizeof *big; i++) {
        sw_chunk_table t;
        assert_int_equal(sw_chunk_table_init(&t, big[i].n, 0, big[i].shards, NULL), 0);
        for (uint32_t j = 0; j < big[i].shards; j++)
            if (t.first[j + 1] - t.first[j] < SW_CHUNKS_PER_SHARD)
                fail_msg("%zu parameters over %u shards: shard %u holds %u chunks", big[i].n,
                         big[i].shards, j, t.first[j + 1] - t.first[j]);
        assert_true(t.chunk % 16 == 0 && t.chunk <= SW_CHUNK_FLOATS);
    }
}

static void bad_sizes_are_refused(void **state)
{
    (void)state;
    sw_chunk_table t;
    char err[SW_ERR_LEN];
    assert_int_equal(sw_chunk_table_init(&t, 0, 0, 1, err), SW_EINVAL);
    assert_int_equal(sw_chunk_table_init(&t, 10, 0, 0, err), SW_EINVAL);
    assert_int_equal(sw_chunk_table_init(&t, 3, 0, 4, err), SW_EINVAL);
    assert_int_equal(sw_chunk_table_init(&t, 1000, 0, SW_SHARDS_MAX + 1, err), SW_EINVAL);
    assert_non_null(strstr(err, "shards"));
    /* chunks are counted in 32 bits: a chunk size that would need more is refused */
    size_t huge = (size_t)1 << 33;
    assert_int_equal(sw_chunk_table_init(&t, huge, 1, 2, err), SW_EINVAL);
    assert_non_null(strstr(err, "larger chunks"));
    assert_int_equal(sw_chunk_table_init(&t, huge, 2, 2, err), SW_EINVAL); /* 2^32 chunks */
    assert_int_equal(sw_chunk_table_init(&t, huge, 3, 2, err), 0);
    assert_int_equal(t.n_chunks, 2863311531u); /* ceil(2^33 / 3) */
    assert_covers_once(&t);
}

static void the_text_form_reads_back(void **state)
{
    (void)state;
    sw_chunk_table t, back;
    char text[1024];
    assert_int_equal(sw_chunk_table_init(&t, 1000003, 4096, 3, NULL), 0);
    int len = sw_chunk_table_format(&t, text, sizeof text);
    assert_true(len > 0);
    assert_int_equal(sw_chunk_table_parse(&back, text, 1000003, 3, NULL), 0);
    assert_int_equal(back.n_params, t.n_params); /* field by field: not the padding */
    assert_int_equal(back.chunk, t.chunk);
    assert_int_equal(back.n_chunks, t.n_chunks);
    assert_int_equal(back.n_shards, t.n_shards);
    assert_memory_equal(back.first, t.first, (t.n_shards + 1) * sizeof *t.first);
    char small[8];
    assert_int_equal(sw_chunk_table_format(&t, small, sizeof small), -1);
}

static void expect_refused(const char *text, size_t n, uint32_t shards, const char *why)
{
    sw_chunk_table t;
    char err[SW_ERR_LEN];
    assert_int_equal(sw_chunk_table_parse(&t, text, n, shards, err), SW_EFORMAT);
    if (!strstr(err, why))
        fail_msg("'%s' lacks '%s'", err, why);
}

static void broken_tables_are_refused(void **state)
{
    (void)state;
    expect_refused("first=0,2\n", 100, 2, "no chunk=");
    expect_refused("chunk=0\nfirst=0,2\n", 100, 2, "chunks of 0");
    expect_refused("chunk=500\nfirst=0,2\n", 100, 2, "chunks of 500");
    expect_refused("chunk=10\nfirst=1,2\n", 100, 2, "shard 0");      /* a gap at the start */
    expect_refused("chunk=10\nfirst=0,0\n", 100, 2, "shard 1");      /* a shard with nothing */
    expect_refused("chunk=10\nfirst=0,5,3\n", 100, 3, "shard 2");    /* out of order */
    expect_refused("chunk=10\nfirst=0,10\n", 100, 2, "shard 1");     /* past the last chunk */
    expect_refused("chunk=10\nfirst=0,5\n", 100, 3, "3 shards");      /* too few */
    expect_refused("chunk=10\nfirst=0,5,7\n", 100, 2, "2 shards");   /* too many */
    expect_refused("chunk=10\nfirst=0,x\n", 100, 2, "shard 1");
    expect_refused("chunk=1\nfirst=0,5\n", (size_t)1 << 33, 2, "chunks of 1"); /* 2^33 chunks */
    sw_chunk_table t;
    assert_int_equal(sw_chunk_table_parse(&t, "x=1\nchunk=10\nfirst=0,5", 95, 2, NULL), 0);
    assert_int_equal(sw_chunk_slice_len(&t, 1), 45);
}

static void shard_lists_read_back_and_bad_ones_are_refused(void **state)
{
    (void)state;
    char eps[SW_SHARDS_MAX][SW_SHARD_EP_LEN];
    uint32_t n;
    assert_int_equal(sw_shard_list_parse("tcp://a:1,tcp://b:2\nchunk=5", eps, &n, NULL), 0);
    assert_int_equal(n, 2);
    assert_string_equal(eps[0], "tcp://a:1");
    assert_string_equal(eps[1], "tcp://b:2");
    assert_int_equal(sw_shard_list_parse("one", eps, &n, NULL), 0);
    assert_int_equal(n, 1);
    const char *bad[] = {"", "a,,b", "a,", ",a", "\n", "a,b,a"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_int_equal(sw_shard_list_parse(bad[i], eps, &n, NULL), SW_EINVAL);
    char many[SW_SHARDS_MAX * 6 + 8] = "", one[8];
    for (int j = 0; j <= SW_SHARDS_MAX; j++) { /* distinct: too many, not twice one */
        snprintf(one, sizeof one, j ? ",e%d" : "e%d", j);
        strcat(many, one);
        if (j + 1 == SW_SHARDS_MAX)
            assert_int_equal(sw_shard_list_parse(many, eps, &n, NULL), 0);
    }
    assert_int_equal(sw_shard_list_parse(many, eps, &n, NULL), SW_EINVAL);
    char long_ep[SW_SHARD_EP_LEN + 2];
    memset(long_ep, 'x', sizeof long_ep - 1);
    long_ep[sizeof long_ep - 1] = '\0';
    assert_int_equal(sw_shard_list_parse(long_ep, eps, &n, NULL), SW_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_parameter_is_on_exactly_one_shard),
        cmocka_unit_test(many_chunks_and_the_default_size),
        cmocka_unit_test(the_default_balances_the_slices),
        cmocka_unit_test(bad_sizes_are_refused),
        cmocka_unit_test(the_text_form_reads_back),
        cmocka_unit_test(broken_tables_are_refused),
        cmocka_unit_test(shard_lists_read_back_and_bad_ones_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
