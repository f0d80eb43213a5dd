/* Line-by-line reading with a bound on the line length (see syncwise/lines.h): blocks are read
 * with fread and split at newlines, so that a line's true length (NUL bytes included) is known. */
#define _POSIX_C_SOURCE 200809L
#include "syncwise/lines.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "syncwise/err.h"

#define BLOCK 65536

typedef struct reader {
    FILE *f;
    const char *path;
    char block[BLOCK];
    size_t pos, end; /* unread bytes of the block */
    char *line;
    size_t cap, lineno;
} reader;

/* Room for `need` bytes and a NUL in r->line, within the bound. */
static int room(reader *r, size_t need, char *err)
{
    if (need > SW_LINE_MAX)
        return sw_fail(err, SW_EFORMAT, "%s:%zu: a line longer than %zu MiB (not a text file?)",
                       r->path, r->lineno + 1, SW_LINE_MAX >> 20);
    if (need + 1 <= r->cap)
        return 0;
    size_t cap = r->cap ? r->cap : 4096;
    while (cap < need + 1)
        cap *= 2;
    char *grown = realloc(r->line, cap);
    if (!grown)
        return sw_fail(err, SW_ENOMEM, "%s:%zu: out of memory for a line of %zu bytes", r->path,
                       r->lineno + 1, need);
    r->line = grown;
    r->cap = cap;
    return 0;
}

/* The next line into r->line (NUL-terminated, newline kept): 1 when there is one, 0 at the end,
 * or a negative error. */
static int next_line(reader *r, char *err)
{
    size_t len = 0;
    for (;;) {
        if (r->pos == r->end) {
            r->pos = 0;
            r->end = fread(r->block, 1, BLOCK, r->f);
            if (r->end == 0)
                break;
        }
        const char *nl = memchr(r->block + r->pos, '\n', r->end - r->pos);
        size_t take = (nl ? (size_t)(nl - r->block) + 1 : r->end) - r->pos;
        if (memchr(r->block + r->pos, '\0', take))
            return sw_fail(err, SW_EFORMAT, "%s:%zu: a NUL byte (not a text file?)", r->path,
                           r->lineno + 1);
        int rc = room(r, len + take, err);
        if (rc)
            return rc;
        memcpy(r->line + len, r->block + r->pos, take);
        r->pos += take;
        len += take;
        if (nl)
            break;
    }
    if (len == 0)
        return 0;
    r->line[len] = '\0';
    return 1;
}

int sw_read_lines(const char *path, sw_line_fn fn, void *ctx, char *err)
{
    reader *r = calloc(1, sizeof *r);
    if (!r)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    if (!(r->f = fopen(path, "r"))) {
        int saved = errno;
        free(r);
        return sw_fail(err, SW_EIO, "%s: cannot open: %s", path, strerror(saved));
    }
    r->path = path;
    int rc;
    errno = 0;
    while ((rc = next_line(r, err)) == 1) {
        bool mark = r->lineno == 0 && !strncmp(r->line, "\xEF\xBB\xBF", 3);
        if ((rc = fn(ctx, r->line + (mark ? 3 : 0), ++r->lineno, err)))
            break;
    }
    if (!rc && ferror(r->f)) /* a directory opens, then fails to read with EISDIR */
        rc = sw_fail(err, SW_EIO, "%s: read error: %s", path,
                     errno ? strerror(errno) : "unknown cause");
    free(r->line);
    fclose(r->f);
    free(r);
    return rc;
}
