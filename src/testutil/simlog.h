/* Helpers for tests that look at simulator event logs: a run written into a string, and its
 * events read back through the library's own log reader (syncwise/run.h), with the promise
 * checker's replay (syncwise/check.h) for clocks and leads. */
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

#include "syncwise/check.h"
#include "syncwise/err.h"
#include "syncwise/run.h"
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

/* A log's events, in order, with what its start line said. A switch's policy is kept in
 * `policy` (ev.reason is NULL there: the reader's line is gone). */
typedef struct logged {
    sw_event ev;
    char policy[64];
} logged;

typedef struct events {
    logged *e;
    size_t n, cap;
    sw_run_info info;
} events;

static inline int events_start(void *ctx, const sw_run_info *info, size_t line, char *err)
{
    (void)line, (void)err;
    ((events *)ctx)->info = *info;
    return 0;
}

static inline int events_add(void *ctx, const sw_event *ev, size_t line, char *err)
{
    (void)line;
    events *es = ctx;
    if (es->n == es->cap) {
        es->cap = es->cap ? 2 * es->cap : 1024;
        es->e = realloc(es->e, es->cap * sizeof *es->e);
        if (!es->e)
            return sw_fail(err, SW_ENOMEM, "out of memory");
    }
    logged *l = &es->e[es->n++];
    l->ev = *ev;
    l->policy[0] = '\0';
    if (ev->kind == SW_EV_SWITCH) {
        snprintf(l->policy, sizeof l->policy, "%s", ev->reason);
        l->ev.reason = NULL;
    }
    return 0;
}

/* Reads every event of a log string (the caller frees es.e). */
static inline events read_events(const char *log)
{
    events es = {0};
    sw_run_reader r = {.start = events_start, .event = events_add, .ctx = &es};
    char err[SW_ERR_LEN];
    if (sw_run_read_text(log, &r, err))
        fail_msg("%s", err);
    return es;
}

/* A checker over a log's events, fed one at a time: sw_check_lead and sw_check_worker give the
 * clocks after each. */
static inline sw_check *replay_of(const events *es)
{
    sw_check *c;
    char err[SW_ERR_LEN];
    if (sw_check_new(&c, es->info.policy, es->info.slots, es->info.version, err))
        fail_msg("%s", err);
    if (!strcmp(es->info.driver, "sim"))
        sw_check_simulated(c);
    return c;
}

static inline void replay(sw_check *c, const sw_event *ev)
{
    char err[SW_ERR_LEN];
    if (sw_check_event(c, ev, err))
        fail_msg("%s", err);
}

#endif
