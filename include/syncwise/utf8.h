/* UTF-8: what our JSON writer and reader need of it. A log line is JSON, and JSON is Unicode
 * text, so bytes that are no UTF-8 (a file name of another encoding) are never written raw, and
 * a reader decodes every \u escape JSON allows. */
#ifndef SYNCWISE_UTF8_H
#define SYNCWISE_UTF8_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The length (1 to 4) of the well-formed UTF-8 character at s, or 0 when the bytes there are
 * none (a stray continuation byte, a sequence cut short, an overlong form, a surrogate, a code
 * point past U+10FFFF). s is NUL-terminated; a NUL ends any sequence. */
size_t sw_utf8_char_len(const char *s);

/* Writes code point cp (at most U+10FFFF, no surrogate) as UTF-8 into out; returns its length,
 * or 0 for a code point UTF-8 has no form for. */
size_t sw_utf8_put(uint32_t cp, char out[4]);

#ifdef __cplusplus
}
#endif

#endif
