/* CRC-32 through zlib, fed in chunks because zlib's length argument is 32 bits wide; CRC-32C
 * with the SSE4.2 instruction where the CPU has it, a table elsewhere; length-prefixed text. */
#include "syncwise/bytes.h"

#include <pthread.h>
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
/* The crc32 instruction has a latency of three cycles but issues every cycle, so one stream
 * uses a third of it. Long inputs are cut into blocks of three lanes of LANE bytes computed
 * together, then joined: the CRC register is linear, so the register after lanes a, b, c is
 * shift(a, 2 LANE) ^ shift(b, LANE) ^ c, where shift(r, L) is r carried through L zero bytes
 * (a 32x32 bit matrix, applied here as four byte tables). */
#define LANE 4096

static uint32_t shift_tables[2][4][256]; /* [0]: by LANE bytes, [1]: by 2 LANE bytes */
static pthread_once_t shift_once = PTHREAD_ONCE_INIT;

/* The raw register r carried through n zero bytes (slowly; only to build the tables). */
static uint32_t zeros_soft(uint32_t r, size_t n)
{
    while (n--)
        r = crc32c_table[r & 0xff] ^ (r >> 8);
    return r;
}

static void build_shift_tables(void)
{
    if (!crc32c_table[1])
        crc32c_init_table();
    for (int which = 0; which < 2; which++) {
        uint32_t basis[32];
        for (int bit = 0; bit < 32; bit++)
            basis[bit] = zeros_soft(1u << bit, (size_t)LANE * (size_t)(which + 1));
        for (int k = 0; k < 4; k++)
            for (uint32_t b = 0; b < 256; b++) {
                uint32_t v = 0;
                for (int bit = 0; bit < 8; bit++)
                    if (b >> bit & 1)
                        v ^= basis[8 * k + bit];
                shift_tables[which][k][b] = v;
            }
    }
}

static uint32_t shift(int which, uint32_t r)
{
    uint32_t(*t)[256] = shift_tables[which];
    return t[0][r & 0xff] ^ t[1][r >> 8 & 0xff] ^ t[2][r >> 16 & 0xff] ^ t[3][r >> 24];
}

__attribute__((target("sse4.2"))) static uint64_t lanes3(uint64_t c, const uint8_t *p)
{
    uint64_t c1 = 0, c2 = 0;
    for (size_t i = 0; i < LANE; i += 8) {
        uint64_t a, b, d;
        memcpy(&a, p + i, 8);
        memcpy(&b, p + LANE + i, 8);
        memcpy(&d, p + 2 * LANE + i, 8);
        c = __builtin_ia32_crc32di(c, a);
        c1 = __builtin_ia32_crc32di(c1, b);
        c2 = __builtin_ia32_crc32di(c2, d);
    }
    return shift(1, (uint32_t)c) ^ shift(0, (uint32_t)c1) ^ (uint32_t)c2;
}

__attribute__((target("sse4.2"))) static uint32_t crc32c_hw(uint32_t crc, const uint8_t *p,
                                                            size_t n)
{
    uint64_t c = ~crc;
    if (n >= 3 * LANE) {
        pthread_once(&shift_once, build_shift_tables);
        for (; n >= 3 * LANE; p += 3 * LANE, n -= 3 * LANE)
            c = lanes3(c, p);
    }
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
