/* Options shared by `syncwise rl train` and `syncwise rl eval`: the instances (scenario) and
 * the data they draw from. */
#ifndef SW_CLI_RL_OPTS_H
#define SW_CLI_RL_OPTS_H

#include "cli.h"
#include "optim_opts.h"
#include "opts.h"
#include "syncwise/rl_train.h"

typedef struct sw_cli_rl {
    sw_rl_scenario sc;
    const char *data_spec;
    uint64_t seed;
    long threads;
    bool quiet;
    sw_data data;
    sw_cli_optim optim; /* into sc.optimizers */
    char optim_spec[SW_OPTIM_SPEC_LEN]; /* one optimizer's canonical spec, for sc.optimizers */
} sw_cli_rl_opts;

void sw_cli_rl_defaults(sw_cli_rl_opts *r);

/* The shared options (opts.h): offsets into sw_cli_rl_opts, which must therefore be the first
 * member of a command's options struct. */
extern const sw_opt sw_cli_rl_opts_table[];
/* The options that shape training's rewards (--reward-unit, ...): rl train's only. */
extern const sw_opt sw_cli_rl_reward_table[];

/* Takes the optimizer options and loads the data once; prints why and returns nonzero (2 for
 * contradictory options) on failure. */
int sw_cli_rl_load(sw_cli_rl_opts *r, const char *cmd);

/* "12.3 s" or "4 min 05 s", for progress lines. */
void sw_cli_rl_duration(char *buf, size_t cap, double s);

#endif
