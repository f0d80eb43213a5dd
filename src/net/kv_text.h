/* The "key=value" lines of the protocol's text payloads (a shard's INIT, the chunk table). */
#ifndef SW_NET_KV_TEXT_H
#define SW_NET_KV_TEXT_H

/* The value of the line "key=..." in text (up to its newline, not included), or NULL when no
 * line starts with key=. */
const char *sw__text_value(const char *text, const char *key);

#endif
