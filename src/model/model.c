/* A model: layers, the scratch memory for one pass over max_batch examples, and the loss head.
 *
 * All scratch lives in one allocation carved at creation, so sw_model_grad allocates nothing.
 * The backward pass ping-pongs between two gradient buffers sized for the widest layer; the first
 * layer's input gradient is never computed because nothing consumes it.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model_internal.h"
#include "syncwise/err.h"
#include "syncwise/log.h"

struct sw_model {
    sw_model_desc desc;
    sw__arch arch;
    size_t max_batch;
    float *act[SW__MAX_LAYERS]; /* act[i]: output of layer i */
    float *grad_a, *grad_b;     /* gradient ping-pong buffers */
    void *arena;
};

static int check_desc(const sw_model_desc *d, size_t max_batch, char *err)
{
    if (!d->in_shape[0] || !d->in_shape[1] || !d->in_shape[2])
        return sw_fail(err, SW_EINVAL, "model input shape %ux%ux%u has a zero side",
                       d->in_shape[0], d->in_shape[1], d->in_shape[2]);
    if (d->objective == SW_CLASSIFY && (d->n_classes < 2 || d->n_classes > 100000))
        return sw_fail(err, SW_EINVAL, "a classifier needs 2 to 100000 classes, not %u",
                       d->n_classes);
    if (d->objective == SW_REGRESS && d->n_classes > 1024)
        return sw_fail(err, SW_EINVAL, "a regression model has 1 to 1024 outputs, not %u",
                       d->n_classes);
    if (d->objective != SW_CLASSIFY && d->objective != SW_REGRESS)
        return sw_fail(err, SW_EINVAL, "unknown task %d", (int)d->objective);
    if (max_batch == 0 || max_batch > (1u << 20))
        return sw_fail(err, SW_EINVAL, "batch size %zu outside [1, %u]", max_batch, 1u << 20);
    return 0;
}

/* Bytes of scratch the model needs; when base is not NULL, also hands out the pieces. */
static size_t carve(sw_model *m, char *base)
{
    size_t off = 0, widest = 0, b = m->max_batch;
#define TAKE(ptr, count)                                           \
    do {                                                           \
        if (base)                                                  \
            (ptr) = (void *)(base + off);                          \
        off += ((count) * sizeof *(ptr) + 63) & ~(size_t)63;       \
    } while (0)
    for (int i = 0; i < m->arch.n_layers; i++) {
        sw__layer *l = &m->arch.layers[i];
        TAKE(m->act[i], b * l->out_size);
        if (l->ops == &sw__conv_ops)
            TAKE(l->col, b * l->out[0] * l->out[1] * l->fan_in);
        if (l->ops == &sw__maxpool_ops)
            TAKE(l->argmax, b * l->out_size);
        widest = l->in_size > widest ? l->in_size : widest;
        widest = l->out_size > widest ? l->out_size : widest;
    }
    TAKE(m->grad_a, b * widest);
    TAKE(m->grad_b, b * widest);
#undef TAKE
    return off;
}

int sw_model_new(sw_model **out, const sw_model_desc *desc, size_t max_batch, char *err)
{
    *out = NULL;
    int rc = check_desc(desc, max_batch, err);
    if (rc)
        return rc;
    sw_model *m = calloc(1, sizeof *m);
    if (!m)
        return sw_fail(err, SW_ENOMEM, "out of memory for a model");
    if ((rc = sw__arch_build(&m->arch, desc->spec, desc->in_shape, sw_model_desc_outputs(desc),
                             err))) {
        free(m);
        return rc;
    }
    m->desc = *desc;
    memcpy(m->desc.spec, m->arch.canonical, sizeof m->desc.spec);
    m->max_batch = max_batch;
    size_t bytes = carve(m, NULL);
    if (!(m->arena = aligned_alloc(64, bytes))) {
        free(m);
        return sw_fail(err, SW_ENOMEM, "out of memory for %zu bytes of model scratch", bytes);
    }
    carve(m, m->arena);
    *out = m;
    return 0;
}

int sw_model_spec_check(const char *spec, char *err)
{
    sw__arch a; /* laid out for a 28x28 image of 10 classes, which every architecture takes */
    return sw__arch_build(&a, spec, (const uint32_t[3]){28, 28, 1}, 10, err);
}

int sw_model_new_for_data(sw_model **out, const char *spec, const sw_dataset *ds,
                          size_t max_batch, char *err)
{
    sw_model_desc d = {.objective = ds->objective, .n_classes = ds->n_classes};
    if (strlen(spec) >= sizeof d.spec)
        return sw_fail(err, SW_EINVAL, "model spec '%s' is too long", spec);
    strcpy(d.spec, spec);
    memcpy(d.in_shape, ds->shape, sizeof d.in_shape);
    return sw_model_new(out, &d, max_batch, err);
}

void sw_model_free(sw_model *m)
{
    if (!m)
        return;
    free(m->arena);
    free(m);
}

const sw_model_desc *sw_model_get_desc(const sw_model *m) { return &m->desc; }

size_t sw_model_n_params(const sw_model *m) { return m->arch.n_params; }

size_t sw_model_max_batch(const sw_model *m) { return m->max_batch; }

uint32_t sw_model_desc_outputs(const sw_model_desc *d)
{
    return d->objective == SW_CLASSIFY || d->n_classes > 1 ? d->n_classes : 1;
}

size_t sw_model_n_outputs(const sw_model *m) { return m->arch.n_out; }

void sw_model_init_params(const sw_model *m, float *params, uint64_t seed)
{
    sw_rng rng;
    sw_rng_seed(&rng, seed, SW_STREAM_INIT);
    for (int i = 0; i < m->arch.n_layers; i++) {
        const sw__layer *l = &m->arch.layers[i];
        float *w = params + l->param_off;
        size_t fan_out = l->n_weights / (l->fan_in ? l->fan_in : 1);
        double bound = l->relu_follows ? sqrt(6.0 / (double)l->fan_in)
                                       : sqrt(6.0 / (double)(l->fan_in + fan_out));
        for (size_t j = 0; j < l->n_weights; j++)
            w[j] = (float)((2.0 * sw_rng_uniform(&rng) - 1.0) * bound);
        memset(w + l->n_weights, 0, l->n_bias * sizeof *w);
    }
}

static const float *forward(sw_model *m, const float *params, const float *x, size_t n)
{
    const float *in = x;
    for (int i = 0; i < m->arch.n_layers; i++) {
        sw__layer *l = &m->arch.layers[i];
        l->ops->forward(l, params + l->param_off, in, m->act[i], n);
        in = m->act[i];
    }
    return in;
}

static double head(const sw_model *m, const float *y, const sw_batch *b, float *dout,
                   size_t *correct)
{
    if (m->desc.objective == SW_CLASSIFY)
        return sw__xent(y, b->label, b->n, m->desc.n_classes, dout, correct);
    if (correct)
        *correct = 0;
    return sw__mse(y, b->target, b->n, m->arch.n_out, dout);
}

/* The model's buffers hold max_batch examples: a caller's bug, said once in the log. */
static bool batch_fits(const sw_model *m, size_t n)
{
    if (n >= 1 && n <= m->max_batch)
        return true;
    sw_log(SW_LOG_ERROR, "a batch of %zu examples for a model built for 1 to %zu", n,
           m->max_batch);
    return false;
}

const float *sw_model_forward(sw_model *m, const float *params, const float *x, size_t n)
{
    return batch_fits(m, n) ? forward(m, params, x, n) : NULL;
}

float sw_model_loss(sw_model *m, const float *params, const sw_batch *batch)
{
    if (!batch_fits(m, batch->n))
        return NAN;
    return (float)head(m, forward(m, params, batch->x, batch->n), batch, NULL, NULL);
}

float sw_model_grad(sw_model *m, const float *params, const sw_batch *batch, float *grad)
{
    if (!batch_fits(m, batch->n))
        return NAN;
    const float *y = forward(m, params, batch->x, batch->n);
    float *dcur = m->grad_a, *dnext = m->grad_b;
    double loss = head(m, y, batch, dcur, NULL);
    for (int i = m->arch.n_layers - 1; i >= 0; i--) {
        sw__layer *l = &m->arch.layers[i];
        const float *in = i > 0 ? m->act[i - 1] : batch->x;
        float *din = i > 0 ? dnext : NULL;
        l->ops->backward(l, params + l->param_off, in, m->act[i], dcur, din,
                         grad + l->param_off, batch->n);
        dnext = dcur;
        dcur = din;
    }
    return (float)loss;
}

void sw_model_evaluate(sw_model *m, const float *params, const sw_dataset *ds, sw_eval *out)
{
    double loss = 0;
    size_t correct = 0;
    for (size_t start = 0; start < ds->n; start += m->max_batch) {
        size_t n = ds->n - start < m->max_batch ? ds->n - start : m->max_batch;
        sw_batch b = {
            .x = ds->x + start * ds->dim,
            .label = ds->label ? ds->label + start : NULL,
            .target = ds->target ? ds->target + start : NULL,
            .n = n,
        };
        size_t right = 0;
        loss += head(m, forward(m, params, b.x, n), &b, NULL, &right) * (double)n;
        correct += right;
    }
    out->n = ds->n;
    out->loss = ds->n ? loss / (double)ds->n : 0;
    out->accuracy = ds->n && ds->objective == SW_CLASSIFY ? (double)correct / (double)ds->n : 0;
}

/* Whether the model sees its input as an image (a convolution or pooling reads its rows and
 * columns), or only as a vector of floats. */
static bool spatial(const sw_model *m)
{
    for (int i = 0; i < m->arch.n_layers; i++)
        if (m->arch.layers[i].ops == &sw__conv_ops || m->arch.layers[i].ops == &sw__maxpool_ops)
            return true;
    return false;
}

static uint64_t size_of(const uint32_t shape[3])
{
    return (uint64_t)shape[0] * shape[1] * shape[2];
}

int sw_model_check_data(const sw_model *m, const sw_dataset *ds, char *err)
{
    const sw_model_desc *d = &m->desc;
    bool flat_alike = !spatial(m) && size_of(ds->shape) == size_of(d->in_shape);
    if (memcmp(ds->shape, d->in_shape, sizeof ds->shape) != 0 && !flat_alike)
        return sw_fail(err, SW_EMISMATCH, "data of shape %ux%ux%u for a model of input %ux%ux%u",
                       ds->shape[0], ds->shape[1], ds->shape[2], d->in_shape[0], d->in_shape[1],
                       d->in_shape[2]);
    if (ds->objective != d->objective)
        return sw_fail(err, SW_EMISMATCH, "a %s data set for a %s model",
                       ds->objective == SW_CLASSIFY ? "classification" : "regression",
                       d->objective == SW_CLASSIFY ? "classification" : "regression");
    if (ds->objective == SW_CLASSIFY && ds->n_classes > d->n_classes)
        return sw_fail(err, SW_EMISMATCH, "data with %u classes for a model of %u",
                       ds->n_classes, d->n_classes);
    return 0;
}
