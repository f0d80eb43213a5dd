/* `syncwise worker`, `syncwise ctl` and `syncwise keygen`: the networked runtime's commands
 * beside the server's (server_cmd.c). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "opts.h"
#include "scenario.h"
#include "syncwise/clock.h"
#include "syncwise/curve.h"
#include "syncwise/engine.h"
#include "syncwise/err.h"
#include "syncwise/log.h"
#include "syncwise/net.h"
#include "syncwise/policy.h"
#include "syncwise/transport.h"

typedef struct worker_cli {
    sw_worker_params p;
    const char *cpus;
    long threads;
    bool quiet, verbose;
} worker_cli;

#define AT(field) offsetof(worker_cli, field)
static const sw_opt worker_table[] = {
    {SW_OPT_ROW(SW_OPT_STR, "connect", 0, AT(p.connect), 0, 0, "ENDPOINT", "the server")},
    {SW_OPT_ROW(SW_OPT_STR, "name", 0, AT(p.name), 0, 0, "NAME", "shown in the server's log")},
    {SW_OPT_ROW(SW_OPT_STR, "job", 0, AT(p.job), 0, 0, "NAME",
                "train only with a server of this --job (launch gives\n"
                "both its launcher's job): leave one that says another")},
    {SW_OPT_ROW(SW_OPT_U32, "get-model-frequency", 0, AT(p.get_model_frequency), 1, 1 << 20, "F",
                "pull every F steps, applying own gradients in between\n(dense models)")},
    {SW_OPT_ROW(SW_OPT_F64, "heartbeat", 0, AT(p.heartbeat_s), 0.01, 1e4, "S",
                "seconds between heartbeats")},
    {SW_OPT_ROW(SW_OPT_F64, "server-timeout", 0, AT(p.server_timeout_s), 0.1, 1e9, "S",
                "give up when the server is silent this long (a worker\n"
                "held at a barrier hears its heartbeats echoed and waits\n"
                "as long as they come back)")},
    {SW_OPT_ROW(SW_OPT_F64, "dead-link", 0, AT(p.dead_link_s), 0, 1e6, "S",
                "close a connection whose peer's host acknowledges\n"
                "nothing this long, and join again (a link dropped\n"
                "silently; TCP keepalive and user timeout; 0: the\n"
                "system's, about 15 min)")},
    {SW_OPT_ROW(SW_OPT_U64, "max-steps", 0, AT(p.max_steps), 0, 0, "N",
                "leave after N steps, each a push (one the policy\n"
                "dropped, and the batch recomputed, counts; 0: no limit)")},
    {SW_OPT_ROW(SW_OPT_MS, "delay-ms", 0, AT(p.delay_s), 0, 1e7, "MS",
                "each step's push waits this long (a straggler on purpose)")},
    {SW_OPT_ROW(SW_OPT_STR, "curve-key", 0, AT(p.curve_key), 0, 0, "FILE",
                "CURVE: this worker's key pair (syncwise keygen), with")},
    {SW_OPT_ROW(SW_OPT_STR, "curve-server", 0, AT(p.curve_server), 0, 0, "FILE",
                "the server's public key")},
    {SW_OPT_ROW(SW_OPT_LONG, "threads", 0, AT(threads), 0, 256, "N",
                "OpenBLAS threads (0: its own choice)")},
    SW_OPT_CPUS_ROW(AT(cpus)),
    SW_OPT_LOG_ROWS(AT(quiet), AT(verbose)),
    SW_OPT_END_ROW,
};
#undef AT

static const sw_cmd_opts worker_command = {
    .cmd = "worker",
    .usage = "--connect ENDPOINT [OPTIONS]",
    .about = "Joins a syncwise server, loads the data set it names, and computes gradients until\n"
             "the server ends the run. Rejoins by itself when the server restarts; leaves (says\n"
             "LEAVE) on SIGINT, SIGTERM or SIGHUP (a second signal, a second later, ends it\n"
             "at once).",
    .tables = {worker_table},
};

int sw_cli_worker(int argc, char **argv)
{
    worker_cli o = {.p = sw_worker_default_params()};
    int prc = sw_cli_parse(&worker_command, argc, argv, &o, NULL);
    if (prc)
        return prc == 1 ? 0 : prc;
    sw_cli_set_verbosity(o.quiet, o.verbose);
    if ((prc = sw_cli_curve_pair("worker", "--curve-key", o.p.curve_key, "--curve-server",
                                 o.p.curve_server)) ||
        (prc = sw_cli_endpoint_ok("worker", "--connect", o.p.connect, false)) ||
        (prc = sw_cli_job_ok("worker", o.p.job)) || (prc = sw_cli_pin_cpus("worker", o.cpus)))
        return prc;
    sw_cli_set_threads(o.threads); /* after --cpus, which holds OpenBLAS's own choice */
    sw_worker_params p = o.p;
    p.stop = sw_cli_catch_signals();
    sw_net_keep_freed_memory();
    char err[SW_ERR_LEN];
    sw_worker_result r;
    int rc = sw_worker_run(&p, &r, err);
    if (rc)
        return sw_cli_error("worker", "%s", err);
    sw_log(SW_LOG_INFO, "%llu steps, %llu recomputed, %llu joins%s", (unsigned long long)r.steps,
           (unsigned long long)r.drops, (unsigned long long)r.joins,
           r.done ? "; the run is over" : "");
    return 0;
}

typedef struct ctl_cli {
    const char *connect, *key, *server;
    double timeout_s;
} ctl_cli;

#define AT(field) offsetof(ctl_cli, field)
static const sw_opt ctl_table[] = {
    {SW_OPT_ROW(SW_OPT_STR, "connect", 0, AT(connect), 0, 0, "ENDPOINT", "the server")},
    {SW_OPT_ROW(SW_OPT_STR, "curve-key", 0, AT(key), 0, 0, "FILE",
                "CURVE: the operator's key pair, with")},
    {SW_OPT_ROW(SW_OPT_STR, "curve-server", 0, AT(server), 0, 0, "FILE",
                "the server's public key")},
    {SW_OPT_ROW(SW_OPT_F64, "timeout", 0, AT(timeout_s), 0.1, 86400, "SECONDS",
                "wait that long for the answer: a server just started\n"
                "may still be loading its data")},
    SW_OPT_END_ROW,
};
#undef AT

static const sw_cmd_opts ctl_command = {
    .cmd = "ctl",
    .usage = "[OPTIONS] status | policy SPEC",
    .about = "  status        live workers, version, policy, applies per second, refused\n"
             "                messages, whether the policy kept its promise so far; in a\n"
             "                sharded run each shard's range, chunks, version, bytes in\n"
             "                and out, when last heard, and the shards' skew\n"
             "  policy SPEC   switch the running server's policy at a safe point: an\n"
             "                operator's command. On the server's host it goes to the\n"
             "                server's private operator socket by itself (its user's\n"
             "                alone); from afar it needs an operator's CURVE key\n"
             "                (--curve-operators on the server), or --connect to the\n"
             "                endpoint the server's --ctl-bind chose\n"
             "Without --curve-key, a command to a server on this host (a loopback or own\n"
             "address) goes to its private operator socket, status too.",
    .tables = {ctl_table},
    .max_args = -1,
};

static bool is_socket(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISSOCK(st.st_mode);
}

/* A switch to a built-in policy is checked here, as --policy is, before any server is asked,
 * when no server could take it: its spec fails, as the command line's, with one worker slot
 * and with the most a server has (a limit that follows the slots, such as backup's k or a
 * barrier search's size, passes one of them; the server checks again with its own). A spec
 * naming a file is left to the server, whose file it is; a name this process does not know may
 * be a plugin the server loaded. */
static int spec_ok_here(const char *spec)
{
    char name[64], err[SW_ERR_LEN];
    snprintf(name, sizeof name, "%.*s", (int)strcspn(spec, ":"), spec);
    if (!sw_policy_find(name) || strstr(spec, "file="))
        return 0;
    static const uint32_t slots[] = {1, 1u << 16};
    for (size_t i = 0; i < sizeof slots / sizeof *slots; i++) {
        int rc = sw_engine_check_policy(spec, slots[i], err);
        if (!rc || sw_cli_scenario_status(rc) != 2)
            return 0;
    }
    return sw_cli_error("ctl", "policy %s: %s", spec, err) + 1;
}

int sw_cli_ctl(int argc, char **argv)
{
    ctl_cli o = {.connect = "tcp://127.0.0.1:5555", .timeout_s = 5};
    int i;
    int prc = sw_cli_parse(&ctl_command, argc, argv, &o, &i);
    if (prc)
        return prc == 1 ? 0 : prc;
    const char *connect = o.connect, *key = o.key, *server = o.server;
    if ((prc = sw_cli_curve_pair("ctl", "--curve-key", key, "--curve-server", server)) ||
        (prc = sw_cli_endpoint_ok("ctl", "--connect", connect, false)))
        return prc;
    char cmd[512] = "";
    int words = argc - i; /* status, or policy and one spec (quoted if it holds a space) */
    if (words == 1 && !strcmp(argv[i], "status"))
        snprintf(cmd, sizeof cmd, "status");
    else if (words == 2 && !strcmp(argv[i], "policy") &&
             snprintf(cmd, sizeof cmd, "policy %s", argv[i + 1]) >= (int)sizeof cmd)
        return sw_cli_error("ctl", "policy: a spec of %zu bytes is too long",
                            strlen(argv[i + 1])) + 1;
    if (!cmd[0])
        return sw_cli_error("ctl", "give 'status' or 'policy SPEC' (see --help)") + 1;
    if (cmd[0] == 'p' && (prc = spec_ok_here(argv[i + 1])))
        return prc;
    /* With no CURVE key to say who we are, a command goes to the server's private operator
     * socket when the server is on this host: an operator command needs it, and status is
     * answered there too (where a CURVE server's own endpoint would want a key). */
    char ops[256], err[SW_ERR_LEN], reply[8192];
    bool local = !key && sw_ctl_is_this_host(connect) &&
                 sw_ctl_endpoint(connect, ops, sizeof ops, err) == 0;
    /* A server still starting has made neither its endpoint nor its operator socket: once its
     * endpoint answers (status, answered by every server), the socket is there if it has one.
     * Both questions share the one --timeout: a server that never answers fails once. */
    double timeout_s = o.timeout_s;
    if (local && !is_socket(ops + 6) && cmd[0] == 'p') {
        double t0 = sw_clock_now_s();
        if (sw_ctl(connect, "status", timeout_s, NULL, NULL, reply, sizeof reply, err))
            return sw_cli_error("ctl", "%s", err);
        timeout_s -= sw_clock_now_s() - t0;
        timeout_s = timeout_s > 0.1 ? timeout_s : 0.1;
    }
    if (local && is_socket(ops + 6))
        connect = ops;
    if (sw_ctl(connect, cmd, timeout_s, key, server, reply, sizeof reply, err))
        return sw_cli_error("ctl", "%s", err);
    if (strncmp(reply, "error: ", 7) == 0) { /* refused: said as this command's error, whose */
        size_t len = strlen(reply + 7);
        return sw_cli_error("ctl", "the server refused it: %.*s",
                            (int)(len && reply[7 + len - 1] == '\n' ? len - 1 : len), reply + 7);
    }
    fputs(reply, stdout);
    return 0;
}

static const sw_opt keygen_table[] = {SW_OPT_END_ROW};

static const sw_cmd_opts keygen_command = {
    .cmd = "keygen",
    .usage = "NAME",
    .about = "Makes a CURVE key pair: NAME.key (public and secret, mode 0600) for the one who\n"
             "owns it, NAME.pub (public only) for the others. A server admits the workers whose\n"
             ".pub lines are in its --curve-clients file and the operators (who may switch its\n"
             "policy) whose lines are in its --curve-operators file.",
    .tables = {keygen_table},
    .max_args = 1,
};

int sw_cli_keygen(int argc, char **argv)
{
    int first;
    int prc = sw_cli_parse(&keygen_command, argc, argv, NULL, &first);
    if (prc)
        return prc == 1 ? 0 : prc;
    if (first == argc)
        return sw_cli_error("keygen", "give the NAME of the key pair (see --help)") + 1;
    const char *name = argv[first];
    char err[SW_ERR_LEN];
    if (sw_curve_keygen(name, err))
        return sw_cli_error("keygen", "%s", err);
    printf("wrote %s.key and %s.pub\n", name, name);
    return 0;
}
