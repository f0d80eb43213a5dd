/* `syncwise report`'s plots (report_plots.h): a gnuplot script of the report's tables, run by
 * gnuplot when it is installed. One curve per policy: when several runs share a policy (seeds
 * of a compare), the first run stands for it, but for accuracy, a mean over the runs. */
#define _POSIX_C_SOURCE 200809L
#include "report_plots.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "syncwise/err.h"
#include "syncwise/file.h"
#include "syncwise/lines.h"

/* The first run of each policy, at most SW_REPORT_MAX_CURVES of them. */
int sw_cli_report_curves(const sw_report *r, int *pick)
{
    int n = 0;
    for (uint32_t i = 0; i < r->n_runs && n < SW_REPORT_MAX_CURVES; i++) {
        int seen = 0;
        for (int j = 0; j < n; j++)
            seen |= !strcmp(r->runs[pick[j]].policy, r->runs[i].policy);
        if (!seen)
            pick[n++] = (int)i;
    }
    return n;
}

/* A string for gnuplot: single-quoted, with a quote doubled (the only escape there). */
static void gp_str(FILE *g, const char *text)
{
    fputc('\'', g);
    for (const char *c = text; *c; c++) {
        if (*c == '\'')
            fputc('\'', g);
        fputc(*c, g);
    }
    fputc('\'', g);
}

/* What the runs' seconds are. */
static const char *clock_name(const sw_report *r)
{
    return r->real_time ? "time" : "virtual time";
}

/* The script runs in the report's directory, so it names files without a path. */
static void terminal(FILE *g, const char *name, int png)
{
    if (png)
        fprintf(g, "set terminal pngcairo size 1000,560 font 'sans,11' noenhanced\n");
    else
        fprintf(g, "set terminal svg size 1000,560 dynamic font 'sans,11' noenhanced\n");
    fprintf(g, "set output ");
    char file[300];
    snprintf(file, sizeof file, "%s.%s", name, png ? "png" : "svg");
    gp_str(g, file);
    fputc('\n', g);
}

/* One line per curve: plot for the chosen runs, each from its datablock of a table
 * ($evals0, $applies1: write_script's). */
static void plot_by_run(FILE *g, const sw_report *r, const int *pick, int n, const char *table,
                        const char *x, const char *y, const char *style)
{
    fprintf(g, "plot ");
    for (int i = 0; i < n; i++) {
        fprintf(g, "%s$%s%d using %s:%s %s title ", i ? ", \\\n     " : "", table, i, x, y,
                style);
        gp_str(g, r->runs[pick[i]].policy);
    }
    fprintf(g, "\n");
}

/* One series per ZipLine trace, its rows picked from zipline.csv by its name. */
static void trace_plot(FILE *g, const sw_report *r)
{
    fprintf(g, "plot ");
    for (uint32_t i = 0; i < r->n_traces; i++) {
        fprintf(g, "%s'zipline.csv' every ::1 using 2:(strcol(1) eq ", i ? ", \\\n     " : "");
        gp_str(g, r->traces[i]);
        fprintf(g, " ? $3 : NaN) with points pt 7 ps 0.3 title ");
        gp_str(g, r->traces[i]);
    }
    fprintf(g, "\n");
}

/* Whether a run of `policy` (any, for NULL) evaluated the model, with an accuracy when
 * `accuracy` asks for one: a run without a model (--no-model) has no curve to draw, and one of a
 * regression task no accuracy. */
/* How many runs (of one policy, or of all with policy NULL) have evaluations: with accuracy,
 * only those of a classification task. */
static uint32_t evaluated(const sw_report *r, const char *policy, bool accuracy)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < r->n_runs; i++)
        n += r->runs[i].n_evals && !(accuracy && r->runs[i].regress) &&
             (!policy || !strcmp(policy, r->runs[i].policy));
    return n;
}

static void loss_plot(FILE *g, const sw_report *r, const int *pick, int n, int png)
{
    terminal(g, "loss", png);
    fprintf(g,
            "set title 'Validation loss against %s (the first run of each policy)'\n"
            "set xlabel '%s (s)'\nset ylabel 'loss'\nset key top right\n",
            clock_name(r), clock_name(r));
    plot_by_run(g, r, pick, n, "evals", "3", "5", "with lines lw 2");
}

/* Each policy's mean accuracy over its runs with a band from the lowest to the highest run,
 * and the target as a dashed line. */
static void accuracy_plot(FILE *g, const sw_report *r, int png)
{
    terminal(g, "accuracy", png);
    fprintf(g,
            "set title 'Validation accuracy against %s: mean over each policy''s runs, "
            "band from lowest to highest'\nset xlabel '%s (s)'\n"
            "set ylabel 'accuracy'\nset key bottom right\nset style fill transparent solid "
            "0.18 noborder\n",
            clock_name(r), clock_name(r));
    if (r->target_acc > 0)
        fprintf(g,
                "set arrow 1 from graph 0, first %.6g to graph 1, first %.6g nohead dt 2 "
                "lw 1.5 lc rgb '#444444' front\nset label 1 'target %.4g' at graph 0.01, "
                "first %.6g offset 0,0.6 front\nset yrange [%.3g:%.3g]\n",
                r->target_acc, r->target_acc, r->target_acc, r->target_acc,
                fmax(0, r->target_acc - 0.35), fmin(1, r->target_acc + 0.05));
    fprintf(g, "plot ");
    int n = r->n_policies < SW_REPORT_MAX_CURVES ? r->n_policies : SW_REPORT_MAX_CURVES;
    for (int i = 0, drawn = 0; i < n; i++) {
        uint32_t runs = evaluated(r, r->policies[i].policy, true);
        if (!runs)
            continue;
        const char *sep = drawn++ ? ", \\\n     " : "";
        fprintf(g, "%s'accuracy_mean.csv' every ::1 using 2:(strcol(1) eq ", sep);
        gp_str(g, r->policies[i].policy);
        fprintf(g,
                " ? $4 : NaN):5 with filledcurves lc %d notitle, \\\n     "
                "'accuracy_mean.csv' every ::1 using 2:(strcol(1) eq ",
                i + 1);
        gp_str(g, r->policies[i].policy);
        fprintf(g, " ? $3 : NaN) with lines lw 2 lc %d title ", i + 1);
        char title[300];
        snprintf(title, sizeof title, "%s (%u run%s)", r->policies[i].policy, runs,
                 runs == 1 ? "" : "s");
        gp_str(g, title);
    }
    fprintf(g, "\nunset arrow 1\nunset label 1\nset yrange [*:*]\nset style fill solid\n");
}

/* A datablock of one run's rows of a table: gnuplot then reads each run's rows once, where a
 * curve filtering a whole table reads all of it for every curve of every picture (the timelines
 * of `make run`'s 15 runs read 9 MB twenty times: 40 s of gnuplot's time). */
typedef struct block {
    FILE *g;
    const char *run;
    bool window;      /* only rows whose span (columns 5 and 6) meets [from, to] */
    double from, to;
    size_t rows;
} block;

static int block_row(void *ctx, char *line, size_t lineno, char *err)
{
    (void)err;
    block *b = ctx;
    size_t len = strlen(b->run);
    if (lineno == 1 || strncmp(line, b->run, len) || line[len] != ',')
        return 0; /* the header, or another run's */
    if (b->window) {
        const char *c = line; /* after the fourth comma: the span's start */
        for (int comma = 0; c && comma < 4; comma++)
            if ((c = strchr(c, ',')))
                c++;
        double start, end;
        if (!c || sscanf(c, "%lf,%lf", &start, &end) != 2 || start > b->to || end < b->from)
            return 0;
    }
    fputs(line, b->g);
    b->rows++;
    return 0;
}

/* $name: the rows of the report's `table` for run r->runs[run] (with window, those meeting
 * [from, to]). A run without such rows gets one row of no value, so that its curve is drawn
 * empty, as a filtered table's was (gnuplot warns, not fails). */
static int datablock(FILE *g, const sw_report *r, const char *table, const char *name, int run,
                     bool window, double from, double to, char *err)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", r->dir, table);
    fprintf(g, "$%s << EOD\n", name);
    block b = {.g = g, .run = r->runs[run].name, .window = window, .from = from, .to = to};
    int rc = sw_read_lines(path, block_row, &b, err);
    if (!rc && !b.rows)
        fprintf(g, "-,-,0,-,NaN,NaN\n");
    fprintf(g, "EOD\n");
    return rc;
}

/* Running and waiting intervals of one run's workers over [from, to] (datablock $timelineK),
 * in a file named by its policy. */
static void timeline_plot(FILE *g, const sw_report *r, int k, int run, int png, double from,
                          double to)
{
    char part[200], name[220];
    sw_cli_file_part(r->runs[run].policy, part, sizeof part);
    snprintf(name, sizeof name, "timeline-%s", part);
    terminal(g, name, png);
    char title[400];
    snprintf(title, sizeof title,
             "Workers over time: %s, %.6g to %.6g s (running in colour, "
             "waiting in grey)",
             r->runs[run].policy, from, to);
    fprintf(g, "set title ");
    gp_str(g, title);
    fprintf(g,
            "\nset xlabel '%s (s)'\nset ylabel 'worker'\nset key outside top center "
            "horizontal\nset yrange [-0.5:%u.5]\nset ytics 1\nset xrange [%.9g:%.9g]\n",
            clock_name(r), r->workers ? r->workers - 1 : 0, from, to);
    static const char *const states[][2] = {{"running", "#1f77b4"}, {"waiting", "#bbbbbb"}};
    fprintf(g, "plot ");
    for (int i = 0; i < 2; i++)
        fprintf(g,
                "%s$timeline%d using (strcol(4) eq '%s' ? $5 : NaN):3:($6-$5):(0) with vectors "
                "nohead lw 8 lc rgb '%s' title '%s'",
                i ? ", \\\n     " : "", k, states[i][0], states[i][1], states[i][0]);
    fprintf(g, "\nset yrange [*:*]\nset xrange [*:*]\nset ytics autofreq\nset key default\n");
}

/* Whether a run the plots draw applied a gradient (k and staleness have nothing to draw
 * otherwise: gnuplot fails on a plot of no points). */
static bool applied(const sw_report *r, const int *pick, int n)
{
    for (int i = 0; i < n; i++)
        if (r->runs[pick[i]].applies)
            return true;
    return false;
}

/* The datablocks the plots read, each run's rows once for both pictures (SVG, PNG). */
static int write_blocks(FILE *g, const sw_report *r, const int *pick, int n, double from,
                        double to, char *err)
{
    static const char *const tables[] = {"evals", "applies", "staleness"};
    int rc = 0;
    for (int i = 0; !rc && i < n; i++) {
        char name[32], file[32];
        for (size_t t = 0; !rc && t < sizeof tables / sizeof *tables; t++) {
            snprintf(name, sizeof name, "%s%d", tables[t], i);
            snprintf(file, sizeof file, "%s.csv", tables[t]);
            rc = datablock(g, r, file, name, pick[i], false, 0, 0, err);
        }
        snprintf(name, sizeof name, "timeline%d", i);
        if (!rc && i < SW_REPORT_MAX_TIMELINES)
            rc = datablock(g, r, "timeline.csv", name, pick[i], true, from, to, err);
    }
    return rc;
}

static int write_script(FILE *g, const sw_report *r, double from, double to, char *err)
{
    int pick[SW_REPORT_MAX_CURVES], n = sw_cli_report_curves(r, pick);
    to = to > 0 ? to : r->longest / 20;
    to = to > from ? to : from + 1;
    fprintf(g, "set datafile separator ','\nset termoption noenhanced\nset grid\n");
    int rc = write_blocks(g, r, pick, n, from, to, err);
    if (rc)
        return rc;
    for (int png = 0; png < 2; png++) {
        if (n > 0 && evaluated(r, NULL, true))
            accuracy_plot(g, r, png);
        if (n > 0 && evaluated(r, NULL, false))
            loss_plot(g, r, pick, n, png);
        for (int i = 0; i < n && i < SW_REPORT_MAX_TIMELINES; i++)
            timeline_plot(g, r, i, pick[i], png, from, to);
        if (n > 0 && applied(r, pick, n)) {
            terminal(g, "k", png);
            fprintf(g,
                    "set title 'Gradients per apply (k_t) against %s'\n"
                    "set xlabel '%s (s)'\nset ylabel 'gradients applied'\n",
                    clock_name(r), clock_name(r));
            fprintf(g, "set key top right\nset yrange [0:*]\nset offsets 0, 0, 1, 0\n");
            plot_by_run(g, r, pick, n, "applies", "3", "5", "with steps lw 1.5");
            fprintf(g, "set yrange [*:*]\nset offsets 0, 0, 0, 0\n"); /* no line on the frame */
            terminal(g, "staleness", png);
            fprintf(g, "set title 'Staleness of applied gradients'\nset xlabel 'staleness "
                       "(versions)'\nset ylabel 'share of applied gradients'\n");
            plot_by_run(g, r, pick, n, "staleness", "3", "5", "with linespoints lw 2");
        }
        if (r->zipline_rows) {
            terminal(g, "zipline", png);
            fprintf(g, "set title 'Candidate d along the scan'\nset xlabel 'candidate (scan "
                       "order)'\nset ylabel 'd: the fastest worker''s wait'\n");
            trace_plot(g, r);
        }
    }
    return 0;
}

/* The last line gnuplot wrote to its log, for the message of a failure: the report's working
 * directory, where the log is, goes with it. */
static void last_line(const char *dir, char *out, size_t cap)
{
    char path[4200], text[4096];
    snprintf(path, sizeof path, "%s/gnuplot.log", dir);
    snprintf(out, cap, "no message");
    FILE *f = fopen(path, "r");
    while (f && fgets(text, sizeof text, f))
        if (text[strspn(text, " \t\r\n")])
            snprintf(out, cap, "%.*s", (int)strcspn(text, "\r\n"), text);
    if (f)
        fclose(f);
}

/* gnuplot on the script in the report's directory, with an argument list: no shell reads the
 * path. 0, 1 when gnuplot is not installed, or an error. */
static int run_gnuplot(const char *dir, char *err)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return sw_fail(err, SW_EIO, "cannot start gnuplot: %s", strerror(errno));
    if (pid == 0) {
        if (chdir(dir) != 0)
            _exit(126);
        /* Its warnings (an empty range, a curve without points) are kept, not shown. */
        int log = open("gnuplot.log", O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (log >= 0 && dup2(log, STDERR_FILENO) >= 0)
            close(log);
        execlp("gnuplot", "gnuplot", "plots.gp", (char *)NULL);
        _exit(errno == ENOENT ? 127 : 126);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return sw_fail(err, SW_EIO, "waiting for gnuplot: %s", strerror(errno));
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
        return 1;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        char said[200];
        last_line(dir, said, sizeof said);
        return sw_fail(err, SW_EIO, "gnuplot failed on the report's plots: %s", said);
    }
    return 0;
}

int sw_cli_report_render(const sw_report *r, double from, double to, const char *out,
                         char *err)
{
    char script[4096];
    snprintf(script, sizeof script, "%s/plots.gp", r->dir);
    FILE *g = fopen(script, "w");
    if (!g)
        return sw_fail(err, SW_EIO, "%s: cannot create: %s", script, strerror(errno));
    int rc = write_script(g, r, from, to, err);
    if (sw_file_close(g, script, rc ? NULL : err) || rc)
        return rc ? rc : SW_EIO;
    rc = run_gnuplot(r->dir, err);
    if (rc == 1)
        printf("gnuplot is not installed, so there are no plots: apt-get install gnuplot-nox, "
               "then run gnuplot plots.gp in %s\n",
               out);
    return rc;
}
