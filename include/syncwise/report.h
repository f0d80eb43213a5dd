/* The data of a report: tidy CSV files from event logs (the simulator's or a server's) and
 * ZipLine traces, one row per observation with a `run` column naming the log it came from, so
 * that any tool can group and plot them without syncwise (`syncwise report` plots them through
 * gnuplot).
 *
 *   runs.csv       run, policy, workers, seed, model, events (lines of its log)
 *   evals.csv      run, policy, t, V, loss, acc (empty for a regression task)
 *   applies.csv    run, policy, t, V, n (gradients in the apply)
 *   timeline.csv   run, policy, worker, state (running or waiting), start, end
 *   staleness.csv  run, policy, staleness, count, share (of the run's applied gradients)
 *   zipline.csv    trace, candidate, d
 *   targets.csv    run, policy, seed, reached, time (to the target, or to the end when it was
 *                  not reached), end
 *   accuracy_mean.csv  policy, t, mean, lo, hi, runs: each policy's validation accuracy over
 *                  its runs (seeds) on a grid of virtual times, lo and hi the lowest and
 *                  highest run; a run holds its last evaluation after it ended
 *
 * A run reached its target when its log ended on it ("target accuracy" or "target loss"), or,
 * given a target accuracy here, at its first evaluation at or above it.
 */
#ifndef SYNCWISE_REPORT_H
#define SYNCWISE_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "syncwise/compare.h"
#include "syncwise/run.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
    SW_CSV_RUNS,
    SW_CSV_EVALS,
    SW_CSV_APPLIES,
    SW_CSV_TIMELINE,
    SW_CSV_STALENESS,
    SW_CSV_ZIPLINE,
    SW_CSV_TARGETS,
    SW_CSV_ACCURACY,
    SW_CSV_COUNT
};

#define SW_REPORT_GRID 200    /* points of accuracy_mean.csv per policy */

/* What the summary keeps of each run. */
typedef struct sw_report_run {
    char name[256];   /* from its file: "ssp-s=3-seed1" */
    char spec[256];   /* its policy as its log spells it */
    char policy[256]; /* as the tables label it (sw_report_label), one label a spec */
    uint64_t seed;
    double end_t;
    bool ended_on_target; /* its end line says so */
    bool finished;        /* its log ends with an end line (after its last start line) */
    double target_acc;    /* from its start line, 0 for none */
    bool regress;         /* a regression task: its evaluations have no accuracy (NAN) */
    double idle;          /* share of worker time spent waiting */
    uint64_t applies;
    size_t n_evals;
    double *eval_t, *eval_acc;
    uint32_t switches;      /* policy switches in its log */
    char switched_to[256];  /* the policy the last one took up */
} sw_report_run;

/* One policy's line of the summary. */
typedef struct sw_report_policy {
    char policy[256];
    sw_trials trials;
    sw_paired paired; /* over the best baseline, seed by seed (its runs paired with the
                       * baseline's of the same seed; n = 0 for the baseline itself) */
} sw_report_policy;

typedef struct sw_report {
    const char *dir;
    FILE *csv[SW_CSV_COUNT];
    uint32_t n_runs, workers;
    uint64_t zipline_rows;
    char (*traces)[256];     /* the ZipLine traces' names, n_traces of them: their column in
                              * zipline.csv, one series each in its plot */
    uint32_t n_traces;
    double target_acc;       /* given, or the runs' own (0: each run's end line decides) */
    double longest;          /* the latest end of any run */
    bool real_time;          /* a run's clock was real (a server's), not virtual */
    sw_report_run *runs;     /* n_runs of them */
    sw_report_policy *policies;
    int n_policies, best;    /* best: the best baseline (syncwise/compare.h), or -1 */
    int fastest;             /* the best of all policies by the same ranking, or -1 */
    sw_run_info first;       /* the first run's start line: the setting of the comparison */
    char first_name[256];    /* its run's name */
    char mixed[768];         /* "" or the first way a run's setting differs from the first's
                              * (model, workers, cluster, ...): its times compare with nothing */
    char unfinished[384];    /* "" or which runs the times to target leave out: their logs stop
                              * without an end line (killed, still going) short of the target */
    char switched[512];      /* "" or which runs switched policies: each counts in the tables
                              * as the policy it started with */
} sw_report;

/* A policy spec as the tables label it, in place: in the tidy CSV files and gnuplot's columns a
 * comma would split its column, a double quote end it, and gnuplot reads a backslash as an
 * escape, so they become ' ', ' and /. Two specs that this makes one label (differing only in
 * those characters) stay two policies: the report labels the second " ~2", and so on. */
void sw_report_label(char *spec);

/* The file name of one of the tables (SW_CSV_RUNS, ...). */
const char *sw_report_csv_name(int which);
/* Creates the tables in dir (which must exist), each with its header line. */
int sw_report_open(sw_report *r, const char *dir, char *err);
/* Adds one run's log (one start line: a log of a resumed server is refused) or one ZipLine
 * trace ("candidate,d" rows after a header). Fails with the file and line at fault. */
int sw_report_add_log(sw_report *r, const char *path, char *err);
int sw_report_add_trace(sw_report *r, const char *path, char *err);
/* Writes targets.csv and accuracy_mean.csv and summarises each policy (r->policies); with
 * target_acc > 0 a run reached its target at its first evaluation at or above it (refused,
 * SW_EINVAL, when a run is of a regression task). baselines: the policies the speedups are
 * over, ';' between whole specs as in sw_is_baseline (each must be a policy of the runs, else
 * SW_EINVAL), or NULL for every bsp, asp and ssp. Call after the last log, before
 * sw_report_close. */
int sw_report_summarize(sw_report *r, double target_acc, const char *baselines, char *err);

/* The summary as a Markdown table, with the answer in a sentence before it. */
void sw_report_write_table(const sw_report *r, FILE *md);

/* Closes the tables; fails when one could not be written in full. The summary stays until
 * sw_report_free. */
int sw_report_close(sw_report *r, char *err);
void sw_report_free(sw_report *r);

#ifdef __cplusplus
}
#endif

#endif
