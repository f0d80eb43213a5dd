/* Our exact barrier search: the smallest range that holds one point of every list.
 *
 * 1. Order all points by time with a bucket sort: N points into N buckets by value, which the
 *    known range of the times makes linear in expectation; the few crowded buckets are sorted by
 *    comparison. Bucket order agrees with time order because (t - min) * scale is monotone.
 * 2. Slide a window over that timeline: the right end takes one point at a time; the left end
 *    then moves past every point whose worker is still represented further right. Once every
 *    worker is in the window, [left, right] is the tightest window ending at right; the first
 *    tightest of all has the earliest barrier.
 *
 * When the times are so unevenly spread that a bucket holds an eighth of all points (a trace
 * with outliers), the bucket sort would degrade to a comparison sort, so the search instead
 * merges the already-sorted lists with a replace-top heap of their fronts: O(Rn log n) at worst.
 * Nothing is allocated: the workspace holds every buffer.
 */
#include <math.h>
#include <stdlib.h>

#include "syncwise/err.h"
#include "zl_internal.h"

#define CROWDED(n_points) ((n_points) / 8 + 64)

static int less(const zl_point *a, const zl_point *b)
{
    return a->t < b->t || (a->t == b->t && (a->w < b->w || (a->w == b->w && a->i < b->i)));
}

static void insertion_sort(zl_point *a, uint32_t n)
{
    for (uint32_t i = 1; i < n; i++) {
        zl_point x = a[i];
        uint32_t j = i;
        for (; j > 0 && less(&x, &a[j - 1]); j--)
            a[j] = a[j - 1];
        a[j] = x;
    }
}

/* Bucket-sorts every point into ws->omega; returns 0 when a bucket is too crowded to be worth
 * it (and then omega holds nothing useful). */
static int bucket_sort(const sw_zl_problem *p, sw_zl_workspace *ws, uint32_t total)
{
    double lo = p->t[0], hi = p->t[0];
    for (uint32_t k = 1; k < total; k++) {
        lo = p->t[k] < lo ? p->t[k] : lo;
        hi = p->t[k] > hi ? p->t[k] : hi;
    }
    double scale = hi > lo ? (double)(total - 1) / (hi - lo) : 0;
    if (!isfinite(scale))
        return 0;
    uint32_t *cur = ws->bucket;
    for (uint32_t b = 0; b <= total; b++)
        cur[b] = 0;
    for (uint32_t k = 0; k < total; k++)
        cur[(uint32_t)((p->t[k] - lo) * scale) + 1]++;
    uint32_t crowded = 0;
    for (uint32_t b = 1; b <= total; b++) {
        crowded = cur[b] > crowded ? cur[b] : crowded;
        cur[b] += cur[b - 1]; /* cur[b]: where bucket b starts */
    }
    if (crowded > CROWDED(total))
        return 0;
    for (uint32_t w = 0; w < p->n; w++)
        for (uint32_t j = p->start[w]; j < p->start[w + 1]; j++) {
            uint32_t b = (uint32_t)((p->t[j] - lo) * scale);
            ws->omega[cur[b]++] = (zl_point){.t = p->t[j], .w = w, .i = j - p->start[w]};
        }
    /* Now cur[b] is where bucket b ends; sort inside the buckets that hold several points. */
    for (uint32_t b = 0, begin = 0; b < total; begin = cur[b++]) {
        uint32_t len = cur[b] - begin;
        if (len > 32)
            qsort(ws->omega + begin, len, sizeof *ws->omega, sw__zl_by_time);
        else if (len > 1)
            insertion_sort(ws->omega + begin, len);
    }
    return 1;
}

static void window(const sw_zl_problem *p, sw_zl_workspace *ws, sw_zl_result *out,
                   uint32_t total)
{
    uint32_t *count = ws->slot, covered = 0, left = 0;
    for (uint32_t w = 0; w < p->n; w++)
        count[w] = 0;
    for (uint32_t right = 0; right < total; right++) {
        covered += count[ws->omega[right].w]++ == 0;
        while (count[ws->omega[left].w] > 1)
            count[ws->omega[left++].w]--;
        if (covered == p->n)
            sw__zl_offer(ws, out, ws->omega[right].t - ws->omega[left].t, ws->omega[right].t);
    }
}

/* Moves h[i] down to its place in a heap of n fronts. */
static void sift_down(zl_point *h, uint32_t n, uint32_t i)
{
    zl_point top = h[i];
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && less(&h[c + 1], &h[c]))
            c++;
        if (!less(&h[c], &top))
            break;
        h[i] = h[c];
        i = c;
    }
    h[i] = top;
}

/* The fallback: every window [smallest front, largest front], advancing the smallest. */
static void merge_fronts(const sw_zl_problem *p, sw_zl_workspace *ws, sw_zl_result *out)
{
    zl_point *h = ws->zarr; /* .i holds the front's position in p->t */
    double hi = p->t[p->start[0]];
    for (uint32_t w = 0; w < p->n; w++) {
        h[w] = (zl_point){.t = p->t[p->start[w]], .w = w, .i = p->start[w]};
        hi = h[w].t > hi ? h[w].t : hi;
    }
    for (uint32_t k = p->n / 2; k-- > 0;)
        sift_down(h, p->n, k);
    for (;;) {
        sw__zl_offer(ws, out, hi - h[0].t, hi);
        uint32_t next = h[0].i + 1;
        if (next == p->start[h[0].w + 1])
            break; /* this list is exhausted: every later window lacks it */
        h[0].t = p->t[next];
        h[0].i = next;
        hi = h[0].t > hi ? h[0].t : hi;
        sift_down(h, p->n, 0);
    }
}

int sw__zl_sweep(const sw_zl_problem *p, sw_zl_workspace *ws, sw_zl_result *out)
{
    int rc = sw__zl_check(p, ws);
    if (rc)
        return rc;
    sw__zl_reset(out);
    uint32_t total = p->start[p->n];
    if (bucket_sort(p, ws, total))
        window(p, ws, out, total);
    else
        merge_fronts(p, ws, out);
    sw_zl_canonical_picks(p, out->t_sync, out->pick);
    return 0;
}
