/* The task: one set of calls for what is trained, dispatched to its implementation
 * (task_dense.c, task_sparse.c). */
#include <math.h>
#include <stdlib.h>

#include "syncwise/err.h"
#include "task_internal.h"

int sw_task_new(sw_task **out, const char *model, const sw_task_data *data, size_t max_batch,
                uint32_t probe_examples, char *err)
{
    *out = NULL;
    bool sparse_model = sw_sparse_is_model(model), sparse_data = sw_task_data_is_sparse(data);
    if (sparse_model != sparse_data)
        return sw_fail(err, SW_EINVAL, "model '%s' needs %s data, and these are %s", model,
                       sparse_model ? "sparse" : "dense", sparse_data ? "sparse" : "dense");
    if (max_batch == 0)
        return sw_fail(err, SW_EINVAL, "a task's batches hold at least one example");
    sw_task *t = calloc(1, sizeof *t);
    if (!t)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    t->ops = sparse_model ? &sw__task_sparse : &sw__task_dense;
    t->data = data;
    t->max_batch = max_batch;
    int rc = t->ops->open(t, model, probe_examples, err);
    if (rc) {
        sw_task_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

void sw_task_free(sw_task *t)
{
    if (!t)
        return;
    t->ops->close(t);
    free(t);
}

bool sw_task_is_sparse(const sw_task *t) { return t->ops == &sw__task_sparse; }

size_t sw_task_n_params(const sw_task *t) { return t->n_params; }

const char *sw_task_spec(const sw_task *t) { return t->ops->spec(t); }

sw_model_desc sw_task_desc(const sw_task *t) { return t->ops->desc(t); }

bool sw_task_classifies(const sw_task *t) { return t->ops->classifies(t); }

const char *sw_task_held_out(const sw_task *t) { return t->held_out; }

void sw_task_init_params(const sw_task *t, float *params, uint64_t seed)
{
    t->ops->init_params(t, params, seed);
}

void sw_task_evaluate(sw_task *t, const float *params, sw_eval *out)
{
    t->ops->evaluate(t, params, false, out);
}

double sw_task_probe_loss(sw_task *t, const float *params)
{
    return t->probe_n ? t->ops->probe_loss(t, params) : NAN;
}

bool sw_task_has_probe(const sw_task *t) { return t->probe_n > 0; }

double sw_task_train_loss(sw_task *t, const float *params)
{
    sw_eval e;
    t->ops->evaluate(t, params, true, &e);
    return e.loss;
}
