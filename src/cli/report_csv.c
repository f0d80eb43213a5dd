/* The tidy CSV files of `syncwise report`: one row per observation, a `run` column naming the
 * log it came from, so that any tool can group and plot them without syncwise. */
#define _POSIX_C_SOURCE 200809L
#include "report.h"

#include <libgen.h>
#include <stdlib.h>
#include <string.h>

#include "syncwise/err.h"
#include "syncwise/lines.h"
#include "syncwise/logread.h"

#define STALE_BINS 64

static const char *const headers[SW_CSV_COUNT] = {
    [SW_CSV_RUNS] = "run,policy,workers,seed,model,events",
    [SW_CSV_EVALS] = "run,policy,t,V,loss,acc",
    [SW_CSV_APPLIES] = "run,policy,t,V,n",
    [SW_CSV_TIMELINE] = "run,policy,worker,state,start,end",
    [SW_CSV_STALENESS] = "run,policy,staleness,count,share",
    [SW_CSV_ZIPLINE] = "trace,candidate,d",
};
static const char *const names[SW_CSV_COUNT] = {
    [SW_CSV_RUNS] = "runs.csv",           [SW_CSV_EVALS] = "evals.csv",
    [SW_CSV_APPLIES] = "applies.csv",     [SW_CSV_TIMELINE] = "timeline.csv",
    [SW_CSV_STALENESS] = "staleness.csv", [SW_CSV_ZIPLINE] = "zipline.csv",
};

const char *sw_report_csv_name(int which) { return names[which]; }

int sw_report_open(sw_report *r, const char *dir, char *err)
{
    memset(r, 0, sizeof *r);
    r->dir = dir;
    for (int i = 0; i < SW_CSV_COUNT; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (!(r->csv[i] = fopen(path, "w")))
            return sw_fail(err, SW_EIO, "%s: cannot create", path);
        fprintf(r->csv[i], "%s\n", headers[i]);
    }
    return 0;
}

int sw_report_close(sw_report *r, char *err)
{
    int rc = 0;
    for (int i = 0; i < SW_CSV_COUNT; i++)
        if (r->csv[i] && fclose(r->csv[i]) != 0 && !rc)
            rc = sw_fail(err, SW_EIO, "%s/%s: write error", r->dir, names[i]);
    return rc;
}

/* What one log's replay keeps. */
typedef struct run_state {
    sw_report *r;
    char name[256], policy[256], model[256];
    double workers, seed;
    uint32_t n;           /* worker slots seen */
    int state[4096];      /* per worker: 0 absent, 1 waiting, 2 running */
    double since[4096];
    uint64_t *pending;    /* versions of gradients waiting for an apply */
    size_t n_pending, cap_pending;
    uint64_t stale[STALE_BINS];
    uint64_t events;
    double last_t;
} run_state;

static void close_interval(run_state *s, uint32_t w, double t)
{
    if (s->state[w] && t > s->since[w])
        fprintf(s->r->csv[SW_CSV_TIMELINE], "%s,%s,%u,%s,%.9g,%.9g\n", s->name, s->policy, w,
                s->state[w] == 2 ? "running" : "waiting", s->since[w], t);
}

static void set_state(run_state *s, uint32_t w, int state, double t)
{
    if (w >= 4096)
        return;
    close_interval(s, w, t);
    s->state[w] = state;
    s->since[w] = t;
    s->n = w + 1 > s->n ? w + 1 : s->n;
}

static int remember(run_state *s, uint64_t ver)
{
    if (s->n_pending == s->cap_pending) {
        size_t cap = s->cap_pending ? 2 * s->cap_pending : 256;
        uint64_t *g = realloc(s->pending, cap * sizeof *g);
        if (!g)
            return SW_ENOMEM;
        s->pending = g;
        s->cap_pending = cap;
    }
    s->pending[s->n_pending++] = ver;
    return 0;
}

static void on_apply(run_state *s, double t, uint64_t V, double n)
{
    fprintf(s->r->csv[SW_CSV_APPLIES], "%s,%s,%.9g,%llu,%g\n", s->name, s->policy, t,
            (unsigned long long)V, n);
    for (size_t i = 0; i < s->n_pending; i++) {
        uint64_t st = V - 1 - s->pending[i];
        s->stale[st < STALE_BINS ? st : STALE_BINS - 1]++;
    }
    s->n_pending = 0;
}

static int on_event(void *ctx, const sw_log_line *l, char *err)
{
    run_state *s = ctx;
    const char *ev = sw_log_str(l, "ev");
    double t = sw_log_num(l, "t", 0);
    uint32_t w = (uint32_t)sw_log_num(l, "w", 0);
    s->events++;
    s->last_t = t;
    if (!strcmp(ev, "start")) {
        const char *p = sw_log_str(l, "policy"), *m = sw_log_str(l, "model");
        snprintf(s->policy, sizeof s->policy, "%s", p ? p : "?");
        /* The policy is a label in the tidy CSV files: commas would split its column. */
        for (char *c = s->policy; *c; c++)
            *c = *c == ',' ? ' ' : *c;
        snprintf(s->model, sizeof s->model, "%s", m ? m : "?");
        s->workers = sw_log_num(l, "workers", 0);
        s->seed = sw_log_num(l, "seed", 0);
    } else if (!strcmp(ev, "eval")) {
        fprintf(s->r->csv[SW_CSV_EVALS], "%s,%s,%.9g,%g,%.6g,%.6g\n", s->name, s->policy, t,
                sw_log_num(l, "V", 0), sw_log_num(l, "loss", 0), sw_log_num(l, "acc", 0));
    } else if (!strcmp(ev, "push")) {
        set_state(s, w, 1, t);
        if (remember(s, (uint64_t)sw_log_num(l, "ver", 0)))
            return sw_fail(err, SW_ENOMEM, "out of memory");
    } else if (!strcmp(ev, "drop")) {
        s->n_pending -= s->n_pending > 0;
    } else if (!strcmp(ev, "apply")) {
        on_apply(s, t, (uint64_t)sw_log_num(l, "V", 0), sw_log_num(l, "n", 0));
    } else if (!strcmp(ev, "release")) {
        set_state(s, w, 2, t);
    } else if (!strcmp(ev, "join")) {
        set_state(s, w, 1, t);
    } else if (!strcmp(ev, "leave") || !strcmp(ev, "crash")) {
        set_state(s, w, 0, t);
    }
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
    for (char *c = out; *c; c++) /* CSV- and gnuplot-safe */
        if (*c == ',' || *c == '"' || *c == ' ')
            *c = '_';
}

int sw_report_add_log(sw_report *r, const char *path, char *err)
{
    run_state *s = calloc(1, sizeof *s);
    if (!s)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    s->r = r;
    run_name(path, s->name, sizeof s->name);
    snprintf(s->policy, sizeof s->policy, "%s", s->name); /* until a start line says */
    snprintf(s->model, sizeof s->model, "?");
    int rc = sw_log_read(path, on_event, s, err);
    if (!rc && s->events == 0)
        rc = sw_fail(err, SW_EFORMAT, "%s: no events", path);
    if (!rc) {
        for (uint32_t w = 0; w < s->n; w++)
            close_interval(s, w, s->last_t);
        uint64_t total = 0;
        for (int b = 0; b < STALE_BINS; b++)
            total += s->stale[b];
        for (int b = 0; b < STALE_BINS; b++)
            if (s->stale[b])
                fprintf(r->csv[SW_CSV_STALENESS], "%s,%s,%d,%llu,%.6f\n", s->name, s->policy, b,
                        (unsigned long long)s->stale[b], (double)s->stale[b] / (double)total);
        fprintf(r->csv[SW_CSV_RUNS], "%s,\"%s\",%g,%g,\"%s\",%llu\n", s->name, s->policy,
                s->workers, s->seed, s->model, (unsigned long long)s->events);
        if (r->n_runs < SW_REPORT_MAX_RUNS) {
            snprintf(r->run[r->n_runs], sizeof r->run[0], "%s", s->name);
            snprintf(r->policy[r->n_runs], sizeof r->policy[0], "%s", s->policy);
        }
        r->n_runs++;
        r->workers = s->n > r->workers ? s->n : r->workers;
    }
    free(s->pending);
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
    if (lineno == 1 || line[strspn(line, " \t\r\n")] == '\0')
        return 0;
    char *end;
    unsigned long long k = strtoull(line, &end, 10);
    double d = *end == ',' ? strtod(end + 1, &end) : 0;
    if (end[strspn(end, " \t\r\n")] != '\0')
        return sw_fail(err, SW_EFORMAT, "%s:%zu: expected 'candidate,d'", tr->path, lineno);
    fprintf(tr->r->csv[SW_CSV_ZIPLINE], "%s,%llu,%.9g\n", tr->name, k, d);
    tr->r->zipline_rows++;
    return 0;
}

int sw_report_add_trace(sw_report *r, const char *path, char *err)
{
    trace_reading tr = {.r = r, .path = path};
    run_name(path, tr.name, sizeof tr.name);
    return sw_read_lines(path, on_trace_line, &tr, err);
}
