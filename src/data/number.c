/* Numbers in text data files: a value must parse completely and fit a float, or the reader says
 * which field was wrong (an overflowing 1e39 would become +inf and poison training silently). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "sw_data_internal.h"
#include "syncwise/err.h"

int sw__parse_float(const char *p, char **end, double *out)
{
    errno = 0;
    double v = strtod(p, end);
    if (*end == p || isnan(v))
        return SW_EFORMAT;
    if (errno == ERANGE && fabs(v) > 1) /* underflow to 0 or a denormal is fine */
        return SW_ERANGE;
    if (!isfinite(v) || fabs(v) > FLT_MAX)
        return SW_ERANGE;
    *out = v;
    return 0;
}
