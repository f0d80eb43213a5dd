/* What a launcher's environment (mpirun's, srun's, a StatefulSet's) says about this process,
 * for `syncwise launch`: its rank, the job's size, each rank's host and the job's name. */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "launch_env.h"
#include "syncwise/proto.h"

#define CMD "launch"

#define MAX_PROCESSES (1L << 20)
static const char *const size_vars[] = {"SYNCWISE_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE",
                                        "SLURM_NTASKS"};
static const char *const rank_vars[] = {"SYNCWISE_RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK",
                                        "PMIX_RANK", "SLURM_PROCID"};

/* The first of vars that is set (not empty), which alone counts, as a whole number in [lo, hi]
 * into *out (-1 when none is set): 0, or 2 having said it is none (-5 and abc were passed over
 * for the next variable, and an overflow became --wait-workers 9223372036854775806). */
static int env_number(const char *const *vars, size_t n, long lo, long hi, const char *what,
                      long *out)
{
    *out = -1;
    for (size_t i = 0; i < n; i++) {
        const char *v = getenv(vars[i]);
        if (!v || !*v)
            continue;
        char *end;
        errno = 0;
        long r = strtol(v, &end, 10);
        if (errno || *end || !isdigit((unsigned char)*v) || r < lo || r > hi)
            return sw_cli_error(CMD, "%s=%s is not %s in [%ld, %ld]", vars[i], v, what, lo, hi) +
                   1;
        *out = r;
        return 0;
    }
    return 0;
}

int sw__launch_env_size(long *size)
{
    return env_number(size_vars, sizeof size_vars / sizeof *size_vars, 1, MAX_PROCESSES,
                      "a whole number of processes", size);
}

/* How many processes the launcher started, or -1 (said why, if a variable was set). */
long sw__launch_size(void)
{
    long size;
    return sw__launch_env_size(&size) ? -1 : size;
}

/* This process's rank: the launcher's variable, else a StatefulSet's host name (name-N); -1
 * when nothing says, -2 when the variable is no rank (env_number said so). */
long sw__launch_rank(void)
{
    long r;
    if (env_number(rank_vars, sizeof rank_vars / sizeof *rank_vars, 0, MAX_PROCESSES - 1,
                   "a rank", &r))
        return -2;
    if (r >= 0)
        return r;
    char host[256];
    if (gethostname(host, sizeof host) != 0)
        return -1;
    char *dash = strrchr(host, '-');
    if (!dash || !dash[1])
        return -1;
    for (char *c = dash + 1; *c; c++)
        if (!isdigit((unsigned char)*c))
            return -1;
    return strtol(dash + 1, NULL, 10);
}

/* Item r of a comma-separated list into out; 0 on success. */
static int list_item(const char *list, long r, char *out, size_t cap)
{
    const char *at = list;
    for (long k = 0; k < r && at; k++)
        if ((at = strchr(at, ',')))
            at++;
    size_t len = at ? strcspn(at, ",") : 0;
    if (!len || len >= cap || strcspn(at, " \t\n") < len) /* no host name holds a blank */
        return -1;
    snprintf(out, cap, "%.*s", (int)len, at);
    return 0;
}

/* How many tasks Slurm put on each node, from SLURM_TASKS_PER_NODE ("2(x3),1": two on each of
 * three nodes, then one); the node count, or -1 when it does not say. */
static long slurm_tasks_per_node(long *tasks, long cap)
{
    const char *at = getenv("SLURM_TASKS_PER_NODE");
    long nodes = 0;
    while (at && *at) {
        char *end;
        long count = strtol(at, &end, 10), times = 1;
        if (end == at || count < 1)
            return -1;
        if (*end == '(' && (sscanf(end, "(x%ld)", &times) != 1 || times < 1 ||
                            !(end = strchr(end, ')'))))
            return -1;
        end += *end == ')';
        for (long k = 0; k < times && nodes < cap; k++)
            tasks[nodes++] = count;
        if (*end && *end != ',')
            return -1;
        at = *end ? end + 1 : end;
    }
    return nodes ? nodes : -1;
}

/* The node (its index in the node list) that runs Slurm task r: tasks fill the nodes in blocks
 * (Slurm's default), or go round them one at a time under SLURM_DISTRIBUTION=cyclic; without
 * SLURM_TASKS_PER_NODE one task per node. -1 for a layout this cannot tell (plane, arbitrary). */
static long slurm_node_of_task(long r)
{
    enum { MAX_NODES = 4096 };
    static long tasks[MAX_NODES];
    long nodes = slurm_tasks_per_node(tasks, MAX_NODES);
    if (nodes < 0)
        return getenv("SLURM_TASKS_PER_NODE") ? -1 : r;
    const char *d = getenv("SLURM_DISTRIBUTION");
    bool cyclic = d && !strncmp(d, "cyclic", 6);
    if (d && *d && !cyclic && strncmp(d, "block", 5) != 0)
        return -1;
    static long placed[MAX_NODES];
    memset(placed, 0, sizeof placed);
    for (long task = 0, node = 0, full = 0; full < nodes; node = (node + 1) % nodes) {
        if (placed[node] == tasks[node])
            continue;
        for (long k = 0; k < (cyclic ? 1 : tasks[node]); k++, task++) {
            if (task == r)
                return node;
            full += ++placed[node] == tasks[node];
        }
    }
    return -1;
}

/* Line k of scontrol's expansion of SLURM_JOB_NODELIST into out; 0 on success. */
static int slurm_node_name(long k, char *out, size_t cap)
{
    FILE *p = popen("scontrol show hostnames \"$SLURM_JOB_NODELIST\" 2>/dev/null", "r");
    int ok = 0;
    for (long i = 0; p && i <= k && (ok = fgets(out, (int)cap, p) != NULL); i++)
        ;
    if (p)
        pclose(p);
    out[ok ? strcspn(out, "\n") : 0] = '\0';
    return ok && *out ? 0 : -1;
}

/* Said when a host could not be found: why, as far as the variables tell. */
char sw__launch_host_hint[200];

static void hint(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void hint(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(sw__launch_host_hint, sizeof sw__launch_host_hint, fmt, ap);
    va_end(ap);
}

/* The ranks listen on IPv4 (tcp://0.0.0.0:PORT: not every host has IPv6), so a host given as
 * an IPv6 address could never be reached: refused (-1, with a hint), not passed on to a worker
 * that waits for it. rc passes through. */
static int endpoint_host(int rc, char *out)
{
    if (rc || !strchr(out, ':'))
        return rc;
    hint(" (%s is an IPv6 address, and launch's ranks listen on IPv4: give a host name or an "
         "IPv4 address)", out);
    return -1;
}

/* Rank r's host name into out, as --help says; 0 on success. */
static int host_of_rank(long r, char *out, size_t cap)
{
    const char *hosts = getenv("SYNCWISE_HOSTS");
    if (hosts && *hosts) {
        int rc = list_item(hosts, r, out, cap);
        if (rc)
            hint(" (SYNCWISE_HOSTS has no item %ld, counting from 0, or it holds a blank)", r);
        return rc;
    }
    if (getenv("SLURM_JOB_NODELIST")) {
        long node = slurm_node_of_task(r);
        if (node >= 0 && slurm_node_name(node, out, cap) == 0)
            return 0;
        const char *d = getenv("SLURM_DISTRIBUTION");
        if (node >= 0)
            hint(" ('scontrol show hostnames' did not expand SLURM_JOB_NODELIST: is scontrol "
                 "on PATH?)");
        else if (d && *d && strncmp(d, "cyclic", 6) && strncmp(d, "block", 5))
            hint(" (SLURM_DISTRIBUTION=%s: launch knows tasks laid out in blocks or cyclic only)",
                 d);
        else
            hint(" (SLURM_TASKS_PER_NODE=%s does not place rank %ld on a node)",
                 getenv("SLURM_TASKS_PER_NODE"), r);
    }
    const char *service = getenv("SYNCWISE_SERVICE");
    char host[256];
    if (service && gethostname(host, sizeof host) == 0 && strrchr(host, '-')) {
        *strrchr(host, '-') = '\0';
        return snprintf(out, cap, "%s-%ld.%s", host, r, service) < (int)cap ? 0 : -1;
    }
    if (!sw__launch_host_hint[0] && !service)
        hint(" (in a StatefulSet, SYNCWISE_SERVICE names its headless Service)");
    return -1;
}

int sw__launch_host_of_rank(long r, char *out, size_t cap)
{
    return endpoint_host(host_of_rank(r, out, cap), out);
}

/* The server's host name into out; 0 on success. */
int sw__launch_server_host(const char *given, char *out, size_t cap)
{
    const char *env = getenv("SYNCWISE_SERVER");
    if (given || (env && *env)) {
        snprintf(out, cap, "%s", given ? given : env);
        return endpoint_host(0, out);
    }
    return sw__launch_host_of_rank(0, out, cap);
}

/* The launcher's job, made a job name (letters, digits and ._:- kept, others become _), or ""
 * when no variable names one. */
const char *sw__launch_job(void)
{
    static const char *const vars[] = {"SYNCWISE_JOB", "SLURM_JOB_ID", "PMIX_NAMESPACE",
                                       "OMPI_MCA_ess_base_jobid"};
    static char job[SW_JOB_MAX + 1];
    for (size_t i = 0; i < sizeof vars / sizeof *vars && !job[0]; i++) {
        const char *v = getenv(vars[i]);
        size_t k = 0;
        for (; v && v[k] && k < SW_JOB_MAX; k++)
            job[k] = isalnum((unsigned char)v[k]) || strchr("._:-", v[k]) ? v[k] : '_';
        job[k] = '\0';
    }
    return job;
}
