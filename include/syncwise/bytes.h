/* Fixed-width little-endian integers and floats in byte buffers, and the CRC-32 of a buffer.
 *
 * Every file format and wire message of syncwise stores numbers through these helpers, never by
 * writing a struct, so that files move between machines and compilers unchanged.
 */
#ifndef SYNCWISE_BYTES_H
#define SYNCWISE_BYTES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

static inline void sw_put_u32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static inline uint32_t sw_get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline void sw_put_u64(uint8_t *p, uint64_t v)
{
    sw_put_u32(p, (uint32_t)v);
    sw_put_u32(p + 4, (uint32_t)(v >> 32));
}

static inline uint64_t sw_get_u64(const uint8_t *p)
{
    return (uint64_t)sw_get_u32(p) | (uint64_t)sw_get_u32(p + 4) << 32;
}

static inline void sw_put_f32(uint8_t *p, float f)
{
    uint32_t v;
    memcpy(&v, &f, sizeof v);
    sw_put_u32(p, v);
}

static inline float sw_get_f32(const uint8_t *p)
{
    uint32_t v = sw_get_u32(p);
    float f;
    memcpy(&f, &v, sizeof f);
    return f;
}

static inline void sw_put_f64(uint8_t *p, double d)
{
    uint64_t v;
    memcpy(&v, &d, sizeof v);
    sw_put_u64(p, v);
}

static inline double sw_get_f64(const uint8_t *p)
{
    uint64_t v = sw_get_u64(p);
    double d;
    memcpy(&d, &v, sizeof d);
    return d;
}

/* Bytes from the wire as text that is safe to print or log: printable ASCII without blanks
 * ('?' for any other byte: no terminal escape gets through), "-" when empty, cut to cap - 1. */
void sw_printable(char *out, size_t cap, const void *bytes, size_t len);
/* The same for a sentence (another party's reason): spaces kept, "" when empty. */
void sw_printable_text(char *out, size_t cap, const void *bytes, size_t len);

/* CRC-32 (the zlib/PNG polynomial) of n bytes, continuing from crc (start with 0). Files use it. */
uint32_t sw_crc32(uint32_t crc, const void *data, size_t n);

/* CRC-32C (Castagnoli) of n bytes, continuing from crc (start with 0). The wire protocol uses it
 * because x86-64 computes it in hardware (SSE4.2), several times faster than zlib's CRC-32; other
 * machines use a table. */
uint32_t sw_crc32c(uint32_t crc, const void *data, size_t n);

/* Reads a u32-length-prefixed string at b + *off (of len bytes) into dst (capacity cap),
 * advancing *off. Fails with SW_EFORMAT and a message naming path, the byte and `what` on a
 * length below min or not under cap, a string past the end, or a NUL byte inside. */
int sw_get_text(const uint8_t *b, size_t len, size_t *off, char *dst, size_t cap, size_t min,
                const char *what, const char *path, char *err);

#ifdef __cplusplus
}
#endif

#endif
