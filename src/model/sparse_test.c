/* Sparse data, models and pushes: the sparse and dense engine paths give the same parameters
 * bit for bit under every kind of policy (they run the same arithmetic, syncwise/optim.h's
 * plain loops, never a BLAS kernel that differs from machine to machine); LIBSVM files round-trip; generated data has the
 * promised shape; gradients match finite differences; an SVM learns. */
#include "testutil/testutil.h"

/* cmocka needs these first. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>

#include "syncwise/engine.h"
#include "syncwise/err.h"
#include "syncwise/rng.h"
#include "syncwise/sparse.h"

enum { N = 200, WORKERS = 3, PUSHES = 300 };

static sw_engine *engine_for(const char *policy)
{
    float init[N];
    for (int i = 0; i < N; i++)
        init[i] = (float)i / N - 0.5f;
    sw_engine_params p = sw_engine_default_params();
    p.n_params = N;
    p.init = init;
    p.lr = 0.3f;
    p.max_workers = WORKERS;
    p.policy = policy;
    sw_engine *e;
    char err[SW_ERR_LEN];
    if (sw_engine_new(&e, &p, err))
        fail_msg("%s: %s", policy, err);
    sw_engine_result r;
    for (uint32_t w = 0; w < WORKERS; w++)
        sw_engine_join(e, w, 0, &r);
    return e;
}

/* A random sparse gradient: each coordinate with probability 0.05, values in [-1, 1). */
static size_t random_sparse(sw_rng *r, uint32_t *idx, float *val, float *dense)
{
    size_t k = 0;
    memset(dense, 0, N * sizeof *dense);
    for (uint32_t j = 0; j < N; j++)
        if (sw_rng_uniform(r) < 0.05) {
            idx[k] = j;
            val[k] = (float)(2 * sw_rng_uniform(r) - 1);
            dense[j] = val[k++];
        }
    return k;
}

static void sparse_and_dense_pushes_agree(const char *policy)
{
    sw_engine *sp = engine_for(policy), *de = engine_for(policy);
    sw_rng r;
    sw_rng_seed(&r, 11, 0);
    uint32_t idx[N];
    float val[N], dense[N];
    for (int i = 0; i < PUSHES; i++) {
        const sw_engine_view *v = sw_engine_get_view(de);
        uint32_t w = (uint32_t)sw_rng_below(&r, WORKERS);
        while (v->workers[w].state != SW_WORKER_RUNNING)
            w = (w + 1) % WORKERS;
        size_t k = random_sparse(&r, idx, val, dense);
        sw_engine_result a, b;
        uint64_t ver = v->workers[w].version;
        assert_int_equal(sw_engine_push_sparse(sp, w, idx, val, k, ver, i, &a), 0);
        assert_int_equal(sw_engine_push(de, w, dense, ver, i, &b), 0);
        assert_int_equal(a.n_released, b.n_released);
        assert_int_equal(a.applied, b.applied);
        if (memcmp(sw_engine_params_ptr(sp), sw_engine_params_ptr(de), N * sizeof(float)) != 0)
            fail_msg("%s: parameters differ after push %d", policy, i);
    }
    sw_engine_free(sp);
    sw_engine_free(de);
}

static void sparse_path_equals_dense_path(void **state)
{
    (void)state;
    const char *policies[] = {"asp",        "bsp", "bsp:agg=mean",         "ssp:s=1",
                              "backup:k=2", "dbw", "sync:grads_to_wait=2", "actions"};
    for (size_t i = 0; i < sizeof policies / sizeof *policies; i++)
        sparse_and_dense_pushes_agree(policies[i]);
}

static void bad_sparse_pushes_are_refused(void **state)
{
    (void)state;
    sw_engine *e = engine_for("asp");
    sw_engine_result r;
    float val[2] = {1, 1};
    assert_int_equal(sw_engine_push_sparse(e, 0, (uint32_t[]){5, 5}, val, 2, 0, 1, &r), SW_EINVAL);
    assert_int_equal(sw_engine_push_sparse(e, 0, (uint32_t[]){7, 3}, val, 2, 0, 1, &r), SW_EINVAL);
    assert_int_equal(sw_engine_push_sparse(e, 0, (uint32_t[]){3, N}, val, 2, 0, 1, &r), SW_EINVAL);
    assert_int_equal(sw_engine_get_view(e)->workers[0].state, SW_WORKER_RUNNING);
    assert_int_equal(sw_engine_push_sparse(e, 0, (uint32_t[]){3, N - 1}, val, 2, 0, 1, &r), 0);
    sw_engine_free(e);
}

static sw_sparse_data *generated(size_t n, size_t dim, double density, uint64_t seed)
{
    sw_sparse_gen g = {
        .n = n, .dim = dim, .density = density, .zipf = 1.1, .noise = 0.02, .seed = seed};
    sw_sparse_data *d;
    char err[SW_ERR_LEN];
    if (sw_sparse_generate(&d, &g, err))
        fail_msg("%s", err);
    return d;
}

static void generated_data_has_its_shape(void **state)
{
    (void)state;
    sw_sparse_data *d = generated(2000, 5000, 0.01, 3);
    assert_true(d->nnz > 2000 * 20 && d->nnz < 2000 * 50); /* about 50 drawn, some merged */
    size_t *freq = calloc(d->dim, sizeof *freq), positive = 0;
    for (size_t i = 0; i < d->n; i++) {
        double norm = 0;
        for (size_t k = d->row[i]; k < d->row[i + 1]; k++) {
            norm += (double)d->val[k] * d->val[k];
            freq[d->col[k]]++;
            if (k > d->row[i])
                assert_true(d->col[k] > d->col[k - 1]);
        }
        assert_true(fabs(norm - 1) < 1e-5);
        positive += d->label[i] == 1;
    }
    assert_true(freq[0] > 20 * (freq[999] + 1)); /* a power law, not uniform */
    assert_true(positive > 600 && positive < 1400);
    free(freq);
    sw_sparse_data *again = generated(2000, 5000, 0.01, 3);
    assert_memory_equal(again->col, d->col, d->nnz * sizeof *d->col);
    sw_sparse_free(again);
    sw_sparse_free(d);
}

static void libsvm_round_trip(void **state)
{
    (void)state;
    sw_sparse_data *d = generated(300, 1000, 0.02, 4), *back;
    const char *path = sw_test_path("gen.svm");
    char err[SW_ERR_LEN];
    assert_int_equal(sw_sparse_write_libsvm(d, path, err), 0);
    if (sw_sparse_read_libsvm(&back, path, d->dim, err))
        fail_msg("%s", err);
    assert_int_equal(back->n, d->n);
    assert_int_equal(back->nnz, d->nnz);
    assert_memory_equal(back->row, d->row, (d->n + 1) * sizeof *d->row);
    assert_memory_equal(back->col, d->col, d->nnz * sizeof *d->col);
    assert_memory_equal(back->val, d->val, d->nnz * sizeof *d->val);
    assert_memory_equal(back->label, d->label, d->n * sizeof *d->label);
    sw_sparse_free(back);
    sw_test_write_text(path, "+1 3:1 2:1\n");
    assert_int_equal(sw_sparse_read_libsvm(&back, path, 0, err), SW_EFORMAT);
    assert_non_null(strstr(err, "not above"));
    sw_sparse_free(d);
}

static void dense_data_exports_its_nonzeros(void **state)
{
    (void)state;
    sw_dataset *ds;
    uint32_t shape[3] = {1, 1, 4};
    assert_int_equal(sw_dataset_new(&ds, 2, shape, SW_CLASSIFY, 10, NULL), 0);
    float x[8] = {0, 0.5f, 0, 1, 0, 0, 0, 0};
    memcpy(ds->x, x, sizeof x);
    ds->label[0] = 7;
    ds->label[1] = 2;
    sw_sparse_data *d;
    assert_int_equal(sw_sparse_from_dense(&d, ds, NULL), 0);
    assert_int_equal(d->nnz, 2);
    assert_int_equal(d->row[1], 2);
    assert_int_equal(d->row[2], 2);
    assert_int_equal(d->col[1], 3);
    assert_int_equal(d->label[0], 7);
    assert_int_equal(d->n_classes, 10);
    sw_sparse_free(d);
    sw_dataset_free(ds);
}

/* The objective a sparse gradient differentiates: mean loss + lambda/2 over touched weights. */
static double objective(sw_sparse_model *m, const float *w, const sw_sparse_data *d,
                        const uint32_t *rows, size_t n, const uint32_t *idx, size_t k,
                        double lambda)
{
    uint32_t tmp_idx[4096];
    float tmp_val[4096];
    double loss;
    sw_sparse_model_grad(m, w, d, rows, n, tmp_idx, tmp_val, &loss);
    for (size_t t = 0; t + 1 < k; t++)
        loss += 0.5 * lambda * (double)w[idx[t]] * w[idx[t]];
    return loss;
}

static void logistic_gradient_matches_finite_differences(void **state)
{
    (void)state;
    sw_sparse_data *d = generated(50, 300, 0.05, 5);
    sw_sparse_model *m;
    assert_int_equal(sw_sparse_model_new(&m, "logistic:lambda=0.01", d->dim, NULL), 0);
    float w[301];
    sw_rng r;
    sw_rng_seed(&r, 2, 0);
    for (int j = 0; j < 301; j++)
        w[j] = (float)sw_rng_normal(&r);
    uint32_t rows[8] = {0, 3, 5, 8, 13, 21, 34, 49}, idx[4096];
    float val[4096];
    double loss;
    size_t k = sw_sparse_model_grad(m, w, d, rows, 8, idx, val, &loss);
    assert_int_equal(idx[k - 1], 300); /* the bias comes last */
    for (size_t t = 0; t < k; t++) {
        float keep = w[idx[t]];
        w[idx[t]] = keep + 1e-2f;
        double up = objective(m, w, d, rows, 8, idx, k, 0.01);
        w[idx[t]] = keep - 1e-2f;
        double down = objective(m, w, d, rows, 8, idx, k, 0.01);
        w[idx[t]] = keep;
        double numeric = (up - down) / 2e-2;
        if (fabs(numeric - val[t]) > 1e-3 + 1e-2 * fabs(numeric))
            fail_msg("coordinate %u: analytic %g, numeric %g", idx[t], val[t], numeric);
    }
    sw_sparse_model_free(m);
    sw_sparse_free(d);
}

/* Sequential SGD through the engine's sparse pushes, with the project's lambda and step. */
static void svm_learns_separable_text(void **state)
{
    (void)state;
    sw_sparse_data *all = generated(5000, 2000, 0.01, 6), *train, *test;
    assert_int_equal(sw_sparse_slice(&train, all, 0, 4000, NULL), 0);
    assert_int_equal(sw_sparse_slice(&test, all, 4000, 1000, NULL), 0); /* rows never trained on */
    sw_sparse_free(all);
    sw_sparse_model *m;
    assert_int_equal(sw_sparse_model_new(&m, "svm", train->dim, NULL), 0);
    assert_string_equal(sw_sparse_model_spec(m), "svm:lambda=0.0001");
    sw_engine_params p = sw_engine_default_params();
    p.n_params = sw_sparse_model_n_params(m);
    p.lr = 0.35f;
    sw_engine *e;
    assert_int_equal(sw_engine_new(&e, &p, NULL), 0);
    sw_engine_result r;
    sw_engine_join(e, 0, 0, &r);
    uint32_t rows[16], idx[4096];
    float val[4096];
    for (int step = 0; step < 3000; step++) {
        for (int b = 0; b < 16; b++)
            rows[b] = (uint32_t)((step * 16 + b) % train->n);
        size_t k =
            sw_sparse_model_grad(m, sw_engine_params_ptr(e), train, rows, 16, idx, val, NULL);
        sw_engine_push_sparse(e, 0, idx, val, k, sw_engine_version(e), step, &r);
    }
    sw_eval ev;
    sw_sparse_model_evaluate(m, sw_engine_params_ptr(e), test, &ev);
    if (!(ev.accuracy > 0.85))
        fail_msg("test accuracy %.3f", ev.accuracy);
    sw_engine_free(e);
    sw_sparse_model_free(m);
    sw_sparse_free(train);
    sw_sparse_free(test);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sparse_path_equals_dense_path),
        cmocka_unit_test(bad_sparse_pushes_are_refused),
        cmocka_unit_test(generated_data_has_its_shape),
        cmocka_unit_test(libsvm_round_trip),
        cmocka_unit_test(dense_data_exports_its_nonzeros),
        cmocka_unit_test(logistic_gradient_matches_finite_differences),
        cmocka_unit_test(svm_learns_separable_text),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    sw_test_cleanup();
    return failed;
}
