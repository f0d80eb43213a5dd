/* How much memory this process may hold (syncwise/memlimit.h). */
#define _DEFAULT_SOURCE /* sysconf(_SC_PHYS_PAGES) */
#include "syncwise/memlimit.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The number in file `path` (a limit in bytes), or 0 when it is missing, "max" (no limit) or
 * not a number. */
static double read_limit(const char *path)
{
    FILE *f = fopen(path, "r");
    char text[64] = "";
    bool got = f && fgets(text, sizeof text, f);
    if (f)
        fclose(f);
    char *end;
    double v = got ? strtod(text, &end) : 0;
    return got && end != text && v > 0 ? v : 0;
}

static double least(double a, double b)
{
    return a > 0 && (b <= 0 || a < b) ? a : b;
}

/* The least limit named `file` in the group at `dir` + `group` and in each group above it, up
 * to the mount's root. A group the process's namespace does not show (a container sees its own
 * group as the root) is passed over on the way up. */
static double limit_up(const char *dir, const char *group, const char *file)
{
    char path[PATH_MAX], at[PATH_MAX];
    snprintf(at, sizeof at, "%s", group);
    double lim = 0;
    for (;;) {
        size_t len = strlen(at);
        while (len > 0 && at[len - 1] == '/')
            at[--len] = '\0';
        if ((size_t)snprintf(path, sizeof path, "%s%s/%s", dir, at, file) < sizeof path)
            lim = least(lim, read_limit(path));
        char *slash = strrchr(at, '/');
        if (!slash)
            return lim;
        *slash = '\0';
    }
}

/* Whether the controller list of a cgroup v1 line ("4:memory:/path") names memory. */
static bool names_memory(const char *controllers, size_t len)
{
    for (const char *c = controllers, *end = controllers + len; c < end;) {
        const char *comma = memchr(c, ',', (size_t)(end - c));
        size_t n = comma ? (size_t)(comma - c) : (size_t)(end - c);
        if (n == 6 && memcmp(c, "memory", 6) == 0)
            return true;
        c += n + 1;
    }
    return false;
}

/* The limit one line of /proc/self/cgroup leads to. */
static double line_limit(const char *line, const char *root)
{
    const char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (!c2)
        return 0;
    char dir[PATH_MAX];
    const char *group = c2 + 1;
    if (c2 == c1 + 1) { /* "0::/path": the unified (v2) hierarchy, there or at unified/ */
        snprintf(dir, sizeof dir, "%s/unified", root);
        return least(limit_up(root, group, "memory.max"), limit_up(dir, group, "memory.max"));
    }
    if (!names_memory(c1 + 1, (size_t)(c2 - c1 - 1)))
        return 0;
    snprintf(dir, sizeof dir, "%s/memory", root);
    return limit_up(dir, group, "memory.limit_in_bytes");
}

double sw_memory_limit_in(const char *self_cgroup, const char *root, double physical)
{
    double lim = physical > 0 ? physical : 0;
    FILE *f = fopen(self_cgroup, "r");
    if (!f)
        return lim;
    char line[PATH_MAX + 64];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        lim = least(lim, line_limit(line, root));
    }
    fclose(f);
    return lim;
}

double sw_memory_limit(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    double physical = pages > 0 && page > 0 ? (double)pages * (double)page : 0;
    return sw_memory_limit_in("/proc/self/cgroup", "/sys/fs/cgroup", physical);
}
