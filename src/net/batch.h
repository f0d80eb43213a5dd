/* Small messages to one peer, gathered over a turn and sent as one frame (SW_MSG_BATCH,
 * docs/protocol.md "Batches").
 *
 * A sharded run's control plane hears a report from every shard for every push and sends every
 * shard an order for every apply: per push, a frame per shard each way, and a frame costs a
 * system call and a wake-up where its bytes cost next to nothing. A sender that posts its small
 * messages to a batch sends them as one frame at the end of its turn, so the frames per turn no
 * longer grow with the pushes handled in it (docs/results/shards.md).
 *
 * Order is kept: a message too large to be batched, or a frame of floats, is sent alone after
 * the batch gathered so far, and a batch of one message is sent as that message, so a sender that handles
 * one message a turn sends exactly what it sent without batches.
 */
#ifndef SW_NET_BATCH_H
#define SW_NET_BATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "syncwise/proto.h"
#include "syncwise/transport.h"

/* A batch's payload holds at most this many bytes; a message over a quarter of it goes alone. */
#define SW_BATCH_BYTES 8192

/* Sends a frame (the callee's reference, NULL when memory ran out: the callee decides what a
 * lost message means) to the batch's peer or peers. */
typedef void (*sw__batch_send_fn)(void *ctx, sw_frame *f);

typedef struct sw__batch {
    sw__batch_send_fn send;
    void *ctx;
    uint32_t flags; /* the link's flags, on the envelope (SW_FLAG_UNCHECKED) */
    uint32_t n;     /* messages gathered */
    size_t len;     /* bytes of them, each padded to 8 */
    uint8_t buf[SW_BATCH_BYTES];
} sw__batch;

/* A message's frame (floats, when not NULL, written from `floats` as its payload); NULL when
 * memory ran out. */
sw_frame *sw__msg_frame(const sw_msg *m, const float *floats);

/* Gathers m (its flags as they are to travel) into b, or, when it is too large to batch, sends
 * what b holds and then m alone. */
void sw__batch_post(sw__batch *b, const sw_msg *m);

/* Sends what b holds, then f (the callee's reference: a frame built by the caller, such as one
 * of floats). */
void sw__batch_send_alone(sw__batch *b, sw_frame *f);

/* Sends what b holds: nothing, the lone message as itself, or a BATCH of them. */
void sw__batch_flush(sw__batch *b);

/* Reads the next message of a decoded BATCH's payload at *at (moved past it and its padding),
 * checked as sw_msg_decode checks a frame with max_payload `limit`: 1 and the message in *out,
 * 0 at the end, or a negative sw_err with why in err (a malformed, empty or nested batch). */
int sw__batch_next(const sw_msg *batch, size_t *at, uint64_t limit, sw_msg *out, char *err);

#endif
