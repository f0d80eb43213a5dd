/* Which CPUs a process runs on (syncwise/cpus.h). */
#define _GNU_SOURCE
#include "syncwise/cpus.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
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

static int parse(const char *list, cpu_set_t *set, char *err)
{
    CPU_ZERO(set);
    const char *s = list;
    for (;;) {
        const char *e = s;
        long lo = cpu_number(s, &e), hi = lo;
        if (lo >= 0 && *e == '-')
            hi = cpu_number(e + 1, &e);
        if (lo < 0 || hi < lo || (*e && *e != ','))
            return sw_fail(err, SW_EINVAL, "--cpus %s: not a list of CPUs such as 0, 2-3 or "
                                           "0,4-7 (each below %d)", list, CPU_SETSIZE);
        for (long c = lo; c <= hi; c++)
            CPU_SET((int)c, set);
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

/* The set LIST names, refused unless the process may use every CPU in it. */
static int wanted(const char *list, cpu_set_t *set, char *err)
{
    int rc = parse(list, set, err);
    if (rc)
        return rc;
    cpu_set_t may, extra;
    if (permitted(&may))
        return sw_fail(err, SW_EIO, "--cpus %s: cannot read which CPUs this process may use: %s",
                       list, strerror(errno));
    CPU_XOR(&extra, set, &may);
    CPU_AND(&extra, &extra, set); /* in the list, not allowed */
    if (CPU_COUNT(&extra)) {
        char no[128], yes[128];
        write_list(&extra, no, sizeof no);
        write_list(&may, yes, sizeof yes);
        return sw_fail(err, SW_EINVAL, "--cpus %s: this process may not use CPU %s (it may use "
                                       "%s)", list, no, yes);
    }
    return 0;
}

int sw_cpus_pin_thread(const char *list, char *err)
{
    cpu_set_t set;
    int rc = wanted(list, &set, err);
    if (rc)
        return rc;
    if ((rc = pthread_setaffinity_np(pthread_self(), sizeof set, &set)))
        return sw_fail(err, SW_EINVAL, "--cpus %s: %s", list, strerror(rc));
    return 0;
}

/* Every thread of the process, listed in /proc/self/task; a thread that ended meanwhile is
 * no error. A thread started while the list is read inherits from its creator, whose own
 * setting comes either before (it inherits the new set) or after (it is in the list). */
static int pin_tasks(const char *list, const cpu_set_t *set, char *err)
{
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return sw_fail(err, SW_EIO, "--cpus %s: cannot list this process's threads: %s", list,
                       strerror(errno));
    int rc = 0;
    for (struct dirent *e; !rc && (e = readdir(d));) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        pid_t tid = (pid_t)strtol(e->d_name, NULL, 10);
        if (sched_setaffinity(tid, sizeof *set, set) && errno != ESRCH)
            rc = sw_fail(err, SW_EINVAL, "--cpus %s: thread %d: %s", list, (int)tid,
                         strerror(errno));
    }
    closedir(d);
    return rc;
}

int sw_cpus_pin_process(const char *list, char *err)
{
    cpu_set_t set;
    int rc = wanted(list, &set, err);
    if (rc)
        return rc;
    /* The calling thread first, so that any thread it starts from now on inherits the set. */
    if (sched_setaffinity(0, sizeof set, &set))
        return sw_fail(err, SW_EINVAL, "--cpus %s: %s", list, strerror(errno));
    return pin_tasks(list, &set, err);
}
