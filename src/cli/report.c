/* `syncwise report`: CSV files and plots from event logs and ZipLine traces.
 *
 * The tables are complete without gnuplot; the plots (report_plots.c) are drawn when it is
 * installed. The report is made in a working directory inside -o and moved in whole.
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "opts.h"
#include "report_plots.h"
#include "syncwise/bytes.h"
#include "syncwise/err.h"
#include "syncwise/file.h"
#include "syncwise/log.h"
#include "syncwise/report.h"
#include "syncwise/spec.h"

#define CMD "report"

typedef struct report_opts {
    const char *out;
    double target_acc;
    const char *baselines; /* as given; baselines_read: each spec spelled out, ';' between */
    char *baselines_read;
    const char *window;
    double from, to; /* the timelines' window; to <= 0: the default */
    bool quiet;
} report_opts;

static bool parse_window(void *opts, const char *cmd, const char *arg)
{
    report_opts *o = opts;
    char *end;
    o->from = strtod(arg, &end);
    bool decimal = sw_spec_decimal(arg) && *end == ':' && sw_spec_decimal(end + 1);
    if (decimal)
        o->to = strtod(end + 1, &end);
    if (!decimal || *end || !isfinite(o->to) || !(o->from >= 0) || !(o->to > o->from)) {
        sw_cli_error(cmd, "--window %s: give START:END in seconds, 0 <= START < END", arg);
        return false;
    }
    o->window = arg;
    return true;
}

#define AT(field) offsetof(report_opts, field)
static const sw_opt table[] = {
    {SW_OPT_ROW(SW_OPT_STR, "out", 'o', AT(out), 0, 0, "DIR",
                "where to write (created if missing; required)")},
    {SW_OPT_ROW(SW_OPT_F64, "target-acc", 0, AT(target_acc), 1e-6, 1, "X",
                "time to this validation accuracy (default: each run's\n"
                "own target: it reached it if its log ended on it)")},
    {SW_OPT_ROW(SW_OPT_STR, "baselines", 0, AT(baselines), 0, 0, "LIST",
                "which of the runs' policies are baselines for the speedup\n"
                "(a list as compare --baselines takes, each spelled as the\n"
                "logs spell it, or as the tables label it: a ',' as ' ')"),
     .shown = "every bsp, asp and ssp"},
    {SW_OPT_ROW(SW_OPT_CALL, "window", 0, 0, 0, 0, "START:END",
                "the timelines' stretch of time, in seconds (default:\n"
                "the first 5% of the longest run)"),
     .call = parse_window, .has_arg = true},
    {SW_OPT_ROW(SW_OPT_FLAG, "quiet", 'q', AT(quiet), 0, 0, NULL,
                "print only where the report is, not its table")},
    SW_OPT_END_ROW,
};
#undef AT

static const sw_cmd_opts command = {
    .cmd = CMD,
    .usage = "FILE... -o DIR",
    .about = "Reads JSONL event logs (from sim --log, compare --log-dir or server --log; a\n"
             "server restarted with --resume appends a segment, joined end to end with the\n"
             "one before) and ZipLine traces (from zipline --trace, recognised by their .csv\n"
             "ending; their first line is 'candidate,d') and writes to DIR:\n"
             "  report.md             the answer first: time to target per policy (mean +-\n"
             "                        95% interval over seeds, speedup over the best\n"
             "                        baseline), then the plots\n"
             "  runs.csv, evals.csv, applies.csv, timeline.csv, staleness.csv, zipline.csv,\n"
             "  targets.csv, accuracy_mean.csv\n"
             "    tidy tables with a run column, useful without syncwise or gnuplot\n"
             "  accuracy              validation accuracy against time: each policy's mean\n"
             "                        over its runs, a band from the lowest to the highest\n"
             "                        run, and the target\n"
             "  loss                  validation loss against time (the first run of each)\n"
             "  timeline-POLICY       running and waiting per worker (the RLP paper's Figure 4),\n"
             "                        for the first six policies\n"
             "  k                     gradients per apply against time (k_t of backup and DBW)\n"
             "  staleness             staleness histogram\n"
             "  zipline               candidate d along the scan (the thesis's Figures 6.5, 6.8)\n"
             "each as .svg and .png, rendered by gnuplot (Debian package gnuplot-nox) from\n"
             "plots.gp, which it also writes (gnuplot's messages go to gnuplot.log).\n"
             "With several runs of one policy, the first stands for it in the plots other\n"
             "than accuracy.",
    .tables = {table},
    .max_args = -1,
};

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !strcmp(s + a - b, suffix);
}

/* report.md: the answer and its table first, then every plot gnuplot drew. */
static int write_markdown(const sw_report *r, char *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/report.md", r->dir);
    FILE *md = fopen(path, "w");
    if (!md)
        return sw_fail(err, SW_EIO, "%s: cannot create: %s", path, strerror(errno));
    fprintf(md, "# syncwise report: %u run%s\n\n", r->n_runs, r->n_runs == 1 ? "" : "s");
    if (r->mixed[0])
        fprintf(md, "**Warning: %s.**\n\n", r->mixed);
    if (r->unfinished[0])
        fprintf(md, "**Warning: %s.**\n\n", r->unfinished);
    if (r->switched[0])
        fprintf(md, "**Note: %s.**\n\n", r->switched);
    if (r->n_runs)
        sw_report_write_table(r, md);
    static const char *const plots[][2] = {
        {"accuracy", "Validation accuracy: mean over each policy's runs, band from lowest to "
                     "highest"},
        {"loss", "Validation loss (the first run of each policy)"},
        {"k", "Gradients per apply"},
        {"staleness", "Staleness of applied gradients"},
        {"zipline", "ZipLine: candidate d along the scan"},
    };
    for (size_t i = 0; i < sizeof plots / sizeof *plots; i++) {
        char png[4200];
        snprintf(png, sizeof png, "%s/%s.png", r->dir, plots[i][0]);
        if (access(png, R_OK) == 0)
            fprintf(md, "\n## %s\n\n![%s](%s.png)\n", plots[i][1], plots[i][0], plots[i][0]);
    }
    int pick[SW_REPORT_MAX_CURVES], n = sw_cli_report_curves(r, pick);
    for (int i = 0; i < n && i < SW_REPORT_MAX_TIMELINES; i++) {
        char part[200], png[4400];
        sw_cli_file_part(r->runs[pick[i]].policy, part, sizeof part);
        snprintf(png, sizeof png, "%s/timeline-%s.png", r->dir, part);
        if (access(png, R_OK) == 0)
            fprintf(md, "\n## Workers over time: %s\n\n![timeline](timeline-%s.png)\n",
                    r->runs[pick[i]].policy, part);
    }
    fprintf(md, "\nThe data: runs.csv, targets.csv, evals.csv, accuracy_mean.csv, applies.csv, "
                "timeline.csv, staleness.csv, zipline.csv (tidy tables, a row per observation; "
                "plots.gp draws the plots).\n");
    return sw_file_close(md, path, err);
}

/* A file's CRC-32, or 0 when it cannot be read (reading it as a log then says why). */
static uint32_t file_crc(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    static unsigned char buf[1 << 16];
    uint32_t crc = 0;
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        crc = sw_crc32(crc, buf, n);
    fclose(f);
    return crc;
}

/* Whether two regular files of one size hold the same bytes (a copy of one log). */
static bool same_contents(const char *a, const struct stat *sa, const char *b,
                          const struct stat *sb)
{
    return S_ISREG(sa->st_mode) && S_ISREG(sb->st_mode) && sa->st_size == sb->st_size &&
           file_crc(a) == file_crc(b);
}

/* Every input once: a log given twice (by two names, or as a copy) would count its runs
 * twice. */
static int distinct_inputs(char **files, int n)
{
    struct stat *st = calloc((size_t)n, sizeof *st);
    if (!st)
        return sw_cli_error(CMD, "out of memory");
    int rc = 0;
    for (int i = 0; i < n && !rc; i++) {
        if (stat(files[i], &st[i]) != 0)
            continue; /* reading it says what is wrong */
        for (int j = 0; j < i && !rc; j++) {
            if (sw_file_same(files[j], files[i]))
                rc = sw_cli_error(CMD, "%s and %s are one file: its runs would count twice",
                                  files[j], files[i]) + 1;
            else if (same_contents(files[j], &st[j], files[i], &st[i]))
                rc = sw_cli_error(CMD, "%s and %s hold the same bytes (a copy?): one run would "
                                  "count twice", files[j], files[i]) + 1;
        }
    }
    free(st);
    return rc;
}

/* Every file of the finished report in tmp moves into dir, unless one would replace an input
 * (a trace named zipline.csv, a log named accuracy.svg, in dir itself) or something that is no
 * regular file (a directory of that name): then none does. */
static int move_into(const char *tmp, const char *dir, char **inputs, int n, char *err)
{
    DIR *d = opendir(tmp);
    if (!d)
        return sw_fail(err, SW_EIO, "%s: %s", tmp, strerror(errno));
    int rc = 0;
    for (int pass = 0; pass < 2 && !rc; pass++) {
        rewinddir(d);
        for (struct dirent *e; !rc && (e = readdir(d));) {
            char from[8192], to[8192];
            if (e->d_name[0] == '.')
                continue;
            snprintf(from, sizeof from, "%s/%s", tmp, e->d_name);
            snprintf(to, sizeof to, "%s/%s", dir, e->d_name);
            for (int i = 0; pass == 0 && i < n && !rc; i++)
                if (sw_file_same(inputs[i], to))
                    rc = sw_fail(err, SW_EINVAL, "%s is the report's own %s: give -o another "
                                 "directory", inputs[i], e->d_name);
            if (pass == 0 && !rc && !sw_file_replaceable(to)) /* before any moves */
                rc = sw_fail(err, SW_EIO, "%s is in the way of the report's own %s (a "
                             "directory, a FIFO, a device or a socket): give -o another "
                             "directory", to, e->d_name);
            if (pass == 0 && !rc && sw_file_in_use(to))
                rc = sw_fail(err, SW_ESTATE, "%s: another process writes it (a running "
                             "server's log?), which the report's own %s would replace: give -o "
                             "another directory", to, e->d_name);
            if (pass == 1 && rename(from, to) != 0)
                rc = sw_fail(err, SW_EIO, "%s: cannot put it in place: %s", to, strerror(errno));
        }
    }
    closedir(d);
    return rc;
}

/* Removes the working directory and whatever is left in it. */
static void remove_dir(const char *tmp)
{
    DIR *d = opendir(tmp);
    for (struct dirent *e; d && (e = readdir(d));) {
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", tmp, e->d_name);
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            unlink(path);
    }
    if (d)
        closedir(d);
    rmdir(tmp);
}

/* DIR/.report-PID directories of reports killed midway (a refused one removes its own). */
static void remove_stale_stages(const char *out)
{
    DIR *d = opendir(out);
    for (struct dirent *e; d && (e = readdir(d));) {
        if (strncmp(e->d_name, ".report-", 8) || !sw_file_pid_gone(e->d_name + 8))
            continue;
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", out, e->d_name);
        remove_dir(path);
    }
    if (d)
        closedir(d);
}

/* Whether some run did anything: took time, applied or evaluated (runs that met their target at
 * once did only the last, at t = 0), or ended on its target. */
static bool something_happened(const sw_report *r)
{
    for (uint32_t i = 0; i < r->n_runs; i++) {
        const sw_report_run *run = &r->runs[i];
        if (run->end_t > 0 || run->applies || run->n_evals || run->ended_on_target)
            return true;
    }
    return false;
}

/* The report, made in tmp: tables, plots and report.md. */
static int make_report(sw_report *r, const report_opts *o, const char *tmp, char **inputs, int n,
                       bool *plotted, char *err)
{
    int rc = sw_report_open(r, tmp, err);
    for (int i = 0; !rc && i < n; i++)
        rc = ends_with(inputs[i], ".csv") ? sw_report_add_trace(r, inputs[i], err)
                                          : sw_report_add_log(r, inputs[i], err);
    if (!rc && !r->zipline_rows && !something_happened(r))
        rc = sw_fail(err, SW_EFORMAT, "nothing to report: the files hold %s and no trace row",
                     r->n_runs ? "runs in which no time passed (no apply, evaluation or end)"
                               : "no run");
    if (!rc)
        rc = sw_report_summarize(r, o->target_acc, o->baselines_read, err);
    int crc = sw_report_close(r, rc ? NULL : err);
    rc = rc ? rc : crc;
    char why[SW_ERR_LEN];
    int drawn = rc ? 1 : sw_cli_report_render(r, o->from, o->to, o->out, why);
    if (drawn < 0) /* the tables stand without them */
        sw_log(SW_LOG_WARN, "no plots: %s; the tables and report.md are written without them", why);
    *plotted = drawn == 0;
    return rc ? rc : write_markdown(r, err);
}

int sw_cli_report(int argc, char **argv)
{
    report_opts o = {0};
    int first_file;
    int prc = sw_cli_parse(&command, argc, argv, &o, &first_file);
    if (prc)
        return prc == 1 ? 0 : prc;
    const char *out = o.out;
    if (!out || first_file >= argc)
        return sw_cli_error(CMD, "give log files and -o DIR (see --help)") + 1;
    if ((prc = distinct_inputs(argv + first_file, argc - first_file)))
        return prc;
    if (o.baselines &&
        !(o.baselines_read = sw_cli_policy_list_joined(CMD, "--baselines", o.baselines, 64)))
        return 2;
    /* Made in a directory of its own inside DIR and moved in whole: a report refused midway
     * leaves DIR as it was, not half rewritten. */
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s/.report-%ld", out, (long)getpid());
    struct stat st;
    bool made_out = stat(out, &st) != 0; /* and so removed again when the report is refused */
    remove_stale_stages(out);
    if (sw_cli_mkdirs(out) != 0 || (mkdir(tmp, 0755) != 0 && errno != EEXIST)) {
        free(o.baselines_read);
        return sw_cli_error(CMD, "%s: cannot create: %s", out, strerror(errno));
    }
    char err[SW_ERR_LEN];
    sw_report r;
    bool plotted = false;
    int rc = make_report(&r, &o, tmp, argv + first_file, argc - first_file, &plotted, err);
    if (!rc)
        rc = move_into(tmp, out, argv + first_file, argc - first_file, err);
    remove_dir(tmp);
    if (rc && made_out)
        rmdir(out);
    r.dir = out;
    if (!rc && r.mixed[0])
        sw_log(SW_LOG_WARN, "%s", r.mixed);
    if (!rc && r.unfinished[0])
        sw_log(SW_LOG_WARN, "%s", r.unfinished);
    if (!rc && r.switched[0])
        sw_log(SW_LOG_INFO, "%s", r.switched);
    if (!rc && r.n_runs && !o.quiet)
        sw_report_write_table(&r, stdout);
    sw_report_free(&r);
    free(o.baselines_read);
    if (rc)
        return sw_cli_error(CMD, "%s", err) + (rc == SW_EINVAL);
    char traces[32] = "no trace";
    if (r.n_traces)
        snprintf(traces, sizeof traces, "%u zipline trace%s", r.n_traces, r.n_traces == 1 ? "" : "s");
    int dir_len = (int)strlen(out);
    while (dir_len > 1 && out[dir_len - 1] == '/') /* -o rep/ names rep/report.md */
        dir_len--;
    printf("\nreport of %u run%s and %s written to %.*s/report.md (with CSV files%s)\n", r.n_runs,
           r.n_runs == 1 ? "" : "s", traces, dir_len, out,
           plotted ? "; plots as SVG and PNG" : "; no plots");
    return 0;
}
