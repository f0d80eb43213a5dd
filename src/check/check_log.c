/* Checking a log file (read by the one log reader, syncwise/run.h): each start line sets up a
 * checker, every event is fed to it, and an end line says the run finished, so that its last
 * engine call is complete and judged. A later start line opens a new segment: a server that
 * restarted (--resume) appends to its log, and the segment before it, cut by the crash, is
 * judged up to its last engine call only. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "syncwise/check.h"
#include "syncwise/err.h"
#include "syncwise/run.h"

typedef struct reading {
    sw_check *c;
    sw_check_summary *out;
    bool ended;        /* the segment's end line was read */
    double target_acc; /* the segment's, from its start line (0: none) */
    double best_acc;   /* the highest accuracy its evaluations gave (NAN: none) */
} reading;

/* A segment is over: its events count in the summary. */
static void close_segment(reading *r)
{
    if (!r->c)
        return;
    r->out->events += sw_check_count(r->c);
    if (!r->out->unknown_policy[0])
        snprintf(r->out->unknown_policy, sizeof r->out->unknown_policy, "%s",
                 sw_check_unknown_policy(r->c));
    sw_check_free(r->c);
    r->c = NULL;
}

/* A checker's verdict, placed at the line where the broken promise showed. */
static int placed(const reading *r, int rc, const char *why, char *err)
{
    return rc ? sw_fail(err, rc, "%llu: %s", (unsigned long long)sw_check_where(r->c), why) : 0;
}

static int on_start(void *ctx, const sw_run_info *info, size_t line, char *err)
{
    reading *r = ctx;
    close_segment(r);
    if (r->out->segments++ == 0)
        snprintf(r->out->policy, sizeof r->out->policy, "%s", info->policy);
    r->ended = false;
    r->target_acc = info->target_acc;
    r->best_acc = NAN;
    char why[SW_ERR_LEN];
    int rc = sw_check_new(&r->c, info->policy, info->slots, info->version, why);
    if (rc)
        return sw_fail(err, rc, "%zu: %s", line, why);
    if (!strcmp(info->driver, "sim"))
        sw_check_simulated(r->c);
    return 0;
}

static int on_event(void *ctx, const sw_event *ev, size_t line, char *err)
{
    reading *r = ctx;
    r->out->applies += ev->kind == SW_EV_APPLY;
    r->out->pushes += ev->kind == SW_EV_PUSH;
    r->out->switches += ev->kind == SW_EV_SWITCH;
    if (ev->kind == SW_EV_EVAL && isfinite(ev->accuracy) && !(ev->accuracy <= r->best_acc))
        r->best_acc = ev->accuracy;
    char why[SW_ERR_LEN];
    return placed(r, sw_check_event_at(r->c, ev, line, why), why, err);
}

static int on_end(void *ctx, double t, uint64_t V, const char *why, size_t line, char *err)
{
    reading *r = ctx;
    r->ended = true;
    char whyc[SW_ERR_LEN];
    int rc = sw_check_end_line(r->c, t, V, why, line, whyc);
    if (rc)
        return placed(r, rc, whyc, err);
    /* A run ends on its target accuracy when an evaluation met it: the end line is no proof. */
    if (!strcmp(why, sw_stop_reason_name(SW_STOP_TARGET_ACC)) &&
        !(r->target_acc > 0 && r->best_acc >= r->target_acc))
        return sw_fail(err, SW_EPROMISE,
                       "%zu: every run: the end line says the target accuracy was reached, but "
                       "no evaluation reached %g",
                       line, r->target_acc);
    return 0;
}

int sw_check_log(const char *path, sw_check_summary *out, char *err)
{
    memset(out, 0, sizeof *out);
    reading r = {.out = out};
    sw_run_reader reader = {.start = on_start, .event = on_event, .end = on_end, .ctx = &r};
    int rc = sw_run_read_log(path, &reader, err);
    out->cut = !r.ended;
    close_segment(&r);
    return rc;
}
