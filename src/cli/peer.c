/* `syncwise peer`: the decentralized mode, no server (syncwise/peer.h). */
#define _POSIX_C_SOURCE 200809L
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "opts.h"
#include "scenario.h"
#include "syncwise/err.h"
#include "syncwise/log.h"
#include "syncwise/peer.h"
#include "syncwise/transport.h"

#define CMD "peer"

typedef struct peer_opts {
    sw_peer_params p;
    const char *cpus;
    bool quiet, verbose;
} peer_opts;

#define AT(field) offsetof(peer_opts, field)
static const sw_opt table[] = {
    {SW_OPT_ROW(SW_OPT_STR, "bind", 0, AT(p.bind), 0, 0, "ENDPOINT",
                "where to listen (port *: a free one)")},
    {SW_OPT_ROW(SW_OPT_STR, "endpoint-file", 0, AT(p.endpoint_file), 0, 0, "FILE",
                SW_CLI_ENDPOINT_FILE_HELP)},
    {SW_OPT_ROW(SW_OPT_STR, "join", 0, AT(p.join), 0, 0, "ENDPOINT",
                "a member of the group to join (its answer is awaited\n5 x --timeout, no longer "
                "than --max-time)")},
    {SW_OPT_ROW(SW_OPT_STR, "model", 0, AT(p.model), 0, 0, "SPEC",
                "svm:lambda=1e-4, logistic:lambda=0, or a dense model\n"
                "(mlp:h=1,u=256, ...: its changes are every weight)")},
    {SW_OPT_ROW(SW_OPT_STR, "data", 0, AT(p.data), 0, 0, "SPEC",
                "sparse rows for svm and logistic (libsvm:train=PATH,...\n"
                "or sparse:n=,dim=,...); dense examples otherwise\n(fashion-mnist, ...)")},
    {SW_OPT_ROW(SW_OPT_U32, "batch", 0, AT(p.batch), 1, 1 << 20, "N", "mini-batch")},
    {SW_OPT_ROW(SW_OPT_F32, "lr", 0, AT(p.lr), 1e-9, 100, "X", "learning rate")},
    {SW_OPT_ROW(SW_OPT_U64, "seed", 0, AT(p.seed), 0, 0, "N",
                "seed (all peers must agree on data and seed)")},
    {SW_OPT_ROW(SW_OPT_U32, "round", 0, AT(p.round_steps), 1, 1 << 24, "N",
                "steps between broadcasts and loss checks")},
    {SW_OPT_ROW(SW_OPT_F64, "timeout", 0, AT(p.timeout_s), 0.01, 3600, "S",
                "drop a member silent this long")},
    {SW_OPT_ROW(SW_OPT_U32, "wait-peers", 0, AT(p.wait_peers), 0, 1 << 16, "N",
                "train only once N live members are in (give it to the\n"
                "first peer, or the group may finish before the others\n"
                "join); a group not whole by --max-time fails")},
    {SW_OPT_ROW(SW_OPT_STR, "curve-key", 0, AT(p.curve_key), 0, 0, "FILE",
                "CURVE: the group's key pair (syncwise keygen), one\n"
                "file every member holds: only its holders get in, and\n"
                "every link is encrypted (default: plain TCP)")},
    SW_OPT_HEADING("stopping (the first member in endpoint order judges)"),
    {SW_OPT_ROW(SW_OPT_F64, "target-loss", 0, AT(p.target_loss), 0, 1e9, "X", "held-out loss")},
    {SW_OPT_ROW(SW_OPT_U32, "patience", 0, AT(p.patience), 0, 1 << 30, "N",
                "rounds without improvement (0: no such stop)")},
    {SW_OPT_ROW(SW_OPT_F64, "max-time", 0, AT(p.max_time_s), 0, 1e9, "S",
                "seconds (the judge's ends every member's run,\nanother member's its own part; "
                "0: no limit)")},
    SW_OPT_HEADING("other"),
    {SW_OPT_ROW(SW_OPT_MS, "delay-ms", 0, AT(p.delay_s), 0, 1e6, "MS",
                "injected slowness per step")},
    {SW_OPT_ROW(SW_OPT_STR, "out", 0, AT(p.out), 0, 0, "FILE",
                "the judge writes its best weights there, one per line\n"
                "(a linear model's: the features' weights, then the bias);\n"
                "given to a member that did not judge, nothing is written")},
    SW_OPT_CPUS_ROW(AT(cpus)),
    SW_OPT_LOG_ROWS(AT(quiet), AT(verbose)),
    SW_OPT_END_ROW,
};
#undef AT

static const sw_cmd_opts command = {
    .cmd = CMD,
    .usage = "[--join ENDPOINT] [OPTIONS]",
    .about = "Trains a model with other peers and no server. Each peer keeps all the weights and\n"
             "owns a slice of them; it sends each owner the changes to its slice and broadcasts\n"
             "the changes to its own every round. Start the first peer without --join (it starts\n"
             "the weights); others join through any member and take its copy. Members silent for\n"
             "--timeout seconds are dropped. The first member (in endpoint order) computes the\n"
             "held-out loss each round and stops everyone at --target-loss or after --patience\n"
             "rounds without improvement.",
    .tables = {table},
    .epilog = sw_cli_print_data_and_models,
};

int sw_cli_peer(int argc, char **argv)
{
    peer_opts o = {.p = sw_peer_default_params()};
    int rc = sw_cli_parse(&command, argc, argv, &o, NULL);
    if (rc)
        return rc == 1 ? 0 : rc;
    sw_cli_set_verbosity(o.quiet, o.verbose);
    const char *names[] = {"--out", "--endpoint-file"}, *outs[] = {o.p.out, o.p.endpoint_file};
    if ((rc = sw_cli_outputs_apart(CMD, 2, names, outs, 1, &o.p.data)) ||
        (rc = sw_cli_endpoint_ok(CMD, "--bind", o.p.bind, true)) ||
        (rc = sw_cli_endpoint_ok(CMD, "--join", o.p.join, false)) ||
        (rc = sw_cli_pin_cpus(CMD, o.cpus)))
        return rc;
    sw_peer_params p = o.p;
    p.stop = sw_cli_catch_signals();
    sw_net_keep_freed_memory();
    sw_peer_result r;
    char err[SW_ERR_LEN];
    if ((rc = sw_peer_run(&p, &r, err))) /* 2: a spec or endpoint that is not valid */
        return sw_cli_error(CMD, "%s", err) * sw_cli_load_status(rc);
    if (p.out && !r.loss_peer) /* not silently unused */
        sw_log(SW_LOG_WARN, "%s not written: another member judged at the end (the first in "
               "endpoint order), and writes the best weights to its own --out", p.out);
    printf("%s after %.1f s: %llu steps, %llu rounds, %u members at the end, %llu dropped, "
           "%.1f MB sent",
           r.reached ? "target loss reached" : "stopped", r.elapsed_s, (unsigned long long)r.steps,
           (unsigned long long)r.rounds, r.members, (unsigned long long)r.dropped_peers,
           (double)r.bytes_sent / 1e6);
    if (r.loss_peer)
        printf("; best held-out loss %.4f", r.best_loss);
    if (p.join)
        printf("; joined with weights at loss %.4f", r.join_loss);
    if (r.refused)
        printf("; %llu messages ignored (malformed or from non-members)",
               (unsigned long long)r.refused);
    if (r.refused_keys)
        printf("; %llu connections refused (CURVE: unknown keys, failed handshakes)",
               (unsigned long long)r.refused_keys);
    printf("\n");
    return 0;
}
