/* SGD through BLAS level 1: a scale for weight decay, then an axpy. */
#include "syncwise/optim.h"

#include <cblas.h>

void sw_sgd_step(float *params, const float *grad, size_t n, float lr, float weight_decay)
{
    if (weight_decay != 0.0f)
        cblas_sscal((int)n, 1.0f - lr * weight_decay, params, 1);
    cblas_saxpy((int)n, -lr, grad, 1, params, 1);
}
