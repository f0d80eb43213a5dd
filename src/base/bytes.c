/* CRC-32 through zlib and CRC-32C through ISA-L, both fed in chunks because their length
 * arguments are 32 bits wide; length-prefixed text. */
#include "syncwise/bytes.h"

#include <isa-l/crc.h>
#include <stdint.h>
#include <string.h>
#include <zlib.h>

#include "syncwise/err.h"

uint32_t sw_crc32(uint32_t crc, const void *data, size_t n)
{
    const Bytef *p = data;
    while (n > 0) {
        uInt chunk = n > (1u << 30) ? (1u << 30) : (uInt)n;
        crc = (uint32_t)crc32(crc, p, chunk);
        p += chunk;
        n -= chunk;
    }
    return crc;
}

/* ISA-L's crc32_iscsi keeps the register without the final inversion (its init is the raw
 * register), and takes an int length, so long inputs go in chunks. Where the CPU has carry-less
 * multiplication on wide vectors it folds 256 bytes a step: about twice the three-lane crc32
 * instruction loop this replaced (bench/net_bench.c measures it in place). */
uint32_t sw_crc32c(uint32_t crc, const void *data, size_t n)
{
    unsigned char *p = (unsigned char *)(uintptr_t)data; /* ISA-L only reads it */
    uint32_t reg = ~crc;
    while (n > 0) {
        int chunk = n > (1u << 30) ? (1 << 30) : (int)n;
        reg = crc32_iscsi(p, chunk, reg);
        p += chunk;
        n -= (size_t)chunk;
    }
    return ~reg;
}

/* Reads a length-prefixed string at *off into dst (capacity cap), advancing *off. */
int sw_get_text(const uint8_t *b, size_t len, size_t *off, char *dst, size_t cap, size_t min,
                const char *what, const char *path, char *err)
{
    if (*off + 4 > len)
        return sw_fail(err, SW_EFORMAT, "%s: byte %zu: file ends inside the %s", path, *off, what);
    uint32_t n = sw_get_u32(b + *off);
    if (n < min || n >= cap)
        return sw_fail(err, SW_EFORMAT, "%s: byte %zu: %s length %u out of range", path, *off,
                       what, n);
    if (*off + 4 + n > len)
        return sw_fail(err, SW_EFORMAT, "%s: byte %zu: file ends inside the %s", path, *off, what);
    memcpy(dst, b + *off + 4, n);
    dst[n] = '\0';
    if (strlen(dst) != n)
        return sw_fail(err, SW_EFORMAT, "%s: byte %zu: %s holds a NUL byte", path, *off, what);
    *off += 4 + n;
    return 0;
}

void sw_printable_text(char *out, size_t cap, const void *bytes, size_t len)
{
    const uint8_t *b = bytes;
    size_t n = 0;
    for (size_t i = 0; i < len && n + 1 < cap; i++)
        out[n++] = b[i] >= ' ' && b[i] < 127 ? (char)b[i] : '?';
    if (cap)
        out[n] = '\0';
}

void sw_printable(char *out, size_t cap, const void *bytes, size_t len)
{
    const uint8_t *b = bytes;
    size_t n = 0;
    for (size_t i = 0; i < len && n + 1 < cap; i++)
        out[n++] = b[i] > ' ' && b[i] < 127 ? (char)b[i] : '?';
    if (n == 0 && cap > 1)
        out[n++] = '-';
    if (cap)
        out[n] = '\0';
}
