/* The engine's update rule: a policy's own learning rate (lr=X on any spec), and the stateful
 * optimizers (momentum, Adam) on the mean gradient of each apply, dense and sparse alike. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "syncwise/engine.h"
#include "syncwise/err.h"
#include "syncwise/optim.h"

enum { N = 5 };
static const float init[N] = {1, -1, 0.5f, 2, 0};

static sw_engine *start(const char *policy, const char *optim, uint32_t workers)
{
    sw_engine_params p = sw_engine_default_params();
    p.n_params = N;
    p.init = init;
    p.lr = 0.1f;
    p.weight_decay = 0.01f;
    p.max_workers = workers;
    p.policy = policy;
    char err[SW_ERR_LEN];
    if (sw_optim_parse(&p.optim, optim, err))
        fail_msg("%s", err);
    sw_engine *e;
    if (sw_engine_new(&e, &p, err))
        fail_msg("%s", err);
    for (uint32_t w = 0; w < workers; w++) {
        sw_engine_result r;
        assert_int_equal(sw_engine_join(e, w, 0, &r), 0);
    }
    return e;
}

static void gradient(int step, uint32_t w, float g[N])
{
    for (int j = 0; j < N; j++)
        g[j] = (j % 2 ? 0.0f : cosf((float)(step * 3 + (int)w + j))) + (float)w * 0.125f;
}

static void policy_lr_overrides_the_runs_until_a_switch(void **state)
{
    (void)state;
    sw_engine *e = start("asp:lr=0.5", "sgd", 1);
    float g[N], want[N];
    gradient(0, 0, g);
    memcpy(want, init, sizeof want);
    sw_sgd_step(want, g, N, 0.5f, 0.01f);
    sw_engine_result r;
    assert_int_equal(sw_engine_push(e, 0, g, 0, 1, &r), 0);
    assert_memory_equal(sw_engine_params_ptr(e), want, sizeof want);
    char err[SW_ERR_LEN];
    assert_int_equal(sw_engine_switch_policy(e, "asp", 2, &r, err), 0);
    assert_int_equal(sw_engine_push(e, 0, g, 1, 3, &r), 0);
    sw_sgd_step(want, g, N, 0.1f, 0.01f); /* back at the run's rate */
    assert_memory_equal(sw_engine_params_ptr(e), want, sizeof want);
    assert_int_equal(sw_engine_switch_policy(e, "bsp:lr=x", 4, &r, err), SW_EINVAL);
    assert_int_equal(sw_engine_switch_policy(e, "bsp:lr=-1", 4, &r, err), SW_ERANGE);
    assert_non_null(strstr(err, "lr"));
    assert_int_equal(sw_engine_switch_policy(e, "bsp:l=1", 4, &r, err), SW_EINVAL);
    assert_non_null(strstr(err, "agg, lr")); /* the known keys name lr too */
    sw_engine_free(e);
}

/* Two workers under BSP with the mean: each apply is one optimizer step on the mean gradient. */
static void momentum_and_adam_step_on_the_mean_gradient(void **state)
{
    (void)state;
    const char *optims[] = {"sgd:momentum=0.9", "sgd:momentum=0.8,nesterov=1", "adam"};
    for (size_t i = 0; i < 3; i++) {
        sw_engine *e = start("bsp:agg=mean,lr=0.05", optims[i], 2);
        sw_optim_params p;
        sw_optim ref;
        assert_int_equal(sw_optim_parse(&p, optims[i], NULL), 0);
        assert_int_equal(sw_optim_init(&ref, &p, N, NULL), 0);
        float want[N];
        memcpy(want, init, sizeof want);
        for (int step = 0; step < 4; step++) {
            float g0[N], g1[N], sum[N];
            gradient(step, 0, g0);
            gradient(step, 1, g1);
            for (int j = 0; j < N; j++)
                sum[j] = g0[j] + g1[j];
            sw_engine_result r;
            assert_int_equal(sw_engine_push(e, 0, g0, (uint64_t)step, step + 0.5, &r), 0);
            assert_int_equal(sw_engine_push(e, 1, g1, (uint64_t)step, step + 0.6, &r), 0);
            assert_true(r.applied);
            sw_optim_step(&ref, want, sum, 0.5f, 0.05f, 0.01f);
            assert_memory_equal(sw_engine_params_ptr(e), want, sizeof want);
        }
        assert_true(sw_engine_optim(e)->steps == 4);
        sw_optim_free(&ref);
        sw_engine_free(e);
    }
}

/* A sparse push gives the bits of the same dense push, momentum's decay everywhere included. */
static void sparse_pushes_match_dense_ones(void **state)
{
    (void)state;
    const char *optims[] = {"sgd:momentum=0.9", "adam"};
    for (size_t i = 0; i < 2; i++) {
        sw_engine *dense = start("asp", optims[i], 1), *sparse = start("asp", optims[i], 1);
        for (int step = 0; step < 5; step++) {
            float g[N];
            gradient(step, 0, g);
            uint32_t idx[N];
            float val[N];
            size_t nnz = 0;
            for (uint32_t j = 0; j < N; j++)
                if (g[j] != 0.0f)
                    idx[nnz] = j, val[nnz++] = g[j];
            sw_engine_result r;
            assert_int_equal(sw_engine_push(dense, 0, g, (uint64_t)step, step + 1.0, &r), 0);
            assert_int_equal(
                sw_engine_push_sparse(sparse, 0, idx, val, nnz, (uint64_t)step, step + 1.0, &r),
                0);
            assert_memory_equal(sw_engine_params_ptr(dense), sw_engine_params_ptr(sparse),
                                N * sizeof(float));
        }
        sw_engine_free(dense);
        sw_engine_free(sparse);
    }
}

/* A resumed engine goes on from the state it is handed, as if never stopped. */
static void resumed_state_carries_on(void **state)
{
    (void)state;
    sw_engine *whole = start("asp", "sgd:momentum=0.9", 1);
    float g[N];
    sw_engine_result r;
    for (int step = 0; step < 3; step++) {
        gradient(step, 0, g);
        assert_int_equal(sw_engine_push(whole, 0, g, (uint64_t)step, step + 1.0, &r), 0);
    }
    sw_engine_params p = sw_engine_default_params();
    p.n_params = N;
    p.lr = 0.1f;
    p.weight_decay = 0.01f;
    p.policy = "asp";
    p.init = sw_engine_params_ptr(whole);
    p.init_version = 3;
    assert_int_equal(sw_optim_parse(&p.optim, "sgd:momentum=0.9", NULL), 0);
    p.optim_init = sw_engine_optim(whole);
    sw_engine *resumed;
    assert_int_equal(sw_engine_new(&resumed, &p, NULL), 0);
    assert_int_equal(sw_engine_join(resumed, 0, 3, &r), 0);
    gradient(3, 0, g);
    assert_int_equal(sw_engine_push(whole, 0, g, 3, 4, &r), 0);
    assert_int_equal(sw_engine_push(resumed, 0, g, 3, 4, &r), 0);
    assert_memory_equal(sw_engine_params_ptr(whole), sw_engine_params_ptr(resumed),
                        N * sizeof(float));
    sw_engine_free(resumed);
    /* state of another optimizer does not fit */
    assert_int_equal(sw_optim_parse(&p.optim, "adam", NULL), 0);
    char err[SW_ERR_LEN];
    assert_int_equal(sw_engine_new(&resumed, &p, err), SW_EMISMATCH);
    sw_engine_free(whole);
}

static void concurrent_applies_refuse_stateful_optimizers(void **state)
{
    (void)state;
    sw_engine_params p = sw_engine_default_params();
    p.n_params = N;
    p.policy = "asp";
    p.concurrent = true;
    assert_int_equal(sw_optim_parse(&p.optim, "sgd:momentum=0.9", NULL), 0);
    sw_engine *e;
    char err[SW_ERR_LEN];
    assert_int_equal(sw_engine_new(&e, &p, err), SW_EINVAL);
    assert_non_null(strstr(err, "plain SGD"));
    assert_int_equal(sw_optim_parse(&p.optim, "sgd", NULL), 0);
    assert_int_equal(sw_engine_new(&e, &p, err), 0);
    sw_engine_free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(policy_lr_overrides_the_runs_until_a_switch),
        cmocka_unit_test(momentum_and_adam_step_on_the_mean_gradient),
        cmocka_unit_test(sparse_pushes_match_dense_ones),
        cmocka_unit_test(resumed_state_carries_on),
        cmocka_unit_test(concurrent_applies_refuse_stateful_optimizers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
