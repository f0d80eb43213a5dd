/* Loading a task's examples in the form its model needs (syncwise/task.h). */
#include <stdio.h>
#include <string.h>

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

int sw_task_data_load(sw_task_data *out, const char *model, const char *spec, uint64_t seed,
                      char *err)
{
    memset(out, 0, sizeof *out);
    bool sparse = sw_sparse_is_model(model);
    int rc = sparse ? sw_sparse_load(&out->sparse, spec, seed, err)
                    : sw_data_load(&out->dense, spec, seed, err);
    return say_which_kind(rc, model, sparse, err);
}

void sw_task_data_free(sw_task_data *d)
{
    sw_data_free(&d->dense);
    sw_sparse_set_free(&d->sparse);
}

bool sw_task_data_is_sparse(const sw_task_data *d) { return d->sparse.train != NULL; }
