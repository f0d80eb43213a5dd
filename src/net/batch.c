/* Batches of small messages (batch.h): gathered in a fixed buffer, each message encoded as it
 * would travel alone and padded to 8 bytes, so that the floats of the next one stay aligned. */
#include "batch.h"

#include <string.h>

#include "syncwise/bytes.h"
#include "syncwise/err.h"

#define PAD(x) (((x) + 7) & ~(size_t)7)

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
    if (b->n == 1) { /* the lone message as itself: its size is in its header */
        size_t size = sw_msg_size(sw_get_u64(b->buf + 24));
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
    if (size > SW_BATCH_BYTES / 4) {
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

int sw__batch_next(const sw_msg *batch, size_t *at, uint64_t limit, sw_msg *out, char *err)
{
    const uint8_t *p = batch->payload;
    size_t left = batch->payload_len - *at;
    if (batch->payload_len == 0)
        return sw_fail(err, SW_EFORMAT, "an empty batch");
    if (left == 0)
        return 0;
    if (left < SW_PROTO_HEADER)
        return sw_fail(err, SW_EFORMAT, "a batch ends in the middle of a message's header");
    uint64_t len = sw_get_u64(p + *at + 24);
    if (len > left - SW_PROTO_HEADER)
        return sw_fail(err, SW_EFORMAT, "a batch's message of %llu bytes runs past its end",
                       (unsigned long long)len);
    size_t size = sw_msg_size((size_t)len);
    int rc = sw_msg_decode(p + *at, size, limit, out, err);
    if (rc)
        return rc;
    if (out->type == SW_MSG_BATCH)
        return sw_fail(err, SW_EFORMAT, "a batch inside a batch");
    size_t pad = PAD(size) - size;
    if (pad > left - size)
        pad = left - size; /* the last message need not be padded to the end */
    for (size_t i = 0; i < pad; i++)
        if (p[*at + size + i])
            return sw_fail(err, SW_EFORMAT, "a batch's padding is not zero");
    *at += size + pad;
    return 1;
}
