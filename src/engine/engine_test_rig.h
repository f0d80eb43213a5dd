/* The rig of the engine's tests (engine_test.c, engine_apply_test.c): an engine of two
 * parameters, events recorded, pushes of one value. Included by test files only. */
#ifndef SW_ENGINE_TEST_RIG_H
#define SW_ENGINE_TEST_RIG_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdbool.h>
#include <string.h>

#include "syncwise/engine.h"
#include "syncwise/err.h"

typedef struct recorder {
    sw_event ev[256];
    int n;
} recorder;

static inline void record(void *ctx, const sw_event *ev)
{
    recorder *r = ctx;
    if (r->n < 256)
        r->ev[r->n++] = *ev;
}

static recorder rec;

static const float ones[2] = {1, 1};

/* The parameters of an engine of 2 parameters starting at (1, 1), lr 0.5. */
static inline sw_engine_params two_params(const char *policy, uint32_t slots)
{
    sw_engine_params p = sw_engine_default_params();
    p.n_params = 2;
    p.init = ones;
    p.lr = 0.5f;
    p.max_workers = slots;
    p.policy = policy;
    return p;
}

/* Such an engine with `workers` joined at t = 0, its events recorded. */
static inline sw_engine *start(const char *policy, uint32_t workers, uint32_t slots)
{
    memset(&rec, 0, sizeof rec);
    sw_engine_params p = two_params(policy, slots);
    p.sink = record;
    p.sink_ctx = &rec;
    sw_engine *e;
    char err[SW_ERR_LEN];
    if (sw_engine_new(&e, &p, err))
        fail_msg("%s", err);
    for (uint32_t w = 0; w < workers; w++) {
        sw_engine_result r;
        assert_int_equal(sw_engine_join(e, w, 0, &r), 0);
        assert_int_equal(r.n_released, 1); /* joiners start at once */
    }
    return e;
}

static inline sw_engine_result push(sw_engine *e, uint32_t w, float g, uint64_t ver, double t)
{
    float grad[2] = {g, g};
    sw_engine_result r;
    assert_int_equal(sw_engine_push(e, w, grad, ver, t, &r), 0);
    return r;
}

static inline bool released(const sw_engine_result *r, uint32_t w)
{
    for (uint32_t i = 0; i < r->n_released; i++)
        if (r->released[i] == w)
            return true;
    return false;
}

#endif
