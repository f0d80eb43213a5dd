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
 * the batch gathered so far, and a batch of one message is sent as that message, so a sender
 * that handles one message a turn sends exactly what it sent without batches.
 */
#ifndef SW_NET_BATCH_H
#define SW_NET_BATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "syncwise/proto.h"
#include "syncwise/transport.h"

/* A batch's payload holds at most this many bytes; a message over a quarter of it goes alone, as
 * does one of a type a batch does not carry (sw__batch_may_carry). */
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

/* Whether a message of this type may travel in a batch: the small messages between a server and
 * its shards (reports, and orders that name no worker); never floats, never a batch. */
bool sw__batch_may_carry(sw_msg_type type);

/* Checks a decoded BATCH whole before any of it is handled, so that a malformed batch is refused
 * whole, none of it carried out: its header (worker SW_NO_WORKER, version 0, at most
 * SW_BATCH_BYTES), and every message in it as sw_msg_decode checks a frame with max_payload
 * `limit`, of a type it may carry, checksummed as the batch is, naming no worker when
 * `no_worker`. 0, or a negative sw_err with why in err. */
int sw__batch_check(const sw_msg *batch, uint64_t limit, bool no_worker, char *err);

/* Reads the next message of a BATCH that sw__batch_check accepted, at *at (moved past it and its
 * padding): true with it in *out, false at the end. */
bool sw__batch_next(const sw_msg *batch, size_t *at, sw_msg *out);

#endif
