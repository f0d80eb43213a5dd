/* Shared scenario options of `sim` and `compare`. */
#include "scenario.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "syncwise/policy.h"

enum {
    O_WORKERS = SW_CLI_SCENARIO_BASE, O_CLUSTER, O_NET, O_EVENTS, O_DATA, O_MODEL, O_BATCH, O_LR,
    O_WD, O_BATCH_MODE, O_GMF, O_TARGET_ACC, O_TARGET_LOSS, O_MAX_TIME, O_MAX_APPLIES,
    O_MAX_PUSHES, O_PATIENCE, O_EVAL_EVERY, O_NO_MODEL, O_THREADS, O_QUIET, O_VERBOSE,
    O_NO_CHECK,
};

const struct option sw_cli_scenario_options[] = {
    {"workers", 1, 0, O_WORKERS},         {"cluster", 1, 0, O_CLUSTER},
    {"net", 1, 0, O_NET},                 {"events", 1, 0, O_EVENTS},
    {"data", 1, 0, O_DATA},               {"model", 1, 0, O_MODEL},
    {"batch", 1, 0, O_BATCH},             {"lr", 1, 0, O_LR},
    {"wd", 1, 0, O_WD},                   {"batch-mode", 1, 0, O_BATCH_MODE},
    {"get-model-frequency", 1, 0, O_GMF}, {"target-acc", 1, 0, O_TARGET_ACC},
    {"target-loss", 1, 0, O_TARGET_LOSS}, {"max-time", 1, 0, O_MAX_TIME},
    {"max-applies", 1, 0, O_MAX_APPLIES}, {"max-pushes", 1, 0, O_MAX_PUSHES},
    {"patience", 1, 0, O_PATIENCE},       {"eval-every", 1, 0, O_EVAL_EVERY},
    {"no-model", 0, 0, O_NO_MODEL},       {"threads", 1, 0, O_THREADS},
    {"quiet", 0, 0, O_QUIET},             {"verbose", 0, 0, O_VERBOSE},
    {"no-check", 0, 0, O_NO_CHECK},       {0, 0, 0, 0},
};

void sw_cli_scenario_defaults(sw_cli_scenario *s)
{
    *s = (sw_cli_scenario){.cfg = sw_sim_default_config(), .data_spec = "fashion-mnist"};
    s->cfg.cluster = SW_CLI_DEFAULT_CLUSTER;
}

/* The numeric options: where each one goes and its valid range. */
typedef enum kind { U32, LONG, F32, F64, U64 } kind;
typedef struct numeric_opt {
    int code;
    const char *name;
    kind kind;
    double lo, hi;
    size_t offset; /* into sw_cli_scenario */
} numeric_opt;

#define AT(field) offsetof(sw_cli_scenario, field)
static const numeric_opt numerics[] = {
    {O_WORKERS, "--workers", U32, 1, 1 << 20, AT(cfg.workers)},
    {O_BATCH, "--batch", U32, 1, 1 << 16, AT(cfg.batch)},
    {O_GMF, "--get-model-frequency", U32, 1, 1 << 20, AT(cfg.get_model_frequency)},
    {O_PATIENCE, "--patience", U32, 0, 1 << 20, AT(cfg.patience)},
    {O_THREADS, "--threads", LONG, 0, 256, AT(threads)},
    {O_LR, "--lr", F32, 0, 1e6, AT(cfg.lr)},
    {O_WD, "--wd", F32, 0, 1e6, AT(cfg.weight_decay)},
    {O_TARGET_ACC, "--target-acc", F64, 0, 1, AT(cfg.target_acc)},
    {O_TARGET_LOSS, "--target-loss", F64, 0, 1e9, AT(cfg.target_loss)},
    {O_MAX_TIME, "--max-time", F64, 0, 1e15, AT(cfg.max_time)},
    {O_EVAL_EVERY, "--eval-every", F64, 1e-9, 1e15, AT(cfg.eval_every)},
    {O_MAX_APPLIES, "--max-applies", U64, 0, 0, AT(cfg.max_applies)},
    {O_MAX_PUSHES, "--max-pushes", U64, 0, 0, AT(cfg.max_pushes)},
};
#undef AT

static int numeric(sw_cli_scenario *s, const char *cmd, int code, const char *arg)
{
    for (size_t i = 0; i < sizeof numerics / sizeof numerics[0]; i++) {
        const numeric_opt *o = &numerics[i];
        if (o->code != code)
            continue;
        char *at = (char *)s + o->offset;
        long l;
        double d;
        uint64_t u;
        bool ok;
        switch (o->kind) {
        case U32:
        case LONG:
            if ((ok = sw_cli_long(cmd, o->name, arg, (long)o->lo, (long)o->hi, &l))) {
                if (o->kind == U32)
                    *(uint32_t *)at = (uint32_t)l;
                else
                    *(long *)at = l;
            }
            break;
        case F32:
        case F64:
            if ((ok = sw_cli_double(cmd, o->name, arg, o->lo, o->hi, &d))) {
                if (o->kind == F32)
                    *(float *)at = (float)d;
                else
                    *(double *)at = d;
            }
            break;
        default:
            if ((ok = sw_cli_u64(cmd, o->name, arg, &u)))
                *(uint64_t *)at = u;
        }
        return ok ? 1 : -1;
    }
    return 0;
}

int sw_cli_scenario_option(sw_cli_scenario *s, const char *cmd, int code, const char *arg)
{
    sw_sim_config *c = &s->cfg;
    switch (code) {
    case O_CLUSTER: c->cluster = arg; return 1;
    case O_NET: c->net = arg; return 1;
    case O_EVENTS: c->events = arg; return 1;
    case O_DATA: s->data_spec = arg; return 1;
    case O_MODEL: c->model = arg; return 1;
    case O_NO_MODEL: s->data_spec = NULL; return 1;
    case O_NO_CHECK: c->no_check = true; return 1;
    case O_QUIET: s->quiet = true; return 1;
    case O_VERBOSE: s->verbose = true; return 1;
    case O_BATCH_MODE:
        if (strcmp(arg, "shard") == 0)
            c->batch_mode = SW_BATCH_SHARD;
        else if (strcmp(arg, "sample") == 0)
            c->batch_mode = SW_BATCH_SAMPLE;
        else {
            sw_cli_error(cmd, "--batch-mode: '%s' is not shard or sample", arg);
            return -1;
        }
        return 1;
    default: return numeric(s, cmd, code, arg);
    }
}

const struct option *sw_cli_options(const struct option *own)
{
    static struct option all[64];
    size_t n = 0;
    for (const struct option *o = own; o->name && n < 63; o++)
        all[n++] = *o;
    for (const struct option *o = sw_cli_scenario_options; o->name && n < 63; o++)
        all[n++] = *o;
    all[n] = (struct option){0, 0, 0, 0};
    return all;
}

void sw_cli_scenario_help(void)
{
    printf("scenario:\n"
           "  --workers N            simulated workers at the start (default 10)\n"
           "  --cluster SPEC         step times (default " SW_CLI_DEFAULT_CLUSTER "):\n"
           "                         const:T, uniform:LO,HI, shexp:A,base=B, pareto:SHAPE,SCALE,\n"
           "                         straggle:p,mean,sd,base,jitter,mode=worker|step, trace:FILE;\n"
           "                         speed=F on any; per-worker groups 'SPEC@0-4;SPEC@5-9'\n"
           "  --net bw=B,lat=S       transfers: bytes per second and latency (default "
           "bw=1.25e9,lat=5e-5)\n"
           "  --events LIST          crash:w=3,t=50;leave:w=1,t=80;join:t=100;\n"
           "                         switch:t=200,policy=dssp:lo=2,hi=6 (a join without w adds\n"
           "                         a worker; policy= comes last and takes the rest)\n"
           "  --data SPEC            data set (default fashion-mnist; sparse:... or libsvm:train=...\n"
           "                         for svm and logistic)\n"
           "  --model SPEC           model (default mlp:h=1,u=256; svm and logistic are sparse\n"
           "                         linear models, whose workers pull and push only the weights\n"
           "                         their batches touch)\n"
           "  --no-model             no data and no gradients: time the engine alone\n"
           "  --batch N  --lr X  --wd X   mini-batch, learning rate, weight decay (16, 0.01, 0)\n"
           "  --batch-mode M         shard (each worker its own shard, default) or sample\n"
           "  --get-model-frequency F  workers pull every F steps, applying their own\n"
           "                         gradients locally between pulls (default 1)\n"
           "stopping (the first that holds ends a run):\n"
           "  --target-acc X         validation accuracy\n"
           "  --target-loss X        training loss (on a fixed sample of 2000 examples)\n"
           "  --max-time S  --max-applies N  --max-pushes N   virtual time and count limits\n"
           "  --patience N           stop after N evaluations without improvement, keeping\n"
           "                         the best weights\n"
           "  --eval-every S         virtual seconds between evaluations (default 20)\n"
           "other:\n"
           "  --threads N            OpenBLAS threads (default: OpenBLAS's own choice)\n"
           "  --no-check             do not hold the run to its policy's promise\n"
           "                         (docs/promises.md; a broken one ends a run)\n"
           "  -q, --quiet            print only the results\n"
           "  -v, --verbose          a progress line per evaluation, and debug messages\n");
}
