/* The options `sim` and `compare` share: the scenario (cluster, data, model, training) and the
 * stopping rules, as one option table (opts.h) over sw_cli_scenario. */
#ifndef SW_CLI_SCENARIO_H
#define SW_CLI_SCENARIO_H

#include "cli.h"
#include "optim_opts.h"
#include "opts.h"

#define SW_CLI_DEFAULT_CLUSTER "straggle:p=0.3,mean=10,sd=4,base=4.5"

typedef struct sw_cli_scenario {
    sw_sim_config cfg;
    const char *data_spec; /* NULL: timing only, no model */
    bool no_model;         /* --no-model given: --data and --model are refused */
    sw_cli_optim optim;    /* into cfg.optim */
    long threads;
    bool quiet, verbose;
} sw_cli_scenario;

/* The virtual-time limit of a run given no time, apply or push limit (a target that is never
 * reached must not run forever). */
#define SW_CLI_DEFAULT_MAX_TIME 50000.0

void sw_cli_scenario_defaults(sw_cli_scenario *s);
/* After parsing: the scenario checked with each of the n policies (sw_sim_check_config) before
 * anything runs, and the default time limit where no limit was given (said unless -q, whose log
 * level, like -v's, is set here). 0, or
 * after saying what is wrong 2 (a bad spec: a usage error) or 1 (a file it names is unusable). */
int sw_cli_scenario_finish(sw_cli_scenario *s, const char *cmd, const char *const *policies,
                           int n);

/* Once the data are loaded (data: NULL without a model): the model on them, the targets and
 * every worker's share, checked before any run or log is opened. 0, or the exit status after
 * saying what is wrong (sw_cli_scenario_status). */
int sw_cli_scenario_check_data(sw_cli_scenario *s, const char *cmd, const char *policy,
                               const sw_task_data *data);
/* The exit status of a scenario refused before it ran: 2 for what the command line got wrong
 * (a spec, a value, a model that does not fit its data), 1 for what failed (a file). */
int sw_cli_scenario_status(int rc);
/* The exit status of a data set or model that could not be loaded: 2 for an unknown name or
 * key (the command line's), 1 for a file that cannot be read or is not what it claims. */
int sw_cli_load_status(int rc);

/* The shared table: its offsets are into sw_cli_scenario, which must therefore be the first
 * member of a command's options struct. */
extern const sw_opt sw_cli_scenario_opts[];

#endif
