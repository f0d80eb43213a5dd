/* UTF-8 validation and encoding (RFC 3629). */
#include "syncwise/utf8.h"

static int cont(unsigned char c) { return (c & 0xC0) == 0x80; }

size_t sw_utf8_char_len(const char *s)
{
    const unsigned char *u = (const unsigned char *)s;
    if (u[0] < 0x80)
        return 1;
    size_t len = u[0] >= 0xF0 ? 4 : u[0] >= 0xE0 ? 3 : u[0] >= 0xC0 ? 2 : 0;
    if (!len || u[0] > 0xF4)
        return 0;
    uint32_t cp = u[0] & (0x7F >> len);
    for (size_t i = 1; i < len; i++) {
        if (!cont(u[i]))
            return 0;
        cp = cp << 6 | (u[i] & 0x3F);
    }
    static const uint32_t least[] = {0, 0, 0x80, 0x800, 0x10000}; /* shorter forms are overlong */
    if (cp < least[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return len;
}

size_t sw_utf8_put(uint32_t cp, char out[4])
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    size_t len = cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    static const unsigned char lead[] = {0, 0, 0xC0, 0xE0, 0xF0};
    for (size_t i = len - 1; i > 0; i--, cp >>= 6)
        out[i] = (char)(0x80 | (cp & 0x3F));
    out[0] = (char)(lead[len] | cp);
    return len;
}
