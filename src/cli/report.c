/* `syncwise report`: CSV files and plots from event logs and ZipLine traces.
 *
 * The plots are gnuplot scripts run by gnuplot when it is installed; without it the CSV files
 * are complete and the command says how to get the plots. One curve per policy: when several
 * runs share a policy (seeds of a compare), the first run stands for it.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "opts.h"
#include "syncwise/err.h"
#include "syncwise/report.h"

#define CMD "report"
#define MAX_CURVES 12

typedef struct report_opts {
    const char *out;
} report_opts;

static const sw_opt table[] = {
    {SW_OPT_ROW(SW_OPT_STR, "out", 'o', offsetof(report_opts, out), 0, 0, "DIR",
                "where to write (created if missing; required)")},
    SW_OPT_END_ROW,
};

static const sw_cmd_opts command = {
    .cmd = CMD,
    .usage = "FILE... -o DIR",
    .about = "Reads JSONL event logs (from sim --log, compare --log-dir or server --log) and\n"
             "ZipLine traces (from zipline --trace, recognised by their .csv ending) and\n"
             "writes to DIR:\n"
             "  runs.csv, evals.csv, applies.csv, timeline.csv, staleness.csv, zipline.csv\n"
             "    tidy tables with a run column, useful without syncwise or gnuplot\n"
             "  accuracy, loss        validation accuracy and loss against time\n"
             "  timeline-POLICY       running and waiting per worker (the RLP paper's Figure 4)\n"
             "  k                     gradients per apply against time (k_t of backup and DBW)\n"
             "  staleness             staleness histogram\n"
             "  zipline               candidate d along the scan (the thesis's Figures 6.5, 6.8)\n"
             "each as .svg and .png, rendered by gnuplot (Debian package gnuplot-nox).\n"
             "With several runs of one policy, the first stands for it in the plots.",
    .tables = {table},
    .max_args = -1,
};

/* The first run of each policy, at most MAX_CURVES of them. */
static int curves(const sw_report *r, int *pick)
{
    int n = 0;
    uint32_t named = r->n_runs < SW_REPORT_MAX_RUNS ? r->n_runs : SW_REPORT_MAX_RUNS;
    for (uint32_t i = 0; i < named && n < MAX_CURVES; i++) {
        int seen = 0;
        for (int j = 0; j < n; j++)
            seen |= !strcmp(r->policy[pick[j]], r->policy[i]);
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

/* The script runs in the report's directory, so it names files without a path. */
static void terminal(FILE *g, const char *name, int png)
{
    if (png)
        fprintf(g, "set terminal pngcairo size 1000,560 font 'sans,11'\n");
    else
        fprintf(g, "set terminal svg size 1000,560 dynamic font 'sans,11'\n");
    fprintf(g, "set output ");
    char file[300];
    snprintf(file, sizeof file, "%s.%s", name, png ? "png" : "svg");
    gp_str(g, file);
    fputc('\n', g);
}

/* One line per curve: plot for the chosen runs, filtering rows of `file` by run. */
static void plot_by_run(FILE *g, const sw_report *r, const int *pick, int n, const char *file,
                        const char *x, const char *y, const char *style)
{
    fprintf(g, "plot ");
    for (int i = 0; i < n; i++) {
        fprintf(g, "%s'%s' every ::1 using %s:(strcol(1) eq ", i ? ", \\\n     " : "", file, x);
        gp_str(g, r->run[pick[i]]);
        fprintf(g, " ? %s : NaN) %s title ", y, style);
        gp_str(g, r->policy[pick[i]]);
    }
    fprintf(g, "\n");
}

static void curves_plot(FILE *g, const sw_report *r, const int *pick, int n, int png,
                        const char *name, const char *ylabel, const char *y)
{
    terminal(g, name, png);
    fprintf(g,
            "set title 'Validation %s against virtual time'\nset xlabel 'virtual time (s)'\n"
            "set ylabel '%s'\nset key bottom right\n",
            ylabel, ylabel);
    plot_by_run(g, r, pick, n, "evals.csv", "3", y, "with lines lw 2");
}

/* Running and waiting intervals of one run's workers, in a file named by its policy. */
static void timeline_plot(FILE *g, const sw_report *r, int run, int png)
{
    char part[200], name[220];
    sw_cli_file_part(r->policy[run], part, sizeof part);
    snprintf(name, sizeof name, "timeline-%s", part);
    terminal(g, name, png);
    char title[400];
    snprintf(title, sizeof title, "Workers over time: %s (running in colour, waiting in grey)",
             r->policy[run]);
    fprintf(g, "set title ");
    gp_str(g, title);
    fprintf(g,
            "\nset xlabel 'virtual time (s)'\nset ylabel 'worker'\nset key outside top center "
            "horizontal\nset yrange [-0.5:%u.5]\nset ytics 1\n",
            r->workers ? r->workers - 1 : 0);
    static const char *const states[][2] = {{"running", "#1f77b4"}, {"waiting", "#bbbbbb"}};
    fprintf(g, "plot ");
    for (int i = 0; i < 2; i++) {
        fprintf(g, "%s'timeline.csv' every ::1 using (strcol(1) eq ", i ? ", \\\n     " : "");
        gp_str(g, r->run[run]);
        fprintf(g,
                " && strcol(4) eq '%s' ? $5 : NaN):3:($6-$5):(0) with vectors nohead lw 8 "
                "lc rgb '%s' title '%s'",
                states[i][0], states[i][1], states[i][0]);
    }
    fprintf(g, "\nset yrange [*:*]\nset ytics autofreq\nset key default\n");
}

static void write_script(FILE *g, const sw_report *r)
{
    int pick[MAX_CURVES], n = curves(r, pick);
    fprintf(g, "set datafile separator ','\nset termoption noenhanced\nset grid\n");
    for (int png = 0; png < 2; png++) {
        if (n > 0) {
            curves_plot(g, r, pick, n, png, "accuracy", "accuracy", "$6");
            curves_plot(g, r, pick, n, png, "loss", "loss", "$5");
            for (int i = 0; i < n && i < 6; i++)
                timeline_plot(g, r, pick[i], png);
            terminal(g, "k", png);
            fprintf(g, "set title 'Gradients per apply (k_t) against virtual time'\n"
                       "set xlabel 'virtual time (s)'\nset ylabel 'gradients applied'\n"
                       "set key top right\nset yrange [0:*]\nset offsets 0, 0, 1, 0\n");
            plot_by_run(g, r, pick, n, "applies.csv", "3", "$5", "with steps lw 1.5");
            fprintf(g, "set yrange [*:*]\nset offsets 0, 0, 0, 0\n"); /* no line on the frame */
            terminal(g, "staleness", png);
            fprintf(g, "set title 'Staleness of applied gradients'\nset xlabel 'staleness "
                       "(versions)'\nset ylabel 'share of applied gradients'\n");
            plot_by_run(g, r, pick, n, "staleness.csv", "3", "$5", "with linespoints lw 2");
        }
        if (r->zipline_rows) {
            terminal(g, "zipline", png);
            fprintf(g, "set title 'Candidate d along the scan'\nset xlabel 'candidate (scan "
                       "order)'\nset ylabel 'd: the fastest worker''s wait'\n"
                       "plot 'zipline.csv' every ::1 using 2:3 with points pt 7 ps 0.3 "
                       "title 'candidates'\n");
        }
    }
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
        execlp("gnuplot", "gnuplot", "plots.gp", (char *)NULL);
        _exit(errno == ENOENT ? 127 : 126);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return sw_fail(err, SW_EIO, "waiting for gnuplot: %s", strerror(errno));
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
        return 1;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return sw_fail(err, SW_EIO, "gnuplot failed on %s/plots.gp", dir);
    return 0;
}

static int render(const sw_report *r, char *err)
{
    char script[4096];
    snprintf(script, sizeof script, "%s/plots.gp", r->dir);
    FILE *g = fopen(script, "w");
    if (!g)
        return sw_fail(err, SW_EIO, "%s: cannot create", script);
    write_script(g, r);
    if (fclose(g) != 0)
        return sw_fail(err, SW_EIO, "%s: write error", script);
    int rc = run_gnuplot(r->dir, err);
    if (rc == 1)
        printf("gnuplot is not installed, so there are no plots: apt-get install gnuplot-nox, "
               "then run gnuplot plots.gp in %s\n",
               r->dir);
    return rc == 1 ? 0 : rc;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !strcmp(s + a - b, suffix);
}

int sw_cli_report(int argc, char **argv)
{
    report_opts o = {0};
    int optind;
    int prc = sw_cli_parse(&command, argc, argv, &o, &optind);
    if (prc)
        return prc == 1 ? 0 : prc;
    const char *out = o.out;
    if (!out || optind >= argc)
        return sw_cli_error(CMD, "give log files and -o DIR (see --help)") + 1;
    if (sw_cli_mkdirs(out) != 0)
        return sw_cli_error(CMD, "%s: cannot create: %s", out, strerror(errno));
    char err[SW_ERR_LEN];
    sw_report r;
    int rc = sw_report_open(&r, out, err);
    for (int i = optind; !rc && i < argc; i++)
        rc = ends_with(argv[i], ".csv") ? sw_report_add_trace(&r, argv[i], err)
                                        : sw_report_add_log(&r, argv[i], err);
    int crc = sw_report_close(&r, rc ? NULL : err);
    rc = rc ? rc : crc;
    if (!rc)
        rc = render(&r, err);
    if (rc)
        return sw_cli_error(CMD, "%s", err);
    printf("report of %u run%s and %s written to %s/ (CSV files; plots as SVG and PNG)\n", r.n_runs,
           r.n_runs == 1 ? "" : "s", r.zipline_rows ? "a zipline trace" : "no trace", out);
    return 0;
}
