/* The promise checker's clocks: the slowest started clock, kept exactly as the engine keeps its
 * min_live_clock (a count of workers at the minimum, a recount only when the last of them
 * moves), and a lazy min-heap of the clocks of waiting workers, so that "is anyone waiting
 * within the bound" costs O(log n) and not a scan of every slot. */
#include <stdlib.h>

#include "check_internal.h"

uint64_t sw__ck_min_clock(const sw_check *c) { return c->min_clock; }

uint64_t sw__ck_max_clock(const sw_check *c)
{
    uint64_t max = 0;
    for (uint32_t i = 0; i < c->n_live; i++)
        if (c->w[c->live[i]].clock > max)
            max = c->w[c->live[i]].clock;
    return max;
}

uint64_t sw__ck_lead(const sw_check *c, uint32_t w)
{
    return c->w[w].fresh ? 0 : c->w[w].clock - c->min_clock;
}

static bool started(const ck_worker *k) { return k->state != SW_WORKER_ABSENT && !k->fresh; }

static bool wait_less(const ck_wait *a, const ck_wait *b) { return a->clock < b->clock; }

/* Whether entry e still stands: its worker waits, started, and has not waited again since. */
static bool wait_stands(const sw_check *c, const ck_wait *e)
{
    const ck_worker *k = &c->w[e->worker];
    return k->state == SW_WORKER_WAITING && !k->fresh && k->wait_seq == e->seq;
}

/* Puts e at the hole at i, moving smaller children up past it. */
static void sift_down(sw_check *c, uint32_t i, ck_wait e)
{
    for (;;) {
        uint32_t l = 2 * i + 1, m = l;
        if (l >= c->n_waits)
            break;
        if (l + 1 < c->n_waits && wait_less(&c->waits[l + 1], &c->waits[l]))
            m = l + 1;
        if (!wait_less(&c->waits[m], &e))
            break;
        c->waits[i] = c->waits[m];
        i = m;
    }
    c->waits[i] = e;
}

/* Only the policies that ask who waits within a bound (ssp, dssp) pop stale entries; under the
 * others every wait would stay, 16 bytes a push for as long as the run (a server's runs for
 * weeks). A full heap keeps only the entries that stand, at most one per slot, before it grows:
 * so it holds at most twice the slots, at a cost of O(1) a wait over time. */
static void prune_waits(sw_check *c)
{
    uint32_t kept = 0;
    for (uint32_t i = 0; i < c->n_waits; i++)
        if (wait_stands(c, &c->waits[i]))
            c->waits[kept++] = c->waits[i];
    c->n_waits = kept;
    for (uint32_t i = kept / 2; i-- > 0;)
        sift_down(c, i, c->waits[i]);
}

/* Worker w starts waiting at its clock (or waits on at a new one). */
int sw__ck_wait_at(sw_check *c, uint32_t w)
{
    if (c->n_waits == c->cap_waits && c->n_waits >= 2 * (uint64_t)c->slots)
        prune_waits(c);
    if (c->n_waits == c->cap_waits) {
        uint32_t cap = c->cap_waits ? 2 * c->cap_waits : 64;
        ck_wait *grown = realloc(c->waits, cap * sizeof *grown);
        if (!grown)
            return SW_ENOMEM;
        c->waits = grown;
        c->cap_waits = cap;
    }
    ck_worker *k = &c->w[w];
    ck_wait e = {.clock = k->clock, .worker = w, .seq = ++k->wait_seq};
    uint32_t i = c->n_waits++;
    for (; i > 0 && wait_less(&e, &c->waits[(i - 1) / 2]); i = (i - 1) / 2)
        c->waits[i] = c->waits[(i - 1) / 2];
    c->waits[i] = e;
    return 0;
}

static void pop_wait(sw_check *c)
{
    ck_wait last = c->waits[--c->n_waits];
    if (c->n_waits > 0)
        sift_down(c, 0, last);
}

uint32_t sw__ck_waiting_within(sw_check *c, uint64_t bound)
{
    for (uint32_t i = 0; c->fresh_waiting > 0 && i < c->n_live; i++)
        if (c->w[c->live[i]].state == SW_WORKER_WAITING && c->w[c->live[i]].fresh)
            return c->live[i];
    while (c->n_waits > 0) {
        const ck_wait *top = &c->waits[0];
        if (wait_stands(c, top))
            return top->clock - c->min_clock <= bound ? top->worker : UINT32_MAX;
        pop_wait(c);
    }
    return UINT32_MAX;
}

/* The engine's recount: the smallest started clock, or the last one while none is started. */
void sw__ck_recount_min(sw_check *c)
{
    uint64_t min = UINT64_MAX;
    uint32_t at = 0;
    for (uint32_t i = 0; i < c->n_live; i++) {
        const ck_worker *k = &c->w[c->live[i]];
        if (!started(k))
            continue;
        if (k->clock < min) {
            min = k->clock;
            at = 0;
        }
        at += k->clock == min;
    }
    if (at > 0)
        c->min_clock = min;
    c->n_at_min = at;
}

/* Whether k counts at the minimum now; after it moved up or left, left_min updates the count. */
bool sw__ck_at_min(const sw_check *c, const ck_worker *k)
{
    return started(k) && k->clock == c->min_clock;
}

void sw__ck_left_min(sw_check *c)
{
    if (--c->n_at_min == 0)
        sw__ck_recount_min(c);
}
