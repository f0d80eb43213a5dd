/* Encoding and strict decoding of protocol messages (format in syncwise/proto.h). */
#include "syncwise/proto.h"

#include <math.h>
#include <string.h>

#include "syncwise/bytes.h"
#include "syncwise/err.h"
#include "syncwise/simd.h"

static const uint8_t MAGIC[4] = {'S', 'W', 'N', 'P'};

const char *sw_msg_type_name(int type)
{
    static const char *const names[] = {"?",         "join",  "welcome", "pull",     "model",
                                        "push",      "wait",  "release", "heartbeat", "leave",
                                        "error",     "ctl",   "ctl-reply", "push-sparse",
                                        "pull-sparse", "model-sparse", "peer-hello",
                                        "peer-members", "peer-delta", "peer-slice", "peer-stop",
                                        "peer-bye", "shard-init", "shard-set", "shard-member",
                                        "shard-apply", "shard-push", "shard-pushed",
                                        "shard-pull", "shard-slice", "shard-ping",
                                        "shard-save", "shard-state", "shard-restore",
                                        "shard-applied", "shard-push-sparse", "batch",
                                        "shard-send"};
    _Static_assert(sizeof names / sizeof *names == SW_MSG_TYPE_MAX + 1, "a type without a name");
    return type >= 1 && type <= SW_MSG_TYPE_MAX ? names[type] : "?";
}

static void write_header(const sw_msg *m, uint8_t *buf, uint32_t crc)
{
    memcpy(buf, MAGIC, 4);
    buf[4] = SW_PROTO_VERSION & 0xff;
    buf[5] = SW_PROTO_VERSION >> 8;
    buf[6] = (uint8_t)m->type;
    buf[7] = (uint8_t)((unsigned)m->type >> 8);
    sw_put_u32(buf + 8, m->worker);
    sw_put_u32(buf + 12, m->flags);
    sw_put_u64(buf + 16, m->version);
    sw_put_u64(buf + 24, m->payload_len);
    sw_put_u32(buf + 32, crc);
    sw_put_u32(buf + 36, 0);
}

void sw_msg_encode(const sw_msg *m, uint8_t *buf)
{
    uint8_t *pay = buf + SW_PROTO_HEADER;
    if (m->payload && m->payload_len)
        memmove(pay, m->payload, m->payload_len);
    write_header(m, buf, m->flags & SW_FLAG_UNCHECKED ? 0 : sw_crc32c(0, pay, m->payload_len));
}

/* On a little-endian host the wire layout is the memory layout: one copy does it. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define SW_LITTLE_ENDIAN 1
#else
#define SW_LITTLE_ENDIAN 0
#endif

void sw_msg_put_floats(uint8_t *dst, const float *src, size_t n)
{
    if (SW_LITTLE_ENDIAN) {
        memcpy(dst, src, 4 * n);
        return;
    }
    for (size_t i = 0; i < n; i++)
        sw_put_f32(dst + 4 * i, src[i]);
}

/* Floats per block: each block is checksummed while it is still in the first-level cache, so
 * the parameters are read from memory once, not twice. */
#define ENCODE_BLOCK 8192

void sw_msg_encode_floats(const sw_msg *m, const float *src, uint8_t *buf)
{
    sw_msg_encode_head_floats(m, 0, src, buf);
}

void sw_msg_encode_head_floats(const sw_msg *m, size_t head, const float *src, uint8_t *buf)
{
    size_t n = (m->payload_len - head) / 4;
    uint8_t *pay = buf + SW_PROTO_HEADER;
    if (head)
        memcpy(pay, m->payload, head);
    bool checked = !(m->flags & SW_FLAG_UNCHECKED);
    uint32_t crc = checked ? sw_crc32c(0, pay, head) : 0;
    pay += head;
    if (!checked) {
        sw_msg_put_floats(pay, src, n);
        write_header(m, buf, 0);
        return;
    }
    for (size_t i = 0; i < n; i += ENCODE_BLOCK) {
        size_t k = n - i < ENCODE_BLOCK ? n - i : ENCODE_BLOCK;
        sw_msg_put_floats(pay + 4 * i, src + i, k);
        crc = sw_crc32c(crc, pay + 4 * i, 4 * k);
    }
    write_header(m, buf, crc);
}

/* Compiled for each vector width (syncwise/simd.h): at the baseline's SSE2 width the check cost
 * four times the payload's checksum. */
/* Index of the first NaN or infinity among n floats, or n. The loop has no early exit so that
 * the compiler vectorises it; the rare bad payload is then searched again. */
SW_VECTOR_CLONES static size_t first_non_finite(const float *v, size_t n)
{
    uint32_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t bits;
        memcpy(&bits, &v[i], sizeof bits);
        bad |= (bits & 0x7f800000u) == 0x7f800000u;
    }
    if (!bad)
        return n;
    size_t i = 0;
    while (isfinite(v[i]))
        i++;
    return i;
}

/* The header's fields; the checks are sw_msg_decode's. */
static sw_msg header(const uint8_t *buf, size_t len)
{
    return (sw_msg){.type = (sw_msg_type)(buf[6] | (unsigned)buf[7] << 8),
                    .worker = sw_get_u32(buf + 8), .flags = sw_get_u32(buf + 12),
                    .version = sw_get_u64(buf + 16), .payload = buf + SW_PROTO_HEADER,
                    .payload_len = len - SW_PROTO_HEADER};
}

void sw_msg_view(const uint8_t *buf, size_t len, sw_msg *out) { *out = header(buf, len); }

/* Payload bytes per block of the receive pass: each block is checksummed, then scanned for
 * non-finite floats while it is still in the first-level cache, so a float payload is read
 * from memory once, not once for its checksum and again for its values. */
#define DECODE_BLOCK 32768

/* The payload's CRC-32C; *finite says whether it is a float vector (aligned, whole floats)
 * whose every value is finite. Other payloads are scanned too: cheap, and never believed, as
 * only the float readers look at the answer. */
static uint32_t checksum_and_scan(const uint8_t *pay, size_t len, bool *finite)
{
    bool floats = SW_LITTLE_ENDIAN && len % 4 == 0 && (uintptr_t)pay % _Alignof(float) == 0;
    bool bad = !floats;
    uint32_t crc = 0;
    for (size_t off = 0; off < len; off += DECODE_BLOCK) {
        size_t k = len - off < DECODE_BLOCK ? len - off : DECODE_BLOCK;
        crc = sw_crc32c(crc, pay + off, k);
        if (!bad)
            bad = first_non_finite((const float *)(const void *)(pay + off), k / 4) < k / 4;
    }
    *finite = !bad;
    return crc;
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
    bool finite = false;
    if (flags & SW_FLAG_UNCHECKED) {
        if (sw_get_u32(buf + 32) != 0)
            return sw_fail(err, SW_EFORMAT, "a checksum on a message flagged unchecked");
    } else if (checksum_and_scan(buf + SW_PROTO_HEADER, (size_t)plen, &finite) !=
               sw_get_u32(buf + 32)) {
        return sw_fail(err, SW_ECHECKSUM, "payload checksum mismatch");
    }
    *out = header(buf, len);
    out->finite = finite;
    return 0;
}

void sw_msg_put_pairs(uint8_t *dst, const uint32_t *idx, const float *val, size_t nnz)
{
    for (size_t k = 0; k < nnz; k++) {
        sw_put_u32(dst + 8 * k, idx[k]);
        sw_put_f32(dst + 8 * k + 4, val[k]);
    }
}

void sw_msg_put_indices(uint8_t *dst, const uint32_t *idx, size_t k)
{
    for (size_t i = 0; i < k; i++)
        sw_put_u32(dst + 4 * i, idx[i]);
}

/* Shared by the two sparse readers: `stride` bytes per entry, the index first. */
static int get_entries(const sw_msg *m, size_t stride, uint32_t limit, uint32_t *idx,
                       float *val, size_t cap, size_t *count, char *err)
{
    const char *what = sw_msg_type_name(m->type);
    if (m->payload_len % stride != 0 || m->payload_len / stride > cap)
        return sw_fail(err, SW_EFORMAT, "%s of %zu bytes is not a list of at most %zu entries of "
                       "%zu bytes", what, m->payload_len, cap, stride);
    size_t n = m->payload_len / stride;
    for (size_t k = 0; k < n; k++) {
        const uint8_t *e = m->payload + stride * k;
        idx[k] = sw_get_u32(e);
        if (idx[k] >= limit || (k > 0 && idx[k] <= idx[k - 1]))
            return sw_fail(err, SW_EFORMAT, "%s entry %zu: index %u is not ascending below %u",
                           what, k, idx[k], limit);
        if (val && !isfinite(val[k] = sw_get_f32(e + 4)))
            return sw_fail(err, SW_EFORMAT, "%s value %zu is not finite", what, k);
    }
    *count = n;
    return 0;
}

int sw_msg_get_pairs(const sw_msg *m, uint32_t limit, uint32_t *idx, float *val, size_t cap,
                     size_t *nnz, char *err)
{
    return get_entries(m, 8, limit, idx, val, cap, nnz, err);
}

int sw_msg_get_indices(const sw_msg *m, uint32_t limit, uint32_t *idx, size_t cap, size_t *k,
                       char *err)
{
    return get_entries(m, 4, limit, idx, NULL, cap, k, err);
}

const float *sw_msg_floats_in_place(const sw_msg *m, size_t n, char *err)
{
    if (m->payload_len != 4 * n) {
        sw_fail(err, SW_EFORMAT, "%s carries %zu bytes where %zu floats were expected",
                sw_msg_type_name(m->type), m->payload_len, n);
        return NULL;
    }
    if (!SW_LITTLE_ENDIAN || (uintptr_t)m->payload % _Alignof(float) != 0)
        return NULL;
    const float *v = (const float *)(const void *)m->payload;
    size_t bad = m->finite ? n : first_non_finite(v, n);
    if (bad < n) {
        sw_fail(err, SW_EFORMAT, "%s value %zu is not finite", sw_msg_type_name(m->type), bad);
        return NULL;
    }
    return v;
}

int sw_msg_get_slice(const sw_msg *m, uint64_t *mark, sw_msg *floats, char *err)
{
    if (m->payload_len < 8)
        return sw_fail(err, SW_EFORMAT, "a slice of %zu bytes lacks its restore mark",
                       m->payload_len);
    *mark = sw_get_u64(m->payload);
    *floats = *m;
    floats->payload += 8; /* whole words: `finite` still holds */
    floats->payload_len -= 8;
    return 0;
}

int sw_msg_get_floats(const sw_msg *m, float *dst, size_t n, char *err)
{
    if (m->payload_len != 4 * n)
        return sw_fail(err, SW_EFORMAT, "%s carries %zu bytes where %zu floats were expected",
                       sw_msg_type_name(m->type), m->payload_len, n);
    if (SW_LITTLE_ENDIAN)
        memcpy(dst, m->payload, 4 * n);
    else
        for (size_t i = 0; i < n; i++)
            dst[i] = sw_get_f32(m->payload + 4 * i);
    size_t bad = m->finite ? n : first_non_finite(dst, n);
    if (bad < n)
        return sw_fail(err, SW_EFORMAT, "%s value %zu is not finite", sw_msg_type_name(m->type),
                       bad);
    return 0;
}

const float *sw_msg_floats_accepted(const sw_msg *m, size_t n, float *copy)
{
    if (SW_LITTLE_ENDIAN && (uintptr_t)m->payload % _Alignof(float) == 0)
        return (const float *)(const void *)m->payload;
    for (size_t i = 0; i < n; i++)
        copy[i] = sw_get_f32(m->payload + 4 * i);
    return copy;
}

size_t sw_msg_pairs_accepted(const sw_msg *m, uint32_t *idx, float *val)
{
    size_t nnz = m->payload_len / 8;
    for (size_t k = 0; k < nnz; k++) {
        idx[k] = sw_get_u32(m->payload + 8 * k);
        val[k] = sw_get_f32(m->payload + 8 * k + 4);
    }
    return nnz;
}
