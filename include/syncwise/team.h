/* A team of threads that share one piece of work at a time: sw_team_run cuts it into parts,
 * the caller's thread takes part 0 and the team's threads the others, and it returns once every
 * part is done. For work too large for one core and too short to hand to a queue (a shard's
 * apply of its slice: syncwise shard --apply-threads). A part's function must not call back
 * into the team. */
#ifndef SYNCWISE_TEAM_H
#define SYNCWISE_TEAM_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sw_team sw_team;
typedef void (*sw_team_fn)(void *ctx, uint32_t part, uint32_t parts);

/* A team of `threads` in all, the caller's among them (1: no thread is started). SW_ENOMEM or
 * SW_EIO (a thread that could not start) with a message. */
int sw_team_new(sw_team **out, uint32_t threads, char *err);
/* The threads in all, the caller's among them. */
uint32_t sw_team_size(const sw_team *t);
/* fn(ctx, part, parts) for every part of `parts`, at most the team's size (more are taken as
 * that many); returns when all are done. */
void sw_team_run(sw_team *t, uint32_t parts, sw_team_fn fn, void *ctx);
/* Stops and joins the threads (NULL is ignored). */
void sw_team_free(sw_team *t);

#ifdef __cplusplus
}
#endif

#endif
