/* Line-by-line reading with getline, so lines of any length work. */
#define _POSIX_C_SOURCE 200809L
#include "syncwise/lines.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "syncwise/err.h"

int sw_read_lines(const char *path, sw_line_fn fn, void *ctx, char *err)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return sw_fail(err, SW_EIO, "%s: cannot open: %s", path, strerror(errno));
    char *line = NULL;
    size_t cap = 0, lineno = 0;
    int rc = 0;
    while (!rc && getline(&line, &cap, f) >= 0)
        rc = fn(ctx, line, ++lineno, err);
    if (!rc && ferror(f))
        rc = sw_fail(err, SW_EIO, "%s: read error", path);
    free(line);
    fclose(f);
    return rc;
}
