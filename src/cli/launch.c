/* `syncwise launch`: one command for every process of a launcher (mpirun, srun, a Kubernetes
 * StatefulSet): rank 0 runs the server, ranks 1..S the shards of a sharded run (--servers S),
 * every other rank a worker connected to the server.
 *
 * The rank, the job's size, each rank's host and the job come from the launcher's environment
 * (launch_env.h). No cluster manager of our own.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "launch_env.h"
#include "opts.h"
#include "syncwise/proto.h"
#include "syncwise/shard.h"

#define CMD "launch"

static void examples(void)
{
    printf("examples:\n"
           "  mpirun -np 5 -x SYNCWISE_SERVER=node1 syncwise launch -- --policy ssp:s=3\n"
           "  srun -N 5 syncwise launch -- --policy dbw --target-acc 0.85\n"
           "  srun -N 7 syncwise launch --servers 2 -- --policy ssp:s=3   # 2 shards, 4 workers\n"
           "  examples/kubernetes/statefulset.yaml, examples/slurm/train.sbatch\n");
}

typedef struct launch_opts {
    long port, servers;
    const char *server, *shard_state, *curve, *shard_max_frame, *shard_apply_threads;
    bool dry_run;
} launch_opts;

static const sw_opt table[] = {
    {SW_OPT_ROW(SW_OPT_LONG, "port", 0, offsetof(launch_opts, port), 1, 65535, "P",
                "the server's port; shard r listens on P + r")},
    {SW_OPT_ROW(SW_OPT_LONG, "servers", 0, offsetof(launch_opts, servers), 0, SW_SHARDS_MAX, "S",
                "ranks 1..S run the shards of a sharded run (0: none)")},
    {SW_OPT_ROW(SW_OPT_STR, "shard-state", 0, offsetof(launch_opts, shard_state), 0, 0, "DIR",
                "rank r checkpoints to DIR/shard-r.ckpt (the server and\n"
                "ctl status number it shard r-1, from 0) and the server\n"
                "its record to DIR/server.ckpt (unless given --checkpoint);\n"
                "each resumes from its file when it is there (a restarted\n"
                "rank rejoins). DIR is made if missing")},
    {SW_OPT_ROW(SW_OPT_STR, "shard-max-frame", 0, offsetof(launch_opts, shard_max_frame), 0, 0,
                "BYTES", "each shard's --max-frame: it drops a larger frame\nunread")},
    {SW_OPT_ROW(SW_OPT_STR, "shard-apply-threads", 0, offsetof(launch_opts, shard_apply_threads),
                0, 0, "N", "each shard's --apply-threads: N threads share each\napply of its slice")},
    {SW_OPT_ROW(SW_OPT_STR, "server", 0, offsetof(launch_opts, server), 0, 0, "HOST",
                "the server's host"),
     .shown = "found as below"},
    {SW_OPT_ROW(SW_OPT_STR, "curve", 0, offsetof(launch_opts, curve), 0, 0, "DIR",
                "encrypt and authenticate every link with CURVE, the keys\n"
                "in DIR (a shared or mounted directory; see below)")},
    {SW_OPT_ROW(SW_OPT_FLAG, "dry-run", 'n', offsetof(launch_opts, dry_run), 0, 0, NULL,
                "print the command this rank would run, and stop")},
    SW_OPT_END_ROW,
};

static const sw_cmd_opts command = {
    .cmd = CMD,
    .usage = "[--port P] [--servers S] [--server HOST] [...] [-- SERVER-OPTIONS...]",
    .about = "Run the same command in every process of a launcher: rank 0 becomes the server\n"
             "(bound to every interface on port P, with SERVER-OPTIONS); with --servers S, ranks\n"
             "1..S become its shards (rank r bound to every interface on port P + r, the server\n"
             "given --shards with their hosts); every other rank a worker connected to\n"
             "tcp://HOST:P. SERVER-OPTIONS may not say --bind (give --port), nor --shards with\n"
             "--servers: launch says them.\n\n"
             "rank, from the first of: SYNCWISE_RANK, OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK,\n"
             "SLURM_PROCID, or the ordinal ending a StatefulSet pod's host name (syncwise-3)\n"
             "rank r's host, from the first of: item r of SYNCWISE_HOSTS (comma-separated),\n"
             "under Slurm the node of task r in SLURM_JOB_NODELIST (through scontrol; tasks laid\n"
             "out by SLURM_TASKS_PER_NODE, in blocks unless SLURM_DISTRIBUTION is cyclic), or\n"
             "POD-r.SYNCWISE_SERVICE in a StatefulSet; the server's (rank 0) may also come from\n"
             "--server or SYNCWISE_SERVER\n"
             "process count, from the first of: SYNCWISE_SIZE, OMPI_COMM_WORLD_SIZE, PMI_SIZE,\n"
             "SLURM_NTASKS; when known, the server waits for all the workers to join before it\n"
             "starts (--wait-workers COUNT-1-S, unless SERVER-OPTIONS say otherwise)\n"
             "job, from the first of: SYNCWISE_JOB, SLURM_JOB_ID, PMIX_NAMESPACE,\n"
             "OMPI_MCA_ess_base_jobid (other characters than letters, digits and ._:- become _);\n"
             "given to the server and every worker as --job, so that a worker never trains\n"
             "another job's run whose server holds the same port on the same node\n"
             "keys, with --curve DIR: server.key and clients for the server and its shards,\n"
             "server.pub and rank-R.key (else worker.key) for worker rank R; made once with\n"
             "syncwise keygen DIR/server, syncwise keygen DIR/worker, cp DIR/worker.pub\n"
             "DIR/clients",
    .tables = {table},
    .epilog = examples,
    .max_args = -1,
    .args_verbatim = true,
};

/* --job and the launcher's job added to argv, when one is set: the server and every worker of
 * a job are given the same. */
static void add_job(char **argv, int *n)
{
    const char *job = sw__launch_job();
    if (job[0]) {
        argv[(*n)++] = "--job";
        argv[(*n)++] = (char *)job;
    }
}

/* --shards for ranks 1..S into out; 0 on success, else the rank whose host is unknown. */
static long shard_list(long servers, long port, char *out, size_t cap)
{
    size_t len = 0;
    for (long r = 1; r <= servers; r++) {
        char host[256];
        if (sw__launch_host_of_rank(r, host, sizeof host) != 0)
            return r;
        int n = snprintf(out + len, cap - len, "%stcp://%s:%ld", r > 1 ? "," : "", host,
                         port + r);
        if (n < 0 || (size_t)n >= cap - len)
            return r;
        len += (size_t)n;
    }
    return 0;
}

/* The key file DIR/name (--curve DIR) into out: 0 when it can be read. */
static int key_path(const char *dir, const char *name, char *out, size_t cap)
{
    return snprintf(out, cap, "%s/%s", dir, name) < (int)cap && access(out, R_OK) == 0 ? 0 : -1;
}

/* key_path, or an error saying which file is missing. */
static int curve_file(const char *dir, const char *name, char *out, size_t cap)
{
    if (key_path(dir, name, out, cap) == 0)
        return 0;
    return sw_cli_error(CMD, "--curve %s: cannot read %s/%s (see --help for the keys it holds)",
                        dir, dir, name);
}

/* The server's and the shards' CURVE options (--curve DIR) appended to argv at *n. */
static int curve_server_args(const launch_opts *o, char **argv, int *n)
{
    static char key[4096], clients[4096];
    if (!o->curve)
        return 0;
    if (curve_file(o->curve, "server.key", key, sizeof key) ||
        curve_file(o->curve, "clients", clients, sizeof clients))
        return 1;
    argv[(*n)++] = "--curve-key";
    argv[(*n)++] = key;
    argv[(*n)++] = "--curve-clients";
    argv[(*n)++] = clients;
    return 0;
}

/* Runs this rank's role, or with --dry-run prints the command it would be. */
static int run_role(const launch_opts *o, int (*role)(int, char **), int argc, char **argv)
{
    if (!o->dry_run)
        return role(argc, argv);
    printf("syncwise");
    for (int k = 0; k < argc; k++)
        printf(" %s", argv[k]);
    putchar('\n');
    return 0;
}

/* Whether the server options after `--` (argv[rest..]) give `opt`, alone or as opt=VALUE. */
static bool given(int argc, char **argv, int rest, const char *opt)
{
    size_t len = strlen(opt);
    for (int k = rest; k < argc; k++)
        if (!strncmp(argv[k], opt, len) && (argv[k][len] == '\0' || argv[k][len] == '='))
            return true;
    return false;
}

/* --shard-state DIR's file `name` into path (cap bytes), DIR made if missing (unless this is
 * a dry run); 1 (said) when it cannot be. */
static int state_file(const launch_opts *o, const char *name, char *path, size_t cap)
{
    if (!o->dry_run && mkdir(o->shard_state, 0777) && errno != EEXIST)
        return sw_cli_error(CMD, "--shard-state %s: cannot make it: %s", o->shard_state,
                            strerror(errno));
    if (snprintf(path, cap, "%s/%s", o->shard_state, name) >= (int)cap)
        return sw_cli_error(CMD, "--shard-state %s: too long a path", o->shard_state);
    return 0;
}

/* With --shard-state and shards, the server's record of the checkpoint every shard holds goes
 * there too (unless the options name one), so that the shards save and a restarted rank 0
 * resumes from it: appended to argv at *n. */
static int server_state_args(const launch_opts *o, int argc, char **argv, int rest,
                             char **sargv, int *n)
{
    static char path[4096];
    if (!o->shard_state || o->servers == 0 || given(argc, argv, rest, "--checkpoint"))
        return 0;
    if (state_file(o, "server.ckpt", path, sizeof path))
        return 1;
    sargv[(*n)++] = "--checkpoint";
    sargv[(*n)++] = path;
    if (access(path, F_OK) == 0)
        sargv[(*n)++] = "--resume";
    return 0;
}

/* Rank 0: the server, with --shards and --wait-workers added unless the options say. */
static int run_server(const launch_opts *o, int argc, char **argv, int rest)
{
    static char endpoint[64], shards[SW_SHARDS_MAX * 280], wait[24];
    /* Other machines must reach the server: bind every interface, as told. */
    snprintf(endpoint, sizeof endpoint, "tcp://0.0.0.0:%ld", o->port);
    char *sargv[256] = {"server", "--bind", endpoint};
    int n = 3;
    bool told = given(argc, argv, rest, "--wait-workers");
    if (o->servers > 0) {
        long bad = shard_list(o->servers, o->port, shards, sizeof shards);
        if (bad)
            return sw_cli_error(CMD, "cannot find the host of rank %ld, a shard%s: set "
                                     "SYNCWISE_HOSTS (see --help)",
                                bad, sw__launch_host_hint);
        sargv[n++] = "--shards";
        sargv[n++] = shards;
    }
    if (curve_server_args(o, sargv, &n) || server_state_args(o, argc, argv, rest, sargv, &n))
        return 1;
    long size = sw__launch_size();
    if (size > 1 + o->servers && !told) { /* the run starts when every worker has joined */
        snprintf(wait, sizeof wait, "%ld", size - 1 - o->servers);
        sargv[n++] = "--wait-workers";
        sargv[n++] = wait;
    }
    add_job(sargv, &n);
    for (int k = rest; k < argc && n < 255; k++)
        sargv[n++] = argv[k];
    if (!o->dry_run && sw_cli_load_plugins(false)) /* the one rank whose policy may be one */
        return 1;
    return run_role(o, sw_cli_server, n, sargv);
}

/* Ranks 1..S: a shard on port P + r, every interface; with --shard-state, checkpointed there,
 * and resumed when a checkpoint of an earlier life is there. */
static int run_shard(const launch_opts *o, long rank)
{
    char endpoint[64], path[4096], prev[4112];
    snprintf(endpoint, sizeof endpoint, "tcp://0.0.0.0:%ld", o->port + rank);
    char *argv[16] = {"shard", "--bind", endpoint};
    int n = 3;
    if (curve_server_args(o, argv, &n))
        return 1;
    if (o->shard_max_frame) { /* checked where the shard reads it */
        argv[n++] = "--max-frame";
        argv[n++] = (char *)o->shard_max_frame;
    }
    if (o->shard_apply_threads) { /* the same */
        argv[n++] = "--apply-threads";
        argv[n++] = (char *)o->shard_apply_threads;
    }
    if (o->shard_state) {
        char name[48];
        snprintf(name, sizeof name, "shard-%ld.ckpt", rank);
        if (state_file(o, name, path, sizeof path))
            return 1;
        snprintf(prev, sizeof prev, "%s.prev", path);
        argv[n++] = "--checkpoint";
        argv[n++] = path;
        if (access(path, F_OK) == 0 || access(prev, F_OK) == 0)
            argv[n++] = "--resume";
    }
    return run_role(o, sw_cli_shard, n, argv);
}

/* Every other rank: a worker connected to the server's port, named after its rank; with
 * --curve, under its own key (rank-R.key) or the workers' shared one. */
static int run_worker(const launch_opts *o, long rank)
{
    char endpoint[300], host[256], name[32];
    if (sw__launch_server_host(o->server, host, sizeof host) != 0)
        return sw_cli_error(CMD, "rank %ld cannot find the server%s: give --server HOST or set "
                                 "SYNCWISE_SERVER",
                            rank, sw__launch_host_hint);
    snprintf(endpoint, sizeof endpoint, "tcp://%s:%ld", host, o->port);
    snprintf(name, sizeof name, "rank-%ld", rank);
    char *argv[13] = {"worker", "--connect", endpoint, "--name", name, "--server-timeout", "120"};
    int n = 7;
    add_job(argv, &n);
    if (o->curve) {
        static char key[4096], pub[4096], own[48];
        snprintf(own, sizeof own, "%s.key", name);
        if (curve_file(o->curve, "server.pub", pub, sizeof pub) ||
            (key_path(o->curve, own, key, sizeof key) &&
             curve_file(o->curve, "worker.key", key, sizeof key)))
            return 1;
        argv[n++] = "--curve-key";
        argv[n++] = key;
        argv[n++] = "--curve-server";
        argv[n++] = pub;
    }
    return run_role(o, sw_cli_worker, n, argv);
}

/* The shards' options, said wrong before any rank starts: on their own they would mean nothing
 * (no --servers), a shard would refuse them after its rank started, or no rank is left for a
 * worker. 0, or the exit status. */
static int shard_options_ok(const launch_opts *o)
{
    long v, size = sw__launch_size();
    if (!o->servers && (o->shard_state || o->shard_max_frame || o->shard_apply_threads))
        return sw_cli_error(CMD, "--shard-state, --shard-max-frame and --shard-apply-threads are "
                                 "for a sharded run: give --servers S too") + 1;
    if (o->shard_max_frame && !sw_cli_long(CMD, "--shard-max-frame", o->shard_max_frame, 65536,
                                           1L << 31, &v))
        return 2;
    if (o->shard_apply_threads && !sw_cli_long(CMD, "--shard-apply-threads",
                                               o->shard_apply_threads, 1, SW_SHARD_THREADS_MAX,
                                               &v))
        return 2;
    if (o->servers > 0 && size >= 0 && size < o->servers + 2)
        return sw_cli_error(CMD, "--servers %ld needs at least %ld processes (the server, %ld "
                                 "shard%s and a worker); this job has %ld",
                            o->servers, o->servers + 2, o->servers, o->servers > 1 ? "s" : "",
                            size) + 1;
    return 0;
}

/* What launch itself gives the server, refused among the SERVER-OPTIONS, in every rank alike:
 * the server would take the last of two, and then the workers' or the shards' ranks would wait
 * for a server elsewhere, or serve none, never ending the job. 0, or the exit status. */
static int server_options_ok(const launch_opts *o, int argc, char **argv, int rest)
{
    if (given(argc, argv, rest, "--bind"))
        return sw_cli_error(CMD, "--bind among the server's options: launch binds rank 0 on "
                                 "every interface at --port P, where the workers look for it; "
                                 "give --port instead") + 1;
    if (o->server && (strpbrk(o->server, " \t/") || strstr(o->server, "://")))
        return sw_cli_error(CMD, "--server '%s': the server's host name or address alone (the "
                                 "endpoint is tcp://HOST:--port)", o->server) + 1;
    if (given(argc, argv, rest, "--job"))
        return sw_cli_error(CMD, "--job among the server's options: launch gives the server and "
                                 "every worker the launcher's job; set SYNCWISE_JOB to name "
                                 "another") + 1;
    if (o->servers > 0 && !o->shard_state && given(argc, argv, rest, "--checkpoint"))
        return sw_cli_error(CMD, "--checkpoint among the server's options with --servers %ld: "
                                 "the shards must checkpoint too, or the server refuses to "
                                 "start; give --shard-state DIR (each shard's file goes there)",
                            o->servers) + 1;
    if (o->servers > 0 && given(argc, argv, rest, "--shards"))
        return sw_cli_error(CMD, "--shards among the server's options with --servers %ld: "
                                 "ranks 1..%ld are the shards, and launch names them; give one "
                                 "or the other",
                            o->servers, o->servers) + 1;
    return 0;
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
    long rank = sw__launch_rank(), size;
    if (rank == -2 || sw__launch_env_size(&size))
        return 2; /* said */
    int bad = shard_options_ok(&o);
    if (!bad)
        bad = server_options_ok(&o, argc, argv, rest);
    if (bad)
        return bad;
    if (rank < 0)
        return sw_cli_error(CMD, "cannot tell this process's rank: set SYNCWISE_RANK, or run "
                                 "under mpirun, srun or a StatefulSet (see --help)");
    if (size > 0 && rank >= size)
        return sw_cli_error(CMD, "rank %ld of a job of %ld processes (ranks 0..%ld): the rank "
                                 "and the size come from different launchers' variables?",
                            rank, size, size - 1);
    if (o.port + o.servers > 65535)
        return sw_cli_error(CMD, "--port %ld leaves no port for %ld shards", o.port, o.servers) +
               1;
    if (rank == 0)
        return run_server(&o, argc, argv, rest);
    if (rank <= o.servers)
        return run_shard(&o, rank);
    return run_worker(&o, rank);
}
