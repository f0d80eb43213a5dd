/* CRC-32 through zlib, fed in chunks because zlib's length argument is 32 bits wide. */
#include "syncwise/bytes.h"

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
