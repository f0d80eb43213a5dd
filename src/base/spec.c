/* Parsing and typed access for "name:key=value,..." parameter strings. */
#include "syncwise/spec.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "syncwise/err.h"

static int copy_part(char *dst, size_t cap, const char *src, size_t len, const char *what,
                     const char *text, char *err)
{
    if (len >= cap)
        return sw_fail(err, SW_EINVAL, "'%s': %s too long (at most %zu characters)", text, what,
                       cap - 1);
    memcpy(dst, src, len);
    dst[len] = '\0';
    return 0;
}

static int parse_arg(sw_spec *s, const char *p, size_t len, const char *text, char *err)
{
    if (s->n_args == SW_SPEC_MAX_ARGS)
        return sw_fail(err, SW_EINVAL, "'%s': more than %d parameters", text, SW_SPEC_MAX_ARGS);
    if (len == 0)
        return sw_fail(err, SW_EINVAL, "'%s': empty parameter", text);
    sw_spec_arg *a = &s->arg[s->n_args];
    const char *eq = memchr(p, '=', len);
    int rc;
    if (eq) {
        size_t klen = (size_t)(eq - p);
        if (klen == 0)
            return sw_fail(err, SW_EINVAL, "'%s': parameter without a name before '='", text);
        if (klen + 1 == len) /* file= from an unset variable: not the default in silence */
            return sw_fail(err, SW_EINVAL, "'%s': parameter '%.*s' without a value after '='",
                           text, (int)klen, p);
        if ((rc = copy_part(a->key, sizeof a->key, p, klen, "parameter name", text, err)) ||
            (rc = copy_part(a->val, sizeof a->val, eq + 1, len - klen - 1, "value", text, err)))
            return rc;
        for (int i = 0; i < s->n_args; i++)
            if (strcmp(s->arg[i].key, a->key) == 0)
                return sw_fail(err, SW_EINVAL, "'%s': parameter '%s' given twice", text, a->key);
    } else {
        a->key[0] = '\0';
        if ((rc = copy_part(a->val, sizeof a->val, p, len, "value", text, err)))
            return rc;
        s->n_pos++;
    }
    a->used = false;
    s->n_args++;
    return 0;
}

int sw_spec_parse(sw_spec *s, const char *text, char *err)
{
    memset(s, 0, sizeof *s);
    const char *colon = strchr(text, ':');
    size_t nlen = colon ? (size_t)(colon - text) : strlen(text);
    if (nlen == 0)
        return sw_fail(err, SW_EINVAL, colon ? "'%s': missing name before ':'" : "an empty spec",
                       text);
    int rc = copy_part(s->name, sizeof s->name, text, nlen, "name", text, err);
    if (rc || !colon)
        return rc;
    const char *p = colon + 1;
    if (*p == '\0')
        return 0; /* "name:" is the same as "name" */
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if ((rc = parse_arg(s, p, len, text, err)))
            return rc;
        if (!comma)
            return 0;
        p = comma + 1;
    }
}

static sw_spec_arg *find(sw_spec *s, const char *key)
{
    for (int i = 0; i < s->n_args; i++)
        if (s->arg[i].key[0] && strcmp(s->arg[i].key, key) == 0)
            return &s->arg[i];
    return NULL;
}

static sw_spec_arg *find_pos(sw_spec *s, int i)
{
    for (int k = 0; k < s->n_args; k++)
        if (!s->arg[k].key[0] && i-- == 0)
            return &s->arg[k];
    return NULL;
}

bool sw_spec_has(const sw_spec *s, const char *key) { return find((sw_spec *)s, key) != NULL; }

bool sw_spec_decimal(const char *text)
{
    const char *p = text + (*text == '-');
    if (!isdigit((unsigned char)p[0]) && !(p[0] == '.' && isdigit((unsigned char)p[1])))
        return false;
    return !strpbrk(p, "xX");
}

int sw_spec_read_double(const char *text, double *out, const char **too)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (!sw_spec_decimal(text) || *end != '\0')
        return SW_EINVAL;
    /* strtod says ERANGE of a subnormal too, which a double holds; 1e-400 it reads as 0 */
    if (!isfinite(v) || (errno == ERANGE && v == 0)) {
        *too = v == 0 ? "small" : "large";
        return SW_ERANGE;
    }
    *out = v;
    return 0;
}

/* key: the value's name; NULL for the pos-th value given without one (shexp:0.5). */
static int parse_double(const sw_spec *s, const sw_spec_arg *a, const char *key, int pos,
                        double lo, double hi, double *out, char *err)
{
    char what[96];
    if (key)
        snprintf(what, sizeof what, "%s=%.40s", key, a->val);
    else
        snprintf(what, sizeof what, "value #%d = %.40s", pos + 1, a->val);
    double v;
    const char *too;
    int rc = sw_spec_read_double(a->val, &v, &too);
    if (rc == SW_EINVAL)
        return sw_fail(err, SW_EINVAL, "%s: %s is not a number", s->name, what);
    if (rc)
        return sw_fail(err, SW_ERANGE, "%s: %s is too %s for a double", s->name, what, too);
    if (v < lo || v > hi)
        return sw_fail(err, SW_ERANGE, "%s: %s is outside [%g, %g]", s->name, what, lo, hi);
    *out = v;
    return 0;
}

int sw_spec_int(sw_spec *s, const char *key, long lo, long hi, long *out, char *err)
{
    sw_spec_arg *a = find(s, key);
    if (!a)
        return 0;
    a->used = true;
    char *end;
    errno = 0;
    long v = strtol(a->val, &end, 10);
    if (!sw_spec_decimal(a->val) || *end != '\0' || errno == ERANGE)
        return sw_fail(err, SW_EINVAL, "%s: %s='%s' is not an integer", s->name, key, a->val);
    if (v < lo || v > hi)
        return sw_fail(err, SW_ERANGE, "%s: %s=%ld is outside [%ld, %ld]", s->name, key, v, lo,
                       hi);
    *out = v;
    return 0;
}

int sw_spec_double(sw_spec *s, const char *key, double lo, double hi, double *out, char *err)
{
    sw_spec_arg *a = find(s, key);
    if (!a)
        return 0;
    a->used = true;
    return parse_double(s, a, key, 0, lo, hi, out, err);
}

const char *sw_spec_str(sw_spec *s, const char *key, const char *dflt)
{
    sw_spec_arg *a = find(s, key);
    if (!a)
        return dflt;
    a->used = true;
    return a->val;
}

int sw_spec_pos_double(sw_spec *s, int i, double lo, double hi, double *out, char *err)
{
    sw_spec_arg *a = find_pos(s, i);
    if (!a)
        return 0;
    a->used = true;
    return parse_double(s, a, NULL, i, lo, hi, out, err);
}

const char *sw_spec_pos_str(sw_spec *s, int i)
{
    sw_spec_arg *a = find_pos(s, i);
    if (!a)
        return NULL;
    a->used = true;
    return a->val;
}

int sw_spec_finish(const sw_spec *s, const char *known, char *err)
{
    for (int i = 0; i < s->n_args; i++) {
        const sw_spec_arg *a = &s->arg[i];
        if (a->used)
            continue;
        if (a->key[0])
            return sw_fail(err, SW_EINVAL, "%s: unknown parameter '%s' (known: %s)", s->name,
                           a->key, known && *known ? known : "none");
        return sw_fail(err, SW_EINVAL, "%s: unexpected value '%s' (known: %s)", s->name, a->val,
                       known && *known ? known : "none");
    }
    return 0;
}
