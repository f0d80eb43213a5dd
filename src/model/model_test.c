/* Model behaviour: reproducible training, evaluation, convergence, and construction errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "syncwise/err.h"
#include "syncwise/model.h"
#include "syncwise/optim.h"

static sw_model *make(const char *spec, const sw_dataset *ds, size_t batch)
{
    sw_model_desc d = {.objective = ds->objective, .n_classes = ds->n_classes};
    strcpy(d.spec, spec);
    memcpy(d.in_shape, ds->shape, sizeof d.in_shape);
    sw_model *m;
    char err[SW_ERR_LEN];
    if (sw_model_new(&m, &d, batch, err))
        fail_msg("%s", err);
    return m;
}

/* Runs `steps` SGD steps from the seeded initialisation and returns the parameters. */
static float *train(const char *spec, const sw_dataset *ds, uint64_t seed, int steps, float lr)
{
    sw_model *m = make(spec, ds, 16);
    size_t n = sw_model_n_params(m);
    float *p = malloc(n * sizeof *p), *g = malloc(n * sizeof *g);
    sw_model_init_params(m, p, seed);
    sw_batcher *b;
    assert_int_equal(sw_batcher_new(&b, ds, 16, SW_BATCH_SHARD, 0, 1, seed, NULL), 0);
    for (int s = 0; s < steps; s++) {
        sw_batch bt;
        sw_batcher_next(b, &bt);
        sw_model_grad(m, p, &bt, g);
        sw_sgd_step(p, g, n, lr, 0);
    }
    sw_batcher_free(b);
    sw_model_free(m);
    free(g);
    return p;
}

static void same_seed_bit_identical_parameters(void **state)
{
    (void)state;
    sw_data d;
    assert_int_equal(sw_data_load(&d, "synthetic:task=logistic,d=20,n=500", 3, NULL), 0);
    sw_model *m = make("mlp:h=2,u=32", d.train, 16);
    size_t n = sw_model_n_params(m);
    sw_model_free(m);
    float *a = train("mlp:h=2,u=32", d.train, 7, 100, 0.05f);
    float *b = train("mlp:h=2,u=32", d.train, 7, 100, 0.05f);
    float *c = train("mlp:h=2,u=32", d.train, 8, 100, 0.05f);
    assert_memory_equal(a, b, n * sizeof *a);
    assert_memory_not_equal(a, c, n * sizeof *a);
    free(a);
    free(b);
    free(c);
    sw_data_free(&d);
}

static void least_squares_reaches_the_noise_floor(void **state)
{
    (void)state;
    sw_data d;
    assert_int_equal(sw_data_load(&d, "synthetic:task=lsq,d=10,n=2000,noise=0.1", 1, NULL), 0);
    sw_model *m = make("softmax", d.test, 256);
    float *p = train("softmax", d.train, 1, 2000, 0.05f);
    sw_eval e;
    sw_model_evaluate(m, p, d.test, &e);
    /* Half the squared noise is 0.005; the learned model must come close to it. */
    assert_true(e.loss < 0.0065);
    assert_true(e.loss > 0.003);
    assert_int_equal(e.n, d.test->n);
    free(p);
    sw_model_free(m);
    sw_data_free(&d);
}

static void evaluate_counts_across_chunks(void **state)
{
    (void)state;
    /* One-hot inputs and a scaled identity softmax layer classify perfectly. */
    sw_dataset *ds;
    uint32_t shape[3] = {1, 1, 3};
    assert_int_equal(sw_dataset_new(&ds, 10, shape, SW_CLASSIFY, 3, NULL), 0);
    for (int i = 0; i < 10; i++) {
        ds->label[i] = i % 3;
        ds->x[i * 3 + i % 3] = 1.0f;
    }
    sw_model *m = make("softmax", ds, 4); /* chunks of 4, 4 and 2 */
    float p[12] = {20, 0, 0, 0, 20, 0, 0, 0, 20, 0, 0, 0};
    sw_eval e;
    sw_model_evaluate(m, p, ds, &e);
    assert_float_equal(e.accuracy, 1.0, 0);
    assert_true(e.loss < 1e-6);
    ds->label[9] = (ds->label[9] + 1) % 3; /* one wrong label */
    sw_model_evaluate(m, p, ds, &e);
    assert_float_equal(e.accuracy, 0.9, 1e-12);
    assert_float_equal(e.loss, 20.0 / 10, 1e-4);
    sw_model_free(m);
    sw_dataset_free(ds);
}

/* A batch the model was not built for is the caller's bug: reported, never a crash. */
static void a_batch_that_does_not_fit_is_refused(void **state)
{
    (void)state;
    sw_dataset *ds;
    uint32_t shape[3] = {1, 1, 3};
    assert_int_equal(sw_dataset_new(&ds, 10, shape, SW_CLASSIFY, 3, NULL), 0);
    sw_model *m = make("softmax", ds, 4);
    float p[12] = {0}, g[12];
    for (int i = 0; i < 12; i++)
        g[i] = 7;
    sw_batch five = {.x = ds->x, .label = ds->label, .n = 5}, none = five;
    none.n = 0;
    assert_true(isnan(sw_model_grad(m, p, &five, g)));
    assert_true(isnan(sw_model_loss(m, p, &none)));
    assert_null(sw_model_forward(m, p, ds->x, 5));
    for (int i = 0; i < 12; i++)
        assert_float_equal(g[i], 7, 0); /* untouched */
    five.n = 4; /* what fits still works */
    assert_false(isnan(sw_model_grad(m, p, &five, g)));
    sw_model_free(m);
    sw_dataset_free(ds);
}

static void construction_errors(void **state)
{
    (void)state;
    sw_model *m = (sw_model *)1;
    char err[SW_ERR_LEN];
    sw_model_desc d = {.spec = "mlp:h=1,u=8", .in_shape = {1, 1, 4}, .objective = SW_CLASSIFY,
                       .n_classes = 3};
    strcpy(d.spec, "resnet");
    assert_int_equal(sw_model_new(&m, &d, 8, err), SW_ENOTFOUND);
    assert_null(m);
    assert_non_null(strstr(err, "softmax, mlp, cnn"));
    strcpy(d.spec, "mlp:units=3");
    assert_int_equal(sw_model_new(&m, &d, 8, err), SW_EINVAL);
    assert_non_null(strstr(err, "'units'"));
    strcpy(d.spec, "cnn");
    assert_int_equal(sw_model_new(&m, &d, 8, err), SW_EINVAL);
    assert_non_null(strstr(err, "too small"));
    strcpy(d.spec, "mlp:h=3,u=8/4");
    assert_int_equal(sw_model_new(&m, &d, 8, err), SW_EINVAL);
    assert_non_null(strstr(err, "lists 2 widths"));
    strcpy(d.spec, "mlp:u=8/x");
    assert_int_equal(sw_model_new(&m, &d, 8, err), SW_EINVAL);
    strcpy(d.spec, "mlp:u=8,act=tanh");
    assert_int_equal(sw_model_new(&m, &d, 8, err), SW_EINVAL);
    assert_non_null(strstr(err, "act=tanh"));
    strcpy(d.spec, "softmax");
    d.n_classes = 1;
    assert_int_equal(sw_model_new(&m, &d, 8, err), SW_EINVAL);
    d.n_classes = 3;
    assert_int_equal(sw_model_new(&m, &d, 0, err), SW_EINVAL);
    d.in_shape[2] = 0;
    assert_int_equal(sw_model_new(&m, &d, 8, err), SW_EINVAL);
}

static void canonical_spec_and_sizes(void **state)
{
    (void)state;
    sw_model_desc d = {.spec = "mlp", .in_shape = {28, 28, 1}, .objective = SW_CLASSIFY,
                       .n_classes = 10};
    sw_model *m;
    assert_int_equal(sw_model_new(&m, &d, 16, NULL), 0);
    assert_string_equal(sw_model_get_desc(m)->spec, "mlp:h=1,u=256");
    assert_int_equal(sw_model_n_params(m), 784 * 256 + 256 + 256 * 10 + 10);
    sw_model_free(m);
    strcpy(d.spec, "cnn");
    assert_int_equal(sw_model_new(&m, &d, 16, NULL), 0);
    assert_string_equal(sw_model_get_desc(m)->spec, "cnn:c1=20,c2=50,f=500");
    /* 5x5x1x20+20, 5x5x20x50+50, 4*4*50*500+500, 500*10+10 */
    assert_int_equal(sw_model_n_params(m), 520 + 25050 + 400500 + 5010);
    sw_model_free(m);
    /* The RLP Q-network: 40 features, 64 and 32 leaky units, 3 regression outputs. */
    sw_model_desc q = {.spec = "mlp:u=64/32,act=leaky", .in_shape = {1, 1, 40},
                       .objective = SW_REGRESS, .n_classes = 3};
    assert_int_equal(sw_model_new(&m, &q, 4, NULL), 0);
    assert_string_equal(sw_model_get_desc(m)->spec, "mlp:h=2,u=64/32,act=leaky");
    assert_int_equal(sw_model_n_params(m), 40 * 64 + 64 + 64 * 32 + 32 + 32 * 3 + 3);
    assert_int_equal(sw_model_n_outputs(m), 3);
    sw_model_free(m);
    strcpy(q.spec, "mlp:h=2,u=5,act=leaky");
    assert_int_equal(sw_model_new(&m, &q, 4, NULL), 0);
    assert_string_equal(sw_model_get_desc(m)->spec, "mlp:h=2,u=5,act=leaky");
    sw_model_free(m);
}

static void data_fit_is_checked(void **state)
{
    (void)state;
    sw_data d;
    assert_int_equal(sw_data_load(&d, "synthetic:task=lsq,d=5,n=100", 1, NULL), 0);
    sw_model_desc desc = {.spec = "softmax", .in_shape = {1, 1, 6}, .objective = SW_REGRESS};
    sw_model *m;
    char err[SW_ERR_LEN];
    assert_int_equal(sw_model_new(&m, &desc, 4, NULL), 0);
    assert_int_equal(sw_model_check_data(m, d.train, err), SW_EMISMATCH);
    sw_model_free(m);
    desc.in_shape[2] = 5;
    desc.objective = SW_CLASSIFY;
    desc.n_classes = 2;
    assert_int_equal(sw_model_new(&m, &desc, 4, NULL), 0);
    assert_int_equal(sw_model_check_data(m, d.train, err), SW_EMISMATCH);
    assert_non_null(strstr(err, "regression"));
    sw_model_free(m);
    /* The same floats laid out as an image: a dense model reads them alike, a convolution not. */
    desc = (sw_model_desc){.spec = "mlp:h=1,u=4", .in_shape = {5, 1, 1}, .objective = SW_REGRESS};
    assert_int_equal(sw_model_new(&m, &desc, 4, NULL), 0);
    assert_int_equal(sw_model_check_data(m, d.train, err), 0);
    sw_model_free(m);
    sw_data_free(&d);
    assert_int_equal(sw_data_load(&d, "synthetic:task=lsq,d=784,n=50", 1, NULL), 0);
    desc = (sw_model_desc){.spec = "cnn:c1=2,c2=2,f=4", .in_shape = {28, 28, 1},
                           .objective = SW_REGRESS};
    assert_int_equal(sw_model_new(&m, &desc, 4, err), 0);
    assert_int_equal(sw_model_check_data(m, d.train, err), SW_EMISMATCH);
    sw_model_free(m);
    sw_data_free(&d);
}

static void sgd_step_with_weight_decay(void **state)
{
    (void)state;
    float p[3] = {1, -2, 4}, g[3] = {0.5f, 0.5f, -1};
    sw_sgd_step(p, g, 3, 0.1f, 0.5f);
    /* p - 0.1 * (g + 0.5 p) */
    assert_float_equal(p[0], 1 - 0.1f * (0.5f + 0.5f), 1e-6);
    assert_float_equal(p[1], -2 - 0.1f * (0.5f - 1.0f), 1e-6);
    assert_float_equal(p[2], 4 - 0.1f * (-1 + 2), 1e-6);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(same_seed_bit_identical_parameters),
        cmocka_unit_test(least_squares_reaches_the_noise_floor),
        cmocka_unit_test(evaluate_counts_across_chunks),
        cmocka_unit_test(a_batch_that_does_not_fit_is_refused),
        cmocka_unit_test(construction_errors),
        cmocka_unit_test(canonical_spec_and_sizes),
        cmocka_unit_test(data_fit_is_checked),
        cmocka_unit_test(sgd_step_with_weight_decay),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
