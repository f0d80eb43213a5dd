/* `syncwise rl eval`: its plan and results, shared by the runs (rl_eval.c) and the report
 * (rl_eval_report.c). */
#ifndef SW_CLI_RL_EVAL_H
#define SW_CLI_RL_EVAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>

#include "rl_opts.h"

#define SW_RL_EVAL_MAX_POLICIES 24
/* The worker slots a baseline's spec is tried with before any run: more than an instance draws,
 * so that only what no instance could run is refused up front. */
#define SW_RL_EVAL_CHECK_SLOTS 4096

typedef struct sw_rl_eval {
    sw_cli_rl_opts rl; /* first: the shared options' offsets are into it */
    const char *policy_file, *baselines, *csv_path;
    long instances, seeds, jobs;
    char specs[SW_RL_EVAL_MAX_POLICIES][300]; /* [0]: the learned policy */
    int n;
    sw_rl_run *runs; /* [(instance * seeds + seed) * n + policy] */
    bool *finished;  /* by the same index */
    FILE *csv;       /* rows written as soon as every run before them is done */
    /* While the runs go on: the next run to take, how many are done and written, the first
     * error. */
    pthread_mutex_t lock;
    long next, done, written, total;
    double t0;
    int rc;
    char err[512];
} sw_rl_eval;

/* Run `seed` of `instance` under policy k. */
static inline const sw_rl_run *sw_rl_eval_run(const sw_rl_eval *p, long instance, long seed,
                                              int k)
{
    return &p->runs[(instance * p->seeds + seed) * p->n + k];
}

/* The tables: every policy over all instances, the learned policy's speedups over each
 * baseline, the best SSP, the best single classic policy and the best classic policy of each
 * instance; with a family of scenarios, the same per part (each key=value an instance drew),
 * with the gradients ASP and BSP needed (the RLP paper's Table 1). */
void sw_rl_eval_report(const sw_rl_eval *p);

#endif
