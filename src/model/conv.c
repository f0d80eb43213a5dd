/* The 2-D convolution layer: k x k kernels, stride 1, no padding, channels-last.
 *
 * im2col turns each output position into one row of k*k*c inputs; in channels-last order the
 * k*c values of one kernel row are contiguous in the input, so a row is built from k memcpy
 * calls. The convolution is then exactly a dense layer over those rows (one GEMM for the whole
 * batch), and the input gradient is the dense input gradient folded back (col2im).
 */
#include <string.h>

#include "layer.h"

static void im2col(const sw__layer *l, const float *in, size_t n)
{
    const uint32_t k = l->k, c = l->in[2], w_in = l->in[1], oh = l->out[0], ow = l->out[1];
    const size_t row_len = (size_t)k * k * c, run = (size_t)k * c;
    float *row = l->col;
    for (size_t e = 0; e < n; e++) {
        const float *img = in + e * l->in_size;
        for (uint32_t oy = 0; oy < oh; oy++)
            for (uint32_t ox = 0; ox < ow; ox++, row += row_len)
                for (uint32_t ky = 0; ky < k; ky++)
                    memcpy(row + ky * run, img + ((size_t)(oy + ky) * w_in + ox) * c,
                           run * sizeof *row);
    }
}

static void col2im(const sw__layer *l, const float *dcol, float *din, size_t n)
{
    const uint32_t k = l->k, c = l->in[2], w_in = l->in[1], oh = l->out[0], ow = l->out[1];
    const size_t row_len = (size_t)k * k * c, run = (size_t)k * c;
    memset(din, 0, n * l->in_size * sizeof *din);
    const float *row = dcol;
    for (size_t e = 0; e < n; e++) {
        float *img = din + e * l->in_size;
        for (uint32_t oy = 0; oy < oh; oy++)
            for (uint32_t ox = 0; ox < ow; ox++, row += row_len)
                for (uint32_t ky = 0; ky < k; ky++) {
                    float *dst = img + ((size_t)(oy + ky) * w_in + ox) * c;
                    const float *src = row + ky * run;
                    for (size_t j = 0; j < run; j++)
                        dst[j] += src[j];
                }
    }
}

static void conv_forward(sw__layer *l, const float *w, const float *in, float *out, size_t n)
{
    const size_t rows = n * l->out[0] * l->out[1];
    im2col(l, in, n);
    sw__dense_fwd(w, w + l->n_weights, l->col, out, rows, l->fan_in, l->out[2]);
}

static void conv_backward(sw__layer *l, const float *w, const float *in, const float *out,
                          const float *dout, float *din, float *dw, size_t n)
{
    (void)in;
    (void)out;
    const size_t rows = n * l->out[0] * l->out[1];
    /* The columns of the forward pass are still in l->col; the column gradient overwrites them
     * after the weight gradient has used them. */
    sw__dense_bwd(w, l->col, dout, din ? l->col : NULL, dw, dw + l->n_weights, rows, l->fan_in,
                  l->out[2]);
    if (din)
        col2im(l, l->col, din, n);
}

const sw__layer_ops sw__conv_ops = {
    .name = "conv",
    .forward = conv_forward,
    .backward = conv_backward,
};
