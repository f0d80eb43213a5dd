/* Batching, sharding and sw_data_load: coverage, disjointness, determinism, splits, errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "syncwise/data.h"
#include "syncwise/err.h"

/* n examples of one feature whose value is the example's index. */
static sw_dataset *numbered(size_t n)
{
    sw_dataset *ds;
    uint32_t shape[3] = {1, 1, 1};
    assert_int_equal(sw_dataset_new(&ds, n, shape, SW_CLASSIFY, 2, NULL), 0);
    for (size_t i = 0; i < n; i++) {
        ds->x[i] = (float)i;
        ds->label[i] = (int32_t)(i % 2);
    }
    return ds;
}

static void shards_are_disjoint_and_cover(void **state)
{
    (void)state;
    const size_t n = 103, ranks = 4, batch = 5;
    sw_dataset *ds = numbered(n);
    int *seen = calloc(n, sizeof *seen);
    for (uint32_t r = 0; r < ranks; r++) {
        sw_batcher *b;
        assert_int_equal(sw_batcher_new(&b, ds, batch, SW_BATCH_SHARD, r, ranks, 7, NULL), 0);
        size_t size = sw_batcher_epoch_size(b);
        assert_in_range(size, n / ranks, n / ranks + 1);
        /* Draw exactly one pass: every example of the shard once, then the epoch count moves. */
        size_t drawn = 0;
        while (drawn < size) {
            sw_batch bt;
            assert_int_equal(sw_batcher_epoch(b), 0);
            sw_batcher_next(b, &bt);
            assert_int_equal(bt.n, batch);
            for (size_t i = 0; i < batch && drawn < size; i++, drawn++)
                seen[(size_t)bt.x[i]]++;
        }
        assert_int_equal(sw_batcher_epoch(b), 1); /* the last batch completed the pass */
        sw_batcher_free(b);
    }
    for (size_t i = 0; i < n; i++)
        assert_int_equal(seen[i], 1);
    free(seen);
    sw_dataset_free(ds);
}

/* The examples of s's first pass, in its order (a batch of one). */
static void first_pass(sw_sampler *s, uint32_t *rows)
{
    size_t size = sw_sampler_epoch_size(s);
    for (size_t i = 0; i < size; i++)
        rows[i] = sw_sampler_next(s)[0];
}

/* A rank's share is the same whether its sampler deals the set itself or takes a deal made
 * once for every rank (as a simulator's workers do), and freed once they are made; the shares
 * are a random partition, and a deal of another seed is another. */
static void a_share_is_the_same_dealt_or_not(void **state)
{
    (void)state;
    enum { N = 103, RANKS = 5 };
    uint32_t own[RANKS][N], dealt[RANKS][N], other[N];
    sw_sampler *s[RANKS];
    sw_deal *deal, *reseeded;
    assert_int_equal(sw_deal_new(&deal, N, 7, NULL), 0);
    assert_int_equal(sw_deal_new(&reseeded, N, 8, NULL), 0);
    for (uint32_t r = 0; r < RANKS; r++) {
        assert_int_equal(sw_sampler_new(&s[r], N, 1, SW_BATCH_SHARD, r, RANKS, 7, NULL), 0);
        first_pass(s[r], own[r]);
        sw_sampler_free(s[r]);
        assert_int_equal(sw_sampler_new_dealt(&s[r], deal, 1, r, RANKS, NULL), 0);
    }
    sw_deal_free(deal); /* the samplers keep their shares */
    size_t in_step = 0; /* a random partition, not every RANKS-th example as they lie */
    for (size_t j = 0; j < N / RANKS; j++)
        in_step += own[0][j] % RANKS == 0;
    assert_true(in_step < N / RANKS / 2);
    for (uint32_t r = 0; r < RANKS; r++) {
        first_pass(s[r], dealt[r]);
        assert_memory_equal(own[r], dealt[r], sw_sampler_epoch_size(s[r]) * sizeof **own);
        sw_sampler_free(s[r]);
    }
    sw_sampler *o;
    assert_int_equal(sw_sampler_new_dealt(&o, reseeded, 1, 0, RANKS, NULL), 0);
    first_pass(o, other);
    assert_memory_not_equal(own[0], other, sw_sampler_epoch_size(o) * sizeof *other);
    sw_sampler_free(o);
    sw_deal_free(reseeded);
    char err[SW_ERR_LEN];
    assert_int_equal(sw_deal_new(&deal, 0, 7, err), SW_EINVAL);
    assert_int_equal(sw_deal_new(&deal, 3, 7, err), 0);
    assert_int_equal(sw_sampler_new_dealt(&o, deal, 1, 4, 5, err), SW_EINVAL); /* empty share */
    sw_dataset *ds = numbered(4);
    sw_batcher *b;
    assert_int_equal(sw_batcher_new_dealt(&b, ds, deal, 1, 0, 2, err), SW_EINVAL);
    assert_non_null(strstr(err, "a deal of 3 examples for a set of 4"));
    sw_dataset_free(ds);
    sw_deal_free(deal);
}

/* A dense batch holds the rows a sampler of the same rank and seed picks, in its order: dense
 * and sparse models read the same examples. */
static void batches_are_the_samplers_rows(void **state)
{
    (void)state;
    sw_dataset *ds = numbered(103);
    for (int mode = 0; mode < 2; mode++) {
        sw_batcher *b;
        sw_sampler *s;
        assert_int_equal(sw_batcher_new(&b, ds, 7, (sw_batch_mode)mode, 2, 4, 11, NULL), 0);
        assert_int_equal(sw_sampler_new(&s, ds->n, 7, (sw_batch_mode)mode, 2, 4, 11, NULL), 0);
        assert_int_equal(sw_batcher_epoch_size(b), sw_sampler_epoch_size(s));
        for (int step = 0; step < 40; step++) {
            sw_batch bt;
            sw_batcher_next(b, &bt);
            const uint32_t *rows = sw_sampler_next(s);
            for (int i = 0; i < 7; i++)
                assert_int_equal((uint32_t)bt.x[i], rows[i]);
            assert_int_equal(sw_batcher_epoch(b), sw_sampler_epoch(s));
        }
        sw_batcher_free(b);
        sw_sampler_free(s);
    }
    sw_dataset_free(ds);
}

static void epochs_reshuffle_and_count(void **state)
{
    (void)state;
    sw_dataset *ds = numbered(10);
    sw_batcher *b;
    assert_int_equal(sw_batcher_new(&b, ds, 10, SW_BATCH_SAMPLE, 0, 1, 3, NULL), 0);
    sw_batch first, second;
    float a[10], c[10];
    sw_batcher_next(b, &first);
    memcpy(a, first.x, sizeof a);
    assert_int_equal(sw_batcher_epoch(b), 1);
    sw_batcher_next(b, &second);
    memcpy(c, second.x, sizeof c);
    assert_int_equal(sw_batcher_epoch(b), 2);
    float sa = 0, sc = 0;
    for (int i = 0; i < 10; i++) {
        sa += a[i];
        sc += c[i];
    }
    assert_float_equal(sa, 45, 0); /* each batch is one full pass */
    assert_float_equal(sc, 45, 0);
    assert_memory_not_equal(a, c, sizeof a); /* in a fresh order */
    sw_batcher_free(b);
    sw_dataset_free(ds);
}

static void same_seed_same_batches_other_rank_other_order(void **state)
{
    (void)state;
    sw_dataset *ds = numbered(50);
    sw_batcher *a, *b, *c;
    assert_int_equal(sw_batcher_new(&a, ds, 8, SW_BATCH_SAMPLE, 1, 3, 11, NULL), 0);
    assert_int_equal(sw_batcher_new(&b, ds, 8, SW_BATCH_SAMPLE, 1, 3, 11, NULL), 0);
    assert_int_equal(sw_batcher_new(&c, ds, 8, SW_BATCH_SAMPLE, 2, 3, 11, NULL), 0);
    int differs = 0;
    for (int k = 0; k < 20; k++) {
        sw_batch x, y, z;
        sw_batcher_next(a, &x);
        sw_batcher_next(b, &y);
        sw_batcher_next(c, &z);
        assert_memory_equal(x.x, y.x, 8 * sizeof(float));
        differs += memcmp(x.x, z.x, 8 * sizeof(float)) != 0;
    }
    assert_true(differs > 15);
    sw_batcher_free(a);
    sw_batcher_free(b);
    sw_batcher_free(c);
    sw_dataset_free(ds);
}

static void batcher_refuses_bad_arguments(void **state)
{
    (void)state;
    sw_dataset *ds = numbered(3);
    sw_batcher *b;
    char err[SW_ERR_LEN];
    assert_int_equal(sw_batcher_new(&b, ds, 0, SW_BATCH_SHARD, 0, 1, 1, err), SW_EINVAL);
    assert_int_equal(sw_batcher_new(&b, ds, 1, SW_BATCH_SHARD, 2, 2, 1, err), SW_EINVAL);
    assert_int_equal(sw_batcher_new(&b, ds, 1, SW_BATCH_SHARD, 4, 5, 1, err), SW_EINVAL);
    assert_non_null(strstr(err, "empty"));
    assert_null(b);
    sw_dataset_free(ds);
}

static void load_synthetic_with_split(void **state)
{
    (void)state;
    sw_data d, e;
    char err[SW_ERR_LEN];
    assert_int_equal(sw_data_load(&d, "synthetic:task=lsq,d=5,n=1000,test=100", 1, err), 0);
    assert_int_equal(d.train->n, 900); /* val defaults to a tenth, at most 5000 */
    assert_int_equal(d.val->n, 100);
    assert_int_equal(d.test->n, 100);
    assert_int_equal(d.train->objective, SW_REGRESS);
    assert_int_equal(sw_data_load(&e, "synthetic:task=lsq,d=5,n=1000,test=100", 1, err), 0);
    assert_memory_equal(d.train->x, e.train->x, 900 * 5 * sizeof(float));
    sw_data_free(&e);
    assert_int_equal(sw_data_load(&e, "synthetic:task=lsq,d=5,n=1000,test=100", 2, err), 0);
    assert_memory_not_equal(d.train->x, e.train->x, 900 * 5 * sizeof(float));
    sw_data_free(&e);
    sw_data_free(&d);
    assert_int_equal(sw_data_load(&d, "synthetic:task=logistic,d=3,n=200,val=0,frac=0.5", 1, err),
                     0);
    assert_int_equal(d.train->n, 100);
    assert_null(d.val);
    assert_int_equal(d.train->n_classes, 2);
    sw_data_free(&d);
}

static void load_standardizes_on_train(void **state)
{
    (void)state;
    sw_data d;
    char err[SW_ERR_LEN];
    assert_int_equal(sw_data_load(&d, "synthetic:d=4,n=2000,norm=standard", 5, err), 0);
    for (size_t j = 0; j < 4; j++) {
        double s = 0, s2 = 0;
        for (size_t i = 0; i < d.train->n; i++) {
            double v = d.train->x[i * 4 + j];
            s += v;
            s2 += v * v;
        }
        double mean = s / (double)d.train->n;
        assert_true(fabs(mean) < 1e-4);
        assert_true(fabs(s2 / (double)d.train->n - mean * mean - 1.0) < 1e-3);
    }
    sw_data_free(&d);
}

static void load_errors_are_clear(void **state)
{
    (void)state;
    sw_data d;
    char err[SW_ERR_LEN];
    assert_int_equal(sw_data_load(&d, "mnist-ish", 1, err), SW_ENOTFOUND);
    assert_non_null(strstr(err, "fashion-mnist"));
    assert_int_equal(sw_data_load(&d, "synthetic:dd=3", 1, err), SW_EINVAL);
    assert_non_null(strstr(err, "'dd'"));
    assert_non_null(strstr(err, "noise"));
    assert_int_equal(sw_data_load(&d, "synthetic:task=svm", 1, err), SW_EINVAL);
    assert_int_equal(sw_data_load(&d, "synthetic:norm=weird", 1, err), SW_EINVAL);
    assert_int_equal(sw_data_load(&d, "synthetic:n=10,val=10", 1, err), SW_EINVAL);
    assert_int_equal(sw_data_load(&d, "fashion-mnist:dir=/nonexistent", 1, err), SW_EIO);
    assert_non_null(strstr(err, "/nonexistent"));
    assert_int_equal(sw_data_load(&d, "libsvm", 1, err), SW_EINVAL);
    assert_non_null(strstr(err, "train=PATH"));
    assert_null(d.train);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(shards_are_disjoint_and_cover),
        cmocka_unit_test(a_share_is_the_same_dealt_or_not),
        cmocka_unit_test(batches_are_the_samplers_rows),
        cmocka_unit_test(epochs_reshuffle_and_count),
        cmocka_unit_test(same_seed_same_batches_other_rank_other_order),
        cmocka_unit_test(batcher_refuses_bad_arguments),
        cmocka_unit_test(load_synthetic_with_split),
        cmocka_unit_test(load_standardizes_on_train),
        cmocka_unit_test(load_errors_are_clear),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
