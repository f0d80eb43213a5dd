/* A run's log file (see syncwise/run.h): its start and end lines, and the one reader of logs,
 * which `check`, `report` and the tests share. Event lines are the engine's own
 * (sw_event_write_jsonl, sw_event_from_log). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "syncwise/err.h"
#include "syncwise/lines.h"
#include "syncwise/logread.h"
#include "syncwise/run.h"

void sw_run_write_start(FILE *f, const sw_run_info *s)
{
    fputs("{\"t\":0,\"ev\":\"start\",\"policy\":", f);
    sw_log_put_string(f, s->policy);
    fprintf(f, ",\"workers\":%u,\"slots\":%u,\"seed\":%llu,\"V\":%llu,\"model\":", s->workers,
            s->slots, (unsigned long long)s->seed, (unsigned long long)s->version);
    sw_log_put_string(f, s->model);
    fprintf(f, ",\"params\":%zu,\"batch\":%u,\"lr\":%.6g,\"cluster\":", s->params, s->batch,
            (double)s->lr);
    sw_log_put_string(f, s->cluster);
    if (s->target_acc > 0)
        fprintf(f, ",\"target_acc\":%.9g", s->target_acc);
    if (s->regress)
        fputs(",\"task\":\"regress\"", f);
    fputs(",\"optimizer\":", f);
    sw_log_put_string(f, s->optimizer[0] ? s->optimizer : "sgd");
    fputs(",\"driver\":", f);
    sw_log_put_string(f, s->driver);
    fputs("}\n", f);
}

void sw_run_write_end(FILE *f, double t, uint64_t V, const char *why)
{
    if (ferror(f)) /* as sw_event_write_jsonl: a log that failed ends where it failed */
        return;
    fprintf(f, "{\"t\":%.9g,\"ev\":\"end\",\"V\":%llu,\"why\":", t, (unsigned long long)V);
    sw_log_put_string(f, why);
    fputs("}\n", f);
}

/* A whole number in [min, max] under key, or dflt when the key is absent. */
static int whole(const sw_log_line *l, const char *key, double min, double max, double dflt,
                 double *out, char *err)
{
    double v = sw_log_str(l, key) ? NAN : sw_log_num(l, key, dflt); /* "ten" is not 10 */
    if (!(v >= min && v <= max && v == floor(v)))
        return sw_fail(err, SW_EFORMAT,
                       "the start line's \"%s\" is missing or not a whole "
                       "number in [%.0f, %.0f]",
                       key, min, max);
    *out = v;
    return 0;
}

static void copy(char *dst, size_t cap, const char *src)
{
    snprintf(dst, cap, "%s", src ? src : "");
}

static int read_start(const sw_log_line *l, sw_run_info *s, char *err)
{
    memset(s, 0, sizeof *s);
    double slots = 0, workers = 0, V = 0, params = 0, batch = 0;
    int rc;
    if (!sw_log_str(l, "policy"))
        return sw_fail(err, SW_EFORMAT, "the start line names no \"policy\"");
    if ((rc = whole(l, "slots", 1, 1u << 24, NAN, &slots, err)) ||
        (rc = whole(l, "workers", 0, 1u << 24, 0, &workers, err)) ||
        (rc = whole(l, "V", 0, 0x1p53, 0, &V, err)) ||
        (rc = whole(l, "params", 0, 0x1p53, 0, &params, err)) ||
        (rc = whole(l, "batch", 0, 1u << 30, 0, &batch, err)))
        return rc;
    if (workers > slots)
        return sw_fail(err, SW_EFORMAT, "the start line's \"workers\" (%.0f) exceed its "
                       "\"slots\" (%.0f)", workers, slots);
    const char *driver = sw_log_str(l, "driver"); /* absent in older logs */
    if ((driver && strcmp(driver, "sim") && strcmp(driver, "server")) ||
        !isnan(sw_log_num(l, "driver", NAN)))
        return sw_fail(err, SW_EFORMAT, "the start line's \"driver\" is neither \"sim\" nor "
                       "\"server\"");
    /* Read exactly, as written: an older version wrote seeds up to 2^64 - 1. */
    bool has_seed = sw_log_str(l, "seed") || !isnan(sw_log_num(l, "seed", NAN));
    if (has_seed && !sw_log_whole(l, "seed", &s->seed))
        return sw_fail(err, SW_EFORMAT, "the start line's \"seed\" is not a whole number in "
                       "[0, 2^64 - 1]");
    copy(s->policy, sizeof s->policy, sw_log_str(l, "policy"));
    copy(s->model, sizeof s->model, sw_log_str(l, "model"));
    copy(s->cluster, sizeof s->cluster, sw_log_str(l, "cluster"));
    copy(s->driver, sizeof s->driver, sw_log_str(l, "driver"));
    copy(s->optimizer, sizeof s->optimizer,
         sw_log_str(l, "optimizer") ? sw_log_str(l, "optimizer") : "sgd");
    s->slots = (uint32_t)slots;
    s->workers = (uint32_t)workers;
    s->version = (uint64_t)V;
    s->params = (size_t)params;
    s->batch = (uint32_t)batch;
    s->lr = (float)sw_log_num(l, "lr", 0);
    if (sw_log_str(l, "lr") || sw_log_str(l, "target_acc"))
        return sw_fail(err, SW_EFORMAT, "the start line's \"%s\" is not a number",
                       sw_log_str(l, "lr") ? "lr" : "target_acc");
    const char *task = sw_log_str(l, "task");
    bool task_is_number = !isnan(sw_log_num(l, "task", NAN));
    if (task_is_number || (task && strcmp(task, "regress") && strcmp(task, "classify")))
        return sw_fail(err, SW_EFORMAT, "the start line's \"task\" is neither \"classify\" "
                                        "nor \"regress\"");
    s->regress = task && !strcmp(task, "regress");
    s->target_acc = sw_log_num(l, "target_acc", 0);
    if (!(s->target_acc >= 0 && s->target_acc <= 1))
        return sw_fail(err, SW_EFORMAT, "the start line's \"target_acc\" is not in [0, 1]");
    return 0;
}

typedef struct reading {
    const sw_run_reader *r;
    const char *path; /* "" when reading a string */
    uint64_t lines;
    bool ended; /* the run's end line was read: only a restart's start line may follow */
    uint64_t last_V; /* the highest version a line gave: a restart resumes at most there */
    sw_run_info info;
    sw_log_line line; /* about 73 KiB: readings live on the heap */
} reading;

/* An end line's version and reason, which must be one the writers give (docs/log.md). */
static int read_end(const sw_log_line *l, uint64_t *V, const char **why, char *err)
{
    double v = 0;
    if (whole(l, "V", 0, 0x1p53, NAN, &v, err))
        return sw_fail(err, SW_EFORMAT, "the end line's \"V\" is missing or not a whole number");
    *V = (uint64_t)v;
    *why = sw_log_str(l, "why") ? sw_log_str(l, "why") : "";
    if (!sw_end_reason_known(*why))
        return sw_fail(err, SW_EPROMISE, "the end line gives no known reason (\"%.60s\")", *why);
    return 0;
}

/* Whether a later start line is a restarted server's (--resume appends): the same slots, at
 * a version the log reached. Another run does not belong in the log. */
static bool restarts(const sw_run_info *before, const sw_run_info *now, uint64_t last_V)
{
    return !strcmp(before->driver, "server") && !strcmp(now->driver, "server") &&
           before->slots == now->slots && now->version <= last_V;
}

/* One parsed line: the start of a run, its end, or one of its events. A fault of the line is
 * the reader's to place; a callback's failure says its own where. */
static int take(reading *rd, size_t lineno, bool *callback_failed, char *err)
{
    const sw_run_reader *r = rd->r;
    const sw_log_line *l = &rd->line;
    const char *kind = sw_log_str(l, "ev");
    if (sw_log_str(l, "t"))
        return sw_fail(err, SW_EFORMAT, "\"t\" is not a number (\"%s\")", sw_log_str(l, "t"));
    if (!kind || isnan(sw_log_num(l, "t", NAN)))
        return sw_fail(err, SW_EFORMAT, "a log line needs \"t\" and \"ev\"");
    bool start = strcmp(kind, "start") == 0, end = strcmp(kind, "end") == 0;
    if (rd->lines++ == 0 && !start)
        return sw_fail(err, SW_EFORMAT, "a log begins with its \"start\" line, not \"%s\"", kind);
    if (rd->ended && !start)
        return sw_fail(err, SW_EPROMISE, "%s after the run's \"end\" line (a second run belongs "
                       "in a log of its own)", end ? "a second end" : "an event");
    rd->ended = end;
    sw_event ev;
    uint64_t V = 0;
    const char *why = "";
    int rc;
    if (start) { /* read beside the run's first, for the restart rule (start lines only) */
        sw_run_info now;
        if (!(rc = read_start(l, &now, err)) && rd->lines > 1 &&
            !restarts(&rd->info, &now, rd->last_V))
            rc = sw_fail(err, SW_EPROMISE, "a second run in one log, not a restart of the first "
                         "(a resumed server's start line: same slots, a version it reached)");
        if (!rc)
            rd->info = now, V = now.version;
    } else if (end) {
        rc = read_end(l, &V, &why, err);
    } else if (!(rc = sw_event_from_log(l, &ev, err))) {
        V = ev.V;
    }
    if (rc)
        return rc == SW_ENOTFOUND ? SW_EFORMAT : rc;
    rd->last_V = V > rd->last_V ? V : rd->last_V;
    *callback_failed = true;
    if (start)
        return r->start ? r->start(r->ctx, &rd->info, lineno, err) : 0;
    if (end)
        return r->end ? r->end(r->ctx, sw_log_num(l, "t", 0), V, why, lineno, err) : 0;
    return r->event ? r->event(r->ctx, &ev, lineno, err) : 0;
}

/* One line of text, blank ones skipped; errors placed as the reader's or the callback's.
 * `whole`: a newline ended it (a log's last line without one was cut by a crash mid-write:
 * unreadable, it ends the log instead of failing it). */
static int one_line(reading *rd, char *text, size_t lineno, bool whole, char *err)
{
    if (text[strspn(text, " \t\r\n")] == '\0')
        return 0;
    char why[SW_ERR_LEN];
    bool callback_failed = false;
    int rc = sw_log_parse_line(text, &rd->line, why);
    if (rc && !whole)
        return 0;
    if (!rc)
        rc = take(rd, lineno, &callback_failed, why);
    if (!rc)
        return 0;
    if (callback_failed)
        return sw_fail(err, rc, "%s%s%s", rd->path, *rd->path ? ":" : "", why);
    return sw_fail(err, rc, "%s%s%zu: %s", rd->path, *rd->path ? ":" : "line ", lineno, why);
}

static int on_file_line(void *ctx, char *text, size_t lineno, char *err)
{
    return one_line(ctx, text, lineno, text[strlen(text) - 1] == '\n', err);
}

int sw_run_read_log(const char *path, const sw_run_reader *r, char *err)
{
    reading *rd = calloc(1, sizeof *rd);
    if (!rd)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    rd->r = r;
    rd->path = path;
    int rc = sw_read_lines(path, on_file_line, rd, err);
    if (!rc && rd->lines == 0)
        rc = sw_fail(err, SW_EFORMAT, "%s: an empty log", path);
    free(rd);
    return rc;
}

int sw_run_read_text(const char *text, const sw_run_reader *r, char *err)
{
    reading *rd = calloc(1, sizeof *rd);
    char *copy = strdup(text);
    if (!rd || !copy) {
        free(rd);
        free(copy);
        return sw_fail(err, SW_ENOMEM, "out of memory");
    }
    rd->r = r;
    rd->path = "";
    int rc = 0;
    size_t lineno = 0;
    for (char *p = copy; !rc && *p;) {
        size_t len = strcspn(p, "\n");
        bool more = p[len] == '\n';
        p[len] = '\0';
        rc = one_line(rd, p, ++lineno, more, err);
        p += len + more;
    }
    if (!rc && rd->lines == 0)
        rc = sw_fail(err, SW_EFORMAT, "an empty log");
    free(copy);
    free(rd);
    return rc;
}
