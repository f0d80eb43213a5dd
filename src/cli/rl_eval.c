/* `syncwise rl eval`: a learned policy against the classic ones on fresh instances: time to
 * target with confidence intervals, the per-instance speedup, and the statistics of the RLP
 * paper's Table 1 (steps per worker, applies, idle share, inference share). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rl_opts.h"
#include "syncwise/compare.h"
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

#define AT(field) offsetof(plan, field)
static const sw_opt own[] = {
    {SW_OPT_ROW(SW_OPT_STR, "policy", 0, AT(policy_file), 0, 0, "FILE", "learned policy"),
     .shown = "the shipped one"},
    {SW_OPT_ROW(SW_OPT_STR, "baselines", 0, AT(baselines), 0, 0, "LIST",
                "policies to compare with")},
    {SW_OPT_ROW(SW_OPT_LONG, "instances", 0, AT(instances), 1, 1000000, "N", "test instances")},
    {SW_OPT_ROW(SW_OPT_LONG, "seeds", 0, AT(seeds), 1, 10000, "K",
                "runs of each instance with other seeds")},
    {SW_OPT_ROW(SW_OPT_STR, "csv", 0, AT(csv_path), 0, 0, "FILE", "one row per run")},
    {SW_OPT_ROW(SW_OPT_FLAG, "quiet", 'q', AT(rl.quiet), 0, 0, NULL, "no progress lines")},
    SW_OPT_END_ROW,
};
#undef AT

static const sw_cmd_opts command = {
    .cmd = CMD,
    .about = "Runs a learned policy and baselines on the same fresh instances (never used in\n"
             "training), several seeds each, and prints the mean time to target with a 95%\n"
             "confidence interval, the speedup of the learned policy per instance, and steps per\n"
             "worker, applies, idle share and the share of real time spent deciding (inference)\n"
             "and in the loss probe.",
    .tables = {own, sw_cli_rl_opts_table},
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
    int rc = sw_cli_parse(&command, argc, argv, p, NULL);
    if (rc)
        return rc == 1 ? -1 : rc;
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

static void print_table(const plan *p)
{
    printf("%-32s %20s %8s %12s %9s %6s %9s %7s\n", "policy", "time to target (s)", "reached",
           "steps/worker", "applies", "idle", "deciding", "probe");
    for (int k = 0; k < p->n; k++) {
        const stats *s = &p->p[k];
        double m, h, n = (double)s->runs;
        sw_mean_ci(s->time, (size_t)p->instances, sizeof *s->time, &m, &h);
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
    sw_mean_ci(ratio, (size_t)p->instances, sizeof *ratio, &m, &h);
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
        sw_mean_ci(p->p[k].time, (size_t)p->instances, sizeof(double), &m, &h);
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
