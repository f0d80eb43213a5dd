/* Optimizers with state: specs, the update rules against a reference in double precision, dense
 * and sparse giving the same bits, and each optimizer minimising a quadratic. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "syncwise/err.h"
#include "syncwise/optim.h"

static void specs_round_trip(void **state)
{
    (void)state;
    const char *specs[] = {"sgd", "sgd:momentum=0.9", "sgd:momentum=0.5,nesterov=1", "adam",
                           "adam:beta1=0.8,beta2=0.99,eps=1e-06"};
    for (size_t i = 0; i < sizeof specs / sizeof *specs; i++) {
        sw_optim_params p, q;
        char text[SW_OPTIM_SPEC_LEN], again[SW_OPTIM_SPEC_LEN], err[SW_ERR_LEN];
        assert_int_equal(sw_optim_parse(&p, specs[i], err), 0);
        sw_optim_format(&p, text);
        assert_int_equal(sw_optim_parse(&q, text, err), 0);
        sw_optim_format(&q, again);
        assert_string_equal(text, again);
        /* field by field: the padding after nesterov holds whatever the stack held */
        assert_int_equal(p.kind, q.kind);
        assert_true(p.momentum == q.momentum && p.nesterov == q.nesterov);
        assert_true(p.beta1 == q.beta1 && p.beta2 == q.beta2 && p.eps == q.eps);
    }
    sw_optim_params p;
    char text[SW_OPTIM_SPEC_LEN];
    assert_int_equal(sw_optim_parse(&p, "adam", NULL), 0);
    sw_optim_format(&p, text);
    assert_string_equal(text, "adam:beta1=0.9,beta2=0.999,eps=1e-08"); /* shortest decimals */
    assert_int_equal(sw_optim_parse(&p, "sgd", NULL), 0);
    assert_false(sw_optim_stateful(&p));
    assert_int_equal(sw_optim_parse(&p, "sgd:momentum=0.9", NULL), 0);
    assert_int_equal(sw_optim_arrays(&p), 1);
    assert_int_equal(sw_optim_parse(&p, "adam", NULL), 0);
    assert_int_equal(sw_optim_arrays(&p), 2);
}

static void bad_specs_are_refused(void **state)
{
    (void)state;
    const char *bad[] = {"rmsprop", "sgd:momentum=1", "sgd:momentum=-0.1", "sgd:nesterov=1",
                         "sgd:beta1=0.9", "adam:beta1=1", "adam:eps=0", "adam:momentum=0.9"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        sw_optim_params p = sw_optim_default();
        char err[SW_ERR_LEN] = "";
        assert_true(sw_optim_parse(&p, bad[i], err) < 0);
        assert_true(strlen(err) > 0);
        assert_int_equal(p.kind, SW_OPTIM_SGD); /* untouched */
    }
}

/* Three steps of each rule in double precision, with a changing learning rate. */
static void follows_the_update_rules(void **state)
{
    (void)state;
    const char *specs[] = {"sgd:momentum=0.9", "sgd:momentum=0.9,nesterov=1", "adam"};
    const float g[3][2] = {{1.0f, -2.0f}, {0.5f, 0.25f}, {-1.0f, 3.0f}};
    const float lr[3] = {0.1f, 0.05f, 0.2f}, scale = 0.5f, wd = 0.01f;
    for (size_t s = 0; s < 3; s++) {
        sw_optim_params p;
        sw_optim o;
        assert_int_equal(sw_optim_parse(&p, specs[s], NULL), 0);
        assert_int_equal(sw_optim_init(&o, &p, 2, NULL), 0);
        float theta[2] = {1.0f, -1.0f};
        double th[2] = {1, -1}, m[2] = {0}, u[2] = {0};
        for (int t = 0; t < 3; t++) {
            sw_optim_step(&o, theta, g[t], scale, lr[t], wd);
            for (int j = 0; j < 2; j++) {
                double d = (double)g[t][j] * scale + (double)wd * th[j];
                if (p.kind == SW_OPTIM_ADAM) {
                    m[j] = 0.9 * m[j] + 0.1 * d;
                    u[j] = 0.999 * u[j] + 0.001 * d * d;
                    double mh = m[j] / (1 - pow(0.9, t + 1)), uh = u[j] / (1 - pow(0.999, t + 1));
                    th[j] -= lr[t] * mh / (sqrt(uh) + 1e-8);
                } else {
                    m[j] = 0.9 * m[j] + d;
                    th[j] -= lr[t] * (p.nesterov ? d + 0.9 * m[j] : m[j]);
                }
                assert_true(fabs(theta[j] - th[j]) < 1e-5);
            }
        }
        assert_int_equal(o.steps, 3);
        sw_optim_free(&o);
    }
}

/* The optimizer spec names, started on n coordinates and stepped once from theta = 0 at lr 0.01. */
static void first_step(sw_optim *o, const char *spec, size_t n, float *theta, const float *g)
{
    sw_optim_params p;
    assert_int_equal(sw_optim_parse(&p, spec, NULL), 0);
    assert_int_equal(sw_optim_init(o, &p, n, NULL), 0);
    for (size_t j = 0; j < n; j++)
        theta[j] = 0;
    sw_optim_step(o, theta, g, 1.0f, 0.01f, 0);
}

/* Adam's first step moves every coordinate by lr against its gradient's sign. */
static void adam_first_step_is_lr(void **state)
{
    (void)state;
    sw_optim o;
    float theta[3];
    const float g[3] = {1e-3f, -50.0f, 7.0f};
    first_step(&o, "adam", 3, theta, g);
    assert_true(fabsf(theta[0] + 0.01f) < 1e-6f);
    assert_true(fabsf(theta[1] - 0.01f) < 1e-6f);
    assert_true(fabsf(theta[2] + 0.01f) < 1e-6f);
    sw_optim_free(&o);
}

/* Adam's moments weigh the gradient by 1 - beta taken before rounding, as PyTorch does: with
 * beta2 = 0.999999 the float 1 - 0.999999f would be 1.3% off 1e-6. */
static void adam_weighs_by_the_exact_complement(void **state)
{
    (void)state;
    sw_optim o;
    float theta[1];
    const float g[1] = {1.0f};
    first_step(&o, "adam:beta1=0.9999,beta2=0.999999", 1, theta, g);
    assert_true(fabsf(o.m[0] - 1e-4f) < 1e-4f * 1e-6f);
    assert_true(fabsf(o.u[0] - 1e-6f) < 1e-6f * 1e-6f);
    char text[SW_OPTIM_SPEC_LEN];
    sw_optim_format(&o.p, text); /* the spec as given, not its float's digits */
    assert_string_equal(text, "adam:beta1=0.9999,beta2=0.999999,eps=1e-08");
    sw_optim_free(&o);
}

/* The stateful optimizers two paths are held to each other on. */
static const char *const two_path_specs[] = {"sgd:momentum=0.9", "sgd:momentum=0.7,nesterov=1",
                                             "adam"};

/* Two fresh optimizers of one spec over n coordinates, one per path. */
static void twins(const char *spec, size_t n, sw_optim *a, sw_optim *b)
{
    sw_optim_params p;
    assert_int_equal(sw_optim_parse(&p, spec, NULL), 0);
    assert_int_equal(sw_optim_init(a, &p, n, NULL), 0);
    assert_int_equal(sw_optim_init(b, &p, n, NULL), 0);
}

/* The two paths left the same bits in θ and in the optimizer's state. */
static void assert_same_bits(const sw_optim *a, const sw_optim *b, const float *ta,
                             const float *tb, size_t n)
{
    assert_memory_equal(ta, tb, n * sizeof *ta);
    assert_memory_equal(a->m, b->m, n * sizeof *ta);
    if (a->u)
        assert_memory_equal(a->u, b->u, n * sizeof *ta);
}

static void sparse_gives_the_dense_bits(void **state)
{
    (void)state;
    enum { N = 37 };
    for (size_t s = 0; s < 3; s++) {
        sw_optim a, b;
        twins(two_path_specs[s], N, &a, &b);
        float ta[N], tb[N];
        for (int j = 0; j < N; j++)
            ta[j] = tb[j] = sinf((float)j);
        for (int t = 0; t < 5; t++) {
            uint32_t idx[N];
            float val[N], dense[N] = {0};
            size_t nnz = 0;
            for (uint32_t j = (uint32_t)t; j < N; j += 3 + (uint32_t)t) {
                idx[nnz] = j;
                val[nnz] = dense[j] = cosf((float)(j * 7 + (uint32_t)t)) - (t == 2 ? 0.0f : 0.3f);
                nnz++;
            }
            sw_optim_step(&a, ta, dense, 0.25f, 0.1f, 0.001f);
            sw_optim_step_sparse(&b, tb, idx, val, nnz, 0.25f, 0.1f, 0.001f);
            assert_same_bits(&a, &b, ta, tb, N);
        }
        sw_optim_free(&a);
        sw_optim_free(&b);
    }
}

/* A step taken in ranges (as a shard's threads take it) gives the bits of one whole step. */
static void ranges_give_the_whole_step(void **state)
{
    (void)state;
    enum { N = 41 };
    const size_t cuts[] = {0, 1, 13, 14, 40, N};
    for (size_t s = 0; s < 3; s++) {
        sw_optim a, b;
        twins(two_path_specs[s], N, &a, &b);
        float ta[N], tb[N], g[N];
        for (int j = 0; j < N; j++)
            ta[j] = tb[j] = sinf((float)j);
        for (int t = 0; t < 4; t++) {
            for (int j = 0; j < N; j++)
                g[j] = cosf((float)(j * 5 + t)) - 0.2f;
            sw_optim_step(&a, ta, g, 0.5f, 0.05f, 0.001f);
            for (size_t c = 0; c + 1 < sizeof cuts / sizeof *cuts; c++) /* last range first */
                sw_optim_step_range(&b, b.steps + 1, tb, g, 0.5f, 0.05f, 0.001f, cuts[4 - c],
                                    cuts[5 - c]);
            b.steps++;
            assert_same_bits(&a, &b, ta, tb, N);
            assert_int_equal(a.steps, b.steps);
        }
        sw_optim_free(&a);
        sw_optim_free(&b);
    }
}

/* Each optimizer brings a badly conditioned quadratic near its minimum. */
static void each_minimises_a_quadratic(void **state)
{
    (void)state;
    const char *specs[] = {"sgd:momentum=0.9", "sgd:momentum=0.9,nesterov=1", "adam"};
    const float curv[2] = {1.0f, 20.0f};
    for (size_t s = 0; s < 3; s++) {
        sw_optim_params p;
        sw_optim o;
        assert_int_equal(sw_optim_parse(&p, specs[s], NULL), 0);
        assert_int_equal(sw_optim_init(&o, &p, 2, NULL), 0);
        float theta[2] = {3.0f, -2.0f};
        for (int t = 0; t < 2000; t++) {
            float g[2] = {curv[0] * theta[0], curv[1] * theta[1]};
            sw_optim_step(&o, theta, g, 1.0f, p.kind == SW_OPTIM_ADAM ? 0.01f : 0.02f, 0);
        }
        assert_true(fabsf(theta[0]) < 0.05f && fabsf(theta[1]) < 0.05f);
        sw_optim_free(&o);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(specs_round_trip),
        cmocka_unit_test(bad_specs_are_refused),
        cmocka_unit_test(follows_the_update_rules),
        cmocka_unit_test(adam_first_step_is_lr),
        cmocka_unit_test(adam_weighs_by_the_exact_complement),
        cmocka_unit_test(sparse_gives_the_dense_bits),
        cmocka_unit_test(ranges_give_the_whole_step),
        cmocka_unit_test(each_minimises_a_quadratic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
