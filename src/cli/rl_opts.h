/* Options shared by `syncwise rl train` and `syncwise rl eval`: the instances (scenario) and
 * the data they draw from. */
#ifndef SW_CLI_RL_OPTS_H
#define SW_CLI_RL_OPTS_H

#include <getopt.h>

#include "cli.h"
#include "syncwise/rl_train.h"

typedef struct sw_cli_rl {
    sw_rl_scenario sc;
    const char *data_spec;
    uint64_t seed;
    long threads;
    bool quiet;
    sw_data data;
} sw_cli_rl_opts;

void sw_cli_rl_defaults(sw_cli_rl_opts *r);

/* getopt_long codes of the shared options start here. */
#define SW_CLI_RL_BASE 2000
extern const struct option sw_cli_rl_options[];

/* 1 if handled, 0 if not a shared option, -1 on a bad value (after printing why). */
int sw_cli_rl_option(sw_cli_rl_opts *r, const char *cmd, int code, const char *arg);
void sw_cli_rl_help(void);

/* Own options followed by the shared ones, for getopt_long (static storage). */
const struct option *sw_cli_rl_table(const struct option *own);

/* Loads the data once; prints why and returns nonzero on failure. */
int sw_cli_rl_load(sw_cli_rl_opts *r, const char *cmd);

/* "12.3 s" or "4 min 05 s", for progress lines. */
void sw_cli_rl_duration(char *buf, size_t cap, double s);

#endif
