/* `syncwise shard`: one server shard, holding a slice of the parameters of a sharded run
 * (syncwise/shard.h) under the engine of `syncwise server --shards`. */
#define _POSIX_C_SOURCE 200809L
#include <stddef.h>
#include <stdio.h>

#include "cli.h"
#include "opts.h"
#include "syncwise/err.h"
#include "syncwise/log.h"
#include "syncwise/shard.h"
#include "syncwise/transport.h"

#define CMD "shard"

typedef struct shard_opts {
    sw_shard_params p;
    const char *cpus;
    long max_frame;
    bool quiet, verbose;
} shard_opts;

#define AT(field) offsetof(shard_opts, field)
static const sw_opt table[] = {
    {SW_OPT_ROW(SW_OPT_STR, "bind", 0, AT(p.bind), 0, 0, "ENDPOINT",
                "where to listen (loopback unless told otherwise; port *\npicks a free one)")},
    {SW_OPT_ROW(SW_OPT_STR, "endpoint-file", 0, AT(p.endpoint_file), 0, 0, "FILE",
                SW_CLI_ENDPOINT_FILE_HELP)},
    {SW_OPT_ROW(SW_OPT_STR, "checkpoint", 0, AT(p.checkpoint), 0, 0, "FILE",
                "checkpoint the slice there when the server says (it\n"
                "does on its --checkpoint schedule); the one before is\n"
                "kept as FILE.prev (a FILE that is not empty is refused\n"
                "without --resume)")},
    {SW_OPT_ROW(SW_OPT_FLAG, "resume", 0, AT(p.resume), 0, 0, NULL,
                "start from the checkpoint and rejoin its run: every\n"
                "shard goes back to the newest checkpoint all hold\n"
                "(this one or the one before), and the run goes on\n"
                "(a shard killed before its first save starts afresh)")},
    {SW_OPT_ROW(SW_OPT_STR, "curve-key", 0, AT(p.curve_key), 0, 0, "FILE",
                "CURVE: the server's key pair (every shard shares it,\n"
                "and only the server's orders are taken); needs\n"
                "--curve-clients")},
    {SW_OPT_ROW(SW_OPT_STR, "curve-clients", 0, AT(p.curve_clients), 0, 0, "FILE",
                "the workers' public keys (the server's --curve-clients)")},
    {SW_OPT_ROW(SW_OPT_U32, "apply-threads", 0, AT(p.apply_threads), 1, SW_SHARD_THREADS_MAX,
                "N", "N threads share each apply of the slice, each on a\n"
                "part of at least " SW_SHARD_PART_MIN_TEXT " floats")},
    {SW_OPT_ROW(SW_OPT_F64, "server-timeout", 0, AT(p.server_timeout_s), 0, 1e9, "S",
                "give the run up when its server has been silent S\n"
                "seconds (it pings every 0.25 s; 0: never), and end,\n"
                "saying whether a resume can go on; resumed, counted\n"
                "from the start (a fresh shard waits for a run for\n"
                "ever); a shard that refused its run ends after 2 s\n"
                "of its silence")},
    {SW_OPT_ROW(SW_OPT_LONG, "max-frame", 0, AT(max_frame), 65536, 1L << 31, "BYTES",
                "read no frame larger, at least 65536 (default: the\n"
                "protocol's 2 GiB, or resumed, the run's largest);\n"
                "ZeroMQ drops a larger one before reading it. A run\n"
                "needing more is refused at INIT, saying how much")},
    SW_OPT_CPUS_ROW(AT(cpus)),
    SW_OPT_LOG_ROWS(AT(quiet), AT(verbose)),
    SW_OPT_END_ROW,
};
#undef AT

static const sw_cmd_opts command = {
    .cmd = CMD,
    .usage = "--bind ENDPOINT [OPTIONS]",
    .about = "Holds one slice of the parameters of a sharded run. Start the shards first, then\n"
             "`syncwise server --shards EP1,EP2,... --policy ...`: the server tells each shard\n"
             "its place in the run and its slice, and names the workers who may push and pull\n"
             "there; workers learn the shards when they join the server. The shard applies what\n"
             "the server's policy decides, so every shard holds the same version. It serves one\n"
             "run and ends with it.\n"
             "\n"
             "With --checkpoint on every shard and on the server, all shards checkpoint the same\n"
             "version. A shard that dies can be started again with the same --bind, --checkpoint\n"
             "and --resume within the server's --shard-wait: every shard goes back to the last\n"
             "checkpoint, the applies since are lost, the version counter goes on, and so does the\n"
             "run. A shard silent longer ends the run (the server says which); a server silent\n"
             "for --server-timeout ends the shard. One that dies before the run's start is saved\n"
             "on every shard ends the run instead: start the server, the shards (--resume) and\n"
             "the workers again, and the run starts again.\n"
             "\n"
             "Under CURVE, give every shard the server's --curve-key and --curve-clients: workers\n"
             "know the shards by the server's public key, and a shard takes orders only from a\n"
             "connection holding the server's key.",
    .tables = {table},
};

/* What a shard stopped in the middle of a run means to the run: a crash, which a checkpoint
 * lets it come back from. */
static void say_stopped_mid_run(const sw_shard_params *p, const sw_shard_result *r)
{
    char newest[48] = "none yet", back[320] = "a run without --checkpoint cannot take a shard "
                                              "back, so its server fails the run after its "
                                              "--shard-wait";
    if (r->saved != SW_SHARD_NONE)
        snprintf(newest, sizeof newest, "version %llu", (unsigned long long)r->saved);
    if (!r->server_heard) {
        sw_log(SW_LOG_WARN, "stopped before its run's server came: its checkpoint stays (start "
               "it again with --checkpoint FILE --resume)");
        return;
    }
    if (p->checkpoint)
        snprintf(back, sizeof back, "its server waits up to its --shard-wait for this shard to "
                 "come back (start it again with --resume: the run goes back to the newest "
                 "checkpoint every shard holds; this one's newest: %s), then fails the run",
                 newest);
    sw_log(SW_LOG_WARN, "stopped in the middle of a run, as a crash would stop it: %s; to stop "
           "a run, signal its server", back);
}

int sw_cli_shard(int argc, char **argv)
{
    shard_opts o = {.p = {.bind = "tcp://127.0.0.1:5600", .apply_threads = 1,
                          .server_timeout_s = 60}};
    int rc = sw_cli_parse(&command, argc, argv, &o, NULL);
    if (rc)
        return rc == 1 ? 0 : rc;
    sw_cli_set_verbosity(o.quiet, o.verbose);
    if (o.p.resume && !o.p.checkpoint)
        return sw_cli_error(CMD, "--resume needs --checkpoint FILE") + 1;
    if ((rc = sw_cli_endpoint_ok(CMD, "--bind", o.p.bind, true)))
        return rc;
    if ((rc = sw_cli_curve_pair(CMD, "--curve-key", o.p.curve_key, "--curve-clients",
                                o.p.curve_clients)))
        return rc;
    const char *names[] = {"--checkpoint", "--endpoint-file"};
    const char *outs[] = {o.p.checkpoint, o.p.endpoint_file};
    const char *inputs[] = {o.p.curve_key, o.p.curve_clients};
    if ((rc = sw_cli_outputs_apart(CMD, 2, names, outs, 2, inputs)) ||
        (rc = sw_cli_pin_cpus(CMD, o.cpus)))
        return rc;
    sw_shard_params p = o.p;
    p.max_frame = (uint64_t)o.max_frame;
    p.stop = sw_cli_catch_signals();
    sw_net_keep_freed_memory();
    sw_shard_result r;
    char err[SW_ERR_LEN];
    if (sw_shard_run(&p, &r, err))
        return sw_cli_error(CMD, "%s", err);
    printf("%s: version %llu, %llu applies, %llu pushes, %llu pulls, %llu refused messages, "
           "%llu checkpoints, %llu restores, %.1f MB in, %.1f MB out",
           r.done ? "run over" : "stopped", (unsigned long long)r.version,
           (unsigned long long)r.applies, (unsigned long long)r.pushes,
           (unsigned long long)r.pulls, (unsigned long long)r.refused,
           (unsigned long long)r.saves, (unsigned long long)r.restores, (double)r.bytes_in / 1e6,
           (double)r.bytes_out / 1e6);
    if (r.early) /* a late start, said apart from what was refused */
        printf(", %llu workers' messages before its slice came (asked again)",
               (unsigned long long)r.early);
    putchar('\n');
    if (r.failed[0]) /* EXIT STATUS: a run that failed */
        return sw_cli_error(CMD, "the run failed: %s", r.failed);
    if (r.in_run) /* a signal: the run lives on in its server, and cannot go on without us */
        say_stopped_mid_run(&p, &r);
    return 0;
}
