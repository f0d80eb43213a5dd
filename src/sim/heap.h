/* The simulator's event heap: a binary min-heap ordered by (time, insertion counter), so that
 * events at the same virtual time pop in the order they were scheduled and runs are
 * reproducible bit for bit. */
#ifndef SW_SIM_HEAP_H
#define SW_SIM_HEAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct sw__sim_event {
    double t;
    uint64_t seq;   /* insertion counter: the tie-break */
    uint32_t kind;
    uint32_t worker;
    uint64_t epoch; /* a worker's incarnation when scheduled: stale events are skipped */
} sw__sim_event;

typedef struct sw__heap {
    sw__sim_event *ev;
    size_t n, cap;
    uint64_t next_seq;
} sw__heap;

int sw__heap_init(sw__heap *h, size_t cap);
void sw__heap_free(sw__heap *h);
/* Adds an event (its seq is assigned here); grows the heap when full. */
int sw__heap_push(sw__heap *h, sw__sim_event ev);
/* Removes the earliest event into *out; returns 0 when the heap is empty. */
int sw__heap_pop(sw__heap *h, sw__sim_event *out);

#endif
