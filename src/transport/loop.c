/* The one loop that gives agents their turns, on either network (syncwise/transport.h). */
#include <math.h>
#include <stdlib.h>

#include "syncwise/err.h"
#include "transport_internal.h"

struct sw_loop {
    sw_net *net;
    sw_agent **agents; /* NULL where one was removed, until the pass ends */
    size_t n, cap;
    /* A pass's view: every agent's sockets in one list, first[i] where agent i's begin. */
    sw_sock **socks;
    bool *ready;
    size_t *first, cap_socks, cap_ready, cap_first;
};

int sw_loop_new(sw_loop **out, sw_net *n, char *err)
{
    *out = calloc(1, sizeof **out);
    if (!*out)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    (*out)->net = n;
    return 0;
}

void sw_loop_free(sw_loop *l)
{
    if (!l)
        return;
    free(l->agents);
    free(l->socks);
    free(l->ready);
    free(l->first);
    free(l);
}

static bool grow(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return true;
    size_t c = *cap ? *cap : 8;
    while (c < need)
        c *= 2;
    void *q = realloc(*p, c * size);
    if (!q)
        return false;
    *p = q;
    *cap = c;
    return true;
}

int sw_loop_add(sw_loop *l, sw_agent *a, char *err)
{
    if (!grow((void **)&l->agents, &l->cap, l->n + 1, sizeof *l->agents))
        return sw_fail(err, SW_ENOMEM, "out of memory");
    a->due = -INFINITY; /* a first turn at once */
    l->agents[l->n++] = a;
    return 0;
}

void sw_loop_remove(sw_loop *l, sw_agent *a)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->agents[i] == a)
            l->agents[i] = NULL;
}

static void compact(sw_loop *l)
{
    size_t k = 0;
    for (size_t i = 0; i < l->n; i++)
        if (l->agents[i])
            l->agents[k++] = l->agents[i];
    l->n = k;
}

/* The pass's view of the sockets; the first turn due, or NAN when memory ran out. */
static double gather(sw_loop *l, size_t *k)
{
    size_t total = 0;
    for (size_t i = 0; i < l->n; i++)
        total += l->agents[i]->n_socks;
    if (!grow((void **)&l->socks, &l->cap_socks, total + 1, sizeof *l->socks) ||
        !grow((void **)&l->ready, &l->cap_ready, total + 1, sizeof *l->ready) ||
        !grow((void **)&l->first, &l->cap_first, l->n + 1, sizeof *l->first))
        return NAN;
    double due = INFINITY;
    *k = 0;
    for (size_t i = 0; i < l->n; i++) {
        const sw_agent *a = l->agents[i];
        l->first[i] = *k;
        for (size_t j = 0; j < a->n_socks; j++)
            l->socks[(*k)++] = a->socks[j];
        due = a->due < due ? a->due : due;
    }
    l->first[l->n] = *k;
    return due;
}

/* One pass: a turn for each agent with something waiting or due, in the order they came.
 * Agents added during the pass wait for the next. */
static void give_turns(sw_loop *l, double now)
{
    size_t n = l->n;
    for (size_t i = 0; i < n; i++) {
        sw_agent *a = l->agents[i];
        bool any = false;
        for (size_t j = l->first[i]; j < l->first[i + 1] && !any; j++)
            any = l->ready[j];
        if (!a || (!any && a->due > now))
            continue;
        a->due = a->turn(a->ctx, now);
        if (a->due == SW_AGENT_DONE && l->agents[i] == a)
            l->agents[i] = NULL;
    }
}

int sw_loop_run(sw_loop *l, const sw_stop_flag *stop, double until, char *err)
{
    compact(l); /* agents removed between runs */
    while (l->n > 0 && !sw_stop_requested(stop)) {
        size_t k;
        double due = gather(l, &k);
        if (isnan(due))
            return sw_fail(err, SW_ENOMEM, "out of memory");
        double now = sw_net_now(l->net);
        /* Nothing due yet: wait for a message or the first due turn; else only look. */
        double wait_until = due > now ? (due < until ? due : until) : now;
        int rc = sw_net_wait(l->net, l->socks, k, wait_until, l->ready, err);
        if (rc)
            return rc;
        now = sw_net_now(l->net);
        if (now >= until)
            return 0;
        give_turns(l, now);
        compact(l);
    }
    return 0;
}
