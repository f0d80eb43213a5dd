/* `syncwise zipline`: the ElasticBSP barrier search on synthetic or recorded push times, with
 * every algorithm timed side by side. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "opts.h"
#include "syncwise/clock.h"
#include "syncwise/err.h"
#include "syncwise/file.h"
#include "syncwise/lines.h"
#include "syncwise/zipline.h"

#define CMD "zipline"

typedef struct zipline_opts {
    long n, R;
    uint64_t seed;
    const char *path, *algo, *trace;
} zipline_opts;

#define AT(field) offsetof(zipline_opts, field)
static const sw_opt table[] = {
    {SW_OPT_ROW(SW_OPT_LONG, "workers", 0, AT(n), 1, 1 << 20, "N",
                "workers of the synthetic data")},
    {SW_OPT_ROW(SW_OPT_LONG, "R", 0, AT(R), 1, 1 << 20, "R", "predicted pushes per worker")},
    {SW_OPT_ROW(SW_OPT_U64, "seed", 0, AT(seed), 0, 0, "S",
                "seed of the synthetic data: intervals uniform in\n"
                "1000-1500 ms as in the thesis's Table 6.2")},
    {SW_OPT_ROW(SW_OPT_STR, "input", 0, AT(path), 0, 0, "FILE",
                "CSV of 'worker,time' rows instead (any order; lists may\ndiffer in length)")},
    {SW_OPT_ROW(SW_OPT_STR, "algo", 0, AT(algo), 0, 0, "NAME",
                "one of zipline, ziplineopt, ziplineoptbs, fullgridscan,\n"
                "gridscan, naive, sweep, or all")},
    {SW_OPT_ROW(SW_OPT_STR, "trace", 0, AT(trace), 0, 0, "FILE",
                "write every candidate d in scan order as CSV (of --algo,\n"
                "or of zipline with all): the data of the thesis's Figures\n6.5 and 6.8")},
    SW_OPT_END_ROW,
};
#undef AT

static const sw_cmd_opts command = {
    .cmd = CMD,
    .about = "Finds when to impose the next ElasticBSP barrier: one predicted push per worker\n"
             "with the smallest spread d = max - min (the fastest worker's wait), the earliest\n"
             "such barrier on ties. Prints d*, the barrier time t_sync, the steps each worker\n"
             "runs before it, and the time each algorithm took.",
    .tables = {table},
};

typedef struct input {
    double *t;
    uint32_t *start, *worker_of, n;
    size_t count, cap;
    bool header; /* its first line was read as one */
    struct row {
        long long w;
        double t;
    } *rows;
} input;

/* A first line that starts with a letter is a header ("worker,time"); any other line is a row,
 * refused when it does not parse: a row taken for a header would vanish without a word. */
static bool is_header(const char *line, size_t lineno)
{
    const char *p = line + strspn(line, " \t");
    return lineno == 1 && ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z'));
}

static int on_row(void *ctx, char *line, size_t lineno, char *err)
{
    input *in = ctx;
    if (lineno == 1 && !strncmp(line, "\xef\xbb\xbf", 3)) /* a UTF-8 byte-order mark */
        line += 3;
    in->header |= is_header(line, lineno);
    if (line[strspn(line, " \t\r\n")] == '\0' || line[0] == '#' || is_header(line, lineno))
        return 0;
    char *end;
    errno = 0;
    long long w = strtoll(line, &end, 10);
    double t = 0;
    bool ok = end != line && errno == 0 && w >= 0 && w < UINT32_MAX;
    end += strspn(end, " \t");
    if (ok && (ok = *end == ',')) {
        char *p = end + 1;
        t = strtod(p, &end);
        ok = end != p && end[strspn(end, " \t\r\n")] == '\0' && t == t;
    }
    if (!ok)
        return sw_fail(err, SW_EFORMAT, "line %zu: expected 'worker,time' (a worker id from 0 "
                                        "to %u, a time in seconds)",
                       lineno, UINT32_MAX - 1);
    if (!isfinite(t) || t < 0) /* a push time is a moment of the run */
        return sw_fail(err, SW_EFORMAT, "line %zu: a time of %g s (finite, 0 or more)", lineno, t);
    if (in->count == in->cap) {
        in->cap = in->cap ? 2 * in->cap : 1024;
        struct row *g = realloc(in->rows, in->cap * sizeof *g);
        if (!g)
            return sw_fail(err, SW_ENOMEM, "out of memory");
        in->rows = g;
    }
    in->rows[in->count++] = (struct row){w, t};
    return 0;
}

static int by_worker_time(const void *a, const void *b)
{
    const struct row *x = a, *y = b;
    if (x->w != y->w)
        return x->w < y->w ? -1 : 1;
    return (x->t > y->t) - (x->t < y->t);
}

/* Groups the rows by worker (in worker order) into sorted lists. */
static int read_input(input *in, const char *path, char *err)
{
    char why[SW_ERR_LEN];
    int rc = sw_read_lines(path, on_row, in, why);
    if (rc && !strncmp(why, path, strlen(path))) /* it names the file already */
        return sw_fail(err, rc, "%s", why);
    if (rc)
        return sw_fail(err, rc, "%s: %s", path, why);
    if (in->count == 0)
        return sw_fail(err, SW_EFORMAT, "%s: no rows 'worker,time'%s", path,
                       in->header ? " (its first line, starting with a letter, was read as a "
                                    "header)"
                                  : "");
    qsort(in->rows, in->count, sizeof *in->rows, by_worker_time);
    in->t = malloc(in->count * sizeof *in->t);
    in->start = malloc((in->count + 1) * sizeof *in->start);
    in->worker_of = malloc(in->count * sizeof *in->worker_of);
    if (!in->t || !in->start || !in->worker_of)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    for (size_t k = 0; k < in->count; k++) {
        if (k == 0 || in->rows[k].w != in->rows[k - 1].w) {
            in->worker_of[in->n] = (uint32_t)in->rows[k].w;
            in->start[in->n++] = (uint32_t)k;
        }
        in->t[k] = in->rows[k].t;
    }
    in->start[in->n] = (uint32_t)in->count;
    return 0;
}

typedef struct trace_file {
    FILE *f;
    uint64_t k;
} trace_file;

static void write_trace(void *ctx, double d)
{
    trace_file *tf = ctx;
    fprintf(tf->f, "%llu,%.9g\n", (unsigned long long)++tf->k, d);
}

/* Mean microseconds of a, repeated for at least 50 ms (at most 10000 times). */
static int time_algo(const sw_zl_algo *a, const sw_zl_problem *p, sw_zl_workspace *ws,
                     sw_zl_result *res, double *us)
{
    int rc = a->run(p, ws, res);
    if (rc)
        return rc;
    sw_zl_set_trace(ws, NULL, NULL);
    double t0 = sw_clock_now_s(), el = 0;
    int reps = 0;
    do {
        a->run(p, ws, res);
        reps++;
        el = sw_clock_now_s() - t0;
    } while (el < 0.05 && reps < 10000);
    *us = el / reps * 1e6;
    return 0;
}

static void print_picks(const input *in, const sw_zl_result *best, uint32_t n)
{
    printf("steps before the barrier (worker:steps):");
    for (uint32_t w = 0; w < n && w < 40; w++)
        printf(" %u:%u", in->worker_of ? in->worker_of[w] : w, best->pick[w] + 1);
    if (n > 40)
        printf(" ... (%u workers)", n);
    printf("\n");
}

static int run(const sw_zl_problem *p, const char *algo, const char *trace_path,
               const input *in, char *err)
{
    sw_zl_workspace *ws;
    int rc = sw_zl_workspace_new(&ws, p->n, p->start[p->n], err);
    if (rc)
        return rc;
    uint32_t *pick = malloc(2 * p->n * sizeof *pick);
    trace_file tf = {0};
    if (!pick)
        rc = sw_fail(err, SW_ENOMEM, "out of memory");
    if (!rc && trace_path && !(tf.f = sw_file_create(trace_path, "--trace", err)))
        rc = SW_EIO;
    if (tf.f)
        fprintf(tf.f, "candidate,d\n");
    sw_zl_result best = {.pick = pick, .d = -1};
    printf("%-14s %14s %16s %12s %14s\n", "algorithm", "d*", "t_sync", "candidates", "time (us)");
    for (const sw_zl_algo *a = sw_zl_algos; !rc && a->name; a++) {
        if (strcmp(algo, "all") && strcmp(algo, a->name))
            continue;
        char why[SW_ERR_LEN];
        if (!strcmp(algo, "all") && a->run != sw_zl_find("naive")->run &&
            sw_zl_problem_fits(a, p, why)) { /* naive says so itself, below */
            printf("%-14s %14s (skipped: %s)\n", a->name, "-", why);
            continue;
        }
        bool traced = tf.f && (!strcmp(algo, a->name) || !strcmp(a->name, "zipline"));
        sw_zl_set_trace(ws, traced ? write_trace : NULL, &tf);
        sw_zl_result res = {.pick = pick + p->n};
        double us = 0;
        int arc = time_algo(a, p, ws, &res, &us);
        if (arc == SW_ERANGE && !strcmp(algo, "all")) {
            printf("%-14s %14s (skipped: too many combinations)\n", a->name, "-");
            continue;
        }
        if (arc == SW_ERANGE) { /* the one search asked for cannot answer */
            rc = sw_fail(err, SW_ERANGE, "%s: too many combinations for it to search: choose "
                         "another --algo", a->name);
            break;
        }
        printf("%-14s %14.9g %16.9g %12llu %14.1f%s\n", a->name, res.d, res.t_sync,
               (unsigned long long)res.candidates, us, a->exact ? "" : "  (heuristic)");
        if (a->exact || best.d < 0) {
            best.d = res.d;
            best.t_sync = res.t_sync;
            memcpy(best.pick, res.pick, p->n * sizeof *pick);
        }
    }
    if (!rc && best.d >= 0) {
        printf("\nd* = %.9g (the fastest worker's wait), barrier at t_sync = %.9g\n", best.d,
               best.t_sync);
        print_picks(in, &best, p->n);
    }
    int crc = sw_file_close(tf.f, trace_path, rc ? NULL : err);
    rc = rc ? rc : crc;
    free(pick);
    sw_zl_workspace_free(ws);
    return rc;
}

static const zipline_opts defaults = {.n = 10, .R = 15, .seed = 1, .algo = "all"};

int sw_cli_zipline(int argc, char **argv)
{
    zipline_opts o = defaults;
    int prc = sw_cli_parse(&command, argc, argv, &o, NULL);
    if (prc)
        return prc == 1 ? 0 : prc;
    long n = o.n, R = o.R;
    uint64_t seed = o.seed;
    const char *path = o.path, *algo = o.algo, *trace = o.trace;
    if ((prc = sw_cli_outputs_apart(CMD, 1, (const char *[]){"--trace"}, &trace, 1, &path)))
        return prc;
    if (path && (n != defaults.n || R != defaults.R || seed != defaults.seed)) /* not unused */
        return sw_cli_error(CMD, "--workers, --R and --seed shape the synthetic data: --input "
                                 "%s gives the pushes instead", path) + 1;
    if (strcmp(algo, "all") && !sw_zl_find(algo)) {
        char names[128];
        sw_zl_names(names, sizeof names);
        return sw_cli_error(CMD, "--algo: unknown '%s' (known: %s, all)", algo, names) + 1;
    }
    if ((size_t)n * (size_t)R > (1u << 27))
        return sw_cli_error(CMD, "%ld workers x %ld points is too large", n, R) + 1;
    char err[SW_ERR_LEN];
    input in = {0};
    int rc = 0;
    sw_zl_problem p;
    const sw_zl_algo *asked = sw_zl_find(algo); /* one search: its refusal comes before output */
    if (path) {
        rc = read_input(&in, path, err);
        p = (sw_zl_problem){.n = in.n, .t = in.t, .start = in.start};
        if (!rc && asked && sw_zl_problem_fits(asked, &p, err))
            rc = SW_EINVAL; /* the command line's choice of algorithm */
        if (!rc)
            printf("%u workers, %zu points from %s\n\n", in.n, in.count, path);
    } else {
        in.t = malloc((size_t)n * (size_t)R * sizeof *in.t);
        in.start = malloc(((size_t)n + 1) * sizeof *in.start);
        if (!in.t || !in.start)
            rc = sw_fail(err, SW_ENOMEM, "out of memory");
        else
            sw_zl_synthetic((uint32_t)n, (uint32_t)R, seed, in.t, in.start);
        p = (sw_zl_problem){.n = (uint32_t)n, .t = in.t, .start = in.start};
        if (!rc && asked && sw_zl_problem_fits(asked, &p, err))
            rc = SW_EINVAL;
        if (!rc)
            printf("%ld workers, R = %ld (synthetic, seed %llu: intervals 1000-1500 ms)\n\n", n,
                   R, (unsigned long long)seed);
    }
    if (!rc)
        rc = run(&p, algo, trace, &in, err);
    if (rc)
        sw_cli_error(CMD, "%s", err);
    free(in.t);
    free(in.start);
    free(in.worker_of);
    free(in.rows);
    return rc == SW_EINVAL ? 2 : rc ? 1 : 0;
}
