/* `syncwise report`: tidy CSV files from event logs and ZipLine traces (report_csv.c), and plots
 * of them through gnuplot (report.c). */
#ifndef SW_CLI_REPORT_H
#define SW_CLI_REPORT_H

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

const char *sw_report_csv_name(int which);
int sw_report_open(sw_report *r, const char *dir, char *err);
int sw_report_add_log(sw_report *r, const char *path, char *err);
int sw_report_add_trace(sw_report *r, const char *path, char *err);
int sw_report_close(sw_report *r, char *err);

#endif
