/* The instance options of `syncwise rl`: one table, parsed in one place. */
#include "rl_opts.h"

#include <stdio.h>
#include <string.h>

#include "syncwise/err.h"

enum {
    O_DATA = SW_CLI_RL_BASE,
    O_FRAC,
    O_WORKERS,
    O_CLUSTER,
    O_MODELS,
    O_BATCH,
    O_LR,
    O_TARGET,
    O_MAX_PUSHES,
    O_SEED,
    O_THREADS,
    O_UNIT,
};

const struct option sw_cli_rl_options[] = {
    {"data", 1, 0, O_DATA},
    {"data-frac", 1, 0, O_FRAC},
    {"workers", 1, 0, O_WORKERS},
    {"cluster", 1, 0, O_CLUSTER},
    {"models", 1, 0, O_MODELS},
    {"batch", 1, 0, O_BATCH},
    {"lr", 1, 0, O_LR},
    {"target-acc", 1, 0, O_TARGET},
    {"max-pushes", 1, 0, O_MAX_PUSHES},
    {"seed", 1, 0, O_SEED},
    {"threads", 1, 0, O_THREADS},
    {"reward-unit", 1, 0, O_UNIT},
    {0, 0, 0, 0},
};

void sw_cli_rl_defaults(sw_cli_rl_opts *r)
{
    memset(r, 0, sizeof *r);
    r->sc = sw_rl_default_scenario();
    r->data_spec = "fashion-mnist:val=1000";
    r->seed = 1;
    r->threads = 1;
}

int sw_cli_rl_option(sw_cli_rl_opts *r, const char *cmd, int code, const char *arg)
{
    long v;
    double d;
    switch (code) {
    case O_DATA: r->data_spec = arg; return 1;
    case O_CLUSTER: r->sc.cluster = arg; return 1;
    case O_MODELS: r->sc.models = arg; return 1;
    case O_FRAC: return sw_cli_double(cmd, "--data-frac", arg, 1e-6, 1, &r->sc.data_frac) ? 1 : -1;
    case O_WORKERS:
        if (!sw_cli_long(cmd, "--workers", arg, 1, 100000, &v))
            return -1;
        r->sc.workers = (uint32_t)v;
        return 1;
    case O_BATCH:
        if (!sw_cli_long(cmd, "--batch", arg, 1, 65536, &v))
            return -1;
        r->sc.batch = (uint32_t)v;
        return 1;
    case O_LR:
        if (!sw_cli_double(cmd, "--lr", arg, 1e-9, 100, &d))
            return -1;
        r->sc.lr = (float)d;
        return 1;
    case O_TARGET:
        return sw_cli_double(cmd, "--target-acc", arg, 1e-6, 1, &r->sc.target_acc) ? 1 : -1;
    case O_UNIT:
        return sw_cli_double(cmd, "--reward-unit", arg, 0, 1e9, &r->sc.reward_unit) ? 1 : -1;
    case O_MAX_PUSHES: return sw_cli_u64(cmd, "--max-pushes", arg, &r->sc.max_pushes) ? 1 : -1;
    case O_SEED: return sw_cli_u64(cmd, "--seed", arg, &r->seed) ? 1 : -1;
    case O_THREADS: return sw_cli_long(cmd, "--threads", arg, 0, 1024, &r->threads) ? 1 : -1;
    default: return 0;
    }
}

void sw_cli_rl_help(void)
{
    printf("instances (the RLP paper's section 4; each numbered instance draws its model,\n"
           "its share of the data and its stragglers from the seed):\n"
           "  --data SPEC          data set (default fashion-mnist:val=1000)\n"
           "  --data-frac F        random share of the training set per instance (0.5)\n"
           "  --workers N          simulated workers (10)\n"
           "  --cluster SPEC       step times (default straggle:p=0.3,mean=10,sd=4,base=4.5)\n"
           "  --models 'A|B|...'   models to draw from (default mlp:h=0|mlp:h=1,u=256|\n"
           "                       mlp:h=2,u=256|mlp:h=3,u=256)\n"
           "  --batch N  --lr X    mini-batch and learning rate of the trained model (16, 0.01)\n"
           "  --target-acc X       an episode ends at this validation accuracy (0.80)\n"
           "  --max-pushes N       and at the latest after N pushes (20000)\n"
           "  --reward-unit S      seconds a reward of -1 stands for (default: 4.5 s / workers,\n"
           "                       the push interval of ASP on the default cluster)\n"
           "  --seed N             seed of instances, weights and exploration (1)\n"
           "  --threads N          OpenBLAS threads (1)\n");
}

const struct option *sw_cli_rl_table(const struct option *own)
{
    static struct option all[64];
    size_t n = 0;
    for (const struct option *o = own; o->name && n < 40; o++)
        all[n++] = *o;
    for (const struct option *o = sw_cli_rl_options; o->name && n < 63; o++)
        all[n++] = *o;
    all[n] = (struct option){0, 0, 0, 0};
    return all;
}

int sw_cli_rl_load(sw_cli_rl_opts *r, const char *cmd)
{
    sw_cli_set_threads(r->threads);
    char err[SW_ERR_LEN];
    if (sw_data_load(&r->data, r->data_spec, r->seed, err))
        return sw_cli_error(cmd, "%s", err);
    r->sc.data = &r->data;
    return 0;
}

void sw_cli_rl_duration(char *buf, size_t cap, double s)
{
    if (s < 60)
        snprintf(buf, cap, "%.1f s", s);
    else
        snprintf(buf, cap, "%d min %02d s", (int)(s / 60), (int)s % 60);
}

int sw_cli_rl(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "train") == 0)
        return sw_cli_rl_train(argc - 1, argv + 1);
    if (argc >= 2 && strcmp(argv[1], "eval") == 0)
        return sw_cli_rl_eval(argc - 1, argv + 1);
    if (argc >= 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
        printf("usage: syncwise rl train|eval [OPTIONS]\n\n"
               "  train   learn a synchronization policy by deep Q-learning on the simulator\n"
               "  eval    compare a learned policy with classic ones on fresh instances\n\n"
               "`syncwise rl train --help` and `syncwise rl eval --help` list the options.\n");
        return 0;
    }
    return sw_cli_error("rl", "expected 'train' or 'eval' (see syncwise rl --help)") + 1;
}
