/* Shared scenario options of `sim` and `compare` (scenario.h). */
#include "scenario.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "syncwise/err.h"
#include "syncwise/log.h"
#include "syncwise/policy.h"
#include "syncwise/spec.h"

_Static_assert(sizeof(sw_batch_mode) == sizeof(int), "--batch-mode stores an int");

void sw_cli_scenario_defaults(sw_cli_scenario *s)
{
    *s = (sw_cli_scenario){.cfg = sw_sim_default_config(),
                           .data_spec = "fashion-mnist",
                           .optim.spec = "sgd",
                           .threads = 1}; /* OpenBLAS's sums depend on its threads: one, so a log is
                                           * the machine's cores' no more than compare's */
    s->cfg.cluster = SW_CLI_DEFAULT_CLUSTER;
}

/* A policy that decides from the model (its loss, its gradients' norms) sees none in a run
 * without one (a loss of NaN, norms of 0; syncwise/engine.h): allowed (its timing still shows),
 * but said. */
static void warn_blind(const char *policy)
{
    char name[SW_SPEC_NAME_LEN];
    snprintf(name, sizeof name, "%.*s", (int)strcspn(policy, ":"), policy);
    unsigned wants = sw_policy_spec_wants(policy);
    if (wants & (SW_WANT_LOSS | SW_WANT_SQ_NORM))
        sw_log(SW_LOG_WARN, "%s decides from the model's %s, which a run without a model "
               "(--no-model) does not have: it sees %s", name,
               (wants & SW_WANT_LOSS) ? "loss" : "gradient norms",
               (wants & SW_WANT_LOSS) ? "a loss of NaN" : "norms of 0");
}

static bool has_limit(const sw_sim_config *c)
{
    return c->max_time > 0 || c->max_applies || c->max_pushes;
}

int sw_cli_scenario_finish(sw_cli_scenario *s, const char *cmd, const char *const *policies, int n)
{
    sw_cli_set_verbosity(s->quiet, s->verbose);
    sw_sim_config *c = &s->cfg;
    char err[SW_ERR_LEN];
    sw_cli_scenario d;
    sw_cli_scenario_defaults(&d);
    if (s->no_model &&
        (strcmp(s->data_spec, d.data_spec) != 0 || strcmp(c->model, d.cfg.model) != 0)) {
        sw_cli_error(cmd, "--no-model runs without data or a model: --data and --model would "
                          "not be used");
        return 2;
    }
    if (s->no_model)
        s->data_spec = NULL;
    if (s->data_spec && sw_task_model_known(c->model, err)) {
        sw_cli_error(cmd, "%s", err);
        return 2;
    }
    if (sw_cli_optim_resolve(&s->optim, &c->optim, err)) {
        sw_cli_error(cmd, "%s", err);
        return 2;
    }
    if (!s->data_spec && (c->target_acc > 0 || c->target_loss > 0 || c->patience)) {
        sw_cli_error(cmd, "--no-model runs have no accuracy or loss: targets and --patience "
                          "need a model");
        return 2;
    }
    for (int i = 0; i < n; i++) { /* before data are loaded or any run starts */
        sw_sim_config one = *c;
        one.policy = policies[i];
        if (!has_limit(c)) /* given below, once the runs are known to start */
            one.max_time = SW_CLI_DEFAULT_MAX_TIME;
        int rc = sw_sim_check_config(&one, err);
        if (rc) {
            sw_cli_error(cmd, "%s", err);
            return sw_cli_scenario_status(rc);
        }
        if (!s->data_spec)
            warn_blind(policies[i]);
    }
    if (!has_limit(c)) {
        c->max_time = SW_CLI_DEFAULT_MAX_TIME;
        sw_log(SW_LOG_INFO,
               "no time, apply or push limit given: a run stops at %.0f virtual s "
               "at the latest (--max-time)",
               c->max_time);
    }
    return 0;
}

int sw_cli_scenario_check_data(sw_cli_scenario *s, const char *cmd, const char *policy,
                               const sw_task_data *data)
{
    sw_sim_config one = s->cfg;
    one.policy = policy;
    one.data = data;
    char err[SW_ERR_LEN];
    int rc = data ? sw_sim_check_config(&one, err) : 0;
    if (!rc)
        return 0;
    sw_cli_error(cmd, "%s", err);
    return sw_cli_scenario_status(rc);
}

int sw_cli_load_status(int rc)
{
    return rc == SW_ENOTFOUND || rc == SW_EINVAL ? 2 : 1;
}

int sw_cli_scenario_status(int rc)
{
    /* a bad spec is a usage error; a file it names that cannot be read is not */
    return rc == SW_EINVAL || rc == SW_ENOTFOUND || rc == SW_ERANGE || rc == SW_EMISMATCH ? 2 : 1;
}

static bool no_model(void *opts, const char *cmd, const char *arg)
{
    (void)cmd, (void)arg;
    ((sw_cli_scenario *)opts)->no_model = true;
    return true;
}

static const char *const batch_modes[] = {"shard", "sample", NULL};

#define AT(field) offsetof(sw_cli_scenario, field)
const sw_opt sw_cli_scenario_opts[] = {
    SW_OPT_HEADING("scenario"),
    {SW_OPT_ROW(SW_OPT_U32, "workers", 0, AT(cfg.workers), 1, 1 << 20, "N",
                "simulated workers at the start")},
    {SW_OPT_ROW(SW_OPT_STR, "cluster", 0, AT(cfg.cluster), 0, 0, "SPEC",
                "step times: const:T, uniform:LO,HI, shexp:A,base=B,\n"
                "pareto:SHAPE,SCALE, straggle:p=P,mean=M,sd=S,base=B,\n"
                "jitter=J,mode=worker|step, trace:FILE (rows 'worker,seconds'\n"
                "or 'seconds' for all); speed=F (F times slower) on any;\n"
                "groups of workers 'SPEC@0-4;SPEC@5-9'")},
    {SW_OPT_ROW(SW_OPT_STR, "net", 0, AT(cfg.net), 0, 0, "bw=B,lat=S",
                "transfers: bytes per second and latency; params=N sizes a\n"
                "run without a model; shards=S[,server_bw=B,decide=S,\n"
                "fanout=S,entry=S,chunk=BYTES] queues transfers on S shard\n"
                "links and pushes on one control plane working in turns\n"
                "(0: one server, no shards; chunk= as server --chunk;\n"
                "docs/simulator.md)")},
    {SW_OPT_ROW(SW_OPT_STR, "events", 0, AT(cfg.events), 0, 0, "LIST",
                "crash:w=3,t=50;leave:w=1,t=80;join:t=100;\n"
                "switch:t=200,policy=dssp:lo=2,hi=6 (a join without w adds\n"
                "a worker; policy= comes last and takes the rest)")},
    {SW_OPT_ROW(SW_OPT_STR, "data", 0, AT(data_spec), 0, 0, "SPEC",
                "data set (sparse:... or libsvm:train=... for svm and\nlogistic)")},
    {SW_OPT_ROW(SW_OPT_STR, "model", 0, AT(cfg.model), 0, 0, "SPEC",
                "model (svm and logistic are sparse linear models, whose\n"
                "workers pull and push only the weights their batches\ntouch)")},
    {SW_OPT_ROW(SW_OPT_CALL, "no-model", 0, 0, 0, 0, NULL,
                "no data and no gradients: time the engine alone"),
     .call = no_model},
    {SW_OPT_ROW(SW_OPT_U32, "batch", 0, AT(cfg.batch), 1, 1 << 16, "N", "mini-batch")},
    {SW_OPT_ROW(SW_OPT_F32, "lr", 0, AT(cfg.lr), 0, 1e6, "X",
                "learning rate (a policy's own lr=X overrides it)")},
    {SW_OPT_ROW(SW_OPT_F32, "wd", 0, AT(cfg.weight_decay), 0, 1e6, "X", "weight decay")},
    SW_CLI_OPTIM_ROWS(AT(optim)),
    {SW_OPT_ROW(
         SW_OPT_CHOICE, "batch-mode", 0, AT(cfg.batch_mode), 0, 0, "M",
         "shard (each worker its own shard) or sample (the whole\nset in each worker's order)"),
     .choices = batch_modes},
    {SW_OPT_ROW(SW_OPT_U32, "get-model-frequency", 0, AT(cfg.get_model_frequency), 1, 1 << 20, "F",
                "workers pull every F steps, applying their own gradients\nlocally between pulls")},
    SW_OPT_HEADING("stopping (the first that holds ends a run)"),
    {SW_OPT_ROW(SW_OPT_F64, "target-acc", 0, AT(cfg.target_acc), 1e-6, 1, "X",
                "validation accuracy")},
    {SW_OPT_ROW(SW_OPT_F64, "target-loss", 0, AT(cfg.target_loss), 1e-12, 1e9, "X",
                "training loss (on a fixed sample of 2000 examples)")},
    {SW_OPT_ROW(SW_OPT_F64, "max-time", 0, AT(cfg.max_time), 1e-9, 1e15, "S", "virtual seconds"),
     .shown = "50000 if no limit is given"},
    {SW_OPT_ROW(SW_OPT_U64, "max-applies", 0, AT(cfg.max_applies), 0, 0, "N",
                "applies (0: no limit)")},
    {SW_OPT_ROW(SW_OPT_U64, "max-pushes", 0, AT(cfg.max_pushes), 0, 0, "N",
                "pushes (0: no limit)")},
    {SW_OPT_ROW(SW_OPT_U32, "patience", 0, AT(cfg.patience), 0, 1 << 20, "N",
                "evaluations without improvement, keeping the best weights\n"
                "(0: no such stop)")},
    {SW_OPT_ROW(SW_OPT_F64, "eval-every", 0, AT(cfg.eval_every), 1e-9, 1e15, "S",
                "virtual seconds between evaluations")},
    SW_OPT_HEADING("other"),
    {SW_OPT_ROW(SW_OPT_LONG, "threads", 0, AT(threads), 0, 256, "N",
                "OpenBLAS threads (0: its own choice; the model's\n"
                "sums, so the log, then depend on the machine's cores)")},
    {SW_OPT_ROW(SW_OPT_FLAG, "no-check", 0, AT(cfg.no_check), 0, 0, NULL,
                "do not hold the run to its policy's promise\n"
                "(docs/promises.md; a broken one ends a run)")},
    {SW_OPT_ROW(SW_OPT_FLAG, "quiet", 'q', AT(quiet), 0, 0, NULL, "print only the results")},
    {SW_OPT_ROW(SW_OPT_FLAG, "verbose", 'v', AT(verbose), 0, 0, NULL,
                "a progress line per evaluation, and debug messages")},
    SW_OPT_END_ROW,
};
#undef AT
