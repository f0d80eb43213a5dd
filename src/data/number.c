/* Numbers in text data files: a value must parse completely and fit a float, or the reader says
 * which field was wrong (an overflowing 1e39 would become +inf and poison training silently). */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "sw_data_internal.h"
#include "syncwise/err.h"

/* Decimal as data files write it: blanks, an optional sign ('+1' is LIBSVM's label), then a
 * digit or a point and a digit. strtod would also read hex ("0x10" as 16), inf and nan. */
static bool decimal(const char *p)
{
    p += strspn(p, " \t");
    p += *p == '+' || *p == '-';
    return isdigit((unsigned char)p[0]) || (p[0] == '.' && isdigit((unsigned char)p[1]));
}

int sw__parse_float(const char *p, char **end, double *out)
{
    errno = 0;
    double v = strtod(p, end);
    if (*end == p || isnan(v) || !decimal(p) || memchr(p, 'x', (size_t)(*end - p)) ||
        memchr(p, 'X', (size_t)(*end - p)))
        return SW_EFORMAT;
    if (errno == ERANGE && fabs(v) > 1) /* underflow to 0 or a denormal is fine */
        return SW_ERANGE;
    if (!isfinite(v) || fabs(v) > FLT_MAX)
        return SW_ERANGE;
    *out = v;
    return 0;
}
