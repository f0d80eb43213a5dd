/* ebsp:R=15,algo=sweep — ElasticBSP (thesis 002, chapter 6).
 *
 * A superstep has two phases. Monitoring: workers run freely (gradients are applied on arrival)
 * until every live worker has pushed twice since the last barrier, so that its interval is
 * known. Prediction: each worker's next R pushes are predicted from its last two push times, the
 * barrier search (any algorithm of syncwise/zipline.h) picks the barrier with the least waiting,
 * and each worker gets a quota of pushes, pick + 1, counting the step it is computing. A worker
 * whose quota is spent waits; when every live worker waits, the barrier releases them all and
 * monitoring starts again. Workers that leave drop out; a worker that joins during prediction
 * waits for the barrier.
 */
#include <stdlib.h>
#include <string.h>

#include "syncwise/err.h"
#include "syncwise/policy.h"
#include "syncwise/zipline.h"

typedef struct ebsp_state {
    uint32_t R;
    const sw_zl_algo *algo;
    sw_zl_workspace *ws;
    double *t, *last, *prev;
    uint32_t *start, *pick, *slot; /* slot[i]: the worker of problem row i */
    uint32_t *since, *quota;       /* per worker: pushes since the barrier, pushes left */
    bool predicting;
} ebsp_state;

static int ebsp_init(void *state, sw_spec *spec, const sw_engine_view *v,
                     const sw_policy_env *env, char *err)
{
    (void)env;
    ebsp_state *st = state;
    long R = SW_EBSP_DEFAULT_R;
    const char *algo = sw_spec_str(spec, "algo", "sweep");
    int rc = sw_spec_int(spec, "R", 1, 100000, &R, err);
    if (rc)
        return rc;
    if (!(st->algo = sw_zl_find(algo))) {
        char names[128];
        sw_zl_names(names, sizeof names);
        return sw_fail(err, SW_EINVAL, "ebsp: algo='%s' is not a barrier search (%s)", algo,
                       names);
    }
    uint32_t n = v->n_slots;
    st->R = (uint32_t)R;
    char why[SW_ERR_LEN];
    if (sw_zl_fits(st->algo, n, st->R, why)) /* or every search would fail, silently */
        return sw_fail(err, SW_ERANGE, "ebsp: %s", why);
    if ((rc = sw_zl_workspace_new(&st->ws, n, (size_t)n * st->R, err)))
        return rc;
    st->t = malloc((size_t)n * st->R * sizeof *st->t);
    st->last = malloc(n * sizeof *st->last);
    st->prev = malloc(n * sizeof *st->prev);
    st->start = malloc((n + 1) * sizeof *st->start);
    st->pick = malloc(n * sizeof *st->pick);
    st->slot = malloc(n * sizeof *st->slot);
    st->since = calloc(n, sizeof *st->since);
    st->quota = calloc(n, sizeof *st->quota);
    if (!st->t || !st->last || !st->prev || !st->start || !st->pick || !st->slot ||
        !st->since || !st->quota)
        return sw_fail(err, SW_ENOMEM, "ebsp: out of memory");
    return 0;
}

static void ebsp_fini(void *state)
{
    ebsp_state *st = state;
    sw_zl_workspace_free(st->ws);
    free(st->t);
    free(st->last);
    free(st->prev);
    free(st->start);
    free(st->pick);
    free(st->slot);
    free(st->since);
    free(st->quota);
}

static bool monitored(const ebsp_state *st, const sw_engine_view *v)
{
    for (uint32_t i = 0; i < v->n_live; i++)
        if (st->since[v->live[i]] < 2)
            return false;
    return v->n_live > 0;
}

/* Predicts every live worker's next R pushes and sets the quotas from the barrier search; each
 * quota is logged as a grant. */
static void predict(ebsp_state *st, const sw_engine_view *v, sw_decision *d)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < v->n_live; i++) {
        uint32_t w = v->live[i];
        const sw_worker_info *k = &v->workers[w];
        double iv = k->push_t[0] - k->push_t[1];
        st->last[n] = k->push_t[0];
        st->prev[n] = k->push_t[0] - (iv > 1e-9 ? iv : 1e-9);
        st->slot[n++] = w;
    }
    sw_zl_predict(st->last, st->prev, n, st->R, st->t, st->start);
    sw_zl_problem p = {.n = n, .t = st->t, .start = st->start};
    sw_zl_result r = {.pick = st->pick};
    if (st->algo->run(&p, st->ws, &r) != 0)
        for (uint32_t i = 0; i < n; i++) /* cannot happen with a sized workspace; be safe */
            st->pick[i] = 0;
    for (uint32_t i = 0; i < n; i++) {
        st->quota[st->slot[i]] = st->pick[i] + 1;
        sw_decision_grant(d, st->slot[i], st->pick[i] + 1);
    }
    st->predicting = true;
}

/* Every live worker waits: release them all and monitor again. With nobody left (the last
 * worker went during a prediction) the superstep is over too, or a joiner would wait for it. */
static void barrier(ebsp_state *st, const sw_engine_view *v, sw_decision *d)
{
    if (v->n_live > 0 && !sw_policy_all_waiting(v))
        return;
    sw_policy_release_all(v, d);
    for (uint32_t i = 0; i < v->n_live; i++) /* a joiner's starts at 0 (ebsp_join) */
        st->since[v->live[i]] = 0;
    st->predicting = false;
}

static void ebsp_push(void *state, const sw_engine_view *v, const sw_push *p, sw_decision *d)
{
    ebsp_state *st = state;
    uint32_t w = p->worker;
    d->apply = true;
    st->since[w]++;
    if (!st->predicting) {
        if (monitored(st, v))
            predict(st, v, d); /* the pusher's next push is its first predicted one */
        sw_decision_release(d, w);
        return;
    }
    if (st->quota[w] > 0 && --st->quota[w] > 0)
        sw_decision_release(d, w);
    else
        barrier(st, v, d);
}

static void ebsp_join(void *state, const sw_engine_view *v, uint32_t w, sw_decision *d)
{
    ebsp_state *st = state;
    (void)v;
    st->since[w] = 0;
    st->quota[w] = 0;
    if (!st->predicting)
        sw_decision_release(d, w); /* during prediction it waits for the barrier */
}

static void ebsp_leave(void *state, const sw_engine_view *v, uint32_t w, sw_decision *d)
{
    ebsp_state *st = state;
    (void)w;
    if (st->predicting)
        barrier(st, v, d);
    else if (monitored(st, v))
        predict(st, v, d);
}

static void ebsp_tick(void *state, const sw_engine_view *v, sw_decision *d)
{
    ebsp_state *st = state;
    if (st->predicting)
        barrier(st, v, d);
    else
        sw_policy_release_all(v, d);
}

const sw_policy_ops sw_policy_ebsp = {
    .name = "ebsp",
    .keys = "R, algo",
    .help = "ElasticBSP: after two pushes from everyone, predict R=15 pushes each, put the "
            "barrier where the search (algo=sweep) says, give each worker its quota",
    .state_size = sizeof(ebsp_state),
    .concurrent = true,
    .init = ebsp_init,
    .on_push = ebsp_push,
    .on_join = ebsp_join,
    .on_leave = ebsp_leave,
    .on_tick = ebsp_tick,
    .fini = ebsp_fini,
};
