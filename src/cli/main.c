/* The `syncwise` command: dispatch to one subcommand per file. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const sw_cli_cmd commands[] = {
    {"train", "train a model sequentially with SGD and save a checkpoint", sw_cli_train},
    {"eval", "report loss and accuracy of a checkpoint on a data set", sw_cli_eval},
    {"sim", "run one synchronization policy on a simulated cluster", sw_cli_sim},
    {"compare", "compare policies on the same simulated scenarios over many seeds", sw_cli_compare},
    {"rl", "learn a synchronization policy by deep Q-learning (train) and evaluate it (eval)",
     sw_cli_rl},
    {"data", "make sparse LIBSVM data: synthetic text-like (gen) or exported (export)",
     sw_cli_data},
    {"zipline", "find the next ElasticBSP barrier with the ZipLine family of searches",
     sw_cli_zipline},
    {"report", "CSV files and plots (gnuplot) from event logs and ZipLine traces", sw_cli_report},
    {"check", "check that event logs keep the promises of the policies that ran", sw_cli_check},
    {"server", "run the parameter server for worker processes over the network", sw_cli_server},
    {"shard", "hold a slice of the parameters for a sharded server (server --shards)",
     sw_cli_shard},
    {"worker", "train as a worker of a syncwise server", sw_cli_worker},
    {"ctl", "ask a running server for its status, or switch its policy", sw_cli_ctl},
    {"peer", "train a model with other peers and no server (decentralized)",
     sw_cli_peer},
    {"launch", "under mpirun, srun or a StatefulSet: rank 0 serves, 1..S shard (--servers), "
               "the rest work",
     sw_cli_launch},
    {"keygen", "make a CURVE key pair for an encrypted, authenticated server", sw_cli_keygen},
};
#define N_COMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *to)
{
    fprintf(to, "usage: syncwise COMMAND [OPTIONS]\n\n"
                "syncwise is a parameter server for distributed SGD whose point is the\n"
                "synchronization policy.\n\ncommands:\n");
    for (size_t i = 0; i < N_COMMANDS; i++)
        fprintf(to, "  %-8s %s\n", commands[i].name, commands[i].summary);
    fprintf(to, "\n'syncwise COMMAND --help' (or 'syncwise help COMMAND') describes a command's "
                "options;\n'syncwise --version' prints the version.\n");
}

/* The commands that name policies, for which SYNCWISE_PLUGINS is loaded (launch loads it for
 * the server's rank alone): the others (a worker, a shard...) run where a plugin's path, exported
 * to every process by a launcher, may name nothing. */
static bool names_policies(const char *command)
{
    static const char *const names[] = {"sim", "compare", "rl", "check", "server", "ctl", NULL};
    for (size_t i = 0; names[i]; i++)
        if (!strcmp(command, names[i]))
            return true;
    return false;
}

/* Whether the command was asked only to describe itself: then a plugin that fails to load must
 * not hide the help (which says how to name plugins). */
static bool asks_help(int argc, char **argv)
{
    for (int i = 2; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return true;
    return false;
}

static int run(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "help") == 0 && argc == 3) /* help COMMAND: as COMMAND --help */
        return run(3, (char *[]){argv[0], argv[2], "--help", NULL});
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("syncwise 0.1.0\n");
        return 0;
    }
    for (size_t i = 0; i < N_COMMANDS; i++) {
        if (strcmp(argv[1], commands[i].name) != 0)
            continue;
        if (names_policies(argv[1]) && sw_cli_load_plugins(asks_help(argc, argv)))
            return strcmp(argv[1], "check") == 0 ? 2 : 1; /* check's 1: a broken promise */
        return commands[i].run(argc - 1, argv + 1);
    }
    fprintf(stderr, "syncwise: unknown command '%s'\n\n", argv[1]);
    usage(stderr);
    return 2;
}

/* What a command printed must reach its reader: a table written to a full disk or a closed
 * stdout is work lost, not done (exit 1, as a file output's write error is). */
static int output_written(int rc, const char *cmd)
{
    errno = 0;
    if (fflush(stdout) == 0 && !ferror(stdout))
        return rc;
    fprintf(stderr, "syncwise: standard output could not be written%s%s%s\n",
            errno ? " (" : " (a full disk?", errno ? strerror(errno) : "", ")");
    if (cmd && strcmp(cmd, "check") == 0) /* its 1 is a broken promise: this judged nothing */
        return 2;
    return rc ? rc : 1;
}

int main(int argc, char **argv)
{
    return output_written(run(argc, argv), argc > 1 ? argv[1] : NULL);
}
