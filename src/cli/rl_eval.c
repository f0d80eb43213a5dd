/* `syncwise rl eval`: a learned policy against the classic ones on fresh instances: time to
 * target with confidence intervals, the per-instance speedup, and the statistics of the RLP
 * paper's Table 1 (steps per worker, applies, idle share, inference share). */
#define _POSIX_C_SOURCE 200809L
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rl_opts.h"
#include "syncwise/clock.h"
#include "syncwise/err.h"

#define CMD "rl eval"
#define FIRST_EVAL_INSTANCE 2000000 /* never a training or pre-training instance */
#define MAX_POLICIES 16

typedef struct stats {
    char spec[300];
    double *time; /* per instance: mean over repeats */
    double sum_steps, sum_applies, sum_idle, sum_decide, sum_probe;
    long runs, reached;
} stats;

typedef struct plan {
    sw_cli_rl_opts rl;
    const char *policy_file, *baselines, *csv_path;
    long instances, seeds;
    stats p[MAX_POLICIES];
    int n;
    FILE *csv;
} plan;

static void help(void)
{
    printf("usage: syncwise rl eval [OPTIONS]\n\n"
           "Runs a learned policy and baselines on the same fresh instances (never used in\n"
           "training), several seeds each, and prints the mean time to target with a 95%%\n"
           "confidence interval, the speedup of the learned policy per instance, and steps per\n"
           "worker, applies, idle share and the share of real time spent deciding (inference)\n"
           "and in the loss probe.\n\n"
           "options:\n"
           "  --policy FILE        learned policy (default: the shipped one)\n"
           "  --baselines LIST     policies to compare with (bsp,asp,ssp:s=1,ssp:s=4,ssp:s=7)\n"
           "  --instances N        test instances (100)\n"
           "  --seeds K            runs of each instance with other seeds (3)\n"
           "  --csv FILE           one row per run\n"
           "  -q, --quiet          no progress lines\n"
           "  -h, --help           this text\n");
    sw_cli_rl_help();
}

static const struct option own[] = {
    {"policy", 1, 0, 'p'}, {"baselines", 1, 0, 'b'}, {"instances", 1, 0, 'i'}, {"seeds", 1, 0, 's'},
    {"csv", 1, 0, 'c'},    {"quiet", 0, 0, 'q'},     {"help", 0, 0, 'h'},      {0, 0, 0, 0},
};

static int add_policy(plan *p, const char *spec)
{
    if (p->n == MAX_POLICIES || strlen(spec) >= sizeof p->p[0].spec)
        return sw_cli_error(CMD, "too many or too long policies");
    snprintf(p->p[p->n].spec, sizeof p->p[0].spec, "%s", spec);
    p->n++;
    return 0;
}

static int make_policies(plan *p)
{
    char first[300];
    snprintf(first, sizeof first, "rlp:file=%s", p->policy_file);
    int rc = add_policy(p, first);
    char *list = strdup(p->baselines);
    if (!list)
        return sw_cli_error(CMD, "out of memory");
    for (char *sp = NULL, *tok = strtok_r(list, ",", &sp); tok && !rc;
         tok = strtok_r(NULL, ",", &sp))
        rc = add_policy(p, tok);
    free(list);
    for (int k = 0; k < p->n && !rc; k++)
        if (!(p->p[k].time = calloc((size_t)p->instances, sizeof(double))))
            rc = sw_cli_error(CMD, "out of memory");
    return rc;
}

static int parse(int argc, char **argv, plan *p)
{
    const struct option *opts = sw_cli_rl_table(own);
    int c, bad = 0;
    optind = 1;
    while (!bad && (c = getopt_long(argc, argv, "hq", opts, NULL)) != -1) {
        int r = sw_cli_rl_option(&p->rl, CMD, c, optarg);
        if (r != 0) {
            bad = r < 0;
            continue;
        }
        switch (c) {
        case 'p': p->policy_file = optarg; break;
        case 'b': p->baselines = optarg; break;
        case 'c': p->csv_path = optarg; break;
        case 'q': p->rl.quiet = true; break;
        case 'i': bad = !sw_cli_long(CMD, "--instances", optarg, 1, 1000000, &p->instances); break;
        case 's': bad = !sw_cli_long(CMD, "--seeds", optarg, 1, 10000, &p->seeds); break;
        case 'h': help(); return -1;
        default: bad = 1;
        }
    }
    if (bad || sw_cli_stray(CMD, argc, argv))
        return 2;
    return make_policies(p) ? 1 : 0;
}

static void account(plan *p, int k, long i, const sw_rl_run *r)
{
    stats *s = &p->p[k];
    s->time[i] += r->time / (double)p->seeds;
    s->sum_steps += r->steps_per_worker;
    s->sum_applies += (double)r->applies;
    s->sum_idle += r->idle_share;
    s->sum_decide += r->decide_share;
    s->sum_probe += r->probe_share;
    s->runs++;
    s->reached += r->reached;
}

static int run_all(plan *p)
{
    double t0 = sw_clock_now_s();
    long total = p->instances * p->seeds * p->n, done = 0;
    char err[SW_ERR_LEN];
    for (long i = 0; i < p->instances; i++)
        for (long r = 0; r < p->seeds; r++)
            for (int k = 0; k < p->n; k++, done++) {
                sw_rl_run run;
                if (sw_rl_run_instance(&p->rl.sc, p->rl.seed, FIRST_EVAL_INSTANCE + (uint64_t)i,
                                       (uint32_t)r, p->p[k].spec, SW_RL_PLAIN, NULL, 0, &run, err))
                    return sw_cli_error(CMD, "%s on instance %ld: %s", p->p[k].spec, i, err);
                account(p, k, i, &run);
                if (p->csv)
                    fprintf(p->csv, "%ld,%ld,\"%s\",\"%s\",%.6g,%d,%.6g,%llu,%.6g,%.6g\n", i, r,
                            p->p[k].spec, run.model, run.time, run.reached, run.steps_per_worker,
                            (unsigned long long)run.applies, run.idle_share, run.decide_share);
                if (!p->rl.quiet) {
                    double spent = sw_clock_now_s() - t0;
                    fprintf(stderr,
                            isatty(STDERR_FILENO)
                                ? "\r\033[K%ld/%ld runs, %.0f s, about %.0f s left"
                                : "%ld/%ld runs, %.0f s, about %.0f s left\n",
                            done + 1, total, spent,
                            spent / (double)(done + 1) * (double)(total - done - 1));
                }
            }
    if (!p->rl.quiet && isatty(STDERR_FILENO))
        fputc('\n', stderr);
    return 0;
}

/* Mean and 95% half-width (normal approximation) of n values. */
static void mean_ci(const double *x, long n, double *mean, double *half)
{
    double s = 0, ss = 0;
    for (long i = 0; i < n; i++)
        s += x[i];
    *mean = s / (double)n;
    for (long i = 0; i < n; i++)
        ss += (x[i] - *mean) * (x[i] - *mean);
    *half = n > 1 ? 1.96 * sqrt(ss / (double)(n - 1) / (double)n) : 0;
}

static void print_table(const plan *p)
{
    printf("%-32s %20s %8s %12s %9s %6s %9s %7s\n", "policy", "time to target (s)", "reached",
           "steps/worker", "applies", "idle", "deciding", "probe");
    for (int k = 0; k < p->n; k++) {
        const stats *s = &p->p[k];
        double m, h, n = (double)s->runs;
        mean_ci(s->time, p->instances, &m, &h);
        printf("%-32s %11.0f +- %5.0f %7.1f%% %12.1f %9.0f %5.1f%% %8.3f%% %6.1f%%\n", s->spec, m,
               h, 100.0 * (double)s->reached / n, s->sum_steps / n, s->sum_applies / n,
               100 * s->sum_idle / n, 100 * s->sum_decide / n, 100 * s->sum_probe / n);
    }
}

/* The learned policy's speedup over a baseline: the mean over instances of T_base / T_rlp. */
static void print_speedup(const plan *p, int k, const char *label)
{
    double *ratio = malloc((size_t)p->instances * sizeof *ratio), m, h;
    if (!ratio)
        return;
    for (long i = 0; i < p->instances; i++)
        ratio[i] = p->p[k].time[i] / p->p[0].time[i];
    mean_ci(ratio, p->instances, &m, &h);
    printf("speedup over %-22s %.2fx +- %.2f (95%% CI over %ld instances)\n", label, m, h,
           p->instances);
    free(ratio);
}

static void print_speedups(const plan *p)
{
    int best_ssp = -1;
    double best = INFINITY, m, h;
    for (int k = 1; k < p->n; k++) {
        print_speedup(p, k, p->p[k].spec);
        mean_ci(p->p[k].time, p->instances, &m, &h);
        if (strncmp(p->p[k].spec, "ssp", 3) == 0 && m < best) {
            best = m;
            best_ssp = k;
        }
    }
    if (best_ssp > 0) {
        char label[320];
        snprintf(label, sizeof label, "best SSP (%s)", p->p[best_ssp].spec);
        print_speedup(p, best_ssp, label);
    }
}

int sw_cli_rl_eval(int argc, char **argv)
{
    plan p = {.policy_file = sw_rl_default_policy_path(),
              .baselines = "bsp,asp,ssp:s=1,ssp:s=4,ssp:s=7",
              .instances = 100,
              .seeds = 3};
    sw_cli_rl_defaults(&p.rl);
    int rc = parse(argc, argv, &p);
    if (rc)
        return rc < 0 ? 0 : rc;
    if (p.csv_path && !(p.csv = fopen(p.csv_path, "w")))
        rc = sw_cli_error(CMD, "%s: cannot create", p.csv_path);
    if (p.csv)
        fprintf(p.csv, "instance,seed,policy,model,time,reached,steps_per_worker,applies,"
                       "idle_share,decide_share\n");
    if (!rc && !(rc = sw_cli_rl_load(&p.rl, CMD)) && !(rc = run_all(&p))) {
        print_table(&p);
        print_speedups(&p);
    }
    if (p.csv && fclose(p.csv) != 0 && !rc)
        rc = sw_cli_error(CMD, "%s: write error", p.csv_path);
    for (int k = 0; k < p.n; k++)
        free(p.p[k].time);
    sw_data_free(&p.rl.data);
    return rc;
}
