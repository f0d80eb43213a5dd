/* Error codes to text, and the message a failure leaves for its caller. */
#include "syncwise/err.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *sw_strerror(int code)
{
    switch (code) {
    case SW_OK:
        return "success";
#define SW__ERR_TEXT(name, value, text) \
    case name:                          \
        return text;
        SW_ERR_MAP(SW__ERR_TEXT)
#undef SW__ERR_TEXT
    }
    return "unknown error";
}

const char *sw_err_name(int code)
{
    switch (code) {
    case SW_OK:
        return "SW_OK";
#define SW__ERR_NAME(name, value, text) \
    case name:                          \
        return #name;
        SW_ERR_MAP(SW__ERR_NAME)
#undef SW__ERR_NAME
    }
    return "SW_E?";
}

static bool continues(char c) { return ((unsigned char)c & 0xC0) == 0x80; }

/* A message longer than the buffer keeps its head and its tail, "..." between, each cut
 * between UTF-8 characters: a long path once filled the whole buffer, and the reason after it
 * ("cannot open: No such file or directory") was lost. */
enum { HEAD = 80, ELLIPSIS = 3 };

int sw_fail(char *err, int code, const char *fmt, ...)
{
    if (!err)
        return code;
    char room[8192], *whole = room;
    va_list ap, again;
    va_start(ap, fmt);
    va_copy(again, ap);
    int n = vsnprintf(room, sizeof room, fmt, ap);
    va_end(ap);
    if (n >= (int)sizeof room && (whole = malloc((size_t)n + 1))) /* its tail is the reason */
        vsnprintf(whole, (size_t)n + 1, fmt, again);
    va_end(again);
    if (!whole) /* no memory for it all: the first part, cut between characters */
        whole = room, n = (int)sizeof room - 1;
    size_t len = n < 0 ? 0 : (size_t)n;
    whole[len] = '\0';
    if (len < SW_ERR_LEN) {
        memcpy(err, whole, len + 1);
        return code;
    }
    size_t head = HEAD, tail = len - (SW_ERR_LEN - 1 - HEAD - ELLIPSIS);
    while (head > 0 && continues(whole[head]))
        head--;
    while (tail < len && continues(whole[tail]))
        tail++;
    memcpy(err, whole, head);
    memcpy(err + head, "...", ELLIPSIS);
    memcpy(err + head + ELLIPSIS, whole + tail, len - tail + 1);
    if (whole != room)
        free(whole);
    return code;
}
