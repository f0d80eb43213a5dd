/* `syncwise peer`: the decentralized mode, no server (syncwise/peer.h). */
#define _POSIX_C_SOURCE 200809L
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "syncwise/err.h"
#include "syncwise/log.h"
#include "syncwise/peer.h"

#define CMD "peer"

static void help(void)
{
    printf("usage: syncwise peer [--join ENDPOINT] [OPTIONS]\n\n"
           "Trains a model with other peers and no server. Each peer keeps all the weights and\n"
           "owns a slice of them; it sends each owner the changes to its slice and broadcasts\n"
           "the changes to its own every round. Start the first peer without --join (it starts\n"
           "the weights); others join through any member and take its copy. Members silent for\n"
           "--timeout seconds are dropped. The first member (in endpoint order) computes the\n"
           "held-out loss each round and stops everyone at --target-loss or after --patience\n"
           "rounds without improvement.\n\n"
           "options:\n"
           "  --bind ENDPOINT        where to listen (default tcp://127.0.0.1:*, a free port)\n"
           "  --endpoint-file FILE   write the bound endpoint there\n"
           "  --join ENDPOINT        a member of the group to join\n"
           "  --model SPEC           svm:lambda=1e-4 (default), logistic:lambda=0, or a dense\n"
           "                         model (mlp:h=1,u=256, ...: its changes are every weight)\n"
           "  --data SPEC            sparse rows for svm and logistic: libsvm:train=PATH,... or\n"
           "                         sparse:n=,dim=,... (default sparse:n=20000,test=2000,\n"
           "                         dim=10000); dense examples otherwise (fashion-mnist, ...)\n"
           "  --batch N --lr X --seed N   (16, 0.35, 1; all peers must agree on data and seed)\n"
           "  --round N              steps between broadcasts and loss checks (50)\n"
           "  --timeout S            drop a member silent this long (2)\n"
           "  --target-loss X  --patience N  --max-time S   stopping rules\n"
           "  --delay-ms MS          injected slowness per step\n"
           "  --out FILE             the judge writes its best weights there, one per line\n"
           "                         (a linear model's: the features' weights, then the bias)\n"
           "  -q, --quiet  -v, --verbose\n");
}

static int parse(int argc, char **argv, sw_peer_params *p)
{
    static const struct option table[] = {
        {"bind", 1, 0, 'b'},
        {"endpoint-file", 1, 0, 'e'},
        {"join", 1, 0, 'j'},
        {"model", 1, 0, 'm'},
        {"data", 1, 0, 'd'},
        {"batch", 1, 0, 'B'},
        {"lr", 1, 0, 'l'},
        {"seed", 1, 0, 's'},
        {"round", 1, 0, 'r'},
        {"timeout", 1, 0, 't'},
        {"target-loss", 1, 0, 'T'},
        {"patience", 1, 0, 'P'},
        {"max-time", 1, 0, 'M'},
        {"delay-ms", 1, 0, 'D'},
        {"quiet", 0, 0, 'q'},
        {"verbose", 0, 0, 'v'},
        {"help", 0, 0, 'h'},
        {"out", 1, 0, 'o'},
        {0, 0, 0, 0},
    };
    int c, bad = 0;
    long v;
    double x;
    optind = 1;
    while (!bad && (c = getopt_long(argc, argv, "hqv", table, NULL)) != -1) {
        switch (c) {
        case 'b': p->bind = optarg; break;
        case 'e': p->endpoint_file = optarg; break;
        case 'j': p->join = optarg; break;
        case 'o': p->out = optarg; break;
        case 'm': p->model = optarg; break;
        case 'd': p->data = optarg; break;
        case 'B':
            bad = !sw_cli_long(CMD, "--batch", optarg, 1, 1 << 20, &v);
            p->batch = (uint32_t)v;
            break;
        case 'l':
            bad = !sw_cli_double(CMD, "--lr", optarg, 1e-9, 100, &x);
            p->lr = (float)x;
            break;
        case 's': bad = !sw_cli_u64(CMD, "--seed", optarg, &p->seed); break;
        case 'r':
            bad = !sw_cli_long(CMD, "--round", optarg, 1, 1 << 24, &v);
            p->round_steps = (uint32_t)v;
            break;
        case 't': bad = !sw_cli_double(CMD, "--timeout", optarg, 0.01, 3600, &p->timeout_s); break;
        case 'T':
            bad = !sw_cli_double(CMD, "--target-loss", optarg, 0, 1e9, &p->target_loss);
            break;
        case 'P':
            bad = !sw_cli_long(CMD, "--patience", optarg, 0, 1 << 30, &v);
            p->patience = (uint32_t)v;
            break;
        case 'M': bad = !sw_cli_double(CMD, "--max-time", optarg, 0, 1e9, &p->max_time_s); break;
        case 'D':
            bad = !sw_cli_double(CMD, "--delay-ms", optarg, 0, 1e6, &x);
            p->delay_s = x / 1000;
            break;
        case 'q': sw_log_set_level(SW_LOG_WARN); break;
        case 'v': sw_log_set_level(SW_LOG_DEBUG); break;
        case 'h': help(); return -1;
        default: bad = 1;
        }
    }
    if (bad || sw_cli_stray(CMD, argc, argv))
        return 2;
    return 0;
}

int sw_cli_peer(int argc, char **argv)
{
    sw_peer_params p = sw_peer_default_params();
    int rc = parse(argc, argv, &p);
    if (rc)
        return rc < 0 ? 0 : rc;
    p.stop = sw_cli_catch_signals();
    sw_peer_result r;
    char err[SW_ERR_LEN];
    if (sw_peer_run(&p, &r, err))
        return sw_cli_error(CMD, "%s", err);
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
        printf("; %llu messages from non-members ignored", (unsigned long long)r.refused);
    printf("\n");
    return 0;
}
