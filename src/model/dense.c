/* The dense (fully connected) layer: one GEMM forward, two backward, through CBLAS. */
#include <cblas.h>
#include <string.h>

#include "layer.h"

/* Every row of y starts as the bias: the first row, then copies of the rows filled so far, so
 * that a convolution's many short rows (a few floats each) cost a few long copies. */
static void fill_rows(float *y, const float *b, size_t rows, size_t out)
{
    if (rows == 0)
        return;
    memcpy(y, b, out * sizeof *y);
    for (size_t done = 1; done < rows;) {
        size_t more = done < rows - done ? done : rows - done;
        memcpy(y + done * out, y, more * out * sizeof *y);
        done += more;
    }
}

void sw__dense_fwd(const float *w, const float *b, const float *x, float *y, size_t rows,
                   size_t in, size_t out)
{
    fill_rows(y, b, rows, out);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)rows, (int)out, (int)in, 1.0f, x,
                (int)in, w, (int)in, 1.0f, y, (int)out);
}

void sw__dense_bwd(const float *w, const float *x, const float *dy, float *dx, float *dw,
                   float *db, size_t rows, size_t in, size_t out)
{
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)out, (int)in, (int)rows, 1.0f, dy,
                (int)out, x, (int)in, 0.0f, dw, (int)in);
    memset(db, 0, out * sizeof *db);
    for (size_t r = 0; r < rows; r++) {
        const float *d = dy + r * out;
        for (size_t j = 0; j < out; j++)
            db[j] += d[j];
    }
    /* The input gradient comes last so that dx may reuse x's memory. */
    if (dx)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)rows, (int)in, (int)out, 1.0f,
                    dy, (int)out, w, (int)in, 0.0f, dx, (int)in);
}

static void dense_forward(sw__layer *l, const float *w, const float *in, float *out, size_t n)
{
    sw__dense_fwd(w, w + l->n_weights, in, out, n, l->in_size, l->out_size);
}

static void dense_backward(sw__layer *l, const float *w, const float *in, const float *out,
                           const float *dout, float *din, float *dw, size_t n)
{
    (void)out;
    sw__dense_bwd(w, in, dout, din, dw, dw + l->n_weights, n, l->in_size, l->out_size);
}

const sw__layer_ops sw__dense_ops = {
    .name = "dense",
    .forward = dense_forward,
    .backward = dense_backward,
};
