/* The wire protocol between workers and the server (docs/protocol.md).
 *
 * Every message is one ZeroMQ frame: a fixed 40-byte little-endian header, then the payload.
 *
 *   offset  size  field
 *   0       4     magic "SWNP"
 *   4       2     protocol version (1)
 *   6       2     message type (sw_msg_type)
 *   8       4     worker id (SW_NO_WORKER before the server assigned one)
 *   12      4     flags (sw_msg_flag)
 *   16      8     model version: the version a gradient was computed at, or of the parameters
 *   24      8     payload length in bytes
 *   32      4     CRC-32C (Castagnoli) of the payload; zero with SW_FLAG_UNCHECKED
 *   36      4     reserved, zero
 *
 * Payloads: float vectors (MODEL, PUSH, RELEASE with a model, MODEL_SPARSE) are raw IEEE-754
 * binary32 values, little-endian; index lists (PULL_SPARSE) are u32 values and sparse gradients
 * (PUSH_SPARSE) (u32 index, f32 value) pairs, little-endian, indices strictly ascending; text
 * payloads (WELCOME's configuration, CTL requests and replies, ERROR) are UTF-8 without a
 * terminating zero. The decoder checks every field before anything else reads the message: size,
 * magic, version, type, reserved bits, payload length against the frame and the limit, checksum,
 * and for float payloads their count and finiteness.
 */
#ifndef SYNCWISE_PROTO_H
#define SYNCWISE_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SW_PROTO_VERSION 1
#define SW_PROTO_HEADER 40
#define SW_NO_WORKER 0xffffffffu
#define SW_PROTO_MAX_PAYLOAD ((uint64_t)1 << 31) /* 2 GiB: 512M floats */
/* By default (--dead-link), a worker's connections (to the server, its heartbeats', to the
 * shards) and the server's to its workers are closed when the peer's host acknowledges nothing
 * for this long (TCP keepalive and user timeout, syncwise/transport.h dead_link_s): a link
 * dropped without a word at both ends, its heartbeats' connection alive, held a worker at a
 * barrier until TCP gave up (about 15 minutes). The worker then connects again and joins
 * again. Not on the server's links to its shards: a shard stopped longer with full buffers
 * would lose its link. */
#define SW_PROTO_DEAD_LINK_S 30.0
/* The longest WELCOME text: a sharded run lists every shard's endpoint (SW_SHARDS_MAX of up to
 * 255 bytes) and the chunk table. */
#define SW_WELCOME_MAX 81920
/* A job's name (server and worker --job): 1 to 64 of [A-Za-z0-9._:-]. */
#define SW_JOB_MAX 64
/* The ERROR text a JOIN gets when every slot is taken: a worker tries again (a dead member's
 * slot frees once its silence is noticed) until its --server-timeout. */
#define SW_REFUSED_FULL "the server is full"

typedef enum sw_msg_type {
    SW_MSG_JOIN = 1,      /* worker -> server: a new worker; payload: its name (text) */
    SW_MSG_WELCOME = 2,   /* server -> worker: its id and the run's configuration (text) */
    SW_MSG_PULL = 3,      /* worker -> server: send me the parameters */
    SW_MSG_MODEL = 4,     /* server -> worker: the parameters at `version` (floats) */
    SW_MSG_PUSH = 5,      /* worker -> server: a gradient computed at `version` (floats) */
    SW_MSG_WAIT = 6,      /* server -> worker: your push is in; wait to be released */
    SW_MSG_RELEASE = 7,   /* server -> worker: go on; with SW_FLAG_MODEL the parameters follow */
    SW_MSG_HEARTBEAT = 8, /* worker -> server: still alive; the server echoes it */
    SW_MSG_LEAVE = 9,     /* worker -> server: leaving for good */
    SW_MSG_ERROR = 10,    /* server -> anyone: the last message was refused; payload: why */
    SW_MSG_CTL = 11,      /* operator -> server: a command (text) */
    SW_MSG_CTL_REPLY = 12,/* server -> operator: its answer (text) */
    SW_MSG_PUSH_SPARSE = 13,  /* worker -> server: a sparse gradient at `version` (pairs) */
    SW_MSG_PULL_SPARSE = 14,  /* worker -> server: send me these weights (indices) */
    SW_MSG_MODEL_SPARSE = 15, /* server -> worker: those weights at `version` (floats, in the
                               * order asked) */
    /* Decentralized peers (syncwise/peer.h); the sender is the ZeroMQ routing id. */
    SW_MSG_PEER_HELLO = 16,   /* a new peer: payload its endpoint (text) */
    SW_MSG_PEER_MEMBERS = 17, /* the member endpoints, one per line (text) */
    SW_MSG_PEER_DELTA = 18,   /* additions to the receiver's slice (pairs) */
    SW_MSG_PEER_SLICE = 19,   /* the sender's current values of those weights (pairs) */
    SW_MSG_PEER_STOP = 20,    /* the run is over */
    SW_MSG_PEER_BYE = 21,     /* the sender leaves */
    /* Server shards (syncwise/shard.h, docs/protocol.md). */
    SW_MSG_SHARD_INIT = 22,   /* server -> shard: the run and the shard's place in it (text) */
    SW_MSG_SHARD_SET = 23,    /* server -> shard: its slice of θ at `version` (floats) */
    SW_MSG_SHARD_MEMBER = 24, /* server -> shard: worker `worker` joined with token `version`;
                               * with SW_FLAG_DONE it is gone (SW_NO_WORKER: the run is over) */
    SW_MSG_SHARD_APPLY = 25,  /* server -> shard: apply to reach `version`: f32 lr, u32 n, n
                               * (u32 worker, u64 token, u64 seq, the set of shards that hold
                               * a slice of it: ceil(shards / 64) u64 words) pushes in order;
                               * SW_FLAG_DROPPED: forget them instead */
    SW_MSG_SHARD_PUSH = 26,   /* worker -> shard: u64 token, u64 seq, its slice of a gradient
                               * computed at `version` (floats) */
    SW_MSG_SHARD_PUSHED = 27, /* shard -> server: u64 token, u64 seq, f64 squared norm of the
                               * slice, the set of shards the push went to; the push's
                               * SW_FLAG_WANT_MODEL */
    SW_MSG_SHARD_PULL = 28,   /* worker or server -> shard: the slice at `version` or later;
                               * a worker's payload: u64 token, then a sparse step's u32
                               * indices (ascending, in the slice): their values only */
    SW_MSG_SHARD_SLICE = 29,  /* shard -> puller: its slice of θ at `version` (floats) */
    SW_MSG_SHARD_PING = 30,   /* server -> shard: are you there? u64 run; answered by STATE */
    SW_MSG_SHARD_SAVE = 31,   /* server -> shard: checkpoint the slice, which is at `version`;
                               * answered by STATE */
    SW_MSG_SHARD_STATE = 32,  /* shard -> server: at `version`; u64 run, u64 newest checkpoint
                               * (SW_SHARD_NONE: none), u64 bytes in, u64 bytes out, u64
                               * refused, u64 restores taken, u64 1 when it resumed from its
                               * checkpoint and awaits RESTORE, u64 the slice it holds (its
                               * index), u64 the last RESTORE's number it took, u64 the
                               * version its FILE.prev holds (SW_SHARD_NONE: none), u64 the
                               * number of the last RESTORE it could not take (0: none) */
    SW_MSG_SHARD_RESTORE = 33,/* server -> shard: θ back to the checkpoint of version `from`,
                               * going on as `version`: u64 run, u64 from, u64 restore number,
                               * u32 slots, their tokens (u64 each, 0: no member), u32 n, n
                               * APPLY entries: pushes whose slices may be
                               * lost (they count as zero); SW_FLAG_DROPPED: forget every
                               * gradient held (a restarted server; a shard does so at
                               * any restore from a new server's route) */
    SW_MSG_SHARD_APPLIED = 34,/* shard -> server: applied the order that made `version`; f64
                               * the squared norm of its slice of the applied gradients' sum */
    SW_MSG_SHARD_PUSH_SPARSE = 35, /* worker -> shard: u64 token, u64 seq, the set of shards
                               * the push goes to, then the pairs in this shard's
                               * slice (global indices, ascending) of a sparse gradient */
    SW_MSG_BATCH = 36,        /* server <-> shard: several messages, each as it would travel
                               * alone and padded with zeros to 8 bytes (src/net/batch.h); no
                               * floats, no batch inside, each checked as a frame */
    SW_MSG_SHARD_SEND = 37,   /* server -> shard: send each member named its slice at `version`
                               * or later, unasked, as the answer to its pull: u32 n, n (u32
                               * worker, u64 token); the members' RELEASE says SW_FLAG_SENT */
    SW_MSG_TYPE_MAX = 37,
} sw_msg_type;

/* Sizes in the shards' payloads, for both ends: a STATE payload; a RESTORE's head before the
 * tokens (run, from, number, slots). A set of shards and an APPLY or RESTORE entry have the
 * width of the run's shards (src/net/shard_set.h). */
#define SW_SHARD_STATE_BYTES 104
#define SW_SHARD_RESTORE_HEAD 28

typedef enum sw_msg_flag {
    SW_FLAG_MODEL = 1u << 0,   /* RELEASE: the payload holds the parameters */
    SW_FLAG_DROPPED = 1u << 1, /* RELEASE, WAIT: your gradient was refused; redo the batch */
    SW_FLAG_WANT_MODEL = 1u << 2, /* PUSH: send the parameters with my release */
    SW_FLAG_UNKNOWN = 1u << 3, /* ERROR: the server does not know you: join again */
    SW_FLAG_DONE = 1u << 4,    /* RELEASE, ERROR: the run is over: stop */
    /* Any message: the payload carries no checksum (the field is zero). Only on a link whose
     * ends agreed at join to go without (WELCOME's checksum=off): its receiver refuses it
     * otherwise, so a flipped bit cannot switch the check off. */
    SW_FLAG_UNCHECKED = 1u << 5,
    /* SHARD_APPLY: answer with SHARD_APPLIED (the slice's norm), for a policy that reads the
     * applies' norms (DBW); without it the shard neither measures nor answers. */
    SW_FLAG_WANT_NORMS = 1u << 6,
    /* RELEASE with SW_FLAG_MODEL in a sharded run: the server ordered the shards to send the
     * slices (SHARD_SEND); pull only what has not come within a second. */
    SW_FLAG_SENT = 1u << 7,
    SW_FLAG_ALL = (1u << 8) - 1,
} sw_msg_flag;

typedef struct sw_msg {
    sw_msg_type type;
    uint32_t worker, flags;
    uint64_t version;
    const uint8_t *payload; /* points into the frame it was decoded from */
    size_t payload_len;
    /* Set by sw_msg_decode when every 4-byte word of the payload, read as a float, is finite
     * (found in its checksum's pass): the float readers then do not scan it again. A reader
     * that moves `payload` on must do so by whole words. */
    bool finite;
} sw_msg;

/* Bytes a message of payload_len bytes takes. */
static inline size_t sw_msg_size(size_t payload_len) { return SW_PROTO_HEADER + payload_len; }

/* Writes m's header and payload into buf (sw_msg_size(m->payload_len) bytes); m->payload may be
 * NULL when the payload is already in place at buf + SW_PROTO_HEADER. With SW_FLAG_UNCHECKED in
 * m->flags the checksum is not computed (the field is zero). */
void sw_msg_encode(const sw_msg *m, uint8_t *buf);

/* Writes n floats little-endian at dst (a payload). */
void sw_msg_put_floats(uint8_t *dst, const float *src, size_t n);

/* sw_msg_encode for a float payload of m->payload_len / 4 values taken from src (m->payload is
 * ignored): writes and checksums them block by block, in one pass over src. */
void sw_msg_encode_floats(const sw_msg *m, const float *src, uint8_t *buf);
/* The same for a payload that opens with `head` bytes taken from m->payload (SHARD_SLICE's
 * restore mark), the floats after them. */
void sw_msg_encode_head_floats(const sw_msg *m, size_t head, const float *src, uint8_t *buf);

/* Checks and decodes a frame. max_payload bounds what a sender may ask us to hold. Fails with
 * SW_EFORMAT (and why in err) on anything malformed, SW_EVERSION on another protocol version,
 * SW_ECHECKSUM on a damaged payload. A frame flagged SW_FLAG_UNCHECKED is decoded without the
 * payload check (its checksum field must be zero): whether the link allows that is the
 * receiver's to check. */
int sw_msg_decode(const uint8_t *buf, size_t len, uint64_t max_payload, sw_msg *out, char *err);

/* A SHARD_SLICE: its restore mark (the version of the shard's last RESTORE, 0: none) into
 * *mark, and its floats as a message of their own in *floats (the float readers below take
 * it); fails on a payload too short for the mark. */
int sw_msg_get_slice(const sw_msg *m, uint64_t *mark, sw_msg *floats, char *err);

/* Reads a float payload of exactly n values into dst; fails on a wrong count or a NaN/Inf. */
int sw_msg_get_floats(const sw_msg *m, float *dst, size_t n, char *err);

/* Writes nnz (index, value) pairs (8 bytes each) or k indices (4 bytes each) at dst. */
void sw_msg_put_pairs(uint8_t *dst, const uint32_t *idx, const float *val, size_t nnz);
void sw_msg_put_indices(uint8_t *dst, const uint32_t *idx, size_t k);

/* Reads a PUSH_SPARSE payload into idx/val (room for cap pairs): fails unless its length is a
 * multiple of 8, it holds at most cap pairs, indices ascend strictly below limit and values are
 * finite. */
int sw_msg_get_pairs(const sw_msg *m, uint32_t limit, uint32_t *idx, float *val, size_t cap,
                     size_t *nnz, char *err);
/* Reads a PULL_SPARSE payload the same way (indices only). */
int sw_msg_get_indices(const sw_msg *m, uint32_t limit, uint32_t *idx, size_t cap, size_t *k,
                       char *err);

/* The float payload of exactly n values read where it lies, without a copy, when the host is
 * little-endian and the payload aligned for floats; NULL otherwise, with err set when the
 * payload is bad (wrong count, NaN/Inf) and left alone when only a copy can read it. */
const float *sw_msg_floats_in_place(const sw_msg *m, size_t n, char *err);

/* Readings of a frame that sw_msg_decode and the checked readers above accepted already (the
 * server hands checked gradients to its apply threads): the same results, with no check done
 * twice. sw_msg_view decodes the header; sw_msg_floats_accepted gives the n floats where they
 * lie when the host allows it, else copied into `copy` (room for n); sw_msg_pairs_accepted
 * reads the (index, value) pairs and returns how many. */
void sw_msg_view(const uint8_t *buf, size_t len, sw_msg *out);
const float *sw_msg_floats_accepted(const sw_msg *m, size_t n, float *copy);
size_t sw_msg_pairs_accepted(const sw_msg *m, uint32_t *idx, float *val);

const char *sw_msg_type_name(int type);

#ifdef __cplusplus
}
#endif

#endif
