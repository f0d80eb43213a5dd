/* The protocol's text payloads: reading their "key=value" lines (a shard's INIT, the chunk
 * table), and building text a piece at a time (ctl status). */
#ifndef SW_NET_KV_TEXT_H
#define SW_NET_KV_TEXT_H

#include <stdbool.h>
#include <stddef.h>

/* The value of the line "key=..." in text (up to its newline, not included), or NULL when no
 * line starts with key=. */
const char *sw__text_value(const char *text, const char *key);
/* The whole decimal number on line "key=N" of text into *v: 0, or -1 when there is none. */
int sw__text_number(const char *text, const char *key, unsigned long long *v);
/* The whole finite decimal number on line "key=X" of text into *v: 0, or -1 when there is
 * none. */
int sw__text_real(const char *text, const char *key, double *v);
/* Whether line "key=..." of text says exactly `want`. */
bool sw__text_is(const char *text, const char *key, const char *want);

/* Appends printf-style to text (cap bytes, len used so far) and returns the new length; text
 * already full stays as it is. */
int sw__text_append(char *text, size_t cap, int len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
