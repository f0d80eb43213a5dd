/* The sparse task: a linear model of syncwise/sparse.h on sparse rows, whose gradients are
 * (index, value) pairs on the weights a batch touches. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "syncwise/err.h"
#include "task_internal.h"

typedef struct sparse_task {
    sw_sparse_model *model;
    sw_sparse_data probe, train_sample; /* views of the first rows: never freed */
    size_t max_row_nnz;                 /* of the training rows */
} sparse_task;

typedef struct sparse_learner {
    sw_sampler *sampler;
    uint32_t *touched; /* of the current batch, when known */
    size_t n_touched, cap;
    bool touched_known;
} sparse_learner;

/* The first n rows of d, read in place. */
static sw_sparse_data first_rows(const sw_sparse_data *d, size_t n)
{
    sw_sparse_data v = *d;
    v.n = n < d->n ? n : d->n;
    v.nnz = d->row[v.n];
    return v;
}

static int open_sparse(sw_task *t, const char *model, uint32_t probe_examples, char *err)
{
    sparse_task *s = calloc(1, sizeof *s);
    if (!s)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    t->impl = s;
    const sw_sparse_set *data = &t->data->sparse;
    /* Labels 2 and up would be read as +1: a ten-class set would score as a two-class one. */
    uint32_t classes = data->train->n_classes;
    if (data->test && data->test->n_classes > classes)
        classes = data->test->n_classes;
    if (classes > 2)
        return sw_fail(err, SW_EMISMATCH, "%s is a two-class model and this data has %u classes: "
                       "give it two-class data (labels -1/+1 or 0/1), or a dense model "
                       "(softmax, mlp) for more classes", model, classes);
    int rc = sw_sparse_model_new(&s->model, model, data->train->dim, err);
    if (rc)
        return rc;
    t->n_params = sw_sparse_model_n_params(s->model);
    const sw_sparse_data *held_out = data->test ? data->test : data->train;
    t->held_out = data->test ? "test" : "training";
    s->probe = first_rows(held_out, probe_examples);
    t->probe_n = (uint32_t)s->probe.n;
    s->train_sample = first_rows(data->train, SW_TASK_TRAIN_SAMPLE);
    for (size_t i = 0; i < data->train->n; i++) {
        size_t nnz = data->train->row[i + 1] - data->train->row[i];
        s->max_row_nnz = nnz > s->max_row_nnz ? nnz : s->max_row_nnz;
    }
    return 0;
}

static void close_sparse(sw_task *t)
{
    sparse_task *s = t->impl;
    if (s)
        sw_sparse_model_free(s->model);
    free(s);
}

static const char *spec(const sw_task *t)
{
    return sw_sparse_model_spec(((const sparse_task *)t->impl)->model);
}

static sw_model_desc desc(const sw_task *t)
{
    sw_model_desc d = {.in_shape = {(uint32_t)t->data->sparse.train->dim, 1, 1},
                       .objective = SW_CLASSIFY, .n_classes = 2};
    snprintf(d.spec, sizeof d.spec, "%s", spec(t));
    return d;
}

static bool classifies(const sw_task *t)
{
    (void)t;
    return true;
}

static void init_params(const sw_task *t, float *params, uint64_t seed)
{
    (void)seed;
    memset(params, 0, t->n_params * sizeof *params);
}

static void evaluate(sw_task *t, const float *params, bool train_sample, sw_eval *out)
{
    sparse_task *s = t->impl;
    const sw_sparse_set *data = &t->data->sparse;
    const sw_sparse_data *d = train_sample ? &s->train_sample
                              : data->test ? data->test : data->train;
    sw_sparse_model_evaluate(s->model, params, d, out);
}

static double probe_loss(sw_task *t, const float *params)
{
    sparse_task *s = t->impl;
    sw_eval e;
    sw_sparse_model_evaluate(s->model, params, &s->probe, &e);
    return e.loss;
}

static int learner_open(sw_learner *l, char *err)
{
    sparse_learner *s = calloc(1, sizeof *s);
    if (!s)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    l->impl = s;
    const sw_learner_params *p = &l->p;
    const sparse_task *st = l->t->impl;
    size_t bound = p->batch * st->max_row_nnz + 1; /* every row's features, and the bias */
    s->cap = bound < l->t->n_params ? bound : l->t->n_params;
    if (!(s->touched = malloc(s->cap * sizeof *s->touched)))
        return sw_fail(err, SW_ENOMEM, "out of memory for a batch's %zu weights", s->cap);
    size_t n = l->t->data->sparse.train->n;
    if (p->deal && p->mode == SW_BATCH_SHARD && sw_deal_examples(p->deal) != n)
        return sw_fail(err, SW_EINVAL, "a deal of %zu examples for a set of %zu",
                       sw_deal_examples(p->deal), n);
    if (p->deal && p->mode == SW_BATCH_SHARD)
        return sw_sampler_new_dealt(&s->sampler, p->deal, p->batch, p->rank, p->ranks, err);
    return sw_sampler_new(&s->sampler, n, p->batch, p->mode, p->rank, p->ranks, p->seed, err);
}

static void learner_close(sw_learner *l)
{
    sparse_learner *s = l->impl;
    if (s) {
        sw_sampler_free(s->sampler);
        free(s->touched);
    }
    free(s);
}

static void next(sw_learner *l)
{
    sparse_learner *s = l->impl;
    sw_sampler_next(s->sampler);
    s->touched_known = false;
}

static const uint32_t *touched(sw_learner *l, size_t *n)
{
    sparse_learner *s = l->impl;
    if (!s->touched_known) {
        s->n_touched = sw_sparse_touched(((sparse_task *)l->t->impl)->model,
                                         l->t->data->sparse.train, sw_sampler_current(s->sampler),
                                         l->p.batch, s->touched);
        s->touched_known = true;
    }
    *n = s->n_touched;
    return s->touched;
}

static size_t max_pairs(const sw_learner *l) { return ((const sparse_learner *)l->impl)->cap; }

static double grad(sw_learner *l, const float *params, sw_grad *g)
{
    sparse_learner *s = l->impl;
    double loss = NAN;
    g->nnz = sw_sparse_model_grad(((sparse_task *)l->t->impl)->model, params,
                                  l->t->data->sparse.train, sw_sampler_current(s->sampler),
                                  l->p.batch, g->idx, g->val, &loss);
    return loss;
}

const sw__task_ops sw__task_sparse = {
    .open = open_sparse, .close = close_sparse, .spec = spec, .desc = desc,
    .classifies = classifies, .init_params = init_params, .evaluate = evaluate,
    .probe_loss = probe_loss, .learner_open = learner_open, .learner_close = learner_close,
    .next = next, .touched = touched, .max_pairs = max_pairs, .grad = grad,
};
