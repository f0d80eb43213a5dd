/* A roster kept sorted (syncwise/roster.h). */
#include <string.h>

#include "syncwise/roster.h"

/* The place of id in ids[0..n), or where it would go. */
static uint32_t place(const uint32_t *ids, uint32_t n, uint32_t id)
{
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (ids[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

void sw_roster_add(uint32_t *ids, uint32_t *n, uint32_t id)
{
    uint32_t at = place(ids, *n, id);
    memmove(ids + at + 1, ids + at, (*n - at) * sizeof *ids);
    ids[at] = id;
    (*n)++;
}

void sw_roster_remove(uint32_t *ids, uint32_t *n, uint32_t id)
{
    uint32_t at = place(ids, *n, id);
    (*n)--;
    memmove(ids + at, ids + at + 1, (*n - at) * sizeof *ids);
}
