/* The optimizer: plain SGD with optional L2 weight decay, applied in place to a flat parameter
 * array. The engine scales the learning rate per apply (staleness modulation, backup-worker
 * rules); this module only does the arithmetic. */
#ifndef SYNCWISE_OPTIM_H
#define SYNCWISE_OPTIM_H

#include <stddef.h>

/* params <- params - lr * (grad + weight_decay * params), over n floats. */
void sw_sgd_step(float *params, const float *grad, size_t n, float lr, float weight_decay);

#endif
