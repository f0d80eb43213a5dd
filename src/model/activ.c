/* Layers without parameters: ReLU, leaky ReLU and 2-D max pooling (window k, stride k,
 * channels-last). */
#include <stdbool.h>
#include <string.h>

#include "layer.h"

static void relu_forward(sw__layer *l, const float *w, const float *in, float *out, size_t n)
{
    (void)w;
    const size_t total = n * l->in_size;
    for (size_t i = 0; i < total; i++)
        out[i] = in[i] > 0.0f ? in[i] : 0.0f;
}

static void relu_backward(sw__layer *l, const float *w, const float *in, const float *out,
                          const float *dout, float *din, float *dw, size_t n)
{
    (void)w;
    (void)in;
    (void)dw;
    if (!din)
        return;
    const size_t total = n * l->in_size;
    for (size_t i = 0; i < total; i++)
        din[i] = out[i] > 0.0f ? dout[i] : 0.0f;
}

const sw__layer_ops sw__relu_ops = {
    .name = "relu",
    .forward = relu_forward,
    .backward = relu_backward,
};

/* Leaky ReLU with the usual slope of 0.01 below zero (the RLP paper's Q-network uses it). */
#define LEAK 0.01f

static void leaky_forward(sw__layer *l, const float *w, const float *in, float *out, size_t n)
{
    (void)w;
    const size_t total = n * l->in_size;
    for (size_t i = 0; i < total; i++)
        out[i] = in[i] > 0.0f ? in[i] : LEAK * in[i];
}

static void leaky_backward(sw__layer *l, const float *w, const float *in, const float *out,
                           const float *dout, float *din, float *dw, size_t n)
{
    (void)w;
    (void)out;
    (void)dw;
    if (!din)
        return;
    const size_t total = n * l->in_size;
    for (size_t i = 0; i < total; i++)
        din[i] = in[i] > 0.0f ? dout[i] : LEAK * dout[i];
}

const sw__layer_ops sw__leaky_ops = {
    .name = "leaky",
    .forward = leaky_forward,
    .backward = leaky_backward,
};

/* One pooling window of every channel (channels-last: a window position holds them side by
 * side): out[ch] is the largest value, argmax[ch] its input index within the batch. The first
 * position holds until a later one is strictly larger, so ties and NaNs keep the first. Locals
 * and selects, not branches: the data decide at random, and a mispredicted branch costs more
 * than the compare. */
static void pool_window(const sw__layer *l, const float *in, size_t corner, float *out,
                        uint32_t *argmax)
{
    const uint32_t k = l->k, c = l->in[2];
    const size_t row = (size_t)l->in[1] * c;
    for (uint32_t ch = 0; ch < c; ch++) {
        size_t best_at = corner + ch;
        float best = in[best_at];
        for (uint32_t dy = 0; dy < k; dy++)
            for (uint32_t dx = 0; dx < k; dx++) {
                const size_t at = corner + dy * row + (size_t)dx * c + ch;
                const float v = in[at];
                const bool larger = v > best;
                best_at = larger ? at : best_at;
                best = larger ? v : best;
            }
        out[ch] = best;
        argmax[ch] = (uint32_t)best_at;
    }
}

static void maxpool_forward(sw__layer *l, const float *w, const float *in, float *out, size_t n)
{
    (void)w;
    const uint32_t k = l->k, c = l->out[2], oh = l->out[0], ow = l->out[1];
    const size_t row = (size_t)l->in[1] * c;
    size_t o = 0;
    for (size_t e = 0; e < n; e++)
        for (uint32_t oy = 0; oy < oh; oy++)
            for (uint32_t ox = 0; ox < ow; ox++, o += c) {
                size_t corner = e * l->in_size + (size_t)oy * k * row + (size_t)ox * k * c;
                pool_window(l, in, corner, out + o, l->argmax + o);
            }
}

static void maxpool_backward(sw__layer *l, const float *w, const float *in, const float *out,
                             const float *dout, float *din, float *dw, size_t n)
{
    (void)w;
    (void)in;
    (void)out;
    (void)dw;
    if (!din)
        return;
    memset(din, 0, n * l->in_size * sizeof *din);
    const size_t total = n * l->out_size;
    for (size_t o = 0; o < total; o++)
        din[l->argmax[o]] += dout[o];
}

const sw__layer_ops sw__maxpool_ops = {
    .name = "maxpool",
    .forward = maxpool_forward,
    .backward = maxpool_backward,
};
