/* Numerical checks of the models: analytic gradients against central finite differences for
 * every architecture and loss, and the im2col convolution and pooling against naive loops. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "model/layer.h"
#include "syncwise/model.h"

typedef struct problem {
    sw_model *m;
    float *params, *grad, *scratch, *x, *target;
    int32_t *label;
    sw_batch batch;
    size_t n_params;
} problem;

static void make_problem(problem *p, const char *spec, const uint32_t shape[3], sw_objective task,
                         uint32_t classes, size_t batch)
{
    memset(p, 0, sizeof *p);
    sw_model_desc d = {.objective = task, .n_classes = classes};
    strcpy(d.spec, spec);
    memcpy(d.in_shape, shape, sizeof d.in_shape);
    char err[256];
    if (sw_model_new(&p->m, &d, batch, err))
        fail_msg("%s: %s", spec, err);
    p->n_params = sw_model_n_params(p->m);
    p->params = malloc(p->n_params * sizeof(float));
    p->grad = malloc(p->n_params * sizeof(float));
    p->scratch = malloc(p->n_params * sizeof(float));
    sw_model_init_params(p->m, p->params, 5);
    size_t dim = (size_t)shape[0] * shape[1] * shape[2];
    p->x = malloc(batch * dim * sizeof(float));
    p->label = malloc(batch * sizeof(int32_t));
    size_t outputs = task == SW_REGRESS && classes > 1 ? classes : 1;
    p->target = malloc(batch * outputs * sizeof(float));
    sw_rng r;
    sw_rng_seed(&r, 77, 0);
    for (size_t i = 0; i < batch * dim; i++)
        p->x[i] = (float)sw_rng_normal(&r);
    for (size_t i = 0; i < batch; i++)
        p->label[i] = (int32_t)sw_rng_below(&r, classes ? classes : 1);
    for (size_t i = 0; i < batch * outputs; i++)
        p->target[i] = (float)sw_rng_normal(&r);
    /* Non-zero biases make the check see the bias gradients at a generic point. */
    for (size_t i = 0; i < p->n_params; i++)
        if (p->params[i] == 0.0f)
            p->params[i] = (float)(0.1 * sw_rng_normal(&r));
    p->batch = (sw_batch){.x = p->x, .n = batch,
                          .label = task == SW_CLASSIFY ? p->label : NULL,
                          .target = task == SW_REGRESS ? p->target : NULL};
}

static void free_problem(problem *p)
{
    sw_model_free(p->m);
    free(p->params);
    free(p->grad);
    free(p->scratch);
    free(p->x);
    free(p->label);
    free(p->target);
}

/* Compares the analytic gradient with central differences on up to 400 coordinates spread
 * through the whole parameter array. A coordinate agrees when |a - n| <= 1e-3 + 1e-2 max(|a|,|n|).
 * A few may disagree where a step crosses a ReLU or max-pool kink, so the check allows 2% of
 * them; a wrong gradient disagrees almost everywhere. Returns the share that disagree. */
static double gradient_disagreement(problem *p)
{
    sw_model_grad(p->m, p->params, &p->batch, p->grad);
    size_t stride = p->n_params > 400 ? p->n_params / 400 : 1, checked = 0, bad = 0;
    for (size_t i = 0; i < p->n_params; i += stride, checked++) {
        float keep = p->params[i];
        const float eps = 2e-4f; /* float32 noise stays near 1e-4, kinks are rarely crossed */
        p->params[i] = keep + eps;
        double up = sw_model_grad(p->m, p->params, &p->batch, p->scratch);
        p->params[i] = keep - eps;
        double down = sw_model_grad(p->m, p->params, &p->batch, p->scratch);
        p->params[i] = keep;
        double numeric = (up - down) / (2.0 * eps), analytic = p->grad[i];
        double scale = fabs(analytic) > fabs(numeric) ? fabs(analytic) : fabs(numeric);
        bad += fabs(analytic - numeric) > 1e-3 + 1e-2 * scale;
    }
    return (double)bad / (double)checked;
}

static void check(const char *spec, const uint32_t shape[3], sw_objective task, uint32_t classes)
{
    problem p;
    make_problem(&p, spec, shape, task, classes, 6);
    double share = gradient_disagreement(&p);
    if (!(share <= 0.02))
        fail_msg("%s: %.1f%% of gradient coordinates disagree with finite differences", spec,
                 100 * share);
    free_problem(&p);
}

static void softmax_gradient(void **state)
{
    (void)state;
    check("softmax", (uint32_t[3]){1, 1, 12}, SW_CLASSIFY, 4);
}

static void least_squares_gradient(void **state)
{
    (void)state;
    check("softmax", (uint32_t[3]){1, 1, 9}, SW_REGRESS, 0);
    check("mlp:h=1,u=7", (uint32_t[3]){1, 1, 9}, SW_REGRESS, 0);
}

/* The RLP Q-network's shape: several regression outputs, leaky ReLU, one width per layer. */
static void multi_output_leaky_gradient(void **state)
{
    (void)state;
    check("mlp:u=12/6,act=leaky", (uint32_t[3]){1, 1, 8}, SW_REGRESS, 3);
    check("mlp:h=2,u=9,act=leaky", (uint32_t[3]){1, 1, 8}, SW_CLASSIFY, 3);
}

static void mlp_gradient(void **state)
{
    (void)state;
    check("mlp:h=1,u=16", (uint32_t[3]){1, 1, 20}, SW_CLASSIFY, 5);
    check("mlp:h=3,u=8", (uint32_t[3]){1, 1, 10}, SW_CLASSIFY, 3);
    check("mlp:h=0", (uint32_t[3]){1, 1, 10}, SW_CLASSIFY, 3);
}

static void cnn_gradient(void **state)
{
    (void)state;
    /* 16x16x2: conv 12x12x3, pool 6x6, conv 2x2x4, pool 1x1, dense 8, dense 3. Two input
     * channels exercise the channels-last im2col runs. */
    check("cnn:c1=3,c2=4,f=8", (uint32_t[3]){16, 16, 2}, SW_CLASSIFY, 3);
    /* Odd sides: pooling drops the last row and column. */
    check("cnn:c1=2,c2=2,f=5", (uint32_t[3]){19, 17, 1}, SW_CLASSIFY, 4);
}

static void conv_matches_naive_loops(void **state)
{
    (void)state;
    const uint32_t H = 7, W = 6, C = 3, K = 3, F = 4, N = 2, OH = H - K + 1, OW = W - K + 1;
    sw__layer l = {.ops = &sw__conv_ops, .in = {H, W, C}, .out = {OH, OW, F}, .k = K,
                   .in_size = H * W * C, .out_size = OH * OW * F, .fan_in = K * K * C,
                   .n_weights = (size_t)F * K * K * C, .n_bias = F};
    float w[4 * 27 + 4], in[2 * 7 * 6 * 3], out[2 * 5 * 4 * 4], col[2 * 5 * 4 * 27];
    l.col = col;
    sw_rng r;
    sw_rng_seed(&r, 1, 2);
    for (size_t i = 0; i < sizeof w / sizeof *w; i++)
        w[i] = (float)sw_rng_normal(&r);
    for (size_t i = 0; i < sizeof in / sizeof *in; i++)
        in[i] = (float)sw_rng_normal(&r);
    l.ops->forward(&l, w, in, out, N);
    for (uint32_t n = 0; n < N; n++)
        for (uint32_t y = 0; y < OH; y++)
            for (uint32_t x = 0; x < OW; x++)
                for (uint32_t f = 0; f < F; f++) {
                    double s = w[l.n_weights + f];
                    /* Weight layout: filter f, then kernel row, kernel column, channel. */
                    for (uint32_t ky = 0; ky < K; ky++)
                        for (uint32_t kx = 0; kx < K; kx++)
                            for (uint32_t c = 0; c < C; c++)
                                s += (double)w[((f * K + ky) * K + kx) * C + c] *
                                     in[((n * H + y + ky) * W + x + kx) * C + c];
                    assert_float_equal(out[((n * OH + y) * OW + x) * F + f], s, 1e-4);
                }
}

static void maxpool_matches_naive_loops(void **state)
{
    (void)state;
    const uint32_t H = 5, W = 4, C = 2;
    sw__layer l = {.ops = &sw__maxpool_ops, .in = {H, W, C}, .out = {2, 2, C}, .k = 2,
                   .in_size = H * W * C, .out_size = 2 * 2 * C};
    float in[5 * 4 * 2], out[8];
    uint32_t argmax[8];
    l.argmax = argmax;
    for (int i = 0; i < 40; i++)
        in[i] = (float)((i * 37) % 41);
    l.ops->forward(&l, NULL, in, out, 1);
    for (uint32_t y = 0; y < 2; y++)
        for (uint32_t x = 0; x < 2; x++)
            for (uint32_t c = 0; c < C; c++) {
                float best = -1;
                for (uint32_t dy = 0; dy < 2; dy++)
                    for (uint32_t dx = 0; dx < 2; dx++) {
                        float v = in[((2 * y + dy) * W + 2 * x + dx) * C + c];
                        best = v > best ? v : best;
                    }
                assert_float_equal(out[(y * 2 + x) * C + c], best, 0);
            }
}

/* A window's gradient goes to one input: its largest, the first in scan order among equals
 * (so a run does not depend on how the pooling loops are ordered), in every example. */
static void maxpool_ties_go_to_the_first(void **state)
{
    (void)state;
    const uint32_t H = 4, W = 4, C = 2, N = 2;
    sw__layer l = {.ops = &sw__maxpool_ops,
                   .in = {H, W, C},
                   .out = {2, 2, C},
                   .k = 2,
                   .in_size = H * W * C,
                   .out_size = 2 * 2 * C};
    float in[2 * 4 * 4 * 2], out[16], dout[16], din[64];
    uint32_t argmax[16];
    l.argmax = argmax;
    for (uint32_t i = 0; i < 64; i++)
        in[i] = 1.0f; /* every window a tie: the first position wins */
    in[((0 * W + 1) * C) + 1] = in[((1 * W + 1) * C) + 1] = 5.0f; /* example 0, channel 1 */
    l.ops->forward(&l, NULL, in, out, N);
    for (uint32_t o = 0; o < 16; o++)
        dout[o] = (float)(o + 1);
    l.ops->backward(&l, NULL, in, out, dout, din, NULL, N);
    for (uint32_t e = 0; e < N; e++)
        for (uint32_t y = 0; y < H; y++)
            for (uint32_t x = 0; x < W; x++)
                for (uint32_t c = 0; c < C; c++) {
                    uint32_t o = ((e * 2 + y / 2) * 2 + x / 2) * C + c;
                    bool tied_max = e == 0 && c == 1 && y == 0 && x == 1;
                    bool first =
                        e == 0 && c == 1 && y < 2 && x < 2 ? tied_max : y % 2 == 0 && x % 2 == 0;
                    float want = first ? dout[o] : 0.0f;
                    assert_float_equal(din[((e * H + y) * W + x) * C + c], want, 0);
                    if (first)
                        assert_float_equal(out[o], tied_max ? 5.0f : 1.0f, 0);
                }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(softmax_gradient),
        cmocka_unit_test(least_squares_gradient),
        cmocka_unit_test(mlp_gradient),
        cmocka_unit_test(multi_output_leaky_gradient),
        cmocka_unit_test(cnn_gradient),
        cmocka_unit_test(conv_matches_naive_loops),
        cmocka_unit_test(maxpool_matches_naive_loops),
        cmocka_unit_test(maxpool_ties_go_to_the_first),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
