/* Batches of small messages (batch.h): gathered in a fixed buffer, each message encoded as it
 * would travel alone and padded to 8 bytes, so that the floats of the next one stay aligned. */
#include "batch.h"

#include <string.h>

#include "syncwise/bytes.h"
#include "syncwise/err.h"

#define PAD(x) (((x) + 7) & ~(size_t)7)

/* The size of the encoded message at p, by its header's payload length. */
static size_t message_size(const uint8_t *p) { return sw_msg_size(sw_get_u64(p + 24)); }

sw_frame *sw__msg_frame(const sw_msg *m, const float *floats)
{
    sw_frame *f = sw_frame_new(sw_msg_size(m->payload_len));
    if (f && floats)
        sw_msg_encode_floats(m, floats, sw_frame_data(f));
    else if (f)
        sw_msg_encode(m, sw_frame_data(f));
    return f;
}

void sw__batch_flush(sw__batch *b)
{
    if (b->n == 0)
        return;
    sw_frame *f;
    if (b->n == 1) { /* the lone message as itself */
        size_t size = message_size(b->buf);
        if ((f = sw_frame_new(size)))
            memcpy(sw_frame_data(f), b->buf, size);
    } else {
        sw_msg batch = {.type = SW_MSG_BATCH, .worker = SW_NO_WORKER, .flags = b->flags,
                        .payload = b->buf, .payload_len = b->len};
        f = sw__msg_frame(&batch, NULL);
    }
    b->n = 0;
    b->len = 0;
    b->send(b->ctx, f);
}

void sw__batch_send_alone(sw__batch *b, sw_frame *f)
{
    sw__batch_flush(b);
    b->send(b->ctx, f);
}

void sw__batch_post(sw__batch *b, const sw_msg *m)
{
    size_t size = sw_msg_size(m->payload_len);
    if (size > SW_BATCH_BYTES / 4 || !sw__batch_may_carry(m->type)) {
        sw__batch_send_alone(b, sw__msg_frame(m, NULL));
        return;
    }
    if (b->len + PAD(size) > SW_BATCH_BYTES)
        sw__batch_flush(b);
    sw_msg_encode(m, b->buf + b->len);
    memset(b->buf + b->len + size, 0, PAD(size) - size);
    b->len += PAD(size);
    b->n++;
}

bool sw__batch_may_carry(sw_msg_type type)
{
    switch (type) {
    case SW_MSG_SHARD_PUSHED: case SW_MSG_SHARD_APPLIED: case SW_MSG_SHARD_STATE:
    case SW_MSG_ERROR: case SW_MSG_SHARD_APPLY: case SW_MSG_SHARD_PING: case SW_MSG_SHARD_SAVE:
    case SW_MSG_SHARD_RESTORE: case SW_MSG_SHARD_PULL: case SW_MSG_SHARD_MEMBER:
    case SW_MSG_SHARD_SEND:
        return true;
    default:
        return false;
    }
}

/* The message that opens p (left bytes), decoded; its size with its padding in *used. */
static int read_one(const uint8_t *p, size_t left, uint64_t limit, sw_msg *out, size_t *used,
                    char *err)
{
    if (left < SW_PROTO_HEADER)
        return sw_fail(err, SW_EFORMAT, "a batch ends in the middle of a message's header");
    uint64_t len = sw_get_u64(p + 24);
    if (len > left - SW_PROTO_HEADER)
        return sw_fail(err, SW_EFORMAT, "a batch's message of %llu bytes runs past its end",
                       (unsigned long long)len);
    size_t size = sw_msg_size((size_t)len);
    int rc = sw_msg_decode(p, size, limit, out, err);
    if (rc)
        return rc;
    size_t pad = PAD(size) - size < left - size ? PAD(size) - size : left - size;
    for (size_t i = 0; i < pad; i++) /* the last message need not be padded to the end */
        if (p[size + i])
            return sw_fail(err, SW_EFORMAT, "a batch's padding is not zero");
    *used = size + pad;
    return 0;
}

int sw__batch_check(const sw_msg *batch, uint64_t limit, bool no_worker, char *err)
{
    if (batch->payload_len == 0 || batch->payload_len > SW_BATCH_BYTES)
        return sw_fail(err, SW_EFORMAT, "a batch of %zu bytes (1 to %d)", batch->payload_len,
                       SW_BATCH_BYTES);
    if (batch->worker != SW_NO_WORKER || batch->version != 0)
        return sw_fail(err, SW_EFORMAT, "a batch's header names a worker or a version");
    for (size_t at = 0, used = 0; at < batch->payload_len; at += used) {
        sw_msg m;
        int rc = read_one(batch->payload + at, batch->payload_len - at, limit, &m, &used, err);
        if (rc)
            return rc;
        if (!sw__batch_may_carry(m.type))
            return sw_fail(err, SW_EFORMAT, "a batch cannot carry a %s message",
                           sw_msg_type_name(m.type));
        if ((m.flags ^ batch->flags) & SW_FLAG_UNCHECKED)
            return sw_fail(err, SW_EFORMAT, "a batch's message is not checksummed as the batch is");
        if (no_worker && m.worker != SW_NO_WORKER)
            return sw_fail(err, SW_EFORMAT, "a batch of orders names a worker");
    }
    return 0;
}

bool sw__batch_next(const sw_msg *batch, size_t *at, sw_msg *out)
{
    if (*at >= batch->payload_len)
        return false;
    size_t left = batch->payload_len - *at;
    const uint8_t *p = batch->payload + *at;
    sw_msg_view(p, message_size(p), out); /* checked already: not checksummed twice */
    size_t size = PAD(message_size(p));
    *at += size < left ? size : left;
    return true;
}
