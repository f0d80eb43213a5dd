/* `syncwise eval`: loss and accuracy of a checkpoint on a data set. The data set defaults to the
 * one the checkpoint records, so `syncwise eval --model-file model.ckpt` just works. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "opts.h"
#include "scenario.h"
#include "syncwise/ckpt.h"
#include "syncwise/err.h"
#include "syncwise/sparse.h"
#include "syncwise/task.h"

#define CMD "eval"

typedef struct eval_opts {
    const char *file, *data;
    int split; /* in splits[] */
    long threads;
} eval_opts;

static const char *const splits[] = {"test", "val", "train", NULL};

#define AT(field) offsetof(eval_opts, field)
static const sw_opt table[] = {
    {SW_OPT_ROW(SW_OPT_STR, "model-file", 0, AT(file), 0, 0, "FILE",
                "checkpoint written by 'syncwise train' or a server's\n--checkpoint (a sharded "
                "server's: FILE.model, its model\nat the run's end) (required)")},
    {SW_OPT_ROW(SW_OPT_STR, "data", 0, AT(data), 0, 0, "SPEC", "data set"),
     .shown = "the one the checkpoint was trained on"},
    {SW_OPT_ROW(SW_OPT_CHOICE, "split", 0, AT(split), 0, 0, "NAME",
                "test, val or train (sparse data: test or train)"),
     .choices = splits},
    {SW_OPT_ROW(SW_OPT_LONG, "threads", 0, AT(threads), 0, 256, "N",
                "OpenBLAS threads (0: its own choice)")},
    SW_OPT_END_ROW,
};
#undef AT

static const sw_cmd_opts command = {
    .cmd = CMD,
    .usage = "--model-file FILE [OPTIONS]",
    .about = "Reports the loss and accuracy of a checkpoint on a data set.",
    .tables = {table},
};

static void report(const char *split, const sw_eval *r, const sw_ckpt *c)
{
    char acc[32] = ""; /* regression has none */
    if (c->desc.objective == SW_CLASSIFY)
        snprintf(acc, sizeof acc, "  accuracy %.4f", r->accuracy);
    printf("%s: loss %.4f%s  (%zu examples, model %s, version %llu)\n", split, r->loss, acc, r->n,
           c->desc.spec, (unsigned long long)c->model_version);
}

/* A sparse linear model on sparse data, which has a train and a test split. */
static int evaluate_sparse(const sw_ckpt *c, const char *data, const char *split, char *err)
{
    sw_sparse_set d;
    int rc = sw_sparse_load(&d, data, SW_DATA_SEED, err); /* the spec's alone, as in a run */
    if (rc)
        return rc;
    const sw_sparse_data *ds = !strcmp(split, "train") ? d.train : !strcmp(split, "test") ? d.test
                                                                                          : NULL;
    sw_sparse_model *m = NULL;
    if (!ds)
        rc = sw_fail(err, SW_ENOTFOUND, "sparse data set '%s' has no %s split", data, split);
    else if (ds->dim + 1 != c->n_params)
        rc = sw_fail(err, SW_EMISMATCH, "'%s' has %zu features, the model was trained on %zu",
                     data, ds->dim, c->n_params - 1);
    if (!rc)
        rc = sw_sparse_model_new(&m, c->desc.spec, ds->dim, err);
    if (!rc) {
        sw_eval r;
        sw_sparse_model_evaluate(m, c->params, ds, &r);
        report(split, &r, c);
    }
    sw_sparse_model_free(m);
    sw_sparse_set_free(&d);
    return rc;
}

static int evaluate(const sw_ckpt *c, const char *data, const char *split, char *err)
{
    if (sw_sparse_is_model(c->desc.spec))
        return evaluate_sparse(c, data, split, err);
    sw_data d;
    int rc = sw_data_load(&d, data, SW_DATA_SEED, err); /* the spec's alone, as in a run */
    if (rc)
        return rc;
    sw_model *m = NULL;
    const sw_dataset *ds = sw_cli_split(&d, split);
    if (!ds)
        rc = sw_fail(err, SW_ENOTFOUND, "data set '%s' has no %s split", data, split);
    if (!rc)
        rc = sw_model_new(&m, &c->desc, 256, err);
    if (!rc)
        rc = sw_model_check_data(m, ds, err);
    if (!rc) {
        sw_eval r;
        sw_model_evaluate(m, c->params, ds, &r);
        report(split, &r, c);
    }
    sw_model_free(m);
    sw_data_free(&d);
    return rc;
}

int sw_cli_eval(int argc, char **argv)
{
    eval_opts o = {0};
    int prc = sw_cli_parse(&command, argc, argv, &o, NULL);
    if (prc)
        return prc == 1 ? 0 : prc;
    if (!o.file)
        return sw_cli_error(CMD, "--model-file FILE is required (see --help)") + 1;
    const char *file = o.file, *data = o.data, *split = splits[o.split];
    long threads = o.threads;
    sw_cli_set_threads(threads);
    char err[SW_ERR_LEN];
    sw_ckpt ck;
    int rc = sw_ckpt_load(file, &ck, err), status = 1; /* the file: the work failed */
    if (!rc) {
        if (!strcmp(ck.desc.spec, SW_CKPT_SLICE))
            rc = sw_fail(err, SW_EFORMAT, "%s holds one shard's slice of a sharded run's "
                         "parameters, not a model eval can read", file);
        else if (!data && !ck.data_spec[0])
            rc = sw_fail(err, SW_EINVAL, "%s records no data set: give --data", file);
        else
            rc = evaluate(&ck, data ? data : ck.data_spec, split, err);
        status = sw_cli_load_status(rc); /* 2: no --data, a spec or split that is not valid */
        sw_ckpt_free(&ck);
    }
    if (rc)
        sw_cli_error(CMD, "%s", err);
    return rc ? status : 0;
}
