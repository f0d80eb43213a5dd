/* `syncwise train`: sequential mini-batch SGD, the baseline every distributed run is judged by.
 *
 * One epoch is as many steps as it takes to draw every training example once. After each epoch
 * the command prints a progress line with the validation figures and, with --out, saves a
 * checkpoint atomically, so an interrupted run loses at most one epoch.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "opts.h"
#include "scenario.h"
#include "syncwise/ckpt.h"
#include "syncwise/clock.h"
#include "syncwise/err.h"
#include "syncwise/file.h"
#include "syncwise/log.h"
#include "syncwise/logread.h"
#include "syncwise/optim.h"
#include "syncwise/sparse.h"
#include "syncwise/task.h"

#define CMD "train"

typedef struct train_opts {
    const char *data, *model, *out;
    long batch, epochs, threads;
    double lr, wd;
    uint64_t seed;
    bool quiet;
} train_opts;

typedef struct trainer {
    train_opts o;
    sw_data data;
    sw_model *model;
    sw_batcher *batcher;
    float *params, *grad;
    double t0;
    int out_lock; /* --out's (sw_file_claim): a running server's checkpoint is no training's */
    bool lock_made; /* this claim made --out's lock: gone again if nothing was saved */
} trainer;

#define AT(field) offsetof(train_opts, field)
static const sw_opt table[] = {
    {SW_OPT_ROW(SW_OPT_STR, "data", 0, AT(data), 0, 0, "SPEC", "data set")},
    {SW_OPT_ROW(SW_OPT_STR, "model", 0, AT(model), 0, 0, "SPEC",
                "architecture: softmax, mlp or cnn (svm and logistic\ntrain under sim, server "
                "or peer)")},
    {SW_OPT_ROW(SW_OPT_LONG, "batch", 0, AT(batch), 1, 1 << 16, "N", "mini-batch size")},
    {SW_OPT_ROW(SW_OPT_F64, "lr", 0, AT(lr), 0, 1e6, "X", "learning rate")},
    {SW_OPT_ROW(SW_OPT_F64, "wd", 0, AT(wd), 0, 1e6, "X", "L2 weight decay")},
    {SW_OPT_ROW(SW_OPT_LONG, "epochs", 0, AT(epochs), 1, 1000000, "N",
                "passes over the training set")},
    {SW_OPT_ROW(SW_OPT_U64, "seed", 0, AT(seed), 0, SW_LOG_MAX_SEED, "N",
                "seed of the initial parameters and the batch order (the\ndata set is the spec's "
                "alone, as a server's; at most 2^53)")},
    {SW_OPT_ROW(SW_OPT_STR, "out", 0, AT(out), 0, 0, "FILE", "checkpoint to write")},
    {SW_OPT_ROW(SW_OPT_LONG, "threads", 0, AT(threads), 0, 256, "N",
                "OpenBLAS threads (0: its own choice)")},
    {SW_OPT_ROW(SW_OPT_FLAG, "quiet", 'q', AT(quiet), 0, 0, NULL, "print only the final result")},
    SW_OPT_END_ROW,
};
#undef AT

static const sw_cmd_opts command = {
    .cmd = CMD,
    .about = "Trains a model with sequential mini-batch SGD, printing one line per epoch\n"
             "(training loss, validation loss and accuracy, elapsed time), then reports the\n"
             "test set. With --out the checkpoint is rewritten after every epoch.",
    .tables = {table},
    .epilog = sw_cli_print_dense_data_and_models,
};

static int setup(trainer *t, char *err)
{
    /* A place --out cannot be written, or a file another process saves (a server's
     * --checkpoint, another training's --out), is said before the first epoch, not after it. */
    int rc = t->o.out ? sw_file_claim_output(t->o.out, "--out", &t->out_lock, &t->lock_made, err)
                      : 0;
    if (!rc) /* a spec's own faults before the seconds the data take */
        rc = sw_model_spec_check(t->o.model, err);
    if (!rc)
        rc = sw_data_load(&t->data, t->o.data, SW_DATA_SEED, err); /* as a server's */
    if (rc)
        return rc;
    const sw_dataset *tr = t->data.train;
    /* Evaluation goes through the same scratch in chunks; 256 keeps that fast at any batch. */
    size_t max_batch = t->o.batch > 256 ? (size_t)t->o.batch : 256;
    if ((rc = sw_model_new_for_data(&t->model, t->o.model, tr, max_batch, err)))
        return rc;
    size_t n = sw_model_n_params(t->model);
    t->params = malloc(n * sizeof *t->params);
    t->grad = malloc(n * sizeof *t->grad);
    if (!t->params || !t->grad)
        return sw_fail(err, SW_ENOMEM, "out of memory for %zu parameters", n);
    sw_model_init_params(t->model, t->params, t->o.seed);
    return sw_batcher_new(&t->batcher, tr, (size_t)t->o.batch, SW_BATCH_SHARD, 0, 1, t->o.seed,
                          err);
}

static int save(trainer *t, uint64_t steps, char *err)
{
    if (!t->o.out)
        return 0;
    sw_ckpt c = {.desc = *sw_model_get_desc(t->model),
                 .model_version = steps,
                 .seed = t->o.seed,
                 .n_params = sw_model_n_params(t->model),
                 .params = t->params};
    snprintf(c.data_spec, sizeof c.data_spec, "%s", t->o.data);
    return sw_ckpt_save(t->o.out, &c, err);
}

static void report_epoch(trainer *t, long epoch, double train_loss)
{
    if (t->o.quiet)
        return;
    if (isatty(STDERR_FILENO))
        fprintf(stderr, "\r\033[K");
    char val[64] = ""; /* nothing to show without a validation set, no accuracy in regression */
    sw_eval v = {0};
    if (t->data.val) {
        sw_model_evaluate(t->model, t->params, t->data.val, &v);
        int n = snprintf(val, sizeof val, "  val_loss %.4f", v.loss);
        if (t->data.val->label)
            snprintf(val + n, sizeof val - (size_t)n, "  val_acc %.4f", v.accuracy);
    }
    fprintf(stderr, "epoch %ld/%ld  train_loss %.4f%s  elapsed %.1f s\n", epoch, t->o.epochs,
            train_loss, val, sw_clock_now_s() - t->t0);
}

static void report_step(trainer *t, long epoch, size_t step, size_t steps, double loss)
{
    fprintf(stderr, "\r\033[Kepoch %ld/%ld  step %zu/%zu  loss %.4f  elapsed %.1f s", epoch,
            t->o.epochs, step, steps, loss, sw_clock_now_s() - t->t0);
}

static int run(trainer *t, char *err)
{
    size_t n_params = sw_model_n_params(t->model);
    size_t steps =
        (sw_batcher_epoch_size(t->batcher) + (size_t)t->o.batch - 1) / (size_t)t->o.batch;
    bool live = !t->o.quiet && isatty(STDERR_FILENO);
    double next_draw = 0;
    uint64_t total = 0;
    t->t0 = sw_clock_now_s();
    for (long e = 1; e <= t->o.epochs; e++) {
        double sum = 0;
        for (size_t s = 0; s < steps; s++, total++) {
            sw_batch b;
            sw_batcher_next(t->batcher, &b);
            sum += sw_model_grad(t->model, t->params, &b, t->grad);
            sw_sgd_step(t->params, t->grad, n_params, (float)t->o.lr, (float)t->o.wd);
            if (live && (s & 63) == 0 && sw_clock_now_s() >= next_draw) {
                report_step(t, e, s, steps, sum / (double)(s + 1));
                next_draw = sw_clock_now_s() + 0.25;
            }
        }
        report_epoch(t, e, sum / (double)steps);
        if (!isfinite(sum)) /* every later step would start from these parameters */
            return sw_fail(err, SW_ERANGE, "the model diverged in epoch %ld (its training loss "
                           "is not finite): a lower --lr?%s", e,
                           !t->o.out ? ""
                           : e > 1   ? " The checkpoint keeps the epoch before."
                                     : " Nothing was saved.");
        int rc = save(t, total, err);
        if (rc)
            return rc;
    }
    return 0;
}

/* The result on the test set, else the validation set, else (no held-out examples at all) the
 * training set: a run always ends with a figure, naming its set. */
static void finish(trainer *t)
{
    const sw_data *d = &t->data;
    const sw_dataset *ds = d->test ? d->test : d->val ? d->val : d->train;
    sw_eval r;
    sw_model_evaluate(t->model, t->params, ds, &r);
    char acc[32] = ""; /* regression has none */
    if (ds->label)
        snprintf(acc, sizeof acc, "  accuracy %.4f", r.accuracy);
    printf("%s: loss %.4f%s  (%zu examples, %.1f s)\n",
           d->test ? "test" : d->val ? "validation" : "training", r.loss, acc, r.n,
           sw_clock_now_s() - t->t0);
}

int sw_cli_train(int argc, char **argv)
{
    trainer t = {.o = {.data = "fashion-mnist",
                       .model = "mlp:h=1,u=256",
                       .batch = 16,
                       .epochs = 3,
                       .lr = 0.01,
                       .seed = 1},
                 .out_lock = -1};
    int prc = sw_cli_parse(&command, argc, argv, &t.o, NULL);
    if (prc)
        return prc == 1 ? 0 : prc;
    if ((prc = sw_cli_outputs_apart(CMD, 1, (const char *[]){"--out"}, &t.o.out, 1, &t.o.data)))
        return prc;
    if (sw_sparse_is_model(t.o.model)) /* it trains dense models only, and would say 'unknown' */
        return sw_cli_error(CMD, "--model %s: train trains the dense models (softmax, mlp, cnn); "
                                 "svm and logistic train under sim, a server and its workers, "
                                 "or peer", t.o.model) + 1;
    sw_cli_set_verbosity(t.o.quiet, false);
    sw_cli_set_threads(t.o.threads);
    char err[SW_ERR_LEN];
    int rc = setup(&t, err);
    if (!rc)
        rc = run(&t, err);
    if (!rc)
        finish(&t);
    else
        sw_cli_error(CMD, "%s", err);
    sw_batcher_free(t.batcher);
    sw_model_free(t.model);
    free(t.params);
    free(t.grad);
    sw_data_free(&t.data);
    if (t.o.out)
        sw_file_release_claim(t.o.out, t.out_lock, t.lock_made);
    return rc ? sw_cli_load_status(rc) : 0;
}
