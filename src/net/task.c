/* The server's task, dense or sparse (see task.h). */
#include "task.h"

#include <stdio.h>
#include <string.h>

#include "syncwise/err.h"

#define PROBE_EXAMPLES 32

static int open_dense(sw__task *t, const char *model, const char *data, uint64_t seed, char *err)
{
    int rc = sw_data_load(&t->data, data, seed, err);
    if (!rc)
        rc = sw_model_new_for_data(&t->model, model, t->data.train, 256, err);
    if (rc)
        return rc;
    t->n = sw_model_n_params(t->model);
    const sw_dataset *ds = t->data.val ? t->data.val : t->data.test ? t->data.test : t->data.train;
    size_t n = ds->n < PROBE_EXAMPLES ? ds->n : PROBE_EXAMPLES;
    t->probe = (sw_batch){.x = ds->x, .label = ds->label, .target = ds->target, .n = n};
    return 0;
}

static int open_sparse(sw__task *t, const char *model, const char *data, uint64_t seed, char *err)
{
    t->sparse = true;
    int rc = sw_sparse_load(&t->sdata, data, seed, err);
    if (!rc)
        rc = sw_sparse_model_new(&t->smodel, model, t->sdata.train->dim, err);
    size_t n = t->sdata.test ? t->sdata.test->n : 0;
    if (!rc)
        rc = sw_sparse_slice(&t->sprobe, t->sdata.test, 0, n < PROBE_EXAMPLES ? n : PROBE_EXAMPLES,
                             err);
    if (!rc)
        t->n = sw_sparse_model_n_params(t->smodel);
    return rc;
}

int sw__task_open(sw__task *t, const char *model, const char *data, uint64_t seed, char *err)
{
    memset(t, 0, sizeof *t);
    int rc = sw_sparse_is_model(model) ? open_sparse(t, model, data, seed, err)
                                       : open_dense(t, model, data, seed, err);
    if (rc)
        sw__task_close(t);
    return rc;
}

void sw__task_close(sw__task *t)
{
    sw_model_free(t->model);
    sw_data_free(&t->data);
    sw_sparse_model_free(t->smodel);
    sw_sparse_set_free(&t->sdata);
    sw_sparse_free(t->sprobe);
    memset(t, 0, sizeof *t);
}

const char *sw__task_spec(const sw__task *t)
{
    return t->sparse ? sw_sparse_model_spec(t->smodel) : sw_model_get_desc(t->model)->spec;
}

sw_model_desc sw__task_desc(const sw__task *t)
{
    if (!t->sparse)
        return *sw_model_get_desc(t->model);
    sw_model_desc d = {.in_shape = {(uint32_t)t->sdata.train->dim, 1, 1},
                       .task = SW_TASK_CLASSIFY, .n_classes = 2};
    snprintf(d.spec, sizeof d.spec, "%s", sw_sparse_model_spec(t->smodel));
    return d;
}

void sw__task_init(const sw__task *t, float *params, uint64_t seed)
{
    if (t->sparse)
        memset(params, 0, t->n * sizeof *params);
    else
        sw_model_init_params(t->model, params, seed);
}

void sw__task_evaluate(sw__task *t, const float *params, sw_eval *e)
{
    if (t->sparse) {
        sw_sparse_model_evaluate(t->smodel, params, t->sdata.test, e);
        return;
    }
    const sw_dataset *ds = t->data.val ? t->data.val : t->data.test;
    sw_model_evaluate(t->model, params, ds ? ds : t->data.train, e);
}

double sw__task_probe(sw__task *t, const float *params)
{
    if (t->sparse) {
        sw_eval e;
        sw_sparse_model_evaluate(t->smodel, params, t->sprobe, &e);
        return e.loss;
    }
    return sw_model_loss(t->model, params, &t->probe);
}
