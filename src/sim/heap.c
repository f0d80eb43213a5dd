/* Binary min-heap of simulator events. */
#include "heap.h"

#include <stdlib.h>

#include "syncwise/err.h"

static int before(const sw__sim_event *a, const sw__sim_event *b)
{
    return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

int sw__heap_init(sw__heap *h, size_t cap)
{
    h->n = 0;
    h->next_seq = 0;
    h->cap = cap ? cap : 16;
    h->ev = malloc(h->cap * sizeof *h->ev);
    return h->ev ? 0 : SW_ENOMEM;
}

void sw__heap_free(sw__heap *h)
{
    free(h->ev);
    h->ev = NULL;
    h->n = h->cap = 0;
}

int sw__heap_push(sw__heap *h, sw__sim_event ev)
{
    if (h->n == h->cap) {
        sw__sim_event *grown = realloc(h->ev, 2 * h->cap * sizeof *grown);
        if (!grown)
            return SW_ENOMEM;
        h->ev = grown;
        h->cap *= 2;
    }
    ev.seq = h->next_seq++;
    size_t i = h->n++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!before(&ev, &h->ev[parent]))
            break;
        h->ev[i] = h->ev[parent];
        i = parent;
    }
    h->ev[i] = ev;
    return 0;
}

int sw__heap_pop(sw__heap *h, sw__sim_event *out)
{
    if (h->n == 0)
        return 0;
    *out = h->ev[0];
    sw__sim_event last = h->ev[--h->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && before(&h->ev[c + 1], &h->ev[c]))
            c++;
        if (!before(&h->ev[c], &last))
            break;
        h->ev[i] = h->ev[c];
        i = c;
    }
    if (h->n > 0)
        h->ev[i] = last;
    return 1;
}
