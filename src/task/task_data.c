/* Loading a task's examples in the form its model needs (syncwise/task.h). */
#include <stdio.h>
#include <string.h>

#include "syncwise/bytes.h"
#include "syncwise/err.h"
#include "syncwise/task.h"

/* The loader's message, and which kind of data the model reads when the spec named the other. */
static int say_which_kind(int rc, const char *model, bool sparse, char *err)
{
    if (rc != SW_ENOTFOUND || !err)
        return rc;
    char why[SW_ERR_LEN];
    snprintf(why, sizeof why, "%s", err);
    return sw_fail(err, rc, "%s; model '%s' reads %s", why, model,
                   sparse ? "sparse rows: libsvm:train=PATH or sparse:..."
                          : "dense examples (sparse rows are for svm and logistic)");
}

/* Whether the spec names a model, dense (syncwise/model.h) or sparse (syncwise/sparse.h). */
static bool known_model(const char *model)
{
    size_t len = strcspn(model, ":");
    for (const sw_model_arch_info *a = sw_model_archs; a->name; a++)
        if (strlen(a->name) == len && !strncmp(a->name, model, len))
            return true;
    return sw_sparse_is_model(model);
}

int sw_task_model_known(const char *model, char *err)
{
    if (!known_model(model))
        return sw_fail(err, SW_ENOTFOUND, "unknown model '%.*s' (known: softmax, mlp, cnn, svm, "
                       "logistic)", (int)strcspn(model, ":"), model);
    if (!sw_sparse_is_model(model))
        return sw_model_spec_check(model, err);
    sw_sparse_model *m; /* of one feature: its keys are the spec's own */
    int rc = sw_sparse_model_new(&m, model, 1, err);
    sw_sparse_model_free(m);
    return rc;
}

int sw_task_data_load(sw_task_data *out, const char *model, const char *spec, uint64_t seed,
                      char *err)
{
    memset(out, 0, sizeof *out);
    int rc = sw_task_model_known(model, err); /* before the data, read for the wrong kind else */
    if (rc)
        return rc;
    bool sparse = sw_sparse_is_model(model);
    rc = sparse ? sw_sparse_load(&out->sparse, spec, seed, err)
                : sw_data_load(&out->dense, spec, seed, err);
    return say_which_kind(rc, model, sparse, err);
}

void sw_task_data_free(sw_task_data *d)
{
    sw_data_free(&d->dense);
    sw_sparse_set_free(&d->sparse);
}

bool sw_task_data_is_sparse(const sw_task_data *d) { return d->sparse.train != NULL; }

size_t sw_task_data_train_size(const sw_task_data *d)
{
    return sw_task_data_is_sparse(d) ? d->sparse.train->n : d->dense.train->n;
}

static uint32_t dense_fingerprint(const sw_dataset *t)
{
    const uint64_t shape[] = {t->n, t->dim, t->n_classes};
    uint32_t crc = sw_crc32c(0, shape, sizeof shape);
    crc = sw_crc32c(crc, t->x, t->n * t->dim * sizeof *t->x);
    if (t->label)
        crc = sw_crc32c(crc, t->label, t->n * sizeof *t->label);
    if (t->target)
        crc = sw_crc32c(crc, t->target, t->n * sizeof *t->target);
    return crc;
}

static uint32_t sparse_fingerprint(const sw_sparse_data *t)
{
    const uint64_t shape[] = {t->n, t->dim, t->nnz, t->n_classes};
    uint32_t crc = sw_crc32c(0, shape, sizeof shape);
    crc = sw_crc32c(crc, t->row, (t->n + 1) * sizeof *t->row);
    crc = sw_crc32c(crc, t->col, t->nnz * sizeof *t->col);
    crc = sw_crc32c(crc, t->val, t->nnz * sizeof *t->val);
    return sw_crc32c(crc, t->label, t->n * sizeof *t->label);
}

uint32_t sw_task_data_fingerprint(const sw_task_data *d)
{
    if (d->sparse.train)
        return sparse_fingerprint(d->sparse.train);
    return d->dense.train ? dense_fingerprint(d->dense.train) : 0;
}

bool sw_task_data_is_generated(const char *spec)
{
    size_t name = strcspn(spec, ":");
    return (name == 9 && !strncmp(spec, "synthetic", 9)) ||
           (name == 6 && !strncmp(spec, "sparse", 6));
}
