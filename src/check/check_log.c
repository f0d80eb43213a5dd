/* Checking a JSONL event log file: its "start" line sets up the checker, every other line is an
 * engine event fed to it (or an evaluation, which changes nothing), and an "end" line says the
 * run finished, so that its last engine call is complete and judged. A later "start" line
 * opens a new segment: a server that restarted (--resume) appends to its log, and the segment
 * before it, cut by the crash, is judged up to its last engine call only. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "syncwise/check.h"
#include "syncwise/err.h"
#include "syncwise/logread.h"

typedef struct reading {
    sw_check *c;
    sw_check_summary *out;
    uint64_t lines;
    bool ended; /* the segment's "end" line was read */
} reading;

/* A segment is over: its events count in the summary. */
static void close_segment(reading *r)
{
    if (!r->c)
        return;
    r->out->events += sw_check_count(r->c);
    r->out->knew_policies = r->out->knew_policies && sw_check_knew_policies(r->c);
    sw_check_free(r->c);
    r->c = NULL;
}

static int start(reading *r, const sw_log_line *l, char *err)
{
    close_segment(r);
    r->out->segments++;
    r->ended = false;
    const char *policy = sw_log_str(l, "policy");
    double slots = sw_log_num(l, "slots", NAN), V = sw_log_num(l, "V", 0);
    if (!policy || !(slots >= 1 && slots <= (1u << 24) && slots == floor(slots)) ||
        !(V >= 0 && V <= 0x1p53 && V == floor(V)))
        return sw_fail(err, SW_EFORMAT, "the start line names no \"policy\", no whole number "
                       "of \"slots\" or a bad \"V\"");
    snprintf(r->out->policy, sizeof r->out->policy, "%s", policy);
    return sw_check_new(&r->c, policy, (uint32_t)slots, (uint64_t)V, err);
}

static int on_line(void *ctx, const sw_log_line *l, char *err)
{
    reading *r = ctx;
    const char *ev = sw_log_str(l, "ev");
    if (r->lines++ == 0 && strcmp(ev, "start") != 0)
        return sw_fail(err, SW_EFORMAT, "a log begins with its \"start\" line, not \"%s\"", ev);
    if (strcmp(ev, "start") == 0)
        return start(r, l, err);
    if (r->ended)
        return sw_fail(err, SW_EFORMAT, "an event after the run's \"end\" line");
    if (strcmp(ev, "end") == 0) {
        r->ended = true;
        return sw_check_end(r->c, err);
    }
    sw_event e;
    int rc = sw_event_from_log(l, &e, err);
    if (rc)
        return rc == SW_ENOTFOUND ? SW_EFORMAT : rc;
    r->out->applies += e.kind == SW_EV_APPLY;
    r->out->pushes += e.kind == SW_EV_PUSH;
    r->out->switches += e.kind == SW_EV_SWITCH;
    return sw_check_event(r->c, &e, err);
}

int sw_check_log(const char *path, sw_check_summary *out, char *err)
{
    memset(out, 0, sizeof *out);
    out->knew_policies = true;
    reading r = {.out = out};
    int rc = sw_log_read(path, on_line, &r, err);
    if (!rc && r.lines == 0)
        rc = sw_fail(err, SW_EFORMAT, "%s: an empty log", path);
    out->cut = !r.ended;
    close_segment(&r);
    return rc;
}
