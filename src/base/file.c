/* Atomic whole-file writes and whole-file reads. */
#define _POSIX_C_SOURCE 200809L
#include "syncwise/file.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "syncwise/err.h"

static int write_all(int fd, const uint8_t *b, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, b, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        b += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Makes the rename itself durable: without this a crash may forget which file the name holds. */
static void sync_dir_of(const char *path)
{
    char copy[4096];
    snprintf(copy, sizeof copy, "%s", path);
    int fd = open(dirname(copy), O_RDONLY | O_DIRECTORY);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
}

int sw_file_write_atomic(const char *path, const uint8_t *b, size_t n, const char *what, char *err)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof tmp)
        return sw_fail(err, SW_EINVAL, "%s path too long", what);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return sw_fail(err, SW_EIO, "%s: cannot create: %s", tmp, strerror(errno));
    int bad = write_all(fd, b, n) || fsync(fd);
    int saved = errno;
    bad |= close(fd) != 0;
    if (!bad && rename(tmp, path) == 0) {
        sync_dir_of(path);
        return 0;
    }
    saved = bad ? saved : errno;
    unlink(tmp);
    return sw_fail(err, SW_EIO, "%s: cannot write %s: %s", path, what, strerror(saved));
}

int sw_file_read_all(const char *path, size_t max, uint8_t **out, size_t *len, char *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return sw_fail(err, SW_EIO, "%s: cannot open: %s", path, strerror(errno));
    int rc = 0;
    long size = -1;
    if (fseek(f, 0, SEEK_END) == 0)
        size = ftell(f);
    if (size < 0 || fseek(f, 0, SEEK_SET) != 0)
        rc = sw_fail(err, SW_EIO, "%s: cannot determine the size (not a regular file?)", path);
    else if ((size_t)size > max)
        rc = sw_fail(err, SW_EFORMAT, "%s: %ld bytes is larger than any valid file (%zu)", path,
                     size, max);
    uint8_t *b = NULL;
    if (!rc && !(b = malloc(size ? (size_t)size : 1)))
        rc = sw_fail(err, SW_ENOMEM, "%s: out of memory for %ld bytes", path, size);
    if (!rc && fread(b, 1, (size_t)size, f) != (size_t)size)
        rc = sw_fail(err, SW_EIO, "%s: read error", path);
    fclose(f);
    if (rc) {
        free(b);
        return rc;
    }
    *out = b;
    *len = (size_t)size;
    return 0;
}
