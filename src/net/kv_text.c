/* Text payloads (kv_text.h). */
#include "kv_text.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *sw__text_value(const char *text, const char *key)
{
    size_t k = strlen(key);
    for (const char *line = text; line && *line; line = strchr(line, '\n'), line += !!line)
        if (!strncmp(line, key, k) && line[k] == '=')
            return line + k + 1;
    return NULL;
}

int sw__text_number(const char *text, const char *key, unsigned long long *v)
{
    const char *at = sw__text_value(text, key);
    char *end;
    if (!at || *at < '0' || *at > '9')
        return -1;
    errno = 0;
    *v = strtoull(at, &end, 10);
    return (*end && *end != '\n') || errno == ERANGE ? -1 : 0;
}

int sw__text_real(const char *text, const char *key, double *v)
{
    const char *at = sw__text_value(text, key);
    char *end;
    if (!at)
        return -1;
    *v = strtod(at, &end);
    return end == at || (*end && *end != '\n') || !isfinite(*v) ? -1 : 0;
}

bool sw__text_is(const char *text, const char *key, const char *want)
{
    const char *at = sw__text_value(text, key);
    size_t n = strlen(want);
    return at && !strncmp(at, want, n) && (at[n] == '\0' || at[n] == '\n');
}

int sw__text_append(char *text, size_t cap, int len, const char *fmt, ...)
{
    if (len < 0 || (size_t)len >= cap)
        return len;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(text + len, cap - (size_t)len, fmt, ap);
    va_end(ap);
    return n < 0 ? len : len + n;
}
