/* Which CPUs a process runs on (syncwise/cpus.h). */
#define _GNU_SOURCE
#include "syncwise/cpus.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "syncwise/err.h"

/* The CPU number at *s, its end in *end; -1 when there is none or it is beyond cpu_set_t. */
static long cpu_number(const char *s, const char **end)
{
    if (*s < '0' || *s > '9')
        return -1;
    char *e;
    errno = 0;
    unsigned long v = strtoul(s, &e, 10);
    *end = e;
    return errno || v >= CPU_SETSIZE ? -1 : (long)v;
}

/* One item of a list: N, A-B or A-B:S (every S-th CPU from A to B, as taskset takes it). */
static bool parse_item(const char *s, const char **end, cpu_set_t *set)
{
    long lo = cpu_number(s, end), hi = lo, step = 1;
    bool range = lo >= 0 && **end == '-';
    if (range)
        hi = cpu_number(*end + 1, end);
    if (range && hi >= 0 && **end == ':')
        step = cpu_number(*end + 1, end);
    if (lo < 0 || hi < lo || step < 1)
        return false;
    for (long c = lo; c <= hi; c += step)
        CPU_SET((int)c, set);
    return true;
}

static int parse(const char *list, cpu_set_t *set, char *err)
{
    CPU_ZERO(set);
    for (const char *s = list;;) {
        const char *e = s;
        if (!parse_item(s, &e, set) || (*e && *e != ','))
            return sw_fail(err, SW_EINVAL, "--cpus '%s': not a list of CPUs such as 0, 2-3, "
                                           "0,4-7 or 0-6:2 (each below %d)", list, CPU_SETSIZE);
        if (!*e)
            return 0;
        s = e + 1;
    }
}

static void write_list(const cpu_set_t *set, char *out, size_t len)
{
    size_t at = 0;
    out[0] = '\0';
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (!CPU_ISSET(c, set) || (c > 0 && CPU_ISSET(c - 1, set)))
            continue; /* not in the set, or inside a range already written */
        int last = c;
        while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, set))
            last++;
        int k = last > c ? snprintf(out + at, len - at, "%s%d-%d", at ? "," : "", c, last)
                         : snprintf(out + at, len - at, "%s%d", at ? "," : "", c);
        if (k < 0 || (size_t)k >= len - at)
            return; /* cut: the list so far */
        at += (size_t)k;
    }
}

/* The CPUs the kernel lets this process run on (its cpuset's, online): asked by offering the
 * calling thread every CPU and reading back what it kept, then putting its own set back. This
 * is what a thread may be pinned to, wherever it is pinned now. */
static int permitted(cpu_set_t *may)
{
    cpu_set_t now, every;
    if (sched_getaffinity(0, sizeof now, &now))
        return -1;
    memset(&every, 0xff, sizeof every);
    if (sched_setaffinity(0, sizeof every, &every) || sched_getaffinity(0, sizeof *may, may))
        *may = now; /* not offered: what it runs on is all it may use */
    return sched_setaffinity(0, sizeof now, &now);
}

int sw_cpus_allowed(char *out, size_t len)
{
    cpu_set_t may;
    if (permitted(&may)) {
        if (len)
            out[0] = '\0';
        return 0;
    }
    if (len)
        write_list(&may, out, len);
    return CPU_COUNT(&may);
}

int sw_cpus_allowed_nth(int i)
{
    cpu_set_t may;
    if (i < 0 || permitted(&may))
        return -1;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &may) && i-- == 0)
            return c;
    return -1;
}

/* The set LIST names, and how many CPUs are in it; refused unless the process may use every
 * one. */
static int wanted(const char *list, cpu_set_t *set, char *err)
{
    cpu_set_t may, extra;
    if (permitted(&may))
        return sw_fail(err, SW_EIO, "--cpus '%s': cannot read which CPUs this process may use: "
                       "%s", list, strerror(errno));
    char no[128], yes[128], why[SW_ERR_LEN];
    write_list(&may, yes, sizeof yes);
    if (parse(list, set, why))
        return sw_fail(err, SW_EINVAL, "%s; this process may use %s", why, yes);
    CPU_XOR(&extra, set, &may);
    CPU_AND(&extra, &extra, set); /* in the list, not allowed */
    if (CPU_COUNT(&extra)) {
        write_list(&extra, no, sizeof no);
        return sw_fail(err, SW_EINVAL, "--cpus '%s': this process may not use CPU%s %s (it may "
                       "use %s: its cpuset's, online)", list, CPU_COUNT(&extra) > 1 ? "s" : "",
                       no, yes);
    }
    return CPU_COUNT(set);
}

int sw_cpus_pin_thread(const char *list, char *err)
{
    cpu_set_t set;
    int n = wanted(list, &set, err);
    if (n < 0)
        return n;
    int rc = pthread_setaffinity_np(pthread_self(), sizeof set, &set);
    return rc ? sw_fail(err, SW_EINVAL, "--cpus '%s': %s", list, strerror(rc)) : n;
}

/* Every thread of the process, listed in /proc/self/task; a thread that ended meanwhile is
 * no error. A thread started while the list is read inherits from its creator, whose own
 * setting comes either before (it inherits the new set) or after (it is in the list). */
static int pin_tasks(const char *list, const cpu_set_t *set, char *err)
{
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return sw_fail(err, SW_EIO, "--cpus '%s': cannot list this process's threads: %s", list,
                       strerror(errno));
    int rc = 0;
    for (struct dirent *e; !rc && (e = readdir(d));) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        pid_t tid = (pid_t)strtol(e->d_name, NULL, 10);
        if (sched_setaffinity(tid, sizeof *set, set) && errno != ESRCH)
            rc = sw_fail(err, SW_EINVAL, "--cpus '%s': thread %d: %s", list, (int)tid,
                         strerror(errno));
    }
    closedir(d);
    return rc;
}

int sw_cpus_pin_process(const char *list, char *err)
{
    cpu_set_t set;
    int n = wanted(list, &set, err);
    if (n < 0)
        return n;
    /* The calling thread first, so that any thread it starts from now on inherits the set. */
    if (sched_setaffinity(0, sizeof set, &set))
        return sw_fail(err, SW_EINVAL, "--cpus '%s': %s", list, strerror(errno));
    int rc = pin_tasks(list, &set, err);
    return rc ? rc : n;
}
