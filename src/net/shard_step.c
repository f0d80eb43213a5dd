/* A shard's apply in parts (shard_internal.h, sw__apply_plan): what one thread does over its
 * range [lo, hi) of the slice. Each coordinate is summed in the order the APPLY named and
 * stepped by the same expression whatever the range, so cutting an apply into parts changes
 * no bit of θ; only the squared norms, sums of the parts' shares, may round otherwise. */
#include <string.h>

#include "shard_internal.h"
#include "syncwise/optim.h"

/* The first of a sparse gradient's ascending places at or after lo. */
static size_t first_at(const sw__held *e, size_t lo)
{
    size_t a = 0, b = e->nnz;
    while (a < b) {
        size_t mid = a + (b - a) / 2;
        if (e->idx[mid] < lo)
            a = mid + 1;
        else
            b = mid;
    }
    return a;
}

/* sum[lo, hi) <- the named gradients' sum there, as the engine's buffer adds them. */
static void sum_range(const sw__apply_plan *p, size_t lo, size_t hi)
{
    if (p->n_g == 0) { /* every slice lost, or none sent here: they count as zero */
        memset(p->sum + lo, 0, 4 * (hi - lo));
        return;
    }
    for (uint32_t k = 0; k < p->n_g; k++) {
        const sw__held *e = p->g[k];
        if (e->idx) {
            if (k == 0)
                memset(p->sum + lo, 0, 4 * (hi - lo));
            for (size_t j = first_at(e, lo); j < e->nnz && e->idx[j] < hi; j++)
                p->sum[e->idx[j]] += e->g[j];
        } else if (k == 0) {
            memcpy(p->sum + lo, e->g + lo, 4 * (hi - lo));
        } else {
            sw_vec_add(p->sum + lo, e->g + lo, hi - lo);
        }
    }
}

/* The named gradients' squared norms over [lo, hi), summed, of those not measured as they came
 * (shard_apply.c): a policy that reads norms pays for them here the first time only. */
static double each_sq(const sw__apply_plan *p, size_t lo, size_t hi)
{
    double sq = 0;
    for (uint32_t k = 0; k < p->n_g; k++) {
        const sw__held *e = p->g[k];
        if (e->measured)
            continue;
        if (!e->idx) {
            sq += sw_sq_norm(e->g + lo, hi - lo);
            continue;
        }
        size_t j = first_at(e, lo);
        sq += sw_sq_norm(e->g + j, first_at(e, hi) - j);
    }
    return sq;
}

void sw__shard_apply_part(void *plan, uint32_t part, uint32_t parts)
{
    sw__apply_plan *p = plan;
    size_t lo = p->len * part / parts, hi = p->len * (part + 1) / parts;
    const float *sum = p->lone;
    if (!sum) {
        sum_range(p, lo, hi);
        sum = p->sum;
    }
    if (p->want_sq) {
        p->sq[part] = sw_sq_norm(sum + lo, hi - lo);
        p->each[part] = p->lone ? p->sq[part] : each_sq(p, lo, hi);
    }
    float n = (float)p->n;
    if (p->opt)
        sw_optim_step_range(p->opt, p->step, p->theta, sum, 1.0f / n, p->lr, p->wd, lo, hi);
    else
        sw_sgd_step(p->theta + lo, sum + lo, hi - lo, p->lr / n, p->wd * n);
}
