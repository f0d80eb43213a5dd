/* `syncwise server`, `syncwise worker` and `syncwise ctl`: the networked runtime's commands. */
#define _POSIX_C_SOURCE 200809L
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "syncwise/curve.h"
#include "syncwise/err.h"
#include "syncwise/log.h"
#include "syncwise/net.h"

static void server_help(void)
{
    printf("usage: syncwise server [OPTIONS]\n\n"
           "Runs the parameter server: workers connect with 'syncwise worker', operators with\n"
           "'syncwise ctl'. Stops at the target accuracy, a time or apply limit, or on SIGINT or\n"
           "SIGTERM, after a last checkpoint; workers are told the run is over.\n\n"
           "options:\n"
           "  --bind ENDPOINT        where to listen (default tcp://127.0.0.1:5555; loopback\n"
           "                         unless told otherwise; port * picks a free one)\n"
           "  --endpoint-file FILE   write the bound endpoint there\n"
           "  --policy SPEC          synchronization policy (default asp)\n"
           "  --model SPEC --data SPEC --batch N --lr X --wd X --seed N\n"
           "                         the run, as for sim (workers learn it on joining)\n"
           "  --batch-mode M         sample (default): each worker reads the whole training\n"
           "                         set in its own order, right when workers come and go;\n"
           "                         shard: worker i reads rows i, i + N, ... for N =\n"
           "                         --max-workers (set it to the worker count)\n"
           "  --max-workers N        worker slots (default 64)\n"
           "  --wait-workers N       release no worker until N have joined, so that the run\n"
           "                         starts with its whole cluster (also after --resume;\n"
           "                         default 1: start with the first)\n"
           "  --apply-threads N      N threads apply the pushes the policy accepted (default\n"
           "                         1); for policies that apply each gradient alone on\n"
           "                         arrival: asp, ssp, dssp, ebsp\n"
           "  --apply-mode M         locked (default), hogwild (no lock; racing updates of\n"
           "                         one weight can be lost) or atomic (compare-and-swap)\n"
           "  --heartbeat-timeout S  a worker silent this long is dead (default 5)\n"
           "  --checkpoint FILE      checkpoint there every --checkpoint-applies N (1000) and\n"
           "                         --checkpoint-every S (30) seconds, and at the end\n"
           "  --resume               start from the checkpoint (its parameters and version)\n"
           "  --target-acc X  --max-time S  --max-applies N  --eval-every S (5)\n"
           "  --log FILE             JSONL event log\n"
           "  --curve-key FILE       encrypt and authenticate with CURVE: the server's key pair\n"
           "                         (syncwise keygen); needs --curve-clients FILE, the public\n"
           "                         keys of the workers it admits\n"
           "  --curve-operators FILE with CURVE: the public keys of operators, who may also\n"
           "                         switch the policy from afar (ctl policy)\n"
           "  --ctl-bind ENDPOINT    where operator commands (ctl policy) are taken: by default\n"
           "                         a socket in a directory of the server's user alone\n"
           "                         ($XDG_RUNTIME_DIR/syncwise or /tmp/syncwise-UID), which ctl\n"
           "                         finds by itself on this host; 'none' for nowhere (but\n"
           "                         CURVE operators); another endpoint opens them to anyone\n"
           "                         who reaches it. ctl status is answered on every endpoint\n"
           "  --threads N            OpenBLAS threads (default 1: applies are memory-bound,\n"
           "                         and idle OpenBLAS threads spin on the cores the network\n"
           "                         needs; 0 leaves OpenBLAS its own default)\n"
           "  -q, --quiet  -v, --verbose\n");
}

/* One updating line on a terminal (with the best accuracy so far), a line per evaluation
 * otherwise. */
static void show_eval(void *ctx, double t, uint64_t version, double loss, double acc,
                      uint32_t live)
{
    double *best = ctx;
    *best = acc > *best ? acc : *best;
    bool tty = isatty(STDERR_FILENO);
    fprintf(stderr, "%st=%.1f s  V=%llu  workers %u  val_loss %.4f  val_acc %.4f (best %.4f)%s",
            tty ? "\r\033[K" : "", t, (unsigned long long)version, live, loss, acc, *best,
            tty ? "" : "\n");
}

static int server_opts(int argc, char **argv, sw_server_params *p, const char **log_path,
                       long *threads)
{
    enum { BIND = 1000, EPF, POL, MOD, DAT, BAT, LR, WD, SEED, BM, MAXW, HB, CK, CKA, CKS, RES,
           TACC, MAXT, MAXA, EVAL, LOG, THR, CKEY, CCLI, ATHR, AMODE, WAITW, COPS, CTLB };
    static const struct option longs[] = {
        {"bind", 1, 0, BIND}, {"endpoint-file", 1, 0, EPF}, {"policy", 1, 0, POL},
        {"model", 1, 0, MOD}, {"data", 1, 0, DAT}, {"batch", 1, 0, BAT}, {"lr", 1, 0, LR},
        {"wd", 1, 0, WD}, {"seed", 1, 0, SEED}, {"batch-mode", 1, 0, BM},
        {"max-workers", 1, 0, MAXW}, {"heartbeat-timeout", 1, 0, HB}, {"checkpoint", 1, 0, CK},
        {"checkpoint-applies", 1, 0, CKA}, {"checkpoint-every", 1, 0, CKS},
        {"resume", 0, 0, RES}, {"target-acc", 1, 0, TACC}, {"max-time", 1, 0, MAXT},
        {"max-applies", 1, 0, MAXA}, {"eval-every", 1, 0, EVAL}, {"log", 1, 0, LOG},
        {"threads", 1, 0, THR}, {"quiet", 0, 0, 'q'}, {"verbose", 0, 0, 'v'},
        {"curve-key", 1, 0, CKEY}, {"curve-clients", 1, 0, CCLI}, {"help", 0, 0, 'h'},
        {"apply-threads", 1, 0, ATHR}, {"apply-mode", 1, 0, AMODE},
        {"wait-workers", 1, 0, WAITW}, {"curve-operators", 1, 0, COPS},
        {"ctl-bind", 1, 0, CTLB},
        {0, 0, 0, 0},
    };
    const char *C = "server";
    long l;
    double d;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "qvh", longs, NULL)) != -1) {
        bool ok = true;
        switch (c) {
        case BIND: p->bind = optarg; break;
        case EPF: p->endpoint_file = optarg; break;
        case POL: p->policy = optarg; break;
        case MOD: p->model = optarg; break;
        case DAT: p->data = optarg; break;
        case BM: p->batch_mode = optarg; break;
        case CK: p->checkpoint = optarg; break;
        case RES: p->resume = true; break;
        case LOG: *log_path = optarg; break;
        case CKEY: p->curve_key = optarg; break;
        case CCLI: p->curve_clients = optarg; break;
        case COPS: p->curve_operators = optarg; break;
        case CTLB: p->ctl_bind = optarg; break;
        case AMODE: p->apply_mode = optarg; break;
        case ATHR: if ((ok = sw_cli_long(C, "--apply-threads", optarg, 1, 64, &l))) p->apply_threads = (uint32_t)l; break;
        case 'q': sw_log_set_level(SW_LOG_WARN); p->on_eval = NULL; break;
        case 'v': sw_log_set_level(SW_LOG_DEBUG); break;
        case 'h': server_help(); return -1;
        case BAT: if ((ok = sw_cli_long(C, "--batch", optarg, 1, 1 << 16, &l))) p->batch = (uint32_t)l; break;
        case MAXW: if ((ok = sw_cli_long(C, "--max-workers", optarg, 1, 1 << 16, &l))) p->max_workers = (uint32_t)l; break;
        case WAITW: if ((ok = sw_cli_long(C, "--wait-workers", optarg, 0, 1 << 16, &l))) p->wait_workers = (uint32_t)l; break;
        case THR: ok = sw_cli_long(C, "--threads", optarg, 0, 256, threads); break;
        case LR: if ((ok = sw_cli_double(C, "--lr", optarg, 0, 1e6, &d))) p->lr = (float)d; break;
        case WD: if ((ok = sw_cli_double(C, "--wd", optarg, 0, 1e6, &d))) p->weight_decay = (float)d; break;
        case SEED: ok = sw_cli_u64(C, "--seed", optarg, &p->seed); break;
        case HB: ok = sw_cli_double(C, "--heartbeat-timeout", optarg, 0.01, 1e6, &p->heartbeat_timeout_s); break;
        case CKA: ok = sw_cli_u64(C, "--checkpoint-applies", optarg, &p->checkpoint_applies); break;
        case CKS: ok = sw_cli_double(C, "--checkpoint-every", optarg, 0, 1e9, &p->checkpoint_s); break;
        case TACC: ok = sw_cli_double(C, "--target-acc", optarg, 0, 1, &p->target_acc); break;
        case MAXT: ok = sw_cli_double(C, "--max-time", optarg, 0, 1e9, &p->max_time_s); break;
        case MAXA: ok = sw_cli_u64(C, "--max-applies", optarg, &p->max_applies); break;
        case EVAL: ok = sw_cli_double(C, "--eval-every", optarg, 0.01, 1e9, &p->eval_every_s); break;
        default: return 2;
        }
        if (!ok)
            return 2;
    }
    if (sw_cli_stray(C, argc, argv))
        return 2;
    if (strcmp(p->batch_mode, "shard") && strcmp(p->batch_mode, "sample"))
        return sw_cli_error(C, "--batch-mode: '%s' is not shard or sample", p->batch_mode) + 1;
    if (p->resume && !p->checkpoint)
        return sw_cli_error(C, "--resume needs --checkpoint FILE") + 1;
    return 0;
}

int sw_cli_server(int argc, char **argv)
{
    sw_server_params p = sw_server_default_params();
    double best = 0;
    p.on_eval = show_eval;
    p.on_eval_ctx = &best;
    const char *log_path = NULL;
    long threads = 1;
    int prc = server_opts(argc, argv, &p, &log_path, &threads);
    if (prc)
        return prc < 0 ? 0 : prc;
    sw_cli_set_threads(threads);
    p.stop = sw_cli_catch_signals();
    char err[SW_ERR_LEN];
    FILE *log = log_path ? fopen(log_path, p.resume ? "a" : "w") : NULL;
    if (log_path && !log)
        return sw_cli_error("server", "%s: cannot create the log", log_path);
    if (log) /* whole lines only, even when the server is killed: a resumed run appends */
        setvbuf(log, NULL, _IOLBF, 0);
    p.log = log;
    sw_server_result r;
    int rc = sw_server_run(&p, &r, err);
    if (p.on_eval && isatty(STDERR_FILENO))
        fputc('\n', stderr);
    if (log && fclose(log) != 0 && !rc)
        rc = sw_fail(err, SW_EIO, "%s: write error", log_path);
    if (rc && rc != SW_EPROMISE)
        return sw_cli_error("server", "%s", err);
    char took[96];
    if (r.started_s >= 0)
        snprintf(took, sizeof took, "trained %.1f s after %.1f s waiting for workers",
                 r.elapsed_s - r.started_s, r.started_s);
    else
        snprintf(took, sizeof took, "%.1f s, never started (too few workers joined)",
                 r.elapsed_s);
    printf("%s: version %llu (from %llu), %llu pushes, %llu joins, %llu crashed, %llu refused "
           "messages, %s; validation accuracy %.4f\n",
           r.reached ? "target reached" : "stopped", (unsigned long long)r.version,
           (unsigned long long)r.start_version, (unsigned long long)r.pushes,
           (unsigned long long)r.joins, (unsigned long long)r.crashes,
           (unsigned long long)r.refused, took, r.final_acc);
    printf("traffic: %.1f MB in, %.1f MB out, %.0f bytes per push and its answers\n",
           (double)r.bytes_in / 1e6, (double)r.bytes_out / 1e6,
           r.pushes ? (double)(r.bytes_in + r.bytes_out) / (double)r.pushes : 0.0);
    return rc ? sw_cli_error("server", "%s", err) : 0;
}

static void worker_help(void)
{
    printf("usage: syncwise worker --connect ENDPOINT [OPTIONS]\n\n"
           "Joins a syncwise server, loads the data set it names, and computes gradients until\n"
           "the server ends the run. Rejoins by itself when the server restarts.\n\n"
           "options:\n"
           "  --connect ENDPOINT       the server (default tcp://127.0.0.1:5555)\n"
           "  --name NAME              shown in the server's log\n"
           "  --get-model-frequency F  pull every F steps, applying own gradients in between\n"
           "  --heartbeat S            seconds between heartbeats (default 0.5)\n"
           "  --server-timeout S       give up when the server is silent this long (default\n"
           "                           30; a worker held at a barrier hears its heartbeats\n"
           "                           echoed and waits as long as they come back)\n"
           "  --max-steps N            leave after N steps\n"
           "  --delay-ms MS            sleep this long in every step (a straggler on purpose)\n"
           "  --curve-key FILE         CURVE: this worker's key pair (syncwise keygen), with\n"
           "  --curve-server FILE      the server's public key\n"
           "  --threads N              OpenBLAS threads\n"
           "  -q, --quiet  -v, --verbose\n");
}

int sw_cli_worker(int argc, char **argv)
{
    static const struct option longs[] = {
        {"connect", 1, 0, 'c'}, {"name", 1, 0, 'n'}, {"get-model-frequency", 1, 0, 'f'},
        {"heartbeat", 1, 0, 'b'}, {"server-timeout", 1, 0, 't'}, {"max-steps", 1, 0, 'm'},
        {"threads", 1, 0, 'T'}, {"quiet", 0, 0, 'q'}, {"verbose", 0, 0, 'v'},
        {"delay-ms", 1, 0, 'd'}, {"curve-key", 1, 0, 'K'}, {"curve-server", 1, 0, 'S'},
        {"help", 0, 0, 'h'}, {0, 0, 0, 0},
    };
    sw_worker_params p = sw_worker_default_params();
    double delay_ms = 0;
    long l, threads = 0;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "qvh", longs, NULL)) != -1) {
        bool ok = true;
        switch (c) {
        case 'c': p.connect = optarg; break;
        case 'n': p.name = optarg; break;
        case 'f': if ((ok = sw_cli_long("worker", "--get-model-frequency", optarg, 1, 1 << 20, &l))) p.get_model_frequency = (uint32_t)l; break;
        case 'b': ok = sw_cli_double("worker", "--heartbeat", optarg, 0.01, 1e4, &p.heartbeat_s); break;
        case 't': ok = sw_cli_double("worker", "--server-timeout", optarg, 0.1, 1e9, &p.server_timeout_s); break;
        case 'm': ok = sw_cli_u64("worker", "--max-steps", optarg, &p.max_steps); break;
        case 'T': ok = sw_cli_long("worker", "--threads", optarg, 0, 256, &threads); break;
        case 'd': ok = sw_cli_double("worker", "--delay-ms", optarg, 0, 1e7, &delay_ms); break;
        case 'K': p.curve_key = optarg; break;
        case 'S': p.curve_server = optarg; break;
        case 'q': sw_log_set_level(SW_LOG_WARN); break;
        case 'v': sw_log_set_level(SW_LOG_DEBUG); break;
        case 'h': worker_help(); return 0;
        default: return 2;
        }
        if (!ok)
            return 2;
    }
    if (sw_cli_stray("worker", argc, argv))
        return 2;
    sw_cli_set_threads(threads);
    p.stop = sw_cli_catch_signals();
    p.delay_s = delay_ms / 1000;
    char err[SW_ERR_LEN];
    sw_worker_result r;
    int rc = sw_worker_run(&p, &r, err);
    if (rc && !(*p.stop && rc == SW_ESTATE))
        return sw_cli_error("worker", "%s", err);
    sw_log(SW_LOG_INFO, "%llu steps, %llu recomputed, %llu joins%s",
           (unsigned long long)r.steps, (unsigned long long)r.drops,
           (unsigned long long)r.joins, r.done ? "; the run is over" : "");
    return 0;
}

int sw_cli_ctl(int argc, char **argv)
{
    const char *connect = "tcp://127.0.0.1:5555", *key = NULL, *server = NULL;
    int i = 1;
    if (i < argc && (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))) {
        printf("usage: syncwise ctl [--connect ENDPOINT] [--curve-key FILE --curve-server FILE]\n"
               "                    status | policy SPEC\n\n"
               "  status        live workers, version, policy, applies per second, refused\n"
               "                messages\n"
               "  policy SPEC   switch the running server's policy at a safe point: an\n"
               "                operator's command. On the server's host it goes to the\n"
               "                server's private operator socket by itself (its user's\n"
               "                alone); from afar it needs an operator's CURVE key\n"
               "                (--curve-operators on the server), or --connect to the\n"
               "                endpoint the server's --ctl-bind chose\n");
        return 0;
    }
    for (; i + 1 < argc && !strncmp(argv[i], "--", 2); i += 2) {
        if (!strcmp(argv[i], "--connect"))
            connect = argv[i + 1];
        else if (!strcmp(argv[i], "--curve-key"))
            key = argv[i + 1];
        else if (!strcmp(argv[i], "--curve-server"))
            server = argv[i + 1];
        else
            return sw_cli_error("ctl", "unknown option '%s' (see --help)", argv[i]) + 1;
    }
    char cmd[512] = "";
    for (; i < argc; i++) {
        strncat(cmd, argv[i], sizeof cmd - strlen(cmd) - 2);
        if (i + 1 < argc)
            strcat(cmd, " ");
    }
    if (strcmp(cmd, "status") && strncmp(cmd, "policy ", 7))
        return sw_cli_error("ctl", "give 'status' or 'policy SPEC' (see --help)") + 1;
    /* An operator command goes to the server's private operator socket when it is on this
     * host and no CURVE key says who we are. */
    char ops[256], err[SW_ERR_LEN];
    struct stat st;
    if (!strncmp(cmd, "policy ", 7) && !key &&
        sw_ctl_endpoint(connect, ops, sizeof ops, err) == 0 && stat(ops + 6, &st) == 0 &&
        S_ISSOCK(st.st_mode))
        connect = ops;
    char reply[8192];
    if (sw_ctl(connect, cmd, 5, key, server, reply, sizeof reply, err))
        return sw_cli_error("ctl", "%s", err);
    fputs(reply, stdout);
    return strncmp(reply, "error", 5) == 0;
}

int sw_cli_keygen(int argc, char **argv)
{
    if (argc != 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        printf("usage: syncwise keygen NAME\n\n"
               "Makes a CURVE key pair: NAME.key (public and secret, mode 0600) for the one who\n"
               "owns it, NAME.pub (public only) for the others. A server admits the workers and\n"
               "operators whose .pub lines are in its --curve-clients file.\n");
        return argc == 2 ? 0 : 2;
    }
    char err[SW_ERR_LEN];
    if (sw_curve_keygen(argv[1], err))
        return sw_cli_error("keygen", "%s", err);
    printf("wrote %s.key and %s.pub\n", argv[1], argv[1]);
    return 0;
}
