/* Layers: the building blocks of every architecture, behind one small table of operations.
 *
 * Activations are channels-last (example, row, column, channel), so a convolution's im2col is a
 * handful of memcpy calls and the convolution itself is the dense layer's GEMM applied to the
 * columns. A layer's parameters are its weights, row-major [outputs x inputs], then its biases.
 */
#ifndef SW_LAYER_H
#define SW_LAYER_H

#include <stddef.h>
#include <stdint.h>

typedef struct sw__layer sw__layer;

typedef struct sw__layer_ops {
    const char *name;
    /* out = f(in) for n examples; w is this layer's slice of the parameters (may be unused). */
    void (*forward)(sw__layer *l, const float *w, const float *in, float *out, size_t n);
    /* From dout (the loss gradient at out) writes dw (overwritten; unused for layers without
     * parameters) and, when din is not NULL, the gradient at in. in and out hold the values of
     * the forward pass just made. din never aliases in, out or dout. */
    void (*backward)(sw__layer *l, const float *w, const float *in, const float *out,
                     const float *dout, float *din, float *dw, size_t n);
} sw__layer_ops;

struct sw__layer {
    const sw__layer_ops *ops;
    uint32_t in[3], out[3];   /* height, width, channels */
    size_t in_size, out_size; /* floats per example */
    size_t n_weights, n_bias, param_off;
    size_t fan_in;
    int relu_follows; /* chooses He (ReLU next) or Glorot initialisation */
    uint32_t k;       /* convolution kernel or pooling window side */
    float *col;       /* convolution: im2col rows for max_batch examples */
    uint32_t *argmax; /* pooling: the input index each output came from */
};

extern const sw__layer_ops sw__dense_ops, sw__conv_ops, sw__relu_ops, sw__leaky_ops,
    sw__maxpool_ops;

/* Dense algebra shared by the dense and convolution layers, on `rows` input rows of `in` floats:
 * Y = X W^T + b, and its gradients. dX may be NULL; it may alias X (dW is computed first). */
void sw__dense_fwd(const float *w, const float *b, const float *x, float *y, size_t rows,
                   size_t in, size_t out);
void sw__dense_bwd(const float *w, const float *x, const float *dy, float *dx, float *dw,
                   float *db, size_t rows, size_t in, size_t out);

/* Loss heads: mean loss over n rows; write d(loss)/d(output) into dout when not NULL and count
 * correct predictions into *correct when not NULL. */
double sw__xent(const float *logits, const int32_t *label, size_t n, size_t classes, float *dout,
                size_t *correct);
double sw__mse(const float *y, const float *target, size_t n, size_t outputs, float *dout);

#endif
