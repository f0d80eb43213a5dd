/* Checking a JSONL event log file: its "start" line sets up the checker, every other line is an
 * engine event fed to it (or an evaluation, which changes nothing). */
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
} reading;

static int start(reading *r, const sw_log_line *l, char *err)
{
    const char *policy = sw_log_str(l, "policy");
    double slots = sw_log_num(l, "slots", NAN);
    if (!policy || !(slots >= 1 && slots <= (1u << 24) && slots == floor(slots)))
        return sw_fail(err, SW_EFORMAT, "the start line names no \"policy\" or no whole "
                       "number of \"slots\"");
    snprintf(r->out->policy, sizeof r->out->policy, "%s", policy);
    return sw_check_new(&r->c, policy, (uint32_t)slots, err);
}

static int on_line(void *ctx, const sw_log_line *l, char *err)
{
    reading *r = ctx;
    const char *ev = sw_log_str(l, "ev");
    if (r->lines++ == 0) {
        if (strcmp(ev, "start") != 0)
            return sw_fail(err, SW_EFORMAT, "a log begins with its \"start\" line, not \"%s\"",
                           ev);
        return start(r, l, err);
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
    reading r = {.out = out};
    int rc = sw_log_read(path, on_line, &r, err);
    if (!rc && r.lines == 0)
        rc = sw_fail(err, SW_EFORMAT, "%s: an empty log", path);
    char why[SW_ERR_LEN];
    if (!rc && (rc = sw_check_end(r.c, why)))
        rc = sw_fail(err, rc, "%s: at its end: %s", path, why);
    if (r.c) {
        out->events = sw_check_count(r.c);
        out->knew_policies = sw_check_knew_policies(r.c);
    }
    sw_check_free(r.c);
    return rc;
}
