/* The task: one set of calls on a dense and a sparse model. A gradient computed again without
 * moving on is the same batch's; a sparse gradient names exactly the weights its batch touches and reads nothing
 * else; the probe and the training sample are fixed; the wrong kind of data is refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "syncwise/err.h"
#include "syncwise/task.h"

#define DENSE_DATA "synthetic:task=logistic,d=12,n=400,test=50,val=50"
#define SPARSE_DATA "sparse:n=400,test=50,dim=300,density=0.02"

typedef struct fixture {
    sw_task_data data;
    sw_task *task;
    sw_learner *learner;
    sw_grad grad;
    float *params;
} fixture;

static void open_fixture(fixture *f, const char *model, const char *data, uint32_t probe)
{
    char err[SW_ERR_LEN];
    memset(f, 0, sizeof *f);
    if (sw_task_data_load(&f->data, model, data, 5, err) ||
        sw_task_new(&f->task, model, &f->data, 64, probe, err))
        fail_msg("%s on %s: %s", model, data, err);
    sw_learner_params lp = {.batch = 8, .mode = SW_BATCH_SHARD, .rank = 1, .ranks = 3, .seed = 9};
    if (sw_learner_new(&f->learner, f->task, &lp, err) || sw_grad_alloc(&f->grad, f->learner, err))
        fail_msg("%s", err);
    size_t n = sw_task_n_params(f->task);
    f->params = malloc(n * sizeof *f->params);
    sw_task_init_params(f->task, f->params, 3);
    for (size_t j = 0; j < n; j++) /* away from the linear models' zero start */
        f->params[j] += 0.01f * (float)((j * 7919) % 13) - 0.06f;
}

static void close_fixture(fixture *f)
{
    sw_grad_free(&f->grad);
    sw_learner_free(f->learner);
    sw_task_free(f->task);
    sw_task_data_free(&f->data);
    free(f->params);
}

/* The gradient's values as a dense vector of n (pairs scattered, the rest 0). */
static float *as_dense(const fixture *f)
{
    size_t n = sw_task_n_params(f->task);
    float *g = calloc(n, sizeof *g);
    if (f->grad.dense)
        memcpy(g, f->grad.dense, n * sizeof *g);
    else
        for (size_t k = 0; k < f->grad.nnz; k++)
            g[f->grad.idx[k]] = f->grad.val[k];
    return g;
}

static void same_batch_same_gradient(const char *model, const char *data)
{
    fixture f;
    open_fixture(&f, model, data, 16);
    size_t n = sw_task_n_params(f.task);
    sw_learner_next(f.learner);
    double loss = sw_learner_grad(f.learner, f.params, &f.grad);
    assert_true(isfinite(loss) && loss > 0);
    float *first = as_dense(&f);
    sw_learner_grad(f.learner, f.params, &f.grad); /* no next: the batch a refusal recomputes */
    float *again = as_dense(&f);
    assert_memory_equal(first, again, n * sizeof *first);
    sw_learner_next(f.learner);
    sw_learner_grad(f.learner, f.params, &f.grad);
    float *other = as_dense(&f);
    assert_memory_not_equal(first, other, n * sizeof *first);
    free(first);
    free(again);
    free(other);
    close_fixture(&f);
}

static void a_batch_is_computed_until_the_next(void **state)
{
    (void)state;
    same_batch_same_gradient("mlp:h=1,u=8", DENSE_DATA);
    same_batch_same_gradient("svm", SPARSE_DATA);
    same_batch_same_gradient("logistic", SPARSE_DATA);
}

static void a_dense_gradient_reads_every_weight(void **state)
{
    (void)state;
    fixture f;
    open_fixture(&f, "softmax", DENSE_DATA, 16);
    assert_false(sw_task_is_sparse(f.task));
    sw_learner_next(f.learner);
    size_t n;
    assert_null(sw_learner_touched(f.learner, &n));
    assert_int_equal(n, sw_task_n_params(f.task));
    sw_learner_grad(f.learner, f.params, &f.grad);
    assert_int_equal(f.grad.nnz, n);
    close_fixture(&f);
}

/* What a sparse worker pulls is all its gradient reads: weights elsewhere may be anything. */
static void a_sparse_gradient_reads_only_what_it_touches(void **state)
{
    (void)state;
    fixture f;
    open_fixture(&f, "svm:lambda=0.01", SPARSE_DATA, 16);
    assert_true(sw_task_is_sparse(f.task));
    size_t n = sw_task_n_params(f.task), k;
    for (int step = 0; step < 20; step++) {
        sw_learner_next(f.learner);
        const uint32_t *idx = sw_learner_touched(f.learner, &k);
        assert_non_null(idx);
        assert_true(k >= 1 && k <= n);
        assert_int_equal(idx[k - 1], n - 1); /* the bias, last */
        for (size_t i = 1; i < k; i++)
            assert_true(idx[i - 1] < idx[i]);
        sw_learner_grad(f.learner, f.params, &f.grad);
        assert_int_equal(f.grad.nnz, k);
        assert_memory_equal(f.grad.idx, idx, k * sizeof *idx);
        float *before = as_dense(&f);
        float *garbled = malloc(n * sizeof *garbled);
        for (size_t j = 0; j < n; j++)
            garbled[j] = NAN;
        for (size_t i = 0; i < k; i++)
            garbled[idx[i]] = f.params[idx[i]];
        sw_learner_grad(f.learner, garbled, &f.grad);
        float *after = as_dense(&f);
        assert_memory_equal(before, after, n * sizeof *before);
        free(before);
        free(after);
        free(garbled);
    }
    close_fixture(&f);
}

static void probes_are_fixed_and_optional(void **state)
{
    (void)state;
    const char *models[] = {"softmax", "logistic"}, *data[] = {DENSE_DATA, SPARSE_DATA};
    for (int m = 0; m < 2; m++) {
        fixture f;
        open_fixture(&f, models[m], data[m], 16);
        assert_true(sw_task_has_probe(f.task));
        double p1 = sw_task_probe_loss(f.task, f.params);
        double t1 = sw_task_train_loss(f.task, f.params);
        sw_learner_next(f.learner);
        sw_learner_grad(f.learner, f.params, &f.grad); /* a gradient moves no probe */
        assert_true(isfinite(p1) && isfinite(t1));
        assert_true(p1 == sw_task_probe_loss(f.task, f.params));
        assert_true(t1 == sw_task_train_loss(f.task, f.params));
        sw_eval e;
        sw_task_evaluate(f.task, f.params, &e);
        assert_int_equal(e.n, 50);
        close_fixture(&f);
        open_fixture(&f, models[m], data[m], 0);
        assert_false(sw_task_has_probe(f.task));
        assert_true(isnan(sw_task_probe_loss(f.task, f.params)));
        close_fixture(&f);
    }
}

static void the_wrong_kind_of_data_is_refused(void **state)
{
    (void)state;
    sw_task_data dense, sparse;
    char err[SW_ERR_LEN];
    assert_int_equal(sw_task_data_load(&dense, "softmax", DENSE_DATA, 1, err), 0);
    assert_int_equal(sw_task_data_load(&sparse, "svm", SPARSE_DATA, 1, err), 0);
    sw_task *t = NULL;
    assert_int_equal(sw_task_new(&t, "svm", &dense, 16, 0, err), SW_EINVAL);
    assert_non_null(strstr(err, "sparse"));
    assert_int_equal(sw_task_new(&t, "mlp", &sparse, 16, 0, err), SW_EINVAL);
    assert_non_null(strstr(err, "dense"));
    assert_null(t);
    assert_int_equal(sw_task_new(&t, "svm", &sparse, 16, 0, err), 0);
    sw_learner *l = NULL;
    sw_learner_params too_big = {.batch = 17, .ranks = 1};
    assert_int_equal(sw_learner_new(&l, t, &too_big, err), SW_EINVAL);
    assert_null(l);
    sw_task_free(t);
    sw_task_data_free(&dense);
    sw_task_data_free(&sparse);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_batch_is_computed_until_the_next),
        cmocka_unit_test(a_dense_gradient_reads_every_weight),
        cmocka_unit_test(a_sparse_gradient_reads_only_what_it_touches),
        cmocka_unit_test(probes_are_fixed_and_optional),
        cmocka_unit_test(the_wrong_kind_of_data_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
