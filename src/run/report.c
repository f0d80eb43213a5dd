/* The tidy CSV files of a report (syncwise/report.h). */
#define _POSIX_C_SOURCE 200809L
#include "syncwise/report.h"

#include <errno.h>
#include <libgen.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "syncwise/err.h"
#include "syncwise/file.h"
#include "syncwise/lines.h"
#include "syncwise/run.h"
#include "syncwise/spec.h"

static const char *const headers[SW_CSV_COUNT] = {
    [SW_CSV_RUNS] = "run,policy,workers,seed,model,events",
    [SW_CSV_EVALS] = "run,policy,t,V,loss,acc",
    [SW_CSV_APPLIES] = "run,policy,t,V,n",
    [SW_CSV_TIMELINE] = "run,policy,worker,state,start,end",
    [SW_CSV_STALENESS] = "run,policy,staleness,count,share",
    [SW_CSV_ZIPLINE] = "trace,candidate,d",
    [SW_CSV_TARGETS] = "run,policy,seed,reached,time,end",
    [SW_CSV_ACCURACY] = "policy,t,mean,lo,hi,runs",
};
static const char *const names[SW_CSV_COUNT] = {
    [SW_CSV_RUNS] = "runs.csv",           [SW_CSV_EVALS] = "evals.csv",
    [SW_CSV_APPLIES] = "applies.csv",     [SW_CSV_TIMELINE] = "timeline.csv",
    [SW_CSV_STALENESS] = "staleness.csv", [SW_CSV_ZIPLINE] = "zipline.csv",
    [SW_CSV_TARGETS] = "targets.csv",     [SW_CSV_ACCURACY] = "accuracy_mean.csv",
};

const char *sw_report_csv_name(int which)
{
    return names[which];
}

int sw_report_open(sw_report *r, const char *dir, char *err)
{
    memset(r, 0, sizeof *r);
    r->dir = dir;
    r->best = r->fastest = -1;
    for (int i = 0; i < SW_CSV_COUNT; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (!(r->csv[i] = fopen(path, "w")))
            return sw_fail(err, SW_EIO, "%s: cannot create: %s", path, strerror(errno));
        fprintf(r->csv[i], "%s\n", headers[i]);
    }
    return 0;
}

int sw_report_close(sw_report *r, char *err)
{
    int rc = 0;
    for (int i = 0; i < SW_CSV_COUNT; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", r->dir, names[i]);
        int crc = sw_file_close(r->csv[i], path, rc ? NULL : err);
        rc = rc ? rc : crc;
    }
    memset(r->csv, 0, sizeof r->csv);
    return rc;
}

void sw_report_free(sw_report *r)
{
    for (uint32_t i = 0; r->runs && i < r->n_runs; i++) {
        free(r->runs[i].eval_t);
        free(r->runs[i].eval_acc);
    }
    free(r->runs);
    free(r->policies);
    free(r->traces);
    r->runs = NULL;
    r->policies = NULL;
    r->traces = NULL;
}

/* What one log's replay keeps: the run's statistics (syncwise/run.h) and each worker's state
 * since when, for the timeline. */
typedef struct run_state {
    sw_report *r;
    char name[256], policy[256], model[256];
    double workers;
    uint64_t seed;
    uint32_t n; /* worker slots */
    int *state; /* per worker: 0 absent, 1 waiting, 2 running */
    double *since;
    sw_run_stats stats;
    uint64_t events, lines; /* events; start and end lines */
    double last_t;
    double offset;     /* added to a segment's times: a restarted server's clock began at 0 */
    sw_report_run run; /* what the summary keeps */
    size_t cap_evals;
} run_state;

static void close_interval(run_state *s, uint32_t w, double t)
{
    if (s->state[w] && t > s->since[w])
        fprintf(s->r->csv[SW_CSV_TIMELINE], "%s,%s,%u,%s,%.9g,%.9g\n", s->name, s->policy, w,
                s->state[w] == 2 ? "running" : "waiting", s->since[w], t);
}

static void set_state(run_state *s, uint32_t w, int state, double t)
{
    if (w >= s->n)
        return;
    close_interval(s, w, t);
    s->state[w] = state;
    s->since[w] = t;
}

/* A later start line: a server restarted with --resume appended to its log. Its segment goes
 * on where the one before it was cut (the time the server was down is in no log), every worker
 * out until it joins again. */
static int on_restart(run_state *s, const sw_run_info *info, size_t line, char *err)
{
    if (info->slots != s->n || strcmp(info->driver, "server"))
        return sw_fail(err, SW_EFORMAT, "%zu: a second run in one log, not a restart of the "
                       "first (report one log per run)", line);
    for (uint32_t w = 0; w < s->n; w++)
        set_state(s, w, 0, s->last_t);
    s->offset = s->last_t;
    s->lines++;
    s->run.finished = false; /* until this segment's own end line */
    return 0;
}

/* What makes runs comparable, besides their policy and seed: field i of a start line as text
 * (the targets are compared when the report uses the runs' own: sw_report_summarize). */
static const char *const settings[] = {"model", "parameters (data)", "workers", "cluster",
                                       "batch", "lr", "optimizer", "driver"};

static void setting(const sw_run_info *r, int i, char *out, size_t cap)
{
    switch (i) {
    case 0: snprintf(out, cap, "%s", r->model); break;
    case 1: snprintf(out, cap, "%zu", r->params); break;
    case 2: snprintf(out, cap, "%u", r->workers); break;
    case 3: snprintf(out, cap, "%s", r->cluster); break;
    case 4: snprintf(out, cap, "%u", r->batch); break;
    case 5: snprintf(out, cap, "%g", (double)r->lr); break;
    case 6: snprintf(out, cap, "%s", r->optimizer); break;
    default: snprintf(out, cap, "%s", r->driver); break;
    }
}

/* The first way two runs' settings differ, as "model ('a' and 'b')", or "". */
static void setting_differs(const sw_run_info *a, const sw_run_info *b, char *out, size_t cap)
{
    out[0] = '\0';
    for (int i = 0; i < (int)(sizeof settings / sizeof *settings) && !out[0]; i++) {
        char va[1100], vb[1100];
        setting(a, i, va, sizeof va);
        setting(b, i, vb, sizeof vb);
        if (strcmp(va, vb))
            snprintf(out, cap, "%s ('%.200s' and '%.200s')", settings[i], va, vb);
    }
}

/* The first run sets the comparison's setting; a later one that differs is noted (once). */
static void note_setting(sw_report *r, const run_state *s, const sw_run_info *info)
{
    if (!r->first_name[0]) {
        r->first = *info;
        snprintf(r->first_name, sizeof r->first_name, "%s", s->name);
        return;
    }
    char diff[512];
    if (r->mixed[0])
        return;
    setting_differs(&r->first, info, diff, sizeof diff);
    if (diff[0])
        snprintf(r->mixed, sizeof r->mixed, "runs %.100s and %.100s differ in their %s: their "
                 "times do not compare", r->first_name, s->name, diff);
}

void sw_report_label(char *spec)
{
    for (char *c = spec; *c; c++) /* a control character (a file name's newline) ends a row */
        *c = *c == ',' ? ' ' : *c == '"' ? '\'' : *c == '\\' ? '/'
           : (unsigned char)*c < 0x20 || *c == 0x7f ? '?' : *c;
}

/* The label of spec in r's tables: that of an earlier run of the same spec, else
 * sw_report_label's, with " ~2", " ~3"... while an earlier run of another spec has it (a
 * character a file name, a link in report.md, a CSV field and gnuplot all take as it is). */
static void unique_label(const sw_report *r, const char *spec, char *label, size_t cap)
{
    for (uint32_t i = 0; i < r->n_runs; i++)
        if (!strcmp(r->runs[i].spec, spec)) {
            snprintf(label, cap, "%s", r->runs[i].policy);
            return;
        }
    char base[256];
    snprintf(base, sizeof base, "%s", spec);
    sw_report_label(base);
    snprintf(label, cap, "%s", base);
    for (int k = 2;; k++) {
        bool taken = false;
        for (uint32_t i = 0; i < r->n_runs && !taken; i++)
            taken = !strcmp(r->runs[i].policy, label);
        if (!taken)
            return;
        snprintf(label, cap, "%.240s ~%d", base, k);
    }
}

static int on_start(void *ctx, const sw_run_info *info, size_t line, char *err)
{
    run_state *s = ctx;
    if (s->state)
        return on_restart(s, info, line, err);
    note_setting(s->r, s, info);
    snprintf(s->run.spec, sizeof s->run.spec, "%s", info->policy);
    unique_label(s->r, s->run.spec, s->policy, sizeof s->policy);
    snprintf(s->model, sizeof s->model, "%s", info->model);
    s->r->real_time |= strcmp(info->driver, "sim") != 0;
    s->workers = info->workers;
    s->seed = info->seed;
    snprintf(s->run.policy, sizeof s->run.policy, "%s", s->policy);
    s->run.seed = s->seed;
    s->run.target_acc = info->target_acc;
    s->run.regress = info->regress;
    s->n = info->slots;
    s->lines++; /* the column counts events, as check does: not start and end lines */
    s->state = calloc(s->n, sizeof *s->state);
    s->since = calloc(s->n, sizeof *s->since);
    if (!s->state || !s->since)
        return sw_fail(err, SW_ENOMEM, "out of memory for %u workers", s->n);
    return sw_run_stats_init(&s->stats, s->n, err);
}

/* An evaluation, for the time to a target and the mean accuracy curve. */
static int keep_eval(run_state *s, double t, double acc)
{
    sw_report_run *run = &s->run;
    if (run->n_evals == s->cap_evals) {
        size_t cap = s->cap_evals ? 2 * s->cap_evals : 64;
        double *nt = realloc(run->eval_t, cap * sizeof *nt);
        if (nt)
            run->eval_t = nt;
        double *na = realloc(run->eval_acc, cap * sizeof *na);
        if (na)
            run->eval_acc = na;
        if (!nt || !na)
            return SW_ENOMEM;
        s->cap_evals = cap;
    }
    run->eval_t[run->n_evals] = t;
    run->eval_acc[run->n_evals++] = acc;
    return 0;
}

static int on_event(void *ctx, const sw_event *event, size_t line, char *err)
{
    run_state *s = ctx;
    sw_event shifted = *event;
    shifted.t += s->offset;
    const sw_event *ev = &shifted;
    s->events++;
    s->last_t = ev->t;
    if (sw_run_stats_event(&s->stats, ev))
        return sw_fail(err, SW_ENOMEM, "%zu: out of memory", line);
    switch (ev->kind) {
    case SW_EV_EVAL:
        fprintf(s->r->csv[SW_CSV_EVALS], "%s,%s,%.9g,%llu,%.6g,", s->name, s->policy, ev->t,
                (unsigned long long)ev->V, ev->loss);
        if (!s->run.regress) /* a regression task has no accuracy: the cell stays empty */
            fprintf(s->r->csv[SW_CSV_EVALS], "%.6g", ev->accuracy);
        fputc('\n', s->r->csv[SW_CSV_EVALS]);
        if (keep_eval(s, ev->t, s->run.regress ? NAN : ev->accuracy))
            return sw_fail(err, SW_ENOMEM, "%zu: out of memory", line);
        break;
    case SW_EV_APPLY:
        fprintf(s->r->csv[SW_CSV_APPLIES], "%s,%s,%.9g,%llu,%u\n", s->name, s->policy, ev->t,
                (unsigned long long)ev->V, ev->n);
        break;
    case SW_EV_PUSH:
    case SW_EV_JOIN: set_state(s, ev->worker, 1, ev->t); break;
    case SW_EV_RELEASE: set_state(s, ev->worker, 2, ev->t); break;
    case SW_EV_LEAVE:
    case SW_EV_CRASH: set_state(s, ev->worker, 0, ev->t); break;
    case SW_EV_SWITCH:
        s->run.switches++;
        snprintf(s->run.switched_to, sizeof s->run.switched_to, "%s", ev->reason);
        break;
    default: break;
    }
    return 0;
}

/* Whether an evaluation of the run met its target accuracy. */
static bool met_target_acc(const sw_report_run *run)
{
    for (size_t k = 0; k < run->n_evals; k++)
        if (run->target_acc > 0 && run->eval_acc[k] >= run->target_acc)
            return true;
    return false;
}

/* The end line: the run's last moment, where the timeline's open intervals close. It ended on
 * its target when it says so and (for an accuracy) an evaluation shows it. */
static int on_end(void *ctx, double t, uint64_t V, const char *why, size_t line, char *err)
{
    (void)V, (void)line, (void)err;
    run_state *s = ctx;
    s->lines++;
    s->last_t = t + s->offset;
    s->run.finished = true;
    s->run.ended_on_target =
        !strcmp(why, sw_stop_reason_name(SW_STOP_TARGET_LOSS)) ||
        (!strcmp(why, sw_stop_reason_name(SW_STOP_TARGET_ACC)) && met_target_acc(&s->run));
    return 0;
}

/* "runs/ssp-s=3-seed1.jsonl" is the run "ssp-s=3-seed1". */
static void run_name(const char *path, char *out, size_t cap)
{
    char copy[4096];
    snprintf(copy, sizeof copy, "%s", path);
    snprintf(out, cap, "%s", basename(copy));
    char *dot = strrchr(out, '.');
    if (dot && dot != out)
        *dot = '\0';
    for (char *c = out; *c; c++) /* CSV- and gnuplot-safe: a newline would end a row */
        if (*c == ',' || *c == '"' || *c == ' ' || (unsigned char)*c < 0x20 || *c == 0x7f)
            *c = '_';
}

static bool name_taken(const sw_report *r, const char *name)
{
    for (uint32_t i = 0; i < r->n_runs; i++)
        if (!strcmp(r->runs[i].name, name))
            return true;
    for (uint32_t i = 0; i < r->n_traces; i++)
        if (!strcmp(r->traces[i], name))
            return true;
    return false;
}

/* Files of one name in two directories (a/bsp-seed1.jsonl, b/bsp-seed1.jsonl) are two runs: the
 * later is named bsp-seed1~2, so that every row of the tables says which run it is (traces
 * likewise: a/t.csv and b/t.csv are t and t~2). */
static void unique_name(const sw_report *r, char *name, size_t cap)
{
    char base[256];
    snprintf(base, sizeof base, "%s", name);
    for (unsigned k = 2; name_taken(r, name); k++)
        snprintf(name, cap, "%.200s~%u", base, k);
}

/* The run's summary joins the report's, which then owns its evaluations. */
static int keep_run(sw_report *r, run_state *s)
{
    sw_report_run *runs = realloc(r->runs, (r->n_runs + 1) * sizeof *runs);
    if (!runs)
        return SW_ENOMEM;
    r->runs = runs;
    s->run.end_t = s->last_t;
    sw_run_stats_close(&s->stats, s->last_t);
    s->run.idle = sw_run_stats_idle_share(&s->stats);
    s->run.applies = s->stats.applies;
    runs[r->n_runs] = s->run;
    memset(&s->run, 0, sizeof s->run);
    r->longest = s->last_t > r->longest ? s->last_t : r->longest;
    return 0;
}

/* The run's rows once its log is read: timeline intervals still open, staleness, the run. */
static int write_run(sw_report *r, run_state *s)
{
    snprintf(s->run.name, sizeof s->run.name, "%s", s->name);
    if (keep_run(r, s))
        return SW_ENOMEM;
    for (uint32_t w = 0; w < s->n; w++)
        close_interval(s, w, s->last_t);
    uint64_t total = 0;
    for (int b = 0; b < SW_STALE_BINS; b++)
        total += s->stats.stale_hist[b];
    for (int b = 0; b < SW_STALE_BINS; b++)
        if (s->stats.stale_hist[b])
            fprintf(r->csv[SW_CSV_STALENESS], "%s,%s,%d,%llu,%.6f\n", s->name, s->policy, b,
                    (unsigned long long)s->stats.stale_hist[b],
                    (double)s->stats.stale_hist[b] / (double)total);
    fprintf(r->csv[SW_CSV_RUNS], "%s,\"%s\",%g,%llu,\"%s\",%llu\n", s->name, s->policy, s->workers,
            (unsigned long long)s->seed, s->model, (unsigned long long)s->events);
    r->n_runs++;
    r->workers = s->n > r->workers ? s->n : r->workers;
    return 0;
}

int sw_report_add_log(sw_report *r, const char *path, char *err)
{
    run_state *s = calloc(1, sizeof *s);
    if (!s)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    s->r = r;
    run_name(path, s->name, sizeof s->name);
    unique_name(r, s->name, sizeof s->name);
    sw_run_reader reader = {.start = on_start, .event = on_event, .end = on_end, .ctx = s};
    int rc = sw_run_read_log(path, &reader, err);
    if (!rc && s->events + s->lines == 0)
        rc = sw_fail(err, SW_EFORMAT, "%s: no events", path);
    if (!rc && write_run(r, s))
        rc = sw_fail(err, SW_ENOMEM, "out of memory");
    sw_run_stats_free(&s->stats);
    free(s->run.eval_t);
    free(s->run.eval_acc);
    free(s->state);
    free(s->since);
    free(s);
    return rc;
}

typedef struct trace_reading {
    sw_report *r;
    char name[256];
    const char *path;
} trace_reading;

static int on_trace_line(void *ctx, char *line, size_t lineno, char *err)
{
    trace_reading *tr = ctx;
    if (lineno == 1 && strncmp(line, "candidate,d", 11) == 0 &&
        line[11 + strspn(line + 11, " \t\r\n")] == '\0')
        return 0;
    if (lineno == 1) /* another CSV (a cluster trace, a report's table) is no search trace */
        return sw_fail(err, SW_EFORMAT, "%s: a ZipLine trace begins with the line 'candidate,d' "
                       "(zipline --trace writes it)", tr->path);
    if (line[strspn(line, " \t\r\n")] == '\0')
        return 0;
    char *end, *num;
    errno = 0;
    unsigned long long k = line[0] >= '0' && line[0] <= '9' ? strtoull(line, &end, 10) : 0;
    bool ok = line[0] >= '0' && line[0] <= '9' && errno == 0 && *end == ',';
    ok = ok && sw_spec_decimal(end + 1); /* strtod would read "0x10" as 16 */
    double d = ok ? strtod(num = end + 1, &end) : 0;
    ok = ok && end != num && end[strspn(end, " \t\r\n")] == '\0';
    if (!ok)
        return sw_fail(err, SW_EFORMAT, "%s:%zu: expected 'candidate,d' (a whole number, then "
                       "a wait in seconds)", tr->path, lineno);
    if (!isfinite(d) || d < 0) /* a wait, as zipline writes it */
        return sw_fail(err, SW_EFORMAT, "%s:%zu: a wait d of %g s (finite, 0 or more)", tr->path,
                       lineno, d);
    fprintf(tr->r->csv[SW_CSV_ZIPLINE], "%s,%llu,%.9g\n", tr->name, k, d);
    tr->r->zipline_rows++;
    return 0;
}

int sw_report_add_trace(sw_report *r, const char *path, char *err)
{
    trace_reading tr = {.r = r, .path = path};
    run_name(path, tr.name, sizeof tr.name);
    unique_name(r, tr.name, sizeof tr.name);
    char(*more)[256] = realloc(r->traces, (r->n_traces + 1) * sizeof *r->traces);
    if (!more)
        return sw_fail(err, SW_ENOMEM, "out of memory for the traces' names");
    r->traces = more;
    snprintf(r->traces[r->n_traces++], sizeof *r->traces, "%s", tr.name);
    return sw_read_lines(path, on_trace_line, &tr, err);
}
