/* Parameter strings: "name:key=value,key=value" and "name:value,value".
 *
 * Policies, models, data sets and cluster models are all chosen by such a string on the command
 * line. sw_spec_parse splits it; the typed getters read and range-check one value each and mark
 * it used; sw_spec_finish then refuses any key nobody asked for, listing the keys that exist, so
 * a typo ("mlp:hh=2") is an error rather than a silently ignored option. Values cannot contain
 * commas. A value without "key=" is positional and is read with sw_spec_pos_*.
 */
#ifndef SYNCWISE_SPEC_H
#define SYNCWISE_SPEC_H

#include <stdbool.h>

#include "syncwise/err.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SW_SPEC_MAX_ARGS 24
#define SW_SPEC_NAME_LEN 48
#define SW_SPEC_KEY_LEN 32
#define SW_SPEC_VAL_LEN 256

typedef struct sw_spec_arg {
    char key[SW_SPEC_KEY_LEN]; /* empty for a positional value */
    char val[SW_SPEC_VAL_LEN];
    bool used;
} sw_spec_arg;

typedef struct sw_spec {
    char name[SW_SPEC_NAME_LEN];
    int n_args;
    int n_pos; /* positional values, in order, among args */
    sw_spec_arg arg[SW_SPEC_MAX_ARGS];
} sw_spec;

/* Parses text into s. Fails with SW_EINVAL and a message for an empty name, an empty key, a
 * repeated key, too many or too long parts. */
int sw_spec_parse(sw_spec *s, const char *text, char *err);

/* Whether text starts as a number in decimal as users write it: an optional '-', then a digit
 * (or a point and a digit). strtod and strtol also take leading spaces, '+', hex ("0x10" read
 * as 16), inf and nan; the parsers of specs and options refuse those (the rest of the text is
 * theirs to read). */
bool sw_spec_decimal(const char *text);

/* Reads all of text as such a number: 0; SW_EINVAL when it is none; SW_ERANGE when no double
 * holds it, *too then "large" or "small" (a subnormal is held: strtod's ERANGE of it is not). */
int sw_spec_read_double(const char *text, double *out, const char **too);

/* Typed getters: when key is absent *out keeps its value (the caller's default) and they return
 * 0; when present the value must parse completely and lie in [lo, hi]. */
int sw_spec_int(sw_spec *s, const char *key, long lo, long hi, long *out, char *err);
int sw_spec_double(sw_spec *s, const char *key, double lo, double hi, double *out, char *err);
/* Returns the value of key (marking it used) or dflt when absent. */
const char *sw_spec_str(sw_spec *s, const char *key, const char *dflt);
bool sw_spec_has(const sw_spec *s, const char *key);

/* Positional values: i counts from 0 among positional values only. */
int sw_spec_pos_double(sw_spec *s, int i, double lo, double hi, double *out, char *err);
const char *sw_spec_pos_str(sw_spec *s, int i);

/* Fails with SW_EINVAL naming the first key (or positional value) no getter read, and listing
 * `known` (a human list such as "h, u") as what the component accepts. */
int sw_spec_finish(const sw_spec *s, const char *known, char *err);

/* A spec's value outside its range (a getter's SW_ERANGE) is a bad spec, SW_EINVAL, as an
 * unknown key is (a command's usage error): for callers whose SW_ERANGE otherwise says that a
 * file's values do not fit. */
static inline int sw_spec_usage(int rc)
{
    return rc == SW_ERANGE ? SW_EINVAL : rc;
}

#ifdef __cplusplus
}
#endif

#endif
