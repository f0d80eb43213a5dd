/* A strict reader for flat JSON objects, one per line: {"key":number|"string",...}. Strings are
 * UTF-8 and may hold any of JSON's escapes but \u0000 (a C string ends there) and a surrogate
 * out of its pair (no character); nesting, arrays and true/false/null are refused, since our
 * logs never hold them. */
#include "syncwise/logread.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "syncwise/err.h"
#include "syncwise/utf8.h"

void sw_log_put_string(FILE *f, const char *text)
{
    fputc('"', f);
    for (const char *c = text ? text : ""; *c; c++) {
        unsigned char u = (unsigned char)*c;
        size_t len = u < 0x80 ? 1 : sw_utf8_char_len(c);
        if (u == '"' || u == '\\')
            fprintf(f, "\\%c", u);
        else if (u < 0x20)
            fprintf(f, "\\u%04x", u);
        else if (len == 0) /* no UTF-8 (a file name of another encoding): JSON cannot hold it */
            fputs("\\ufffd", f);
        else {
            fwrite(c, 1, len, f);
            c += len - 1;
        }
    }
    fputc('"', f);
}

static const char *skip_ws(const char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

/* The 4 hex digits at p, or -1. */
static long hex4(const char *p)
{
    long v = 0;
    for (int i = 0; i < 4; i++) {
        char h = p[i];
        int d = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10
              : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
        if (d < 0)
            return -1;
        v = v * 16 + d;
    }
    return v;
}

/* The code point of the \u escape at p (just after its backslash), a surrogate pair's as one,
 * or -1 for \u0000, a lone surrogate or bad digits. *p moves past it. */
static long unescape_u(const char **p)
{
    long v = hex4(*p + 1);
    if (v <= 0 || (v >= 0xDC00 && v <= 0xDFFF))
        return -1;
    *p += 5;
    if (v < 0xD800 || v > 0xDBFF)
        return v;
    long low = (*p)[0] == '\\' && (*p)[1] == 'u' ? hex4(*p + 2) : -1;
    if (low < 0xDC00 || low > 0xDFFF)
        return -1;
    *p += 6;
    return 0x10000 + ((v - 0xD800) << 10) + (low - 0xDC00);
}

/* Writes the character an escape after a backslash at p stands for at dst; returns its length
 * in bytes, 0 for a bad one. *p moves past it. */
static size_t unescape(const char **p, char dst[4])
{
    static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
    const char *at = strchr(from, **p);
    if (**p && at) {
        (*p)++;
        dst[0] = to[at - from];
        return 1;
    }
    long cp = **p == 'u' ? unescape_u(p) : -1;
    return cp < 0 ? 0 : sw_utf8_put((uint32_t)cp, dst);
}

/* Reads "..." at p (a '"' there) into dst; returns the position after it, or NULL with *why
 * saying what a log line never holds. */
static const char *read_string(const char *p, char *dst, size_t cap, const char **why)
{
    p++;
    size_t n = 0;
    while (*p && *p != '"') {
        char c[4];
        size_t len;
        if ((unsigned char)*p < 0x20)
            return *why = "a control character in a string", NULL;
        if (*p != '\\') {
            if (!(len = sw_utf8_char_len(p)))
                return *why = "a byte that is no UTF-8 in a string (JSON is Unicode text)", NULL;
            memcpy(c, p, len);
            p += len;
        } else {
            char kind = *++p;
            if (!(len = unescape(&p, c)))
                return *why = kind == 'u' ? "an escape that is no character (\\u0000, a "
                                            "surrogate out of its pair, or not 4 hex digits)"
                                          : "an escape JSON does not have (a backslash before "
                                            "another character than \" \\ / b f n r t u)",
                       NULL;
        }
        if (n + len >= cap)
            return *why = "a string longer than any a log holds", NULL;
        memcpy(dst + n, c, len);
        n += len;
    }
    dst[n] = '\0';
    return *p == '"' ? p + 1 : (*why = "a string without its end", NULL);
}

/* Where a number as JSON writes it ends: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?; NULL if
 * none starts at p (strtod also reads hex, '+', leading zeros, "4." and ".5"). */
static const char *json_number_end(const char *p)
{
    p += *p == '-';
    if (*p == '0')
        p++;
    else if (*p >= '1' && *p <= '9')
        p += strspn(p, "0123456789");
    else
        return NULL;
    if (*p == '.') {
        size_t digits = strspn(p + 1, "0123456789");
        if (!digits)
            return NULL;
        p += 1 + digits;
    }
    if (*p == 'e' || *p == 'E') {
        const char *e = p + 1 + (p[1] == '+' || p[1] == '-');
        size_t digits = strspn(e, "0123456789");
        if (!digits)
            return NULL;
        p = e + digits;
    }
    return p;
}

/* One "key":value; NULL with *why set when it is not one. */
static const char *read_field(const char *p, sw_log_field *f, const char **why)
{
    memset(f, 0, sizeof *f);
    *why = "expected \"key\":number or \"key\":\"text\"";
    if (*p != '"' || !(p = read_string(p, f->key, sizeof f->key, why)))
        return NULL;
    p = skip_ws(p);
    if (*p++ != ':')
        return NULL;
    p = skip_ws(p);
    if (*p == '"') {
        f->is_str = true;
        return read_string(p, f->str, sizeof f->str, why);
    }
    char *end;
    errno = 0;
    f->num = strtod(p, &end);
    if (end != p && end != json_number_end(p)) {
        *why = "a number not as JSON writes it (hex, '+', a leading zero, a bare point)";
        return NULL;
    }
    if (end != p && (errno == ERANGE || !isfinite(f->num)))
        *why = "a number out of range (or not finite)";
    if (end == p || errno == ERANGE || !isfinite(f->num))
        return NULL;
    /* The number's text too, for a whole number beyond a double's exact ones (a seed). */
    snprintf(f->str, sizeof f->str, "%.*s", (int)(end - p), p);
    return end;
}

static const sw_log_field *find(const sw_log_line *l, const char *key);

int sw_log_parse_line(const char *text, sw_log_line *out, char *err)
{
    const char *p = skip_ws(text);
    out->n = 0;
    if (*p++ != '{')
        return sw_fail(err, SW_EFORMAT, "column %d: expected '{'", (int)(p - text));
    for (p = skip_ws(p); *p != '}';) {
        if (out->n == SW_LOG_MAX_FIELDS)
            return sw_fail(err, SW_EFORMAT, "column %d: more than %d fields", (int)(p - text) + 1,
                           SW_LOG_MAX_FIELDS);
        const char *why;
        const char *next = read_field(p, &out->f[out->n], &why);
        if (!next)
            return sw_fail(err, SW_EFORMAT, "column %d: %s", (int)(p - text) + 1, why);
        if (find(out, out->f[out->n].key)) /* readers would disagree on which one counts */
            return sw_fail(err, SW_EFORMAT, "column %d: the key \"%s\" a second time",
                           (int)(p - text) + 1, out->f[out->n].key);
        out->n++;
        p = skip_ws(next);
        if (*p == '}')
            break;
        if (*p != ',')
            return sw_fail(err, SW_EFORMAT, "column %d: expected ',' or '}'", (int)(p - text) + 1);
        p = skip_ws(p + 1);
        if (*p == '}') /* JSON has no trailing comma */
            return sw_fail(err, SW_EFORMAT, "column %d: '}' after ',': a field was expected",
                           (int)(p - text) + 1);
    }
    p = skip_ws(p + 1);
    if (*p && *p != '\n' && *p != '\r')
        return sw_fail(err, SW_EFORMAT, "column %d: text after the object", (int)(p - text) + 1);
    return 0;
}

static const sw_log_field *find(const sw_log_line *l, const char *key)
{
    for (int i = 0; i < l->n; i++)
        if (strcmp(l->f[i].key, key) == 0)
            return &l->f[i];
    return NULL;
}

bool sw_log_whole(const sw_log_line *l, const char *key, uint64_t *out)
{
    const sw_log_field *f = find(l, key);
    if (!f || f->is_str || !isdigit((unsigned char)f->str[0]))
        return false;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(f->str, &end, 10);
    if (errno || *end)
        return false;
    *out = v;
    return true;
}

double sw_log_num(const sw_log_line *l, const char *key, double dflt)
{
    const sw_log_field *f = find(l, key);
    return f && !f->is_str ? f->num : dflt;
}

const char *sw_log_str(const sw_log_line *l, const char *key)
{
    const sw_log_field *f = find(l, key);
    return f && f->is_str ? f->str : NULL;
}
