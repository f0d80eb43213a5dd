/* Error codes to text, and the message a failure leaves for its caller. */
#include "syncwise/err.h"

#include <stdarg.h>
#include <stdio.h>

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

int sw_fail(char *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, SW_ERR_LEN, fmt, ap);
        va_end(ap);
    }
    return code;
}
