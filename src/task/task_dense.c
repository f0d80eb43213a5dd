/* The dense task: a model of syncwise/model.h on dense examples, whose gradients are whole
 * vectors. */
#include <math.h>
#include <stdlib.h>

#include "syncwise/err.h"
#include "task_internal.h"

typedef struct dense_task {
    sw_model *model;
    const sw_dataset *held_out;
    sw_batch probe;         /* the first held-out examples */
    sw_dataset train_sample; /* a view of the first training examples: never freed */
} dense_task;

typedef struct dense_learner {
    sw_batcher *batcher;
    sw_batch batch;
} dense_learner;

static int open_dense(sw_task *t, const char *model, uint32_t probe_examples, char *err)
{
    dense_task *d = calloc(1, sizeof *d);
    if (!d)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    t->impl = d;
    const sw_data *data = &t->data->dense;
    int rc = sw_model_new_for_data(&d->model, model, data->train, t->max_batch, err);
    if (rc)
        return rc;
    t->n_params = sw_model_n_params(d->model);
    d->held_out = data->val ? data->val : data->test ? data->test : data->train;
    t->held_out = data->val ? "validation" : data->test ? "test" : "training";
    size_t n = d->held_out->n < probe_examples ? d->held_out->n : probe_examples;
    n = n < t->max_batch ? n : t->max_batch;
    d->probe = (sw_batch){.x = d->held_out->x, .label = d->held_out->label,
                          .target = d->held_out->target, .n = n};
    t->probe_n = (uint32_t)n;
    d->train_sample = *data->train;
    if (d->train_sample.n > SW_TASK_TRAIN_SAMPLE)
        d->train_sample.n = SW_TASK_TRAIN_SAMPLE;
    return 0;
}

static void close_dense(sw_task *t)
{
    dense_task *d = t->impl;
    if (d)
        sw_model_free(d->model);
    free(d);
}

static const char *spec(const sw_task *t)
{
    return sw_model_get_desc(((const dense_task *)t->impl)->model)->spec;
}

static sw_model_desc desc(const sw_task *t)
{
    return *sw_model_get_desc(((const dense_task *)t->impl)->model);
}

static bool classifies(const sw_task *t) { return t->data->dense.train->objective == SW_CLASSIFY; }

static void init_params(const sw_task *t, float *params, uint64_t seed)
{
    sw_model_init_params(((const dense_task *)t->impl)->model, params, seed);
}

static void evaluate(sw_task *t, const float *params, bool train_sample, sw_eval *out)
{
    dense_task *d = t->impl;
    sw_model_evaluate(d->model, params, train_sample ? &d->train_sample : d->held_out, out);
}

static double probe_loss(sw_task *t, const float *params)
{
    dense_task *d = t->impl;
    return sw_model_loss(d->model, params, &d->probe);
}

static int learner_open(sw_learner *l, char *err)
{
    dense_learner *d = calloc(1, sizeof *d);
    if (!d)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    l->impl = d;
    const sw_learner_params *p = &l->p;
    const sw_dataset *train = l->t->data->dense.train;
    if (p->deal && p->mode == SW_BATCH_SHARD)
        return sw_batcher_new_dealt(&d->batcher, train, p->deal, p->batch, p->rank, p->ranks,
                                    err);
    return sw_batcher_new(&d->batcher, train, p->batch, p->mode, p->rank, p->ranks, p->seed,
                          err);
}

static void learner_close(sw_learner *l)
{
    dense_learner *d = l->impl;
    if (d)
        sw_batcher_free(d->batcher);
    free(d);
}

static void next(sw_learner *l)
{
    dense_learner *d = l->impl;
    sw_batcher_next(d->batcher, &d->batch);
}

static const uint32_t *touched(sw_learner *l, size_t *n)
{
    *n = l->t->n_params;
    return NULL;
}

static size_t max_pairs(const sw_learner *l)
{
    (void)l;
    return 0;
}

static double grad(sw_learner *l, const float *params, sw_grad *g)
{
    dense_learner *d = l->impl;
    g->nnz = l->t->n_params;
    return sw_model_grad(((dense_task *)l->t->impl)->model, params, &d->batch, g->dense);
}

const sw__task_ops sw__task_dense = {
    .open = open_dense, .close = close_dense, .spec = spec, .desc = desc,
    .classifies = classifies, .init_params = init_params, .evaluate = evaluate,
    .probe_loss = probe_loss, .learner_open = learner_open, .learner_close = learner_close,
    .next = next, .touched = touched, .max_pairs = max_pairs, .grad = grad,
};
