/* The options `sim` and `compare` share: the scenario (cluster, data, model, training) and the
 * stopping rules. */
#ifndef SW_CLI_SCENARIO_H
#define SW_CLI_SCENARIO_H

#include <getopt.h>

#include "cli.h"

#define SW_CLI_DEFAULT_CLUSTER "straggle:p=0.3,mean=10,sd=4,base=4.5"

typedef struct sw_cli_scenario {
    sw_sim_config cfg;
    const char *data_spec; /* NULL: timing only, no model */
    long threads;
    bool quiet, verbose;
} sw_cli_scenario;

void sw_cli_scenario_defaults(sw_cli_scenario *s);

/* getopt_long codes of the shared options start here; commands use codes below it. */
#define SW_CLI_SCENARIO_BASE 1000
extern const struct option sw_cli_scenario_options[];

/* Handles one shared option; returns 1 if handled, 0 if not a shared option, -1 on a bad value
 * (after printing why). */
int sw_cli_scenario_option(sw_cli_scenario *s, const char *cmd, int code, const char *arg);

/* Prints the shared options for --help. */
void sw_cli_scenario_help(void);

/* Builds a getopt_long table of own options followed by the shared ones (static storage). */
const struct option *sw_cli_options(const struct option *own);

#endif
