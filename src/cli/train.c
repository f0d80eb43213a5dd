/* `syncwise train`: sequential mini-batch SGD, the baseline every distributed run is judged by.
 *
 * One epoch is as many steps as it takes to draw every training example once. After each epoch
 * the command prints a progress line with the validation figures and, with --out, saves a
 * checkpoint atomically, so an interrupted run loses at most one epoch.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "syncwise/ckpt.h"
#include "syncwise/clock.h"
#include "syncwise/err.h"
#include "syncwise/log.h"
#include "syncwise/optim.h"

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
} trainer;

static void help(void)
{
    printf("usage: syncwise train [OPTIONS]\n\n"
           "Trains a model with sequential mini-batch SGD, printing one line per epoch\n"
           "(training loss, validation loss and accuracy, elapsed time), then reports the\n"
           "test set. With --out the checkpoint is rewritten after every epoch.\n\n"
           "options:\n"
           "  --data SPEC      data set (default fashion-mnist)\n"
           "  --model SPEC     architecture (default mlp:h=1,u=256)\n"
           "  --batch N        mini-batch size (default 16)\n"
           "  --lr X           learning rate (default 0.01)\n"
           "  --wd X           L2 weight decay (default 0)\n"
           "  --epochs N       passes over the training set (default 3)\n"
           "  --seed N         seed of every random choice (default 1)\n"
           "  --out FILE       checkpoint to write\n"
           "  --threads N      OpenBLAS threads (default: OpenBLAS's own choice)\n"
           "  -q, --quiet      print only the final result\n"
           "  -h, --help       this text\n\n");
    sw_cli_print_data_help();
    printf("\n");
    sw_cli_print_model_help();
}

/* Returns 0 to go on, 1 on a bad option, -1 after --help. */
static int parse(int argc, char **argv, train_opts *o)
{
    static const struct option longs[] = {
        {"data", 1, 0, 'd'},  {"model", 1, 0, 'm'},   {"batch", 1, 0, 'b'}, {"lr", 1, 0, 'l'},
        {"wd", 1, 0, 'w'},    {"epochs", 1, 0, 'e'},  {"seed", 1, 0, 's'},  {"out", 1, 0, 'o'},
        {"threads", 1, 0, 't'}, {"quiet", 0, 0, 'q'}, {"help", 0, 0, 'h'},  {0, 0, 0, 0},
    };
    *o = (train_opts){.data = "fashion-mnist", .model = "mlp:h=1,u=256", .batch = 16,
                      .epochs = 3, .lr = 0.01, .seed = 1};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "qh", longs, NULL)) != -1) {
        bool ok = true;
        switch (c) {
        case 'd': o->data = optarg; break;
        case 'm': o->model = optarg; break;
        case 'o': o->out = optarg; break;
        case 'q': o->quiet = true; break;
        case 'b': ok = sw_cli_long(CMD, "--batch", optarg, 1, 1 << 16, &o->batch); break;
        case 'e': ok = sw_cli_long(CMD, "--epochs", optarg, 1, 1000000, &o->epochs); break;
        case 't': ok = sw_cli_long(CMD, "--threads", optarg, 0, 256, &o->threads); break;
        case 'l': ok = sw_cli_double(CMD, "--lr", optarg, 0, 1e6, &o->lr); break;
        case 'w': ok = sw_cli_double(CMD, "--wd", optarg, 0, 1e6, &o->wd); break;
        case 's': ok = sw_cli_u64(CMD, "--seed", optarg, &o->seed); break;
        case 'h': help(); return -1;
        default: return 1;
        }
        if (!ok)
            return 1;
    }
    if (sw_cli_stray(CMD, argc, argv))
        return 2;
    return 0;
}

static int setup(trainer *t, char *err)
{
    int rc = sw_data_load(&t->data, t->o.data, t->o.seed, err);
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
    sw_ckpt c = {.desc = *sw_model_get_desc(t->model), .model_version = steps, .seed = t->o.seed,
                 .n_params = sw_model_n_params(t->model), .params = t->params};
    snprintf(c.data_spec, sizeof c.data_spec, "%s", t->o.data);
    return sw_ckpt_save(t->o.out, &c, err);
}

static void report_epoch(trainer *t, long epoch, double train_loss)
{
    if (t->o.quiet)
        return;
    if (isatty(STDERR_FILENO))
        fprintf(stderr, "\r\033[K");
    sw_eval v = {0};
    if (t->data.val)
        sw_model_evaluate(t->model, t->params, t->data.val, &v);
    fprintf(stderr, "epoch %ld/%ld  train_loss %.4f  val_loss %.4f  val_acc %.4f  elapsed %.1f s\n",
            epoch, t->o.epochs, train_loss, v.loss, v.accuracy, sw_clock_now_s() - t->t0);
}

static void report_step(trainer *t, long epoch, size_t step, size_t steps, double loss)
{
    fprintf(stderr, "\r\033[Kepoch %ld/%ld  step %zu/%zu  loss %.4f  elapsed %.1f s", epoch,
            t->o.epochs, step, steps, loss, sw_clock_now_s() - t->t0);
}

static int run(trainer *t, char *err)
{
    size_t n_params = sw_model_n_params(t->model);
    size_t steps = (sw_batcher_epoch_size(t->batcher) + (size_t)t->o.batch - 1) / (size_t)t->o.batch;
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
        int rc = save(t, total, err);
        if (rc)
            return rc;
    }
    return 0;
}

static void finish(trainer *t)
{
    const sw_dataset *ds = t->data.test ? t->data.test : t->data.val;
    if (!ds)
        return;
    sw_eval r;
    sw_model_evaluate(t->model, t->params, ds, &r);
    printf("%s: loss %.4f  accuracy %.4f  (%zu examples, %.1f s)\n",
           t->data.test ? "test" : "validation", r.loss, r.accuracy, r.n,
           sw_clock_now_s() - t->t0);
}

int sw_cli_train(int argc, char **argv)
{
    trainer t = {0};
    int prc = parse(argc, argv, &t.o);
    if (prc)
        return prc < 0 ? 0 : 2;
    if (t.o.quiet)
        sw_log_set_level(SW_LOG_WARN);
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
    return rc ? 1 : 0;
}
