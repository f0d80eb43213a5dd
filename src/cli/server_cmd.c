/* `syncwise server`: the networked runtime's server, its options, and its summary at the end. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "optim_opts.h"
#include "opts.h"
#include "scenario.h"
#include "syncwise/engine.h"
#include "syncwise/err.h"
#include "syncwise/file.h"
#include "syncwise/log.h"
#include "syncwise/logread.h"
#include "syncwise/net.h"
#include "syncwise/transport.h"

/* One updating line on a terminal (with the best accuracy so far), a line per evaluation
 * otherwise. */
static void show_eval(void *ctx, double t, uint64_t version, double loss, double acc, uint32_t live)
{
    char eval[96];
    sw_cli_eval_text(eval, sizeof eval, loss, acc, ctx);
    bool tty = isatty(STDERR_FILENO);
    fprintf(stderr, "%st=%.1f s  V=%llu  workers %u  %s%s", tty ? "\r\033[K" : "", t,
            (unsigned long long)version, live, eval, tty ? "" : "\n");
}

typedef struct server_cli {
    sw_server_params p;
    const char *log_path, *cpus;
    long threads;
    int batch_mode, apply_mode, checksum; /* in batch_modes[], apply_modes[], checksums[] */
    sw_cli_optim optim;
    bool quiet, verbose;
} server_cli;

static const char *const batch_modes[] = {"sample", "shard", NULL};
static const char *const apply_modes[] = {"locked", "hogwild", "atomic", NULL};
/* In the order of sw_checksum_mode. */
static const char *const checksums[] = {"auto", "on", "off", NULL};

#define AT(field) offsetof(server_cli, field)
static const sw_opt server_table[] = {
    {SW_OPT_ROW(SW_OPT_STR, "bind", 0, AT(p.bind), 0, 0, "ENDPOINT",
                "where to listen (loopback unless told otherwise; port *\npicks a free one)")},
    {SW_OPT_ROW(SW_OPT_STR, "endpoint-file", 0, AT(p.endpoint_file), 0, 0, "FILE",
                SW_CLI_ENDPOINT_FILE_HELP)},
    {SW_OPT_ROW(SW_OPT_STR, "policy", 0, AT(p.policy), 0, 0, "SPEC", "synchronization policy")},
    {SW_OPT_ROW(SW_OPT_STR, "job", 0, AT(p.job), 0, 0, "NAME",
                "the launcher's job this run is, told to every worker:\n"
                "a worker of another --job leaves")},
    {SW_OPT_ROW(SW_OPT_STR, "shards", 0, AT(p.shards), 0, 0, "EP1,EP2,...",
                "hold no parameters: the shards at these endpoints\n"
                "(syncwise shard) do, and workers push and pull there;\n"
                "the server decides on each push's facts (dense or\n"
                "sparse models, every policy but those that read the\n"
                "loss: rlp, rlswitch, actions, dbw:gain=eta without\n"
                "L=; the shards take --apply-threads)")},
    {SW_OPT_ROW(SW_OPT_F64, "shard-wait", 0, AT(p.shard_wait_s), 1, 1e6, "S",
                "end the run when a shard has been silent S seconds, at\n"
                "least 1 (shards are pinged 4 times a second; one started\n"
                "again with --resume within S rejoins it)")},
    {SW_OPT_ROW(SW_OPT_SIZE, "chunk", 0, AT(p.chunk_bytes), 4, (size_t)1 << 30, "BYTES",
                "cut the parameters into chunks of BYTES (a multiple\n"
                "of 4, at most 1 GiB; less if a shard would get none),\n"
                "each shard holding a run of them (default: 1 MiB,\n"
                "smaller so that each shard gets 16 or more; a model of\n"
                "at most 1 MiB a shard, n / S floats a chunk, rounded\n"
                "down, the floats over in one or more chunks besides;\n"
                "the shards' counts of chunks differ by one at most)")},
    SW_OPT_HEADING("the run, as for sim (workers learn it on joining)"),
    {SW_OPT_ROW(SW_OPT_STR, "model", 0, AT(p.model), 0, 0, "SPEC", "model")},
    {SW_OPT_ROW(SW_OPT_STR, "data", 0, AT(p.data), 0, 0, "SPEC", "data set")},
    {SW_OPT_ROW(SW_OPT_U32, "batch", 0, AT(p.batch), 1, 1 << 16, "N", "mini-batch")},
    {SW_OPT_ROW(SW_OPT_F32, "lr", 0, AT(p.lr), 0, 1e6, "X", "learning rate")},
    {SW_OPT_ROW(SW_OPT_F32, "wd", 0, AT(p.weight_decay), 0, 1e6, "X", "weight decay")},
    SW_CLI_OPTIM_ROWS(AT(optim)),
    {SW_OPT_ROW(SW_OPT_U64, "seed", 0, AT(p.seed), 0, SW_LOG_MAX_SEED, "N",
                "seed of the initial parameters and the workers' batch\norder (the data set is "
                "the spec's alone; at most 2^53)")},
    {SW_OPT_ROW(SW_OPT_CHOICE, "batch-mode", 0, AT(batch_mode), 0, 0, "M",
                "sample: each worker reads the whole training set in its\n"
                "own order, right when workers come and go; shard:\n"
                "worker i reads rows i, i + N, ... for N = --max-workers\n"
                "(set it to the worker count)"),
     .choices = batch_modes},
    SW_OPT_HEADING("workers"),
    {SW_OPT_ROW(SW_OPT_U32, "max-workers", 0, AT(p.max_workers), 1, 1 << 16, "N", "worker slots")},
    {SW_OPT_ROW(
        SW_OPT_U32, "wait-workers", 0, AT(p.wait_workers), 0, 1 << 16, "N",
        "release no worker until N have joined, so that the run\n"
        "starts with its whole cluster (also after --resume; 0\nor 1: start with the first)")},
    {SW_OPT_ROW(SW_OPT_F64, "heartbeat-timeout", 0, AT(p.heartbeat_timeout_s), 0.01, 1e6, "S",
                "a worker silent this long is dead; at the end, the\nlongest the server waits for "
                "its workers' goodbyes\n(10 s at most)")},
    {SW_OPT_ROW(SW_OPT_F64, "step-timeout", 0, AT(p.step_timeout_s), 0, 1e6, "S",
                "a worker that pushes nothing this long after its\nrelease is dropped as hung, "
                "though it heartbeats (a\nstuck step would hold a synchronous run for ever;"
                "\na joiner's first step, which loads the data, may take\n10 S; it "
                "joins again if the step ends; 0: never)")},
    {SW_OPT_ROW(SW_OPT_F64, "dead-link", 0, AT(p.dead_link_s), 0, 1e6, "S",
                "close a worker's connection whose host acknowledges\n"
                "nothing this long (TCP keepalive and user timeout; 0:\n"
                "the system's, about 15 min)")},
    {SW_OPT_ROW(SW_OPT_U32, "apply-threads", 0, AT(p.apply_threads), 1, 64, "N",
                "N threads apply the pushes the policy accepted; for\n"
                "policies that apply each gradient alone on arrival: asp,\nssp, dssp, ebsp "
                "(with --shards, the shards' --apply-threads)")},
    {SW_OPT_ROW(SW_OPT_CHOICE, "apply-mode", 0, AT(apply_mode), 0, 0, "M",
                "locked, hogwild (no lock; racing updates of one weight\n"
                "can be lost) or atomic (compare-and-swap)"),
     .choices = apply_modes},
    SW_OPT_HEADING("checkpoints and stopping"),
    {SW_OPT_ROW(SW_OPT_STR, "checkpoint", 0, AT(p.checkpoint), 0, 0, "FILE",
                "checkpoint there at the start, every\n"
                "--checkpoint-applies and --checkpoint-every, and at the\n"
                "end; with --shards each shard checkpoints its slice at\n"
                "that version, and FILE records the version all of them\n"
                "hold (a FILE that is not empty is refused without\n"
                "--resume)")},
    {SW_OPT_ROW(SW_OPT_U64, "checkpoint-applies", 0, AT(p.checkpoint_applies), 0, 0, "N",
                "applies between checkpoints (0: not by count)")},
    {SW_OPT_ROW(SW_OPT_F64, "checkpoint-every", 0, AT(p.checkpoint_s), 0, 1e9, "S",
                "seconds between checkpoints (0: not by time)")},
    {SW_OPT_ROW(SW_OPT_FLAG, "resume", 0, AT(p.resume), 0, 0, NULL,
                "start from the checkpoint: its parameters, version, the\n"
                "policy in force and, given no optimizer option, its\n"
                "optimizer and the optimizer's state (a run killed\n"
                "before its first save starts again from its start)")},
    {SW_OPT_ROW(SW_OPT_F64, "target-acc", 0, AT(p.target_acc), 1e-6, 1, "X",
                "stop at this validation accuracy")},
    {SW_OPT_ROW(SW_OPT_F64, "max-time", 0, AT(p.max_time_s), 0, 1e9, "S",
                "stop S seconds after starting (the wait for\n--wait-workers included; 0: no "
                "limit)")},
    {SW_OPT_ROW(SW_OPT_U64, "max-applies", 0, AT(p.max_applies), 0, 0, "N",
                "stop after N applies (by this process: after\n--resume, counted from the resumed "
                "version; 0: no limit)")},
    {SW_OPT_ROW(SW_OPT_F64, "eval-every", 0, AT(p.eval_every_s), 0.01, 1e9, "S",
                "seconds between evaluations")},
    {SW_OPT_ROW(SW_OPT_STR, "log", 0, AT(log_path), 0, 0, "FILE",
                "JSONL event log (appended to with --resume)")},
    SW_OPT_HEADING("security"),
    {SW_OPT_ROW(SW_OPT_STR, "curve-key", 0, AT(p.curve_key), 0, 0, "FILE",
                "encrypt and authenticate with CURVE: the server's key\n"
                "pair (syncwise keygen); needs --curve-clients")},
    {SW_OPT_ROW(SW_OPT_STR, "curve-clients", 0, AT(p.curve_clients), 0, 0, "FILE",
                "with CURVE: the public keys of the workers it admits")},
    {SW_OPT_ROW(SW_OPT_STR, "curve-operators", 0, AT(p.curve_operators), 0, 0, "FILE",
                "with CURVE: the public keys of operators, who may also\n"
                "switch the policy from afar (ctl policy)")},
    {SW_OPT_ROW(SW_OPT_STR, "ctl-bind", 0, AT(p.ctl_bind), 0, 0, "ENDPOINT",
                "where operator commands (ctl policy) are taken: by\n"
                "default a socket in a directory of the server's user\n"
                "alone ($XDG_RUNTIME_DIR/syncwise or /tmp/syncwise-UID),\n"
                "which ctl finds by itself on this host; 'none' for\n"
                "nowhere (but CURVE operators); another endpoint opens\n"
                "them to anyone who reaches it. ctl status is answered\non every endpoint")},
    {SW_OPT_ROW(SW_OPT_CHOICE, "checksum", 0, AT(checksum), 0, 0, "M",
                "a CRC-32C on every payload, agreed with each worker at\n"
                "join: on, off (trusted links; values are still checked\n"
                "to be finite) or auto: on over plain TCP, off under\n"
                "CURVE, whose authenticator covers every byte"),
     .choices = checksums},
    SW_OPT_HEADING("other"),
    {SW_OPT_ROW(SW_OPT_LONG, "threads", 0, AT(threads), 0, 256, "N",
                "OpenBLAS threads (applies are memory-bound, and idle\n"
                "OpenBLAS threads spin on the cores the network needs;\n"
                "0 leaves OpenBLAS its own default)")},
    SW_OPT_CPUS_ROW(AT(cpus)),
    {SW_OPT_ROW(SW_OPT_FLAG, "quiet", 'q', AT(quiet), 0, 0, NULL,
                "warnings, errors and the closing summary only (no\nprogress)")},
    {SW_OPT_ROW(SW_OPT_FLAG, "verbose", 'v', AT(verbose), 0, 0, NULL, "debug messages too")},
    SW_OPT_END_ROW,
};
#undef AT

static const sw_cmd_opts server_command = {
    .cmd = "server",
    .about =
        "Runs the parameter server: workers connect with 'syncwise worker', operators with\n"
        "'syncwise ctl'. Stops at the target accuracy, a time or apply limit, or on SIGINT,\n"
        "SIGTERM or SIGHUP, after a last checkpoint; workers are told the run is over (a\n"
        "second signal, a second later, ends it at once).",
    .tables = {server_table},
};

static int server_opts(int argc, char **argv, server_cli *o)
{
    int rc = sw_cli_parse(&server_command, argc, argv, o, NULL);
    if (rc)
        return rc == 1 ? -1 : rc;
    o->p.batch_mode = batch_modes[o->batch_mode];
    o->p.apply_mode = apply_modes[o->apply_mode];
    o->p.policy_default = o->p.policy == sw_server_default_params().policy; /* not given */
    o->p.optim_default = !o->optim.spec && !o->optim.momentum && !o->optim.nesterov;
    o->p.checksum = (sw_checksum_mode)o->checksum;
    sw_cli_set_verbosity(o->quiet, o->verbose);
    if (o->quiet)
        o->p.on_eval = NULL;
    if (o->p.resume && !o->p.checkpoint)
        return sw_cli_error("server", "--resume needs --checkpoint FILE") + 1;
    const char *ctl = o->p.ctl_bind && strcmp(o->p.ctl_bind, "none") ? o->p.ctl_bind : NULL;
    if ((rc = sw_cli_endpoint_ok("server", "--bind", o->p.bind, true)) ||
        (rc = sw_cli_endpoint_ok("server", "--ctl-bind", ctl, true)) ||
        (rc = sw_cli_shard_list_ok("server", o->p.shards)) ||
        (rc = sw_cli_job_ok("server", o->p.job)))
        return rc;
    if ((rc = sw_cli_curve_pair("server", "--curve-key", o->p.curve_key, "--curve-clients",
                                o->p.curve_clients)))
        return rc;
    /* Options that mean nothing alone: said, not refused (a script may pass them always). */
    if (!o->p.shards && o->p.shard_wait_s != sw_server_default_params().shard_wait_s)
        sw_log(SW_LOG_WARN, "--shard-wait is for a run with --shards: it is not used");
    if (!o->p.shards && o->p.chunk_bytes)
        sw_log(SW_LOG_WARN, "--chunk is for a run with --shards: it is not used");
    if (o->p.chunk_bytes % 4)
        return sw_cli_error("server", "--chunk %zu: a chunk holds whole floats, a multiple of 4 "
                                      "bytes", o->p.chunk_bytes) + 1;
    if (o->apply_mode && o->p.apply_threads <= 1)
        sw_log(SW_LOG_WARN, "--apply-mode is for --apply-threads N > 1: it is not used");
    if (o->p.curve_operators && !o->p.curve_key) /* a key without operators is fine */
        return sw_cli_error("server", "--curve-operators needs --curve-key: alone it would run "
                                      "without CURVE") + 1;
    const char *names[] = {"--checkpoint", "--log", "--endpoint-file"};
    const char *paths[] = {o->p.checkpoint, o->log_path, o->p.endpoint_file};
    const char *inputs[] = {o->p.data, o->p.policy, o->p.curve_key, o->p.curve_clients,
                            o->p.curve_operators};
    if ((rc = sw_cli_outputs_apart("server", 3, names, paths, 5, inputs)))
        return rc;
    char err[SW_ERR_LEN];
    if (sw_cli_optim_resolve(&o->optim, &o->p.optim, err))
        return sw_cli_error("server", "%s", err) + 1;
    if ((rc = sw_engine_check_policy(o->p.policy, o->p.max_workers, err))) /* a usage error */
        return sw_cli_error("server", "%s", err) + (sw_cli_scenario_status(rc) == 2);
    return sw_cli_pin_cpus("server", o->cpus);
}

/* The server's bytes a push; a sharded run's gradients and parameters go to the shards (their
 * own summaries count them), so its server's are the control plane's and the model's floats
 * it set and gathered, told apart. */
static void print_traffic(const sw_server_result *r)
{
    double per = r->pushes ? 1.0 / (double)r->pushes : 0.0;
    printf("traffic: %.1f MB in, %.1f MB out, ", (double)r->bytes_in / 1e6,
           (double)r->bytes_out / 1e6);
    if (!r->shard_frames && !r->model_bytes) { /* a sharded run sets the shards' floats */
        printf("%.0f bytes per push and its answers\n",
               (double)(r->bytes_in + r->bytes_out) * per);
        return;
    }
    printf("%.3g MB of them the model's floats set on and gathered from the shards; the "
           "control plane %.0f bytes per push and its answers\n", (double)r->model_bytes / 1e6,
           (double)(r->bytes_in + r->bytes_out - r->model_bytes) * per);
}

/* The run's last words: how it ended, what it moved. */
static void print_summary(const sw_server_result *r)
{
    char took[96];
    if (r->started_s >= 0)
        snprintf(took, sizeof took, "trained %.1f s after %.1f s waiting for workers",
                 r->elapsed_s - r->started_s, r->started_s);
    else if (r->reached) /* a finished run resumed, say: its model met the target already */
        snprintf(took, sizeof took, "%.1f s, before any training: the model met the target "
                 "already", r->elapsed_s);
    else
        snprintf(took, sizeof took, "%.1f s, never started (too few workers joined)", r->elapsed_s);
    char quality[48];
    snprintf(quality, sizeof quality, r->classify ? "accuracy %.4f" : "loss %.4f",
             r->classify ? r->final_acc : r->final_loss);
    printf("%s: version %llu (from %llu), %llu pushes, %llu joins, %llu crashed, %llu refused "
           "messages, %s; %s %s\n",
           r->reached ? "target reached" : "stopped", (unsigned long long)r->version,
           (unsigned long long)r->start_version, (unsigned long long)r->pushes,
           (unsigned long long)r->joins, (unsigned long long)r->crashes,
           (unsigned long long)r->refused, took,
           r->held_out ? r->held_out : "validation", quality);
    print_traffic(r);
    if (r->shard_frames)
        printf("shards: %llu frames from the shards carried %llu messages (%.2f a frame)\n",
               (unsigned long long)r->shard_frames, (unsigned long long)r->shard_messages,
               (double)r->shard_messages / (double)r->shard_frames);
}

int sw_cli_server(int argc, char **argv)
{
    double best = 0;
    server_cli o = {.p = sw_server_default_params(), .threads = 1};
    o.p.on_eval = show_eval;
    o.p.on_eval_ctx = &best;
    int prc = server_opts(argc, argv, &o);
    if (prc)
        return prc < 0 ? 0 : prc;
    sw_server_params p = o.p;
    const char *log_path = o.log_path;
    sw_cli_set_threads(o.threads);
    p.stop = sw_cli_catch_signals();
    sw_net_keep_freed_memory();
    char err[SW_ERR_LEN];
    /* Opened for appending, so that a server refused at its start leaves the log as it was (one
     * it created is removed again); the server empties it (or, resumed, cuts a torn last line)
     * once it runs. A second server given the same log is refused by its lock. */
    struct stat before;
    bool existed = log_path && stat(log_path, &before) == 0;
    FILE *log = log_path ? sw_file_open_log(log_path, true, "--log", err) : NULL;
    if (log_path && !log)
        return sw_cli_error("server", "%s", err);
    if (log) /* whole lines only, even when the server is killed: a resumed run appends */
        setvbuf(log, NULL, _IOLBF, 0);
    p.log = log;
    sw_server_result r;
    int rc = sw_server_run(&p, &r, err);
    if (p.on_eval && isatty(STDERR_FILENO))
        fputc('\n', stderr);
    int crc = sw_file_close(log, log_path, rc ? NULL : err);
    struct stat after;
    if (rc && log_path && !existed && stat(log_path, &after) == 0 && after.st_size == 0)
        unlink(log_path); /* ended before it ran (refused, unbound, stopped): no empty log that
                           * check cannot read */
    rc = rc ? rc : crc;
    if (rc && rc != SW_EPROMISE) /* a configuration refused is a usage error, as in sim */
        return sw_cli_error("server", "%s", err) * (r.configured ? 1 : sw_cli_load_status(rc));
    print_summary(&r);
    if (rc)
        return sw_cli_error("server", "%s", err);
    /* A run that ran out of time before enough workers came trained nothing: a failure to
     * whoever waits on it (a launcher, a pod's restart rule), unless an operator stopped it. */
    if (r.started_s >= 0 || r.reached || sw_stop_requested(p.stop))
        return 0;
    if (p.wait_workers <= 1) /* the first join starts a run */
        return sw_cli_error("server", "the run never started: no worker joined");
    return sw_cli_error("server", "the run never started: %llu worker%s joined, %u wanted "
                        "(--wait-workers)", (unsigned long long)r.joins, r.joins == 1 ? "" : "s",
                        p.wait_workers);
}
