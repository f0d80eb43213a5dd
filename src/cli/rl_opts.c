/* The instance options of `syncwise rl`: one table, parsed in one place. */
#include "rl_opts.h"
#include "scenario.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "syncwise/err.h"
#include "syncwise/logread.h"
#include "syncwise/optim.h"
#include "syncwise/task.h"

#define AT(field) offsetof(sw_cli_rl_opts, field)
const sw_opt sw_cli_rl_opts_table[] = {
    SW_OPT_HEADING("instances (the RLP paper's section 4; each numbered instance draws its\n"
                   "model, its share of the data and its stragglers from the seed; a list\n"
                   "'A|B|...' of workers, clusters, models, learning rates or optimizers makes\n"
                   "a family: each instance draws one entry of each list, independently)"),
    {SW_OPT_ROW(SW_OPT_STR, "data", 0, AT(data_spec), 0, 0, "SPEC", "data set")},
    {SW_OPT_ROW(SW_OPT_F64, "data-frac", 0, AT(sc.data_frac), 1e-6, 1, "F",
                "random share of the training set per instance")},
    {SW_OPT_ROW(SW_OPT_STR, "workers", 0, AT(sc.workers), 0, 0, "'N|...'", "simulated workers")},
    {SW_OPT_ROW(SW_OPT_STR, "cluster", 0, AT(sc.cluster), 0, 0, "'SPEC|...'", "step times")},
    {SW_OPT_ROW(SW_OPT_STR, "models", 0, AT(sc.models), 0, 0, "'A|B|...'", "models to draw from")},
    {SW_OPT_ROW(SW_OPT_U32, "batch", 0, AT(sc.batch), 1, 65536, "N",
                "mini-batch of the trained model")},
    {SW_OPT_ROW(SW_OPT_STR, "lr", 0, AT(sc.lrs), 0, 0, "'X|...'",
                "learning rate of the trained model")},
    {SW_OPT_ROW(SW_OPT_STR, "optimizer", 0, AT(optim.spec), 0, 0, "'SPEC|...'",
                "the server's update: sgd, sgd:momentum=MU[,nesterov=1] or\n"
                "adam[:beta1=B1,beta2=B2,eps=E] (the papers use plain sgd)")},
    {SW_OPT_ROW(SW_OPT_F32, "momentum", 0, AT(optim.momentum), 0, 0.9999, "MU",
                "heavy-ball momentum: --optimizer sgd:momentum=MU (one optimizer)")},
    {SW_OPT_ROW(SW_OPT_FLAG, "nesterov", 0, AT(optim.nesterov), 0, 0, NULL,
                "Nesterov momentum (with --momentum)")},
    {SW_OPT_ROW(SW_OPT_F64, "target-acc", 0, AT(sc.target_acc), 1e-6, 1, "X",
                "an episode ends at this validation accuracy")},
    {SW_OPT_ROW(SW_OPT_U64, "max-pushes", 0, AT(sc.max_pushes), 0, 0, "N",
                "and at the latest after N pushes (0: no limit)")},
    {SW_OPT_ROW(SW_OPT_U64, "seed", 0, AT(seed), 0, SW_LOG_MAX_SEED, "N",
                "seed of instances, weights and exploration (at most\n2^53)")},
    {SW_OPT_ROW(SW_OPT_LONG, "threads", 0, AT(threads), 0, 1024, "N",
                "OpenBLAS threads (0: its own choice)")},
    SW_OPT_END_ROW,
};

const sw_opt sw_cli_rl_reward_table[] = {
    SW_OPT_HEADING("rewards (of training only: an evaluation has none)"),
    {SW_OPT_ROW(SW_OPT_F64, "reward-unit", 0, AT(sc.reward_unit), 0, 1e9, "S",
                "seconds a reward of -1 stands for"),
     .shown = "4.5 s / workers; 45 s with --features stretch"},
    {SW_OPT_ROW(SW_OPT_F64, "reward-progress", 0, AT(sc.reward_progress), 0, 1e9, "X",
                "also reward X per fall of the probe loss by its first value\n"
                "(not the paper's reward; 0: minus the time alone)")},
    {SW_OPT_ROW(SW_OPT_F64, "switch-cost", 0, AT(sc.switch_cost), 0, 1e9, "X",
                "also cost X per decision that changes the action of\n"
                "the one before (not the paper's; for --features stretch)")},
    SW_OPT_END_ROW,
};
#undef AT

void sw_cli_rl_defaults(sw_cli_rl_opts *r)
{
    memset(r, 0, sizeof *r);
    r->sc = sw_rl_default_scenario();
    r->data_spec = "fashion-mnist:val=1000";
    r->seed = 1;
    r->threads = 1;
    r->optim.spec = "sgd";
}

/* --optimizer as the scenario's list: a list as it is, one optimizer with --momentum and
 * --nesterov folded in (its canonical spec). */
static int resolve_optimizers(sw_cli_rl_opts *r, char *err)
{
    bool list = r->optim.spec && strchr(r->optim.spec, '|');
    if (list && (r->optim.momentum > 0 || r->optim.nesterov))
        return sw_fail(err, SW_EINVAL, "--momentum and --nesterov go with one optimizer; in a "
                                       "list write sgd:momentum=MU[,nesterov=1]");
    if (list) {
        r->sc.optimizers = r->optim.spec;
        return 0;
    }
    sw_optim_params o;
    int rc = sw_cli_optim_resolve(&r->optim, &o, err);
    if (!rc) {
        sw_optim_format(&o, r->optim_spec);
        r->sc.optimizers = r->optim_spec;
    }
    return rc;
}

int sw_cli_rl_load(sw_cli_rl_opts *r, const char *cmd)
{
    sw_cli_set_threads(r->threads);
    char err[SW_ERR_LEN];
    if (resolve_optimizers(r, err))
        return sw_cli_error(cmd, "%s", err) + 1;
    r->sc.data = NULL; /* the lists and model specs first: the data take seconds */
    if (sw_rl_scenario_check(&r->sc, err))
        return sw_cli_error(cmd, "%s", err) + 1;
    int rc = sw_data_load(&r->data, r->data_spec, SW_DATA_SEED, err); /* as sim's */
    if (rc) /* a bad spec is a usage error (2), a file that cannot be read is not (1) */
        return sw_cli_error(cmd, "%s", err) * sw_cli_load_status(rc);
    r->sc.data = &r->data; /* the models are tried on it */
    if (sw_rl_scenario_check(&r->sc, err)) {
        sw_data_free(&r->data);
        r->sc.data = NULL;
        return sw_cli_error(cmd, "%s", err) + 1;
    }
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
