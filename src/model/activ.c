/* Layers without parameters: ReLU, leaky ReLU and 2-D max pooling (window k, stride k,
 * channels-last). */
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

/* The input index (within the batch) of the largest value in one pooling window. */
static uint32_t window_argmax(const sw__layer *l, const float *in, size_t base, uint32_t oy,
                              uint32_t ox, uint32_t ch)
{
    const uint32_t k = l->k, c = l->in[2], w_in = l->in[1];
    size_t best = base + ((size_t)oy * k * w_in + (size_t)ox * k) * c + ch;
    for (uint32_t dy = 0; dy < k; dy++)
        for (uint32_t dx = 0; dx < k; dx++) {
            size_t i = base + ((size_t)(oy * k + dy) * w_in + ox * k + dx) * c + ch;
            if (in[i] > in[best])
                best = i;
        }
    return (uint32_t)best;
}

static void maxpool_forward(sw__layer *l, const float *w, const float *in, float *out, size_t n)
{
    (void)w;
    const uint32_t oh = l->out[0], ow = l->out[1], c = l->out[2];
    size_t o = 0;
    for (size_t e = 0; e < n; e++)
        for (uint32_t oy = 0; oy < oh; oy++)
            for (uint32_t ox = 0; ox < ow; ox++)
                for (uint32_t ch = 0; ch < c; ch++, o++) {
                    uint32_t a = window_argmax(l, in, e * l->in_size, oy, ox, ch);
                    l->argmax[o] = a;
                    out[o] = in[a];
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
