/* Encoding and strict decoding of protocol messages (format in syncwise/proto.h). */
#include "syncwise/proto.h"

#include <math.h>
#include <string.h>

#include "syncwise/bytes.h"
#include "syncwise/err.h"

static const uint8_t MAGIC[4] = {'S', 'W', 'N', 'P'};

const char *sw_msg_type_name(int type)
{
    static const char *const names[] = {"?",         "join",  "welcome", "pull",     "model",
                                        "push",      "wait",  "release", "heartbeat", "leave",
                                        "error",     "ctl",   "ctl-reply"};
    return type >= 1 && type <= SW_MSG_TYPE_MAX ? names[type] : "?";
}

void sw_msg_encode(const sw_msg *m, uint8_t *buf)
{
    uint8_t *pay = buf + SW_PROTO_HEADER;
    if (m->payload && m->payload_len)
        memmove(pay, m->payload, m->payload_len);
    memcpy(buf, MAGIC, 4);
    buf[4] = SW_PROTO_VERSION & 0xff;
    buf[5] = SW_PROTO_VERSION >> 8;
    buf[6] = (uint8_t)m->type;
    buf[7] = (uint8_t)((unsigned)m->type >> 8);
    sw_put_u32(buf + 8, m->worker);
    sw_put_u32(buf + 12, m->flags);
    sw_put_u64(buf + 16, m->version);
    sw_put_u64(buf + 24, m->payload_len);
    sw_put_u32(buf + 32, sw_crc32(0, pay, m->payload_len));
    sw_put_u32(buf + 36, 0);
}

void sw_msg_put_floats(uint8_t *dst, const float *src, size_t n)
{
    for (size_t i = 0; i < n; i++)
        sw_put_f32(dst + 4 * i, src[i]);
}

int sw_msg_decode(const uint8_t *buf, size_t len, uint64_t max_payload, sw_msg *out, char *err)
{
    if (len < SW_PROTO_HEADER)
        return sw_fail(err, SW_EFORMAT, "message of %zu bytes is shorter than a header", len);
    if (memcmp(buf, MAGIC, 4) != 0)
        return sw_fail(err, SW_EFORMAT, "bad magic number");
    unsigned version = buf[4] | (unsigned)buf[5] << 8, type = buf[6] | (unsigned)buf[7] << 8;
    if (version != SW_PROTO_VERSION)
        return sw_fail(err, SW_EVERSION, "protocol version %u (this build speaks %d)", version,
                       SW_PROTO_VERSION);
    if (type < 1 || type > SW_MSG_TYPE_MAX)
        return sw_fail(err, SW_EFORMAT, "unknown message type %u", type);
    uint32_t flags = sw_get_u32(buf + 12);
    if (flags & ~(uint32_t)SW_FLAG_ALL)
        return sw_fail(err, SW_EFORMAT, "unknown flags 0x%x", flags);
    if (sw_get_u32(buf + 36) != 0)
        return sw_fail(err, SW_EFORMAT, "reserved field is not zero");
    uint64_t plen = sw_get_u64(buf + 24);
    if (plen > max_payload || plen > SW_PROTO_MAX_PAYLOAD)
        return sw_fail(err, SW_EFORMAT, "payload of %llu bytes is over the limit",
                       (unsigned long long)plen);
    if (plen != len - SW_PROTO_HEADER)
        return sw_fail(err, SW_EFORMAT, "payload length %llu but %zu bytes follow the header",
                       (unsigned long long)plen, len - SW_PROTO_HEADER);
    if (sw_crc32(0, buf + SW_PROTO_HEADER, (size_t)plen) != sw_get_u32(buf + 32))
        return sw_fail(err, SW_ECHECKSUM, "payload checksum mismatch");
    *out = (sw_msg){.type = (sw_msg_type)type, .worker = sw_get_u32(buf + 8), .flags = flags,
                    .version = sw_get_u64(buf + 16), .payload = buf + SW_PROTO_HEADER,
                    .payload_len = (size_t)plen};
    return 0;
}

int sw_msg_get_floats(const sw_msg *m, float *dst, size_t n, char *err)
{
    if (m->payload_len != 4 * n)
        return sw_fail(err, SW_EFORMAT, "%s carries %zu bytes where %zu floats were expected",
                       sw_msg_type_name(m->type), m->payload_len, n);
    for (size_t i = 0; i < n; i++) {
        float v = sw_get_f32(m->payload + 4 * i);
        if (!isfinite(v))
            return sw_fail(err, SW_EFORMAT, "%s value %zu is not finite",
                           sw_msg_type_name(m->type), i);
        dst[i] = v;
    }
    return 0;
}
