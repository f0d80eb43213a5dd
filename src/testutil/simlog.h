/* Helpers for tests that check policies on simulator event logs: run a simulation into a
 * string, read its JSONL lines, and replay membership and clocks. */
#ifndef SW_TESTUTIL_SIMLOG_H
#define SW_TESTUTIL_SIMLOG_H

#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "syncwise/err.h"
#include "syncwise/sim.h"

/* Runs a simulation and returns its log as one string (the caller frees it). */
static inline char *run_log(sw_sim_config c, sw_sim_result *r)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    c.log = f;
    char err[SW_ERR_LEN];
    if (sw_sim_run(&c, r, err))
        fail_msg("%s", err);
    fclose(f);
    return buf;
}

/* One log line, parsed into the fields the invariants read. */
typedef struct line {
    char ev[16];
    double t;
    long w, step, ver, V;
} line;

static inline long field(const char *s, const char *key)
{
    const char *p = strstr(s, key);
    return p ? strtol(p + strlen(key), NULL, 10) : -1;
}

static inline int next_line(char **cursor, line *out)
{
    char *s = *cursor;
    if (!s || !*s)
        return 0;
    char *nl = strchr(s, '\n');
    assert_non_null(nl); /* every line ends */
    *nl = '\0';
    *cursor = nl + 1;
    const char *ev = strstr(s, "\"ev\":\"");
    assert_non_null(ev);
    sscanf(ev + 6, "%15[a-z]", out->ev);
    out->t = strtod(strstr(s, "\"t\":") + 4, NULL);
    out->w = field(s, "\"w\":");
    out->step = field(s, "\"step\":");
    out->ver = field(s, "\"ver\":");
    out->V = field(s, "\"V\":");
    return 1;
}

#define MAXW 16

/* Replays a log's membership and clocks; calls check at every release. */
typedef struct replay {
    long clock[MAXW];
    int live[MAXW];
    int fresh[MAXW]; /* joined, not yet started: no clock yet */
} replay;

static inline void track(replay *r, const line *l)
{
    if (!strcmp(l->ev, "join")) {
        r->live[l->w] = 1;
        r->fresh[l->w] = 1;
        r->clock[l->w] = l->step;
    } else if (!strcmp(l->ev, "leave") || !strcmp(l->ev, "crash")) {
        r->live[l->w] = 0;
    } else if (!strcmp(l->ev, "push")) {
        assert_int_equal(l->step, r->clock[l->w] + 1);
        r->clock[l->w] = l->step;
    } else if (!strcmp(l->ev, "drop")) {
        r->clock[l->w]--;
    } else if (!strcmp(l->ev, "release")) {
        r->clock[l->w] = l->step; /* a joiner's clock is fixed at its first release */
        r->fresh[l->w] = 0;
    }
}

static inline long min_live(const replay *r)
{
    long m = -1;
    for (int w = 0; w < MAXW; w++)
        if (r->live[w] && !r->fresh[w] && (m < 0 || r->clock[w] < m))
            m = r->clock[w];
    return m;
}

#endif
