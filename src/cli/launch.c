/* `syncwise launch`: one command for every process of a launcher (mpirun, srun, a Kubernetes
 * StatefulSet): rank 0 runs the server, every other rank a worker connected to it.
 *
 * The rank comes from the launcher's environment; the server's host from --server,
 * SYNCWISE_SERVER, Slurm's node list, or the StatefulSet's naming. No cluster manager of our own.
 */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "opts.h"

#define CMD "launch"

static void examples(void)
{
    printf("examples:\n"
           "  mpirun -np 5 -x SYNCWISE_SERVER=node1 syncwise launch -- --policy ssp:s=3\n"
           "  srun -N 5 syncwise launch -- --policy dbw --target-acc 0.85\n"
           "  examples/kubernetes/statefulset.yaml, examples/slurm/train.sbatch\n");
}

typedef struct launch_opts {
    long port;
    const char *server;
} launch_opts;

static const sw_opt table[] = {
    {SW_OPT_ROW(SW_OPT_LONG, "port", 0, offsetof(launch_opts, port), 1, 65535, "P",
                "the server's port")},
    {SW_OPT_ROW(SW_OPT_STR, "server", 0, offsetof(launch_opts, server), 0, 0, "HOST",
                "the server's host"), .shown = "found as below"},
    SW_OPT_END_ROW,
};

static const sw_cmd_opts command = {
    .cmd = CMD,
    .usage = "[--port P] [--server HOST] [-- SERVER-OPTIONS...]",
    .about = "Run the same command in every process of a launcher: rank 0 becomes the server\n"
             "(bound to every interface on port P, with SERVER-OPTIONS), every other rank a\n"
             "worker connected to tcp://HOST:P.\n\n"
             "rank, from the first of: SYNCWISE_RANK, OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK,\n"
             "SLURM_PROCID, or the ordinal ending a StatefulSet pod's host name (syncwise-3)\n"
             "server host, from the first of: --server, SYNCWISE_SERVER, the first node of\n"
             "SLURM_JOB_NODELIST (through scontrol), or POD-0.SYNCWISE_SERVICE in a StatefulSet\n"
             "process count, from the first of: SYNCWISE_SIZE, OMPI_COMM_WORLD_SIZE, PMI_SIZE,\n"
             "SLURM_NTASKS; when known, the server waits for all the others to join before it\n"
             "starts (--wait-workers COUNT-1, unless SERVER-OPTIONS say otherwise)",
    .tables = {table},
    .epilog = examples,
    .max_args = -1,
};

/* The first of these variables that holds a number >= 0, or -1. */
static long first_number(const char *const *vars, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const char *v = getenv(vars[i]);
        char *end;
        if (v && *v) {
            long r = strtol(v, &end, 10);
            if (!*end && r >= 0)
                return r;
        }
    }
    return -1;
}

/* How many processes the launcher started, or -1. */
static long size_from_env(void)
{
    const char *vars[] = {"SYNCWISE_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"};
    return first_number(vars, sizeof vars / sizeof vars[0]);
}

static long rank_from_env(void)
{
    const char *vars[] = {"SYNCWISE_RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK",
                          "SLURM_PROCID"};
    long r = first_number(vars, sizeof vars / sizeof vars[0]);
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

/* The server's host name into out; 0 on success. */
static int server_host(const char *given, char *out, size_t cap)
{
    const char *env = getenv("SYNCWISE_SERVER");
    if (given || (env && *env)) {
        snprintf(out, cap, "%s", given ? given : env);
        return 0;
    }
    if (getenv("SLURM_JOB_NODELIST")) {
        FILE *p = popen("scontrol show hostnames \"$SLURM_JOB_NODELIST\" 2>/dev/null", "r");
        int ok = p && fgets(out, (int)cap, p);
        if (p)
            pclose(p);
        if (ok) {
            out[strcspn(out, "\n")] = '\0';
            return 0;
        }
    }
    const char *service = getenv("SYNCWISE_SERVICE");
    char host[256];
    if (service && gethostname(host, sizeof host) == 0 && strrchr(host, '-')) {
        *strrchr(host, '-') = '\0';
        return snprintf(out, cap, "%s-0.%s", host, service) < (int)cap ? 0 : -1;
    }
    return -1;
}

int sw_cli_launch(int argc, char **argv)
{
    launch_opts o = {.port = 5555};
    int rest;
    int prc = sw_cli_parse(&command, argc, argv, &o, &rest);
    if (prc)
        return prc == 1 ? 0 : prc;
    if (rest < argc && strcmp(argv[rest - 1], "--") != 0)
        return sw_cli_error(CMD, "unexpected argument '%s': the server's options follow '--' "
                                 "(see --help)",
                            argv[rest]) + 1;
    long port = o.port;
    const char *server = o.server;
    long rank = rank_from_env();
    if (rank < 0)
        return sw_cli_error(CMD, "cannot tell this process's rank: set SYNCWISE_RANK, or run "
                                 "under mpirun, srun or a StatefulSet (see --help)");
    char endpoint[300];
    if (rank == 0) {
        /* Other machines must reach the server: bind every interface, as told. */
        snprintf(endpoint, sizeof endpoint, "tcp://0.0.0.0:%ld", port);
        char *sargv[256] = {"server", "--bind", endpoint};
        int n = 3;
        char wait[24];
        bool told = false;
        for (int k = rest; k < argc; k++)
            told |= !strncmp(argv[k], "--wait-workers", 14);
        long size = size_from_env();
        if (size > 1 && !told) { /* the run starts when every other process has joined */
            snprintf(wait, sizeof wait, "%ld", size - 1);
            sargv[n++] = "--wait-workers";
            sargv[n++] = wait;
        }
        for (int k = rest; k < argc && n < 255; k++)
            sargv[n++] = argv[k];
        return sw_cli_server(n, sargv);
    }
    char host[256];
    if (server_host(server, host, sizeof host) != 0)
        return sw_cli_error(CMD, "rank %ld cannot find the server: give --server HOST or set "
                                 "SYNCWISE_SERVER",
                            rank);
    snprintf(endpoint, sizeof endpoint, "tcp://%s:%ld", host, port);
    char name[32];
    snprintf(name, sizeof name, "rank-%ld", rank);
    char *wargv[] = {"worker", "--connect", endpoint, "--name", name, "--server-timeout", "120"};
    return sw_cli_worker(7, wargv);
}
