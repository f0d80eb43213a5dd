/* Helpers for the unit tests: a private scratch directory that is removed afterwards, and small
 * file writers. Header-only so each test binary stays a single file beside the code it tests. */
#ifndef SW_TESTUTIL_H
#define SW_TESTUTIL_H

#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* Creates a fresh directory for one test binary and returns its path (static storage). */
static inline const char *sw_test_dir(void)
{
    static char dir[512];
    if (dir[0])
        return dir;
    const char *base = getenv("SW_TEST_TMPDIR");
    if (!base || !*base)
        base = "/tmp";
    mkdir(base, 0755);
    snprintf(dir, sizeof dir, "%s/swtest.XXXXXX", base);
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        abort();
    }
    return dir;
}

/* A path inside the scratch directory (static storage, 8 slots in rotation). */
static inline const char *sw_test_path(const char *name)
{
    static char paths[8][800]; /* the directory and a name of up to 255 bytes */
    static int next;
    char *p = paths[next++ % 8];
    snprintf(p, sizeof paths[0], "%s/%s", sw_test_dir(), name);
    return p;
}

static inline void sw_test_write(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, n, f) != n || fclose(f) != 0) {
        perror(path);
        abort();
    }
}

static inline void sw_test_write_gz(const char *path, const void *data, size_t n)
{
    gzFile g = gzopen(path, "wb");
    if (!g || gzwrite(g, data, (unsigned)n) != (int)n || gzclose(g) != Z_OK) {
        perror(path);
        abort();
    }
}

static inline void sw_test_write_text(const char *path, const char *text)
{
    sw_test_write(path, text, strlen(text));
}

/* Removes the scratch directory and everything in it (it holds no subdirectories). */
static inline void sw_test_cleanup(void)
{
    const char *dir = sw_test_dir();
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)))
            if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
                char p[1024];
                snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
                unlink(p);
            }
        closedir(d);
    }
    rmdir(dir);
}

/* A cmocka group teardown that removes the scratch directory. */
static inline int sw_test_teardown(void **state)
{
    (void)state;
    sw_test_cleanup();
    return 0;
}

/* Number of entries in the scratch directory, to check that nothing was left behind. */
static inline int sw_test_dir_entries(void)
{
    int n = 0;
    DIR *d = opendir(sw_test_dir());
    struct dirent *e;
    while (d && (e = readdir(d)))
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    if (d)
        closedir(d);
    return n;
}

#endif
