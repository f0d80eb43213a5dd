/* dbw:D=5 and bdbw — Dynamic Backup Workers (001, section III): the k-of-n mechanism of backup
 * workers with k chosen again after every apply as argmax over k of gain(k) / T(k).
 *
 * gain: eq. 12 from the engine's running sums of the last applies (no gradient is copied): for
 * an apply of k gradients with S = sum of their squared norms and Q = squared norm of their sum,
 * the mean gradient's squared norm is Q / k^2 and the summed component variance is
 * (S - Q / k) / (k - 1) (eq. 10's estimator, for k >= 2). The variance is averaged over the
 * last D applies that measured it (an apply of one gradient cannot: had its window of D applies
 * been all of k = 1, DBW would fall back to waiting for every worker just to measure again), the
 * gradient norm over the last D applies, through eq. 11. The gain is eq. 12 as written; with agg=sum (the
 * default) the learning rate grows with k, as in the paper's experiments, which eq. 12 does not
 * model (it assumes eta = 1/L). bdbw (blind DBW) uses gain = k.
 *
 * gain=eta (not the paper's): eq. 8, the gain before eq. 12 set eta = 1/L, at the rate an apply
 * of k runs at (lr on the mean, lr k with agg=sum)
 * and a smoothness L: given (L=X), or estimated from the probe loss around each apply. eq. 5
 * along the step says F(w') - F(w) = -eta g.grad F + (L/2) eta^2 |g|^2, with g.grad F taken at
 * its expectation, eq. 11's |grad F|^2, so L is fitted by least squares to the last D applies'
 * (eta, |g|^2, loss change); negative fits count as 0 (no sign of curvature: every k gains
 * alike, and time decides). It assumes plain SGD: momentum and weight decay move w otherwise.
 *
 * T(k): the time from an apply until the k-th gradient of the new version arrives, learned
 * online as the mean of samples taken when the previous apply had waited for h gradients (the
 * paper's t_{h,k}); with no sample for this h, the mean over every h. Gradients that arrive after
 * the apply (and are dropped) still give samples for larger k. Until the first estimates exist,
 * k = every live worker.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "policy_internal.h"
#include "syncwise/err.h"
#include "syncwise/policy.h"

#define VERSIONS 4 /* versions whose arrivals are still being timed */
#define MAX_D 64

typedef struct timing {
    uint64_t version;
    double start;
    uint32_t h, arrived;
} timing;

typedef struct dbw_state {
    bool blind, mean;
    bool eta;        /* gain=eta */
    double L_given;  /* gain=eta's L=X, or 0: estimated */
    /* gain=eta with L estimated, per apply that has probe losses, the last D: the rate on its
     * mean gradient, that gradient's squared norm and the probe loss's change */
    double step_lr[MAX_D], step_q[MAX_D], step_df[MAX_D];
    uint32_t step_hist;
    uint32_t D, n, k, k_prev;
    uint64_t seen_version, seen_norms; /* the version k was chosen for; the apply last recorded */
    double gsq[MAX_D];             /* per apply, the last D: mean gradient's squared norm */
    uint32_t kk[MAX_D], hist;
    double var[MAX_D];             /* per apply of k >= 2, the last D: the variance (eq. 10) */
    uint32_t var_hist;
    double *t_sum, *t_all_sum, *T; /* n*n by (h, k); n by k; n estimates */
    uint32_t *t_cnt, *t_all_cnt;
    timing ver[VERSIONS];
} dbw_state;

double sw__dbw_gain_of(const sw__dbw_gain *g, uint32_t k)
{
    if (g->blind)
        return (double)k;
    if (g->L < 0)
        return g->grad_sq - g->var / (double)k;
    double eta = g->lr * (g->sum ? (double)k : 1.0);
    return eta * (1 - g->L * eta / 2) * g->grad_sq - g->L * eta * eta / 2 * g->var / (double)k;
}

uint32_t sw__dbw_choose(const sw__dbw_gain *g, const double *T, uint32_t n)
{
    uint32_t best = n, least_bad = 0;
    double best_rate = 0, least_loss = -INFINITY;
    for (uint32_t k = 1; k <= n; k++) {
        if (!(T[k - 1] > 0))
            continue;
        double gain = sw__dbw_gain_of(g, k);
        if (gain > 0 && gain / T[k - 1] > best_rate) {
            best_rate = gain / T[k - 1];
            best = k;
        }
        if (gain > least_loss)
            least_loss = gain, least_bad = k;
    }
    /* No k gains: eq. 12's gain grows with k, so waiting for all loses least; eq. 8's can
     * fall with k (agg=sum: a larger step), so the k that loses least. */
    if (best_rate == 0 && g->L >= 0 && !g->blind && least_bad)
        return least_bad;
    return best;
}

/* gain=eta and L=X: DBW's own keys beside D and agg. */
static int read_gain(dbw_state *st, sw_spec *spec, char *err)
{
    const char *gain = sw_spec_str(spec, "gain", "eq12");
    if (strcmp(gain, "eq12") && strcmp(gain, "eta"))
        return sw_fail(err, SW_EINVAL, "dbw: gain='%s' is not eq12 or eta", gain);
    st->eta = !strcmp(gain, "eta");
    if (sw_spec_has(spec, "L") && !st->eta)
        return sw_fail(err, SW_EINVAL, "dbw: L= is the smoothness gain=eta uses: give it with "
                                       "gain=eta (this spec's gain is %s)", gain);
    st->L_given = 0;
    int rc = sw_spec_double(spec, "L", 1e-12, 1e12, &st->L_given, err);
    return rc;
}

static int dbw_init_common(dbw_state *st, sw_spec *spec, const sw_engine_view *v, bool blind,
                           char *err)
{
    long D = 5;
    int rc;
    if ((rc = sw_spec_int(spec, "D", 1, MAX_D, &D, err)) ||
        (rc = sw__parse_agg(spec, &st->mean, err)) || (!blind && (rc = read_gain(st, spec, err))))
        return rc;
    uint32_t n = v->n_slots;
    st->blind = blind;
    st->D = (uint32_t)D;
    st->n = n;
    st->k = st->k_prev = n;
    st->seen_version = v->version;
    st->seen_norms = v->norms.version;
    st->t_sum = calloc((size_t)n * n, sizeof *st->t_sum);
    st->t_cnt = calloc((size_t)n * n, sizeof *st->t_cnt);
    st->t_all_sum = calloc(n, sizeof *st->t_all_sum);
    st->t_all_cnt = calloc(n, sizeof *st->t_all_cnt);
    st->T = calloc(n, sizeof *st->T);
    if (!st->t_sum || !st->t_cnt || !st->t_all_sum || !st->t_all_cnt || !st->T)
        return sw_fail(err, SW_ENOMEM, "dbw: out of memory for %u x %u timing samples", n, n);
    for (int i = 0; i < VERSIONS; i++)
        st->ver[i].version = UINT64_MAX;
    /* where arrivals look it up: a switch or a resume starts at any version */
    st->ver[v->version % VERSIONS] = (timing){.version = v->version, .start = v->now, .h = n};
    return 0;
}

static int dbw_init(void *state, sw_spec *spec, const sw_engine_view *v,
                    const sw_policy_env *env, char *err)
{
    (void)env;
    return dbw_init_common(state, spec, v, false, err);
}

static int bdbw_init(void *state, sw_spec *spec, const sw_engine_view *v,
                     const sw_policy_env *env, char *err)
{
    (void)env;
    return dbw_init_common(state, spec, v, true, err);
}

static void dbw_fini(void *state)
{
    dbw_state *st = state;
    free(st->t_sum);
    free(st->t_cnt);
    free(st->t_all_sum);
    free(st->t_all_cnt);
    free(st->T);
}

/* A gradient computed at `version` arrived at `now`: a sample of the time to its rank. */
static void time_arrival(dbw_state *st, uint64_t version, double now)
{
    timing *tm = &st->ver[version % VERSIONS];
    if (tm->version != version || tm->arrived >= st->n)
        return;
    uint32_t k = ++tm->arrived;
    double dt = now - tm->start;
    st->t_sum[(size_t)(tm->h - 1) * st->n + (k - 1)] += dt;
    st->t_cnt[(size_t)(tm->h - 1) * st->n + (k - 1)]++;
    st->t_all_sum[k - 1] += dt;
    st->t_all_cnt[k - 1]++;
}

/* The per-apply estimates of eqs. 10 and 11 from an apply's norms, once per apply: the last
 * one's (a sharded server decides no push before its shards have reported them; a membership
 * change in that round trip decides on the one before). */
static void record_apply(dbw_state *st, const sw_engine_view *v)
{
    const sw_apply_norms *a = &v->norms;
    if (a->version == st->seen_norms || a->n == 0)
        return;
    st->seen_norms = a->version;
    uint32_t k = a->n, i = st->hist++ % st->D;
    st->kk[i] = k;
    st->gsq[i] = a->sum_sq / ((double)k * k);
    if (k >= 2) /* one gradient says nothing of the variance: the last measured stands */
        st->var[st->var_hist++ % st->D] = (a->sq_norms - a->sum_sq / k) / (k - 1);
    double df = v->loss_after - v->loss_before; /* the probes of that same apply */
    if (st->eta && !(st->L_given > 0) && isfinite(df)) {
        uint32_t j = st->step_hist++ % st->D;
        st->step_lr[j] = v->lr * (st->mean ? 1.0 : (double)k);
        st->step_q[j] = st->gsq[i];
        st->step_df[j] = df;
    }
}

/* gain=eta's L: given, or the least-squares fit of (L/2) eta^2 |g|^2 = dF + eta |grad F|^2
 * over the last D applies (eq. 5 along the step); 0 for a fit below 0, and -1 (eq. 12) until
 * an apply with probe losses has been seen. */
static double smoothness(const dbw_state *st, double grad_sq)
{
    if (st->L_given > 0)
        return st->L_given;
    uint32_t m = st->step_hist < st->D ? st->step_hist : st->D;
    double num = 0, den = 0;
    for (uint32_t i = 0; i < m; i++) {
        double x = st->step_lr[i] * st->step_lr[i] * st->step_q[i] / 2;
        num += x * (st->step_df[i] + st->step_lr[i] * grad_sq);
        den += x * x;
    }
    return den > 0 ? (num > 0 ? num / den : 0) : -1;
}

/* eq. 10 over the last D applies that measured it (k >= 2), then eq. 11 with it over the last D
 * applies; false until some variance is known. */
static bool estimates(const dbw_state *st, double *grad_sq, double *var)
{
    uint32_t m = st->hist < st->D ? st->hist : st->D;
    uint32_t nv = st->var_hist < st->D ? st->var_hist : st->D;
    double vs = 0, gs = 0;
    for (uint32_t i = 0; i < nv; i++)
        vs += st->var[i] > 0 ? st->var[i] : 0;
    if (nv == 0)
        return false;
    *var = vs / nv;
    for (uint32_t i = 0; i < m; i++) {
        double g = st->gsq[i] - *var / st->kk[i];
        gs += g > 0 ? g : 0;
    }
    *grad_sq = gs / m;
    return true;
}

/* Chooses k for a new version, once per version. */
static void refresh(dbw_state *st, const sw_engine_view *v)
{
    record_apply(st, v);
    if (v->version == st->seen_version)
        return;
    st->seen_version = v->version;
    st->k_prev = st->k;
    st->ver[v->version % VERSIONS] =
        (timing){.version = v->version, .start = v->last_apply_t, .h = st->k_prev};
    uint32_t live = v->n_live ? v->n_live : 1;
    for (uint32_t k = 1; k <= live; k++) {
        size_t at = (size_t)(st->k_prev - 1) * st->n + (k - 1);
        st->T[k - 1] = st->t_cnt[at] ? st->t_sum[at] / st->t_cnt[at]
                       : st->t_all_cnt[k - 1] ? st->t_all_sum[k - 1] / st->t_all_cnt[k - 1]
                                               : 0;
    }
    sw__dbw_gain g = {.blind = st->blind, .lr = v->lr, .L = -1, .sum = !st->mean};
    if (st->blind)
        st->k = sw__dbw_choose(&g, st->T, live);
    else if (estimates(st, &g.grad_sq, &g.var)) {
        if (st->eta)
            g.L = smoothness(st, g.grad_sq);
        st->k = sw__dbw_choose(&g, st->T, live);
    } else {
        st->k = live;
    }
}

static void dbw_push(void *state, const sw_engine_view *v, const sw_push *p, sw_decision *d)
{
    dbw_state *st = state;
    refresh(st, v);
    time_arrival(st, p->version, v->now);
    sw__kofn_push(st->k, st->mean, v, p, d);
}

static void dbw_settle(void *state, const sw_engine_view *v, sw_decision *d)
{
    dbw_state *st = state;
    refresh(st, v);
    sw__kofn_settle(st->k, st->mean, v, d);
}

static void dbw_leave(void *state, const sw_engine_view *v, uint32_t w, sw_decision *d)
{
    (void)w;
    dbw_settle(state, v, d);
}

static void dbw_join(void *state, const sw_engine_view *v, uint32_t w, sw_decision *d)
{
    dbw_state *st = state;
    refresh(st, v);
    sw__kofn_join(st->k, st->mean, v, w, d);
}

/* gain=eta estimates L from probe losses; the paper's gain and a given L read none. */
static unsigned dbw_wants(const sw_spec *spec)
{
    sw_spec read = *spec; /* the getters mark what they read: init reads it again */
    bool eta = !strcmp(sw_spec_str(&read, "gain", "eq12"), "eta");
    return SW_WANT_SQ_NORM | (eta && !sw_spec_has(&read, "L") ? SW_WANT_LOSS : 0);
}

const sw_policy_ops sw_policy_dbw = {
    .name = "dbw",
    .keys = "D, agg, gain, L",
    .help = "dynamic backup workers: after each apply, k = argmax gain/time from gradient "
            "statistics of the last D=5 applies and learned arrival times (gain=eq12, the "
            "paper's; gain=eta: at the applied rate with a smoothness L estimated, or L=X)",
    .state_size = sizeof(dbw_state),
    .wants = SW_WANT_SQ_NORM,
    .wants_of = dbw_wants,
    .init = dbw_init,
    .on_push = dbw_push,
    .on_leave = dbw_leave,
    .on_join = dbw_join,
    .on_tick = dbw_settle,
    .fini = dbw_fini,
};

const sw_policy_ops sw_policy_bdbw = {
    .name = "bdbw",
    .keys = "D, agg",
    .help = "blind DBW: as dbw with gain = k, so k depends on timing only",
    .state_size = sizeof(dbw_state),
    .init = bdbw_init,
    .on_push = dbw_push,
    .on_leave = dbw_leave,
    .on_join = dbw_join,
    .on_tick = dbw_settle,
    .fini = dbw_fini,
};
