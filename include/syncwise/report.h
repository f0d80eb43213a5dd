/* The data of a report: tidy CSV files from event logs (the simulator's or a server's) and
 * ZipLine traces, one row per observation with a `run` column naming the log it came from, so
 * that any tool can group and plot them without syncwise (`syncwise report` plots them through
 * gnuplot).
 *
 *   runs.csv       run, policy, workers, seed, model, events (lines of its log)
 *   evals.csv      run, policy, t, V, loss, acc
 *   applies.csv    run, policy, t, V, n (gradients in the apply)
 *   timeline.csv   run, policy, worker, state (running or waiting), start, end
 *   staleness.csv  run, policy, staleness, count, share (of the run's applied gradients)
 *   zipline.csv    trace, candidate, d
 */
#ifndef SYNCWISE_REPORT_H
#define SYNCWISE_REPORT_H

#include <stdint.h>
#include <stdio.h>

enum {
    SW_CSV_RUNS,
    SW_CSV_EVALS,
    SW_CSV_APPLIES,
    SW_CSV_TIMELINE,
    SW_CSV_STALENESS,
    SW_CSV_ZIPLINE,
    SW_CSV_COUNT
};

#define SW_REPORT_MAX_RUNS 64 /* runs named for the per-run plots */

typedef struct sw_report {
    const char *dir;
    FILE *csv[SW_CSV_COUNT];
    char run[SW_REPORT_MAX_RUNS][256];
    char policy[SW_REPORT_MAX_RUNS][256]; /* of each named run */
    uint32_t n_runs, workers;
    uint64_t zipline_rows;
} sw_report;

/* The file name of one of the tables (SW_CSV_RUNS, ...). */
const char *sw_report_csv_name(int which);
/* Creates the tables in dir (which must exist), each with its header line. */
int sw_report_open(sw_report *r, const char *dir, char *err);
/* Adds one run's log (one start line: a log of a resumed server is refused) or one ZipLine
 * trace ("candidate,d" rows after a header). Fails with the file and line at fault. */
int sw_report_add_log(sw_report *r, const char *path, char *err);
int sw_report_add_trace(sw_report *r, const char *path, char *err);
/* Closes the tables; fails when one could not be written in full. */
int sw_report_close(sw_report *r, char *err);

#endif
