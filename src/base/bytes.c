/* CRC-32 through zlib, fed in chunks because zlib's length argument is 32 bits wide; and CRC-32C
 * with the SSE4.2 instruction where the CPU has it, a table elsewhere. */
#include "syncwise/bytes.h"

#include <string.h>
#include <zlib.h>

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

/* The reflected Castagnoli polynomial. */
#define CRC32C_POLY 0x82f63b78u

static uint32_t crc32c_table[256];

static void crc32c_init_table(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? (c >> 1) ^ CRC32C_POLY : c >> 1;
        crc32c_table[i] = c;
    }
}

uint32_t sw__crc32c_soft(uint32_t crc, const uint8_t *p, size_t n);

uint32_t sw__crc32c_soft(uint32_t crc, const uint8_t *p, size_t n)
{
    /* A race between threads filling the table writes the same values: harmless. */
    if (!crc32c_table[1])
        crc32c_init_table();
    crc = ~crc;
    while (n--)
        crc = crc32c_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
    return ~crc;
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("sse4.2"))) static uint32_t crc32c_hw(uint32_t crc, const uint8_t *p,
                                                            size_t n)
{
    uint64_t c = ~crc;
    for (; n >= 8; p += 8, n -= 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        c = __builtin_ia32_crc32di(c, v);
    }
    uint32_t c32 = (uint32_t)c;
    while (n--)
        c32 = __builtin_ia32_crc32qi(c32, *p++);
    return ~c32;
}

uint32_t sw_crc32c(uint32_t crc, const void *data, size_t n)
{
    static int hw = -1;
    if (hw < 0)
        hw = __builtin_cpu_supports("sse4.2") != 0;
    return hw ? crc32c_hw(crc, data, n) : sw__crc32c_soft(crc, data, n);
}
#else
uint32_t sw_crc32c(uint32_t crc, const void *data, size_t n) { return sw__crc32c_soft(crc, data, n); }
#endif
