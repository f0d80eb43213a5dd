/* Float buffers lent to the network without a copy.
 *
 * A message travels as one frame: its 40-byte header, then its payload. A buffer of floats with
 * room for a header in front of them can therefore be sent as it is, in a frame lent over it
 * (syncwise/transport.h): ZeroMQ's I/O thread reads it straight into the socket, and the last
 * reference to the frame gives the buffer back. Until then the floats must not change, so
 * whoever writes them first asks for a writable buffer: the same one when nothing is reading
 * it, otherwise another (copying the values when they must be kept). Sending 4 MB of parameters
 * this way costs their checksum instead of a copy and a checksum: docs/results/net.md.
 *
 * One lender serves one thread (the server's loop, or a worker's); only whether a buffer is in
 * a frame is shared with the thread that drops the frame's last reference.
 */
#ifndef SW_NET_LEND_H
#define SW_NET_LEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "syncwise/proto.h"
#include "syncwise/transport.h"

typedef struct sw__lent sw__lent;

typedef struct sw__lender {
    size_t n;        /* floats per buffer */
    sw__lent **bufs; /* every buffer, busy or idle */
    size_t count, cap;
} sw__lender;

void sw__lender_init(sw__lender *l, size_t n);
/* Frees every buffer, at once or, for one a frame still holds, when the frame goes. */
void sw__lender_free(sw__lender *l);

/* A buffer of n floats that no frame is reading, for writing: `cur` itself when it is one of
 * this lender's and idle, else another one, holding cur's values when `keep`. cur may be NULL
 * (with keep false) or a buffer from elsewhere. Returns cur itself when memory runs out. */
float *sw__lender_writable(sw__lender *l, float *cur, bool keep);

/* The most payload bytes a lent frame may carry before its floats (SHARD_PUSH's token and
 * sequence number, SHARD_SLICE's restore mark): they are written in the buffer's room. */
#define SW__LEND_HEAD_MAX 24

/* The frame of message m whose payload is `head` bytes (at most SW__LEND_HEAD_MAX, at m->payload,
 * written just before the floats) then the n floats at `floats`, lent over them, when floats is
 * one of this lender's idle buffers and m->payload_len is exactly head + 4n; the buffer is busy
 * until the frame's last reference goes. NULL, having done nothing, otherwise: the caller
 * copies. */
sw_frame *sw__lender_frame(sw__lender *l, const float *floats, const sw_msg *m, size_t head);

/* The frame of message m, always: lent as sw__lender_frame does when l is not NULL and can lend
 * `floats`, else a frame of its own written from `floats` when given, m->payload otherwise.
 * NULL when memory ran out. */
sw_frame *sw__frame_build(sw__lender *l, const sw_msg *m, const float *floats);

/* The same for a payload of `head` bytes at m->payload, then the floats (SHARD_PUSH, SHARD_SLICE:
 * lent when l can lend `floats` with that head, else copied and checksummed in one pass). */
sw_frame *sw__frame_build_head(sw__lender *l, const sw_msg *m, size_t head, const float *floats);

/* The engine's sw_engine_params.writable hook: ctx is a lender. */
float *sw__lender_engine_hook(void *ctx, float *theta);

#endif
