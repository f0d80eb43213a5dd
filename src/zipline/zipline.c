/* ZipLine (Algorithm 4) and its two optimisations (section 6.5.3), as the thesis describes them.
 *
 * All three sort every point into the timeline Ω and scan it left to right, keeping one point
 * per worker (its latest); once every worker has a point, the set [min, newest] is a candidate.
 * They differ in how they find the minimum of the set and the point a new one replaces.
 */
#include <string.h>

#include "syncwise/err.h"
#include "zl_internal.h"

#define NONE UINT32_MAX

/* ZipLine: the set is one slot per worker; the minimum is found by scanning the slots. */
int sw__zl_zipline(const sw_zl_problem *p, sw_zl_workspace *ws, sw_zl_result *out)
{
    int rc = sw__zl_check(p, ws);
    if (rc)
        return rc;
    sw__zl_reset(out);
    size_t total = sw__zl_build_omega(p, ws);
    for (uint32_t w = 0; w < p->n; w++)
        ws->slot[w] = NONE;
    uint32_t filled = 0;
    for (size_t k = 0; k < total; k++) {
        const zl_point *e = &ws->omega[k];
        filled += ws->slot[e->w] == NONE;
        ws->slot[e->w] = (uint32_t)k;
        if (filled < p->n)
            continue;
        double lo = e->t;
        for (uint32_t w = 0; w < p->n; w++)
            if (ws->omega[ws->slot[w]].t < lo)
                lo = ws->omega[ws->slot[w]].t;
        sw__zl_offer(ws, out, e->t - lo, e->t);
    }
    sw_zl_canonical_picks(p, out->t_sync, out->pick);
    return 0;
}

/* The temporal array of ZipLineOpt: points in arrival order in zarr[head, tail). */
typedef struct tarray {
    zl_point *a;
    uint32_t head, tail, cap;
} tarray;

static void append(tarray *z, const zl_point *e)
{
    if (z->tail == z->cap) { /* compact: the live part is at most half the room */
        memmove(z->a, z->a + z->head, (z->tail - z->head) * sizeof *z->a);
        z->tail -= z->head;
        z->head = 0;
    }
    z->a[z->tail++] = *e;
}

static void remove_at(tarray *z, uint32_t at)
{
    memmove(z->a + at, z->a + at + 1, (z->tail - at - 1) * sizeof *z->a);
    z->tail--;
}

/* ZipLineOpt finds the replaced point by walking the array. */
static uint32_t find_linear(const tarray *z, const zl_point *prev)
{
    for (uint32_t k = z->head; k < z->tail; k++)
        if (z->a[k].w == prev->w)
            return k;
    return NONE;
}

static int before(const zl_point *x, const zl_point *y)
{
    return x->t < y->t || (x->t == y->t && (x->w < y->w || (x->w == y->w && x->i < y->i)));
}

/* ZipLineOptBS knows the replaced point (the worker's previous one) and binary-searches the
 * array, which is in Ω's order. */
static uint32_t find_binary(const tarray *z, const zl_point *prev)
{
    uint32_t lo = z->head, hi = z->tail;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (before(&z->a[mid], prev))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < z->tail && z->a[lo].w == prev->w ? lo : NONE;
}

static int zipline_opt(const sw_zl_problem *p, sw_zl_workspace *ws, sw_zl_result *out,
                       int binary)
{
    int rc = sw__zl_check(p, ws);
    if (rc)
        return rc;
    sw__zl_reset(out);
    size_t total = sw__zl_build_omega(p, ws);
    tarray z = {.a = ws->zarr, .cap = 2 * ws->max_n};
    uint32_t filled = 0;
    memset(ws->slot, 0, p->n * sizeof *ws->slot); /* slot[w]: 1 once w has a point in the set */
    for (size_t k = 0; k < total; k++) {
        const zl_point *e = &ws->omega[k];
        if (!ws->slot[e->w]) {
            ws->slot[e->w] = 1;
            append(&z, e);
            if (++filled == p->n)
                sw__zl_offer(ws, out, e->t - z.a[z.head].t, e->t);
            continue;
        }
        if (z.a[z.head].w == e->w) { /* case (i): the oldest goes, the next is the minimum */
            z.head++;
            append(&z, e);
            if (filled == p->n)
                sw__zl_offer(ws, out, e->t - z.a[z.head].t, e->t);
            continue;
        }
        /* case (ii): the minimum stays, so d cannot improve (Theorem 7); replace the point. */
        zl_point prev = {.t = p->t[p->start[e->w] + e->i - 1], .w = e->w, .i = e->i - 1};
        uint32_t at = binary ? find_binary(&z, &prev) : find_linear(&z, &prev);
        remove_at(&z, at);
        append(&z, e);
    }
    sw_zl_canonical_picks(p, out->t_sync, out->pick);
    return 0;
}

int sw__zl_ziplineopt(const sw_zl_problem *p, sw_zl_workspace *ws, sw_zl_result *out)
{
    return zipline_opt(p, ws, out, 0);
}

int sw__zl_ziplineoptbs(const sw_zl_problem *p, sw_zl_workspace *ws, sw_zl_result *out)
{
    return zipline_opt(p, ws, out, 1);
}
