/* A recent rate of a growing count (syncwise/run.h): the server's applies per second over the
 * last seconds, which an evaluation window's rate is not. */
#include "syncwise/run.h"

void sw_rate_init(sw_rate *r, double window)
{
    *r = (sw_rate){.window = window};
}

void sw_rate_add(sw_rate *r, double t, uint64_t count)
{
    unsigned last = (r->head + SW_RATE_SAMPLES - 1) % SW_RATE_SAMPLES;
    r->last_t = t;
    r->last_count = count;
    if (r->n && t - r->t[last] < r->window / 8)
        return;
    r->t[r->head] = t;
    r->count[r->head] = count;
    r->head = (r->head + 1) % SW_RATE_SAMPLES;
    if (r->n < SW_RATE_SAMPLES)
        r->n++;
}

double sw_rate_get(const sw_rate *r, double now, uint64_t count)
{
    if (!r->n)
        return 0;
    /* the newest sample at least a window old, else the oldest there is */
    unsigned oldest = (r->head + SW_RATE_SAMPLES - r->n) % SW_RATE_SAMPLES, pick = oldest;
    for (unsigned k = 0; k < r->n; k++) {
        unsigned i = (oldest + k) % SW_RATE_SAMPLES;
        if (r->t[i] <= now - r->window)
            pick = i;
    }
    double t = r->t[pick];
    uint64_t then = r->count[pick];
    if (r->last_t <= now - r->window) /* nothing since a window ago */
        t = r->last_t, then = r->last_count;
    double dt = now - t;
    return dt > 0 && count >= then ? (double)(count - then) / dt : 0;
}
