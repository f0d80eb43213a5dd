/* The plots of `syncwise report` (report_plots.c): gnuplot scripts over the report's tables. */
#ifndef SW_CLI_REPORT_PLOTS_H
#define SW_CLI_REPORT_PLOTS_H

#include "syncwise/report.h"

#define SW_REPORT_MAX_CURVES 12   /* policies drawn */
#define SW_REPORT_MAX_TIMELINES 6 /* policies whose worker timelines are drawn */

/* The first run of each policy, at most SW_REPORT_MAX_CURVES, into pick; their count. */
int sw_cli_report_curves(const sw_report *r, int *pick);

/* Writes plots.gp into r->dir and runs gnuplot there; timelines over [from, to] (to <= 0: the
 * first 5% of the longest run). 0 when it drew them; without gnuplot, 1 after saying how to
 * draw them (in `out`, where the report ends up); an error code when gnuplot failed. */
int sw_cli_report_render(const sw_report *r, double from, double to, const char *out,
                         char *err);

#endif
