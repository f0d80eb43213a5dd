/* Models: an architecture that maps a flat parameter array and a mini-batch to a loss and a
 * gradient.
 *
 * A model object holds the architecture and the scratch memory for one forward and backward pass
 * of up to max_batch examples, all allocated at creation: computing a gradient allocates nothing.
 * The parameters are NOT inside the model: they live in one contiguous float array that the
 * caller owns (the server pushes and pulls it whole), so one model object serves any number of
 * parameter vectors, such as the stale copies of simulated workers. A model object is not safe to
 * use from two threads at once; create one per thread.
 *
 * Architectures, chosen by a spec string (see sw_model_archs):
 *   softmax                  softmax (multinomial logistic) regression; on a regression task,
 *                            least squares linear regression
 *   mlp:h=H,u=U              H hidden layers of U ReLU units (h=0 is softmax); u=64/32 gives
 *                            one width per layer, act=leaky uses leaky ReLU (slope 0.01)
 *   cnn:c1=20,c2=50,f=500    5x5 convolution (c1 filters), ReLU, 2x2 max pool, 5x5 convolution
 *                            (c2), ReLU, 2x2 max pool, dense f ReLU, dense output (the small CNN
 *                            of the DBW paper; its sizes are not given there, these are LeNet's)
 * The loss is softmax cross-entropy on classification tasks and half the squared error (summed
 * over the outputs) on regression tasks, averaged over the batch. A regression model has
 * n_classes outputs (0 means 1) and its batches n * outputs targets, row by row.
 */
#ifndef SYNCWISE_MODEL_H
#define SYNCWISE_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "syncwise/data.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SW_MODEL_SPEC_LEN 128

typedef struct sw_model sw_model;

/* Everything needed to rebuild a model: stored in checkpoints. */
typedef struct sw_model_desc {
    char spec[SW_MODEL_SPEC_LEN]; /* canonical: every parameter written out */
    uint32_t in_shape[3];         /* height, width, channels */
    sw_objective objective;
    uint32_t n_classes; /* classes; for regression, outputs (0 or 1: one) */
} sw_model_desc;

/* Builds the model named by spec for inputs of in_shape. Fails with SW_EINVAL and a message on an
 * unknown architecture or parameter, or an input too small for the architecture. */
int sw_model_new(sw_model **out, const sw_model_desc *desc, size_t max_batch, char *err);
void sw_model_free(sw_model *m);

/* A spec's own faults, found before any data is read: an unknown architecture or key, a value
 * out of its range. What depends on the data (an input too small for a convolution) shows when
 * the model is built for them. */
int sw_model_spec_check(const char *spec, char *err);

/* Builds the model named by spec for the inputs, task and classes of a data set. */
int sw_model_new_for_data(sw_model **out, const char *spec, const sw_dataset *ds,
                          size_t max_batch, char *err);

/* The description with the canonical spec, to be stored beside parameters. */
const sw_model_desc *sw_model_get_desc(const sw_model *m);
size_t sw_model_n_params(const sw_model *m);
size_t sw_model_max_batch(const sw_model *m);
size_t sw_model_n_outputs(const sw_model *m);
uint32_t sw_model_desc_outputs(const sw_model_desc *d);

/* Fills params (sw_model_n_params floats) with a seeded initialisation: He-uniform weights for
 * layers followed by ReLU, Glorot-uniform otherwise, zero biases. */
void sw_model_init_params(const sw_model *m, float *params, uint64_t seed);

/* Computes the mean loss over the batch at params and writes its gradient into grad (overwritten,
 * sw_model_n_params floats). A batch of 0 or more than max_batch examples is a caller's bug: it
 * is logged, grad is left as it was and the loss is NaN. */
float sw_model_grad(sw_model *m, const float *params, const sw_batch *batch, float *grad);

/* The outputs (logits or predictions) for n <= max_batch examples at x: n * outputs floats,
 * owned by the model and valid until its next call; NULL (logged) for n of 0 or over max_batch. */
const float *sw_model_forward(sw_model *m, const float *params, const float *x, size_t n);

/* The mean loss over the batch at params, without a gradient (NaN for a batch that does not
 * fit, as sw_model_grad). */
float sw_model_loss(sw_model *m, const float *params, const sw_batch *batch);

/* Loss and accuracy of params on a whole data set, in chunks of max_batch. */
typedef struct sw_eval {
    double loss;     /* mean loss */
    double accuracy; /* share of correct predictions; 0 for regression */
    size_t n;
} sw_eval;
void sw_model_evaluate(sw_model *m, const float *params, const sw_dataset *ds, sw_eval *out);

/* Checks that a data set fits the model (shape, task, classes); fills err and fails if not. */
int sw_model_check_data(const sw_model *m, const sw_dataset *ds, char *err);

typedef struct sw_model_arch_info {
    const char *name;
    const char *help;
} sw_model_arch_info;
/* The architectures with a line of help each, NULL-terminated. */
extern const sw_model_arch_info sw_model_archs[];

#ifdef __cplusplus
}
#endif

#endif
