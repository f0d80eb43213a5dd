/* A run's statistics, fed by its events (see syncwise/run.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "syncwise/err.h"
#include "syncwise/run.h"

int sw_run_stats_init(sw_run_stats *s, uint32_t slots, char *err)
{
    memset(s, 0, sizeof *s);
    size_t n = slots ? slots : 1;
    s->n_slots = slots;
    s->steps = calloc(n, sizeof *s->steps);
    s->idle_s = calloc(n, sizeof *s->idle_s);
    s->live_s = calloc(n, sizeof *s->live_s);
    s->last_push_t = malloc(n * sizeof *s->last_push_t);
    s->busy_s = calloc(n, sizeof *s->busy_s);
    s->finished = calloc(n, sizeof *s->finished);
    s->run_since = malloc(n * sizeof *s->run_since);
    s->stale_sum = calloc(n, sizeof *s->stale_sum);
    s->stale_n = calloc(n, sizeof *s->stale_n);
    s->wait_since = malloc(n * sizeof *s->wait_since);
    s->joined_t = malloc(n * sizeof *s->joined_t);
    if (!s->steps || !s->idle_s || !s->live_s || !s->last_push_t || !s->stale_sum || !s->stale_n ||
        !s->wait_since || !s->joined_t || !s->busy_s || !s->finished || !s->run_since) {
        sw_run_stats_free(s);
        return sw_fail(err, SW_ENOMEM, "out of memory for the statistics of %u workers", slots);
    }
    for (size_t w = 0; w < n; w++)
        s->last_push_t[w] = s->wait_since[w] = s->joined_t[w] = s->run_since[w] = -1;
    return 0;
}

void sw_run_stats_free(sw_run_stats *s)
{
    free(s->steps);
    free(s->idle_s);
    free(s->live_s);
    free(s->last_push_t);
    free(s->busy_s);
    free(s->finished);
    free(s->run_since);
    free(s->stale_sum);
    free(s->stale_n);
    free(s->wait_since);
    free(s->joined_t);
    free(s->pending_w);
    free(s->pending_ver);
    memset(s, 0, sizeof *s);
}

static int remember(sw_run_stats *s, uint32_t w, uint64_t ver)
{
    if (s->n_pending == s->cap_pending) {
        size_t cap = s->cap_pending ? 2 * s->cap_pending : 64;
        uint32_t *pw = realloc(s->pending_w, cap * sizeof *pw);
        if (pw)
            s->pending_w = pw;
        uint64_t *pv = realloc(s->pending_ver, cap * sizeof *pv);
        if (pv)
            s->pending_ver = pv;
        if (!pw || !pv)
            return SW_ENOMEM;
        s->cap_pending = cap;
    }
    s->pending_w[s->n_pending] = w;
    s->pending_ver[s->n_pending++] = ver;
    return 0;
}

static void stop_waiting(sw_run_stats *s, uint32_t w, double t)
{
    if (s->wait_since[w] >= 0)
        s->idle_s[w] += t - s->wait_since[w];
    s->wait_since[w] = -1;
}

/* The buffered gradients were applied, reaching version V. */
static void applied(sw_run_stats *s, uint64_t V)
{
    s->applies++;
    for (size_t i = 0; i < s->n_pending; i++) {
        uint64_t stale = V - 1 - s->pending_ver[i];
        uint32_t w = s->pending_w[i];
        s->stale_hist[stale < SW_STALE_BINS - 1 ? stale : SW_STALE_BINS - 1]++;
        s->stale_sum[w] += (double)stale;
        s->stale_n[w]++;
    }
    s->n_pending = 0;
}

int sw_run_stats_event(sw_run_stats *s, const sw_event *ev)
{
    uint32_t w = ev->worker;
    bool named = ev->kind == SW_EV_PUSH || ev->kind == SW_EV_DROP || ev->kind == SW_EV_RELEASE ||
                 ev->kind == SW_EV_JOIN || ev->kind == SW_EV_LEAVE || ev->kind == SW_EV_CRASH;
    if (named && w >= s->n_slots)
        return 0; /* a worker outside the table: nothing to count it in */
    switch (ev->kind) {
    case SW_EV_PUSH:
        s->pushes++;
        s->steps[w]++;
        s->last_push_t[w] = ev->t;
        s->wait_since[w] = ev->t;
        if (s->run_since[w] >= 0) {
            s->busy_s[w] += ev->t - s->run_since[w];
            s->finished[w]++;
        }
        s->run_since[w] = -1;
        return remember(s, w, ev->ver);
    case SW_EV_DROP:
        s->drops++;
        s->steps[w]--;
        s->n_pending -= s->n_pending > 0; /* the drop follows its own push at once */
        return 0;
    case SW_EV_APPLY: applied(s, ev->V); return 0;
    case SW_EV_RELEASE:
        stop_waiting(s, w, ev->t);
        s->run_since[w] = ev->t;
        return 0;
    case SW_EV_JOIN:
        s->joined_t[w] = ev->t;
        s->wait_since[w] = ev->t;
        return 0;
    case SW_EV_LEAVE:
    case SW_EV_CRASH:
        stop_waiting(s, w, ev->t);
        s->run_since[w] = -1; /* its step is lost */
        if (s->joined_t[w] >= 0)
            s->live_s[w] += ev->t - s->joined_t[w];
        s->joined_t[w] = -1;
        return 0;
    case SW_EV_SWITCH:
        s->switches++;
        snprintf(s->switched_to, sizeof s->switched_to, "%s", ev->reason ? ev->reason : "");
        return 0;
    default: return 0;
    }
}

void sw_run_stats_close(sw_run_stats *s, double t)
{
    for (uint32_t w = 0; w < s->n_slots; w++) {
        if (s->joined_t[w] < 0)
            continue;
        s->live_s[w] += t - s->joined_t[w];
        s->joined_t[w] = t;
        if (s->wait_since[w] >= 0) {
            s->idle_s[w] += t - s->wait_since[w];
            s->wait_since[w] = t;
        }
    }
}

double sw_run_stats_idle_share(const sw_run_stats *s)
{
    double idle = 0, live = 0;
    for (uint32_t w = 0; w < s->n_slots; w++) {
        idle += s->idle_s[w];
        live += s->live_s[w];
    }
    return live > 0 ? idle / live : 0;
}

double sw_run_stats_worker_idle_share(const sw_run_stats *s, uint32_t w)
{
    return w < s->n_slots && s->live_s[w] > 0 ? s->idle_s[w] / s->live_s[w] : 0;
}

double sw_run_stats_mean_staleness(const sw_run_stats *s)
{
    double sum = 0;
    uint64_t n = 0;
    for (uint32_t w = 0; w < s->n_slots; w++) {
        sum += s->stale_sum[w];
        n += s->stale_n[w];
    }
    return n ? sum / (double)n : 0;
}

double sw_run_stats_worker_staleness(const sw_run_stats *s, uint32_t w)
{
    return w < s->n_slots && s->stale_n[w] ? s->stale_sum[w] / (double)s->stale_n[w] : 0;
}
