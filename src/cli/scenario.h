/* The options `sim` and `compare` share: the scenario (cluster, data, model, training) and the
 * stopping rules, as one option table (opts.h) over sw_cli_scenario. */
#ifndef SW_CLI_SCENARIO_H
#define SW_CLI_SCENARIO_H

#include "cli.h"
#include "opts.h"

#define SW_CLI_DEFAULT_CLUSTER "straggle:p=0.3,mean=10,sd=4,base=4.5"

typedef struct sw_cli_scenario {
    sw_sim_config cfg;
    const char *data_spec; /* NULL: timing only, no model */
    long threads;
    bool quiet, verbose;
} sw_cli_scenario;

void sw_cli_scenario_defaults(sw_cli_scenario *s);

/* The shared table: its offsets are into sw_cli_scenario, which must therefore be the first
 * member of a command's options struct. */
extern const sw_opt sw_cli_scenario_opts[];

#endif
