/* The rig of the checker's unit tests (check_test.c, check_call_test.c): an event stream
 * written by hand into a checker, and its verdict. Included by test files only. */
#ifndef SW_CHECK_TEST_RIG_H
#define SW_CHECK_TEST_RIG_H

#include "testutil/testutil.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "syncwise/check.h"
#include "syncwise/err.h"

/* A stream being written: the checker, the time and version it has reached, its first failure. */
typedef struct script {
    sw_check *c;
    double t;
    uint64_t V;
    int rc;
    char err[SW_ERR_LEN];
} script;

static inline script *open_script(const char *policy, uint32_t slots)
{
    static script s;
    memset(&s, 0, sizeof s);
    char err[SW_ERR_LEN];
    if (sw_check_new(&s.c, policy, slots, 0, err))
        fail_msg("%s: %s", policy, err);
    return &s;
}

static inline void feed(script *s, sw_event ev)
{
    ev.t = s->t;
    if (!ev.V)
        ev.V = s->V;
    if (!s->rc)
        s->rc = sw_check_event(s->c, &ev, s->err);
}

static inline void join(script *s, uint32_t w, uint64_t step)
{
    feed(s, (sw_event){.kind = SW_EV_JOIN, .worker = w, .clock = step});
}
static inline void push(script *s, uint32_t w, uint64_t step, uint64_t ver)
{
    s->t += 1;
    feed(s, (sw_event){.kind = SW_EV_PUSH, .worker = w, .clock = step, .ver = ver});
}
static inline void drop(script *s, uint32_t w, uint64_t ver)
{
    feed(s, (sw_event){.kind = SW_EV_DROP, .worker = w, .ver = ver});
}
static inline void apply_scaled(script *s, uint32_t n, float lr_scale)
{
    s->V++;
    feed(s, (sw_event){.kind = SW_EV_APPLY, .n = n, .lr_scale = lr_scale});
}
static inline void apply(script *s, uint32_t n) { apply_scaled(s, n, (float)n); }
static inline void release(script *s, uint32_t w, uint64_t step)
{
    feed(s, (sw_event){.kind = SW_EV_RELEASE, .worker = w, .clock = step, .reason = "policy"});
}
/* A release by the engine's liveness rule, not by the policy. */
static inline void liveness(script *s, uint32_t w, uint64_t step)
{
    feed(s, (sw_event){.kind = SW_EV_RELEASE, .worker = w, .clock = step, .reason = "liveness"});
}
static inline void grant(script *s, uint32_t w, uint32_t steps)
{
    feed(s, (sw_event){.kind = SW_EV_GRANT, .worker = w, .n = steps});
}
static inline void leave(script *s, uint32_t w, uint64_t step)
{
    s->t += 1;
    feed(s, (sw_event){.kind = SW_EV_CRASH, .worker = w, .clock = step});
}

/* Joins workers 0..n-1 at step 0, each released at once. */
static inline void start_all(script *s, uint32_t n)
{
    for (uint32_t w = 0; w < n; w++) {
        join(s, w, 0);
        release(s, w, 0);
    }
}

/* Ends the stream: kept (want == NULL) or broken with `want` in the message. */
static inline void expect(script *s, const char *want)
{
    if (!s->rc)
        s->rc = sw_check_end(s->c, s->err);
    sw_check_free(s->c);
    if (!want && s->rc)
        fail_msg("a kept promise was reported broken: %s", s->err);
    if (want && s->rc != SW_EPROMISE)
        fail_msg("a broken promise went unseen (wanted '%s')", want);
    if (want && !strstr(s->err, want))
        fail_msg("'%s' does not say '%s'", s->err, want);
}

/* ebsp:R=4 on 2 workers through monitoring: each pushes twice, and at the last push, before
 * its release, `answer` (NULL: nothing) logs the barrier search's grants and says whether that
 * pusher goes on (it must). */
static inline script *ebsp_monitored(bool (*answer)(script *s))
{
    script *s = open_script("ebsp:R=4", 2);
    start_all(s, 2);
    for (uint64_t k = 1; k <= 2; k++)
        for (uint32_t w = 0; w < 2; w++) {
            push(s, w, k, s->V);
            apply_scaled(s, 1, 1);
            if (!(k == 2 && w == 1 && answer) || answer(s))
                release(s, w, k);
        }
    return s;
}

#endif
