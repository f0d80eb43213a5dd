/* A comparison's plan (compare.c): its policies, seeds and options, and a job per run; the
 * table (compare_table.c) reads it once the runs are done. */
#ifndef SW_CLI_COMPARE_PLAN_H
#define SW_CLI_COMPARE_PLAN_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "compare_journal.h"
#include "scenario.h"
#include "syncwise/compare.h"
#include "syncwise/err.h"
#include "syncwise/sim.h"
#include "syncwise/stop.h"

#define CMD "compare"
#define MAX_POLICIES 32

typedef struct job {
    int policy;
    uint64_t seed;
    sw_sim_result r;
    int rc;
    bool done;
    char *row;         /* its results.csv row once done (kept from an earlier run on --resume) */
    sw__cmp_row facts; /* what the table reads of it, from the row */
    char err[SW_ERR_LEN];
} job;

typedef struct plan {
    sw_cli_scenario sc; /* first: the shared table's offsets are into it */
    const char *list;   /* --policies, as given */
    char *policies[MAX_POLICIES];
    int n_policies;
    long seeds, jobs;
    const char *baselines; /* policy-spec prefixes that count as baselines; NULL: classic */
    char *baselines_read;  /* --baselines as read (sw_cli_policy_list), ';' between the specs */
    const char *log_dir;   /* keep every run's event log and results.csv here */
    bool resume;           /* keep the runs results.csv holds for this scenario */
    sw__cmp_journal journal;
    const sw_task_data *data;
    job *runs;
    size_t n_runs, next;
    size_t done, resumed; /* runs finished, of which kept from an earlier comparison */
    double t0;
    pthread_mutex_t lock;
    const sw_stop_flag *stop; /* a signal: no run starts after it */
} plan;

/* The runs of one policy that are done and did not fail (all of them once the runs end). */
sw_trials sw__cmp_summarize(const plan *p, int policy);
/* The runs that failed, and those that diverged, one line each. */
void sw__cmp_list_failed(const plan *p, FILE *out);
/* The table, the answer in one line, the speedups seed by seed, and the runs that failed. */
void sw__cmp_report(const plan *p);

#endif
