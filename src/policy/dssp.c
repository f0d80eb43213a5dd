/* dssp:lo=3,hi=15 — Dynamic Stale Synchronous Parallel (thesis 002, chapter 5).
 *
 * Gradients are applied on arrival. A worker at most `lo` steps ahead of the slowest live worker
 * goes on, as under ssp:s=lo. A worker further ahead that is the fastest asks the
 * synchronization controller (Algorithm 2), which predicts its next pushes and the slowest
 * worker's from their last two push times and grants r* extra steps, r* in [0, hi - lo], where
 * the two line up best; the worker then runs those r* steps without asking. Other workers beyond
 * `lo` wait until the slowest catches up.
 *
 * As in the thesis's Algorithm 1, a grant is spent on every push of its worker (lines 3-5),
 * whatever its lead, so that steps granted long ago cannot be spent later. Two choices where the
 * thesis is loose, both so that no worker ever starts a step more than `hi` ahead:
 * - Algorithm 1 releases the worker on the grant and then once per remaining quota, which would
 *   run r* + 1 extra steps; we run exactly r*, as its Figure 5.1 describes ("allows worker 1 to
 *   run 3 more iterations");
 * - r* is the best r within hi - lead + 1 for a worker `lead` steps ahead when it asks, since
 *   each granted step may put it one step further ahead (r_max = hi - lo assumes it asks at
 *   lo + 1); the slowest worker's pushes are still predicted hi - lo steps ahead.
 * Gaps equal but for rounding are a tie, which goes to the smaller r.
 * Each grant is logged (sw_decision_grant), so that the checker holds the policy to it.
 */
#include <math.h>
#include <stdlib.h>

#include "policy_internal.h"
#include "syncwise/err.h"
#include "syncwise/policy.h"

typedef struct dssp_state {
    uint64_t lo, hi;
    uint64_t last_min;
    int64_t *quota; /* per worker: extra steps it may still run without asking */
} dssp_state;

uint32_t sw__dssp_controller(double p0, double p1, double s0, double s1, uint32_t r_max,
                             uint32_t k_max)
{
    double ip = p0 - p1, is = s0 - s1;
    if (p1 < 0 || s1 < 0 || !(ip > 0) || !(is > 0))
        return 0;
    /* Gaps that differ by rounding alone are a tie (push times 2.0001 apart do not subtract
     * exactly), which goes to the smaller r as the thesis's earliest rule would. */
    double tie = 1e-9 * fmax(1, fabs(p0) + fabs(s0));
    uint32_t best = 0;
    double best_gap = INFINITY;
    for (uint32_t r = 0; r <= r_max; r++) {
        double sim_p = p0 + r * ip;
        /* The gap is |a linear function of k|: only the k on either side of its root can be
         * the closest, so each r costs O(1) and a decision O(hi - lo), not O((hi - lo)^2)
         * (hi = 1000000 took minutes a decision). */
        double root = (sim_p - s0) / is - 1;
        double k_lo = fmin(fmax(floor(root) - 1, 0), k_max);
        for (double k = k_lo; k <= fmin(k_lo + 3, k_max); k++) {
            double gap = fabs(s0 + is + k * is - sim_p);
            if (gap < best_gap - tie) {
                best_gap = gap;
                best = r;
            }
        }
        if (best_gap <= tie)
            break; /* nothing later can beat it by more than a tie (even clusters: at once) */
    }
    return best;
}

static int dssp_init(void *state, sw_spec *spec, const sw_engine_view *v,
                     const sw_policy_env *env, char *err)
{
    (void)env;
    dssp_state *st = state;
    long lo = SW_DSSP_DEFAULT_LO, hi = SW_DSSP_DEFAULT_HI;
    int rc;
    if ((rc = sw_spec_int(spec, "lo", 0, 1000000, &lo, err)) ||
        (rc = sw_spec_int(spec, "hi", 0, 1000000, &hi, err)))
        return rc;
    if (hi < lo)
        return sw_fail(err, SW_EINVAL, "dssp: hi=%ld is below lo=%ld", hi, lo);
    st->lo = (uint64_t)lo;
    st->hi = (uint64_t)hi;
    st->last_min = v->min_live_clock;
    if (!(st->quota = calloc(v->n_slots, sizeof *st->quota)))
        return sw_fail(err, SW_ENOMEM, "out of memory");
    return 0;
}

static void dssp_fini(void *state) { free(((dssp_state *)state)->quota); }

/* The slowest started worker: the smallest clock, the longest last interval among equals. */
static uint32_t slowest(const sw_engine_view *v)
{
    uint32_t best = UINT32_MAX;
    double best_iv = -1;
    for (uint32_t i = 0; i < v->n_live; i++) {
        uint32_t w = v->live[i];
        const sw_worker_info *k = &v->workers[w];
        if (k->fresh || k->clock != v->min_live_clock)
            continue;
        double iv = k->push_t[1] >= 0 ? k->push_t[0] - k->push_t[1] : 0;
        if (best == UINT32_MAX || iv > best_iv) {
            best = w;
            best_iv = iv;
        }
    }
    return best;
}

static uint64_t max_live_clock(const sw_engine_view *v)
{
    uint64_t m = 0;
    for (uint32_t i = 0; i < v->n_live; i++)
        if (v->workers[v->live[i]].clock > m)
            m = v->workers[v->live[i]].clock;
    return m;
}

/* Releases the waiting workers within `lo` of the slowest (quota-holders never wait). */
static void release_within(dssp_state *st, const sw_engine_view *v, sw_decision *d)
{
    st->last_min = v->min_live_clock;
    sw_policy_release_within(v, st->lo, d);
}

/* The extra steps the controller grants worker w, `lead` steps ahead: the best within what
 * keeps each of them within hi (not the best of hi - lo cut down to it, which may be the
 * worst of those allowed). */
static uint32_t grant(const dssp_state *st, const sw_engine_view *v, uint32_t w, uint64_t lead)
{
    uint32_t sl = slowest(v);
    if (lead > st->hi || sl == UINT32_MAX)
        return 0;
    const sw_worker_info *k = &v->workers[w], *s = &v->workers[sl];
    uint64_t range = st->hi - st->lo, cap = st->hi - lead + 1;
    return sw__dssp_controller(k->push_t[0], k->push_t[1], s->push_t[0], s->push_t[1],
                               (uint32_t)(cap < range ? cap : range), (uint32_t)range);
}

static void dssp_push(void *state, const sw_engine_view *v, const sw_push *p, sw_decision *d)
{
    dssp_state *st = state;
    int64_t *quota = &st->quota[p->worker];
    uint64_t lead = p->clock - v->min_live_clock;
    d->apply = true;
    if (v->min_live_clock != st->last_min)
        release_within(st, v, d);
    if (*quota > 0) { /* a granted step, spent whatever the lead */
        --*quota;
        if (lead <= st->hi)
            sw_decision_release(d, p->worker);
    } else if (lead <= st->lo) {
        sw_decision_release(d, p->worker);
    } else if (p->clock == max_live_clock(v)) {
        uint32_t r = grant(st, v, p->worker, lead);
        if (r > 0) { /* r extra steps: this release is the first of them */
            *quota = (int64_t)r - 1;
            sw_decision_grant(d, p->worker, r);
            sw_decision_release(d, p->worker);
        }
    }
}

static void dssp_join(void *state, const sw_engine_view *v, uint32_t w, sw_decision *d)
{
    (void)v;
    ((dssp_state *)state)->quota[w] = 0; /* a new worker in an old slot starts afresh */
    sw_decision_release(d, w);
}

static void dssp_leave(void *state, const sw_engine_view *v, uint32_t w, sw_decision *d)
{
    ((dssp_state *)state)->quota[w] = 0; /* a grant is lost with its worker */
    release_within(state, v, d);
}

static void dssp_tick(void *state, const sw_engine_view *v, sw_decision *d)
{
    release_within(state, v, d);
}

const sw_policy_ops sw_policy_dssp = {
    .name = "dssp",
    .keys = "lo, hi",
    .help = "dynamic SSP: ssp with s=lo, and the fastest worker may run up to hi - lo extra "
            "steps where its predicted pushes meet the slowest worker's (lo=3, hi=15)",
    .state_size = sizeof(dssp_state),
    .concurrent = true,
    .init = dssp_init,
    .on_push = dssp_push,
    .on_join = dssp_join,
    .on_leave = dssp_leave,
    .on_tick = dssp_tick,
    .fini = dssp_fini,
};
