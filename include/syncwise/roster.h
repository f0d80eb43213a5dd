/* A roster: the ids of the members of a table (a worker table's live slots), kept in ascending
 * order, so that a walk over the members meets them as a scan of the whole table would, and
 * costs the members only. Joins and departures move the tail (they are few beside the walks). */
#ifndef SYNCWISE_ROSTER_H
#define SYNCWISE_ROSTER_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Adds id to ids[0..*n), which has room for it and holds it not. */
void sw_roster_add(uint32_t *ids, uint32_t *n, uint32_t id);
/* Takes id, which ids[0..*n) holds, out of it. */
void sw_roster_remove(uint32_t *ids, uint32_t *n, uint32_t id);

#ifdef __cplusplus
}
#endif

#endif
