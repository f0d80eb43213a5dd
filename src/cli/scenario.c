/* Shared scenario options of `sim` and `compare`. */
#include "scenario.h"

#include <stdio.h>
#include <string.h>

#include "syncwise/policy.h"

enum {
    O_WORKERS = SW_CLI_SCENARIO_BASE, O_CLUSTER, O_NET, O_EVENTS, O_DATA, O_MODEL, O_BATCH, O_LR,
    O_WD, O_BATCH_MODE, O_GMF, O_TARGET_ACC, O_TARGET_LOSS, O_MAX_TIME, O_MAX_APPLIES,
    O_MAX_PUSHES, O_PATIENCE, O_EVAL_EVERY, O_NO_MODEL, O_THREADS, O_QUIET,
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
    {"quiet", 0, 0, O_QUIET},             {0, 0, 0, 0},
};

void sw_cli_scenario_defaults(sw_cli_scenario *s)
{
    *s = (sw_cli_scenario){.cfg = sw_sim_default_config(), .data_spec = "fashion-mnist"};
    s->cfg.cluster = SW_CLI_DEFAULT_CLUSTER;
}

static int numeric(sw_cli_scenario *s, const char *cmd, int code, const char *arg)
{
    sw_sim_config *c = &s->cfg;
    long v = 0;
    double d = 0;
    uint64_t u = 0;
    bool ok = true;
    switch (code) {
    case O_WORKERS: ok = sw_cli_long(cmd, "--workers", arg, 1, 1 << 20, &v), c->workers = (uint32_t)v; break;
    case O_BATCH: ok = sw_cli_long(cmd, "--batch", arg, 1, 1 << 16, &v), c->batch = (uint32_t)v; break;
    case O_GMF: ok = sw_cli_long(cmd, "--get-model-frequency", arg, 1, 1 << 20, &v), c->get_model_frequency = (uint32_t)v; break;
    case O_PATIENCE: ok = sw_cli_long(cmd, "--patience", arg, 0, 1 << 20, &v), c->patience = (uint32_t)v; break;
    case O_THREADS: ok = sw_cli_long(cmd, "--threads", arg, 0, 256, &s->threads); break;
    case O_LR: ok = sw_cli_double(cmd, "--lr", arg, 0, 1e6, &d), c->lr = (float)d; break;
    case O_WD: ok = sw_cli_double(cmd, "--wd", arg, 0, 1e6, &d), c->weight_decay = (float)d; break;
    case O_TARGET_ACC: ok = sw_cli_double(cmd, "--target-acc", arg, 0, 1, &c->target_acc); break;
    case O_TARGET_LOSS: ok = sw_cli_double(cmd, "--target-loss", arg, 0, 1e9, &c->target_loss); break;
    case O_MAX_TIME: ok = sw_cli_double(cmd, "--max-time", arg, 0, 1e15, &c->max_time); break;
    case O_EVAL_EVERY: ok = sw_cli_double(cmd, "--eval-every", arg, 1e-9, 1e15, &c->eval_every); break;
    case O_MAX_APPLIES: ok = sw_cli_u64(cmd, "--max-applies", arg, &u), c->max_applies = u; break;
    case O_MAX_PUSHES: ok = sw_cli_u64(cmd, "--max-pushes", arg, &u), c->max_pushes = u; break;
    default: return 0;
    }
    return ok ? 1 : -1;
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
    case O_QUIET: s->quiet = true; return 1;
    case O_BATCH_MODE:
        if (strcmp(arg, "shard") == 0)
            c->batch_mode = SW_BATCH_SHARD;
        else if (strcmp(arg, "sample") == 0)
            c->batch_mode = SW_BATCH_SAMPLE;
        else
            return sw_cli_error(cmd, "--batch-mode: '%s' is not shard or sample", arg), -1;
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
           "  --events LIST          crash:w=3,t=50;leave:w=1,t=80;join:t=100\n"
           "  --data SPEC            data set (default fashion-mnist)\n"
           "  --model SPEC           model (default mlp:h=1,u=256)\n"
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
           "  -q, --quiet            print only the results\n");
}
