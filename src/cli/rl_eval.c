/* `syncwise rl eval`: a learned policy against the classic ones on fresh instances, the runs
 * spread over --jobs threads (each run is deterministic, so the tables do not depend on how many),
 * then the report (rl_eval_report.c). */
#define _POSIX_C_SOURCE 200809L
#include "rl_eval.h"
#include "scenario.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "syncwise/clock.h"
#include "syncwise/err.h"
#include "syncwise/file.h"

#define CMD "rl eval"
#define FIRST_EVAL_INSTANCE 2000000 /* never a training or pre-training instance */

#define AT(field) offsetof(sw_rl_eval, field)
static const sw_opt own[] = {
    {SW_OPT_ROW(SW_OPT_STR, "policy", 0, AT(policy_file), 0, 0, "FILE",
                "learned policy: a file, or an rlp or rlswitch spec\n(rlp:file=A,high=B)"),
     .shown = "the shipped one"},
    {SW_OPT_ROW(SW_OPT_STR, "baselines", 0, AT(baselines), 0, 0, "LIST",
                "policies to compare with")},
    {SW_OPT_ROW(SW_OPT_LONG, "instances", 0, AT(instances), 1, 1000000, "N", "test instances")},
    {SW_OPT_ROW(SW_OPT_LONG, "seeds", 0, AT(seeds), 1, 10000, "K",
                "runs of each instance with other seeds")},
    {SW_OPT_ROW(SW_OPT_LONG, "jobs", 'j', AT(jobs), 0, 256, "N", "runs at once (0: one per core)")},
    {SW_OPT_ROW(SW_OPT_STR, "csv", 0, AT(csv_path), 0, 0, "FILE",
                "one row per run, written as the runs end")},
    {SW_OPT_ROW(SW_OPT_FLAG, "quiet", 'q', AT(rl.quiet), 0, 0, NULL, "no progress lines")},
    SW_OPT_END_ROW,
};
#undef AT

static const sw_cmd_opts command = {
    .cmd = CMD,
    .about = "Runs a learned policy and baselines on the same fresh instances (never used in\n"
             "training), several seeds each, and prints the mean time to target with a 95%\n"
             "confidence interval, the speedup of the learned policy per instance over each\n"
             "baseline, the best SSP, the best single classic policy and the best classic policy\n"
             "of each instance, and steps per worker, applies, idle share and the share of real\n"
             "time spent deciding (inference) and in the loss probe. With a family of scenarios\n"
             "(lists below) the speedups are also given per part: per entry an instance drew.",
    .tables = {own, sw_cli_rl_opts_table},
};

static int add_policy(sw_rl_eval *p, const char *spec, const char *option)
{
    if (p->n == SW_RL_EVAL_MAX_POLICIES || strlen(spec) >= sizeof p->specs[0])
        return sw_cli_error(CMD, "too many or too long policies");
    for (int k = 0; k < p->n; k++) /* a policy twice: its rows twice, its runs run twice */
        if (!strcmp(p->specs[k], spec))
            return sw_cli_error(CMD, "%s names '%s' twice (or as --policy): give each once",
                                option, spec) * 2;
    char err[SW_ERR_LEN]; /* before any run: as many slots as an instance may draw workers */
    int rc = sw_engine_check_policy(spec, SW_RL_EVAL_CHECK_SLOTS, err);
    if (rc) /* a bad spec is the command line's, as in sim; a policy file that fails is not */
        return sw_cli_error(CMD, "%s: %s", option, err) * sw_cli_scenario_status(rc);
    snprintf(p->specs[p->n++], sizeof p->specs[0], "%s", spec);
    return 0;
}

/* The learned policy (a file, or an rlp or rlswitch spec naming its files) first, then the
 * baselines; each checked, and its files read, before any run. */
static int make_policies(sw_rl_eval *p)
{
    char err[SW_ERR_LEN];
    const char *f = p->policy_file;
    bool spec = !strncmp(f, "rlp:", 4) || !strcmp(f, "rlp") || !strncmp(f, "rlswitch:", 9) ||
                !strcmp(f, "rlswitch");
    const char *as = "%s";
    if (!spec) { /* a file that fails says so in its own words; its layout says who runs it */
        sw_rl_policy learned;
        if (sw_rl_policy_load(f, &learned, err))
            return sw_cli_error(CMD, "--policy: %s", err);
        as = learned.hp.layout == SW_RL_LAYOUT_STRETCH ? "rlswitch:file=%s" : "rlp:file=%s";
        sw_rl_policy_free(&learned);
    }
    char first[sizeof p->specs[0]];
    if (snprintf(first, sizeof first, as, f) >= (int)sizeof first)
        return sw_cli_error(CMD, "--policy: too long") * 2;
    int rc = add_policy(p, first, "--policy");
    char *specs[SW_RL_EVAL_MAX_POLICIES];
    int n = sw_cli_policy_list(CMD, "--baselines", p->baselines, specs, SW_RL_EVAL_MAX_POLICIES);
    if (n < 0)
        return 2;
    for (int i = 0; i < n; i++) {
        rc = rc ? rc : add_policy(p, specs[i], "--baselines");
        free(specs[i]);
    }
    if (!rc && p->n < 2)
        rc = sw_cli_error(CMD, "--baselines: at least one policy to compare with");
    return rc;
}

static void progress(sw_rl_eval *p)
{
    if (p->rl.quiet)
        return;
    double spent = sw_clock_now_s() - p->t0;
    fprintf(stderr,
            isatty(STDERR_FILENO) ? "\r\033[K%ld/%ld runs, %.0f s, about %.0f s left"
                                  : "%ld/%ld runs, %.0f s, about %.0f s left\n",
            p->done, p->total, spent, spent / (double)p->done * (double)(p->total - p->done));
}

/* Run `at`'s row, in instance, seed, policy order. */
static void write_row(sw_rl_eval *p, long at)
{
    const sw_rl_run *run = &p->runs[at];
    fprintf(p->csv, "%ld,%ld,\"%s\",\"%s\",%.6g,%d,%.6g,%llu,%.6g,%.6g,%llu,\"%s\"\n",
            at / (p->seeds * p->n), at / p->n % p->seeds, p->specs[at % p->n], run->model,
            run->time, run->reached, run->steps_per_worker, (unsigned long long)run->applies,
            run->idle_share, run->decide_share, (unsigned long long)run->iterations,
            run->regime);
}

/* The rows of every run done with all those before it (so that a stopped evaluation keeps
 * what it measured, in order whatever the threads' pace). Under the lock. */
static void write_rows(sw_rl_eval *p)
{
    if (!p->csv)
        return;
    while (p->written < p->total && p->finished[p->written])
        write_row(p, p->written++);
    fflush(p->csv);
}

/* A thread: takes the next run until none are left or one failed. */
static void *worker(void *arg)
{
    sw_rl_eval *p = arg;
    for (;;) {
        pthread_mutex_lock(&p->lock);
        long at = p->rc ? p->total : p->next++;
        pthread_mutex_unlock(&p->lock);
        if (at >= p->total)
            return NULL;
        long instance = at / (p->seeds * p->n), seed = at / p->n % p->seeds;
        int k = (int)(at % p->n);
        char err[SW_ERR_LEN];
        int rc = sw_rl_run_instance(&p->rl.sc, p->rl.seed, FIRST_EVAL_INSTANCE + (uint64_t)instance,
                                    (uint32_t)seed, p->specs[k], SW_RL_PLAIN, NULL, NULL, 0,
                                    &p->runs[at], err);
        pthread_mutex_lock(&p->lock);
        if (rc && !p->rc) {
            p->rc = rc;
            snprintf(p->err, sizeof p->err, "%.120s on instance %ld: %.200s", p->specs[k], instance,
                     err);
        }
        p->finished[at] = !rc;
        p->done++;
        write_rows(p);
        progress(p);
        pthread_mutex_unlock(&p->lock);
    }
}

static int run_all(sw_rl_eval *p)
{
    p->total = p->instances * p->seeds * p->n;
    if (!(p->runs = calloc((size_t)p->total, sizeof *p->runs)) ||
        !(p->finished = calloc((size_t)p->total, sizeof *p->finished)))
        return sw_cli_error(CMD, "out of memory");
    p->t0 = sw_clock_now_s();
    pthread_mutex_init(&p->lock, NULL);
    sw_cli_run_jobs(p->jobs, worker, p);
    pthread_mutex_destroy(&p->lock);
    if (!p->rl.quiet && isatty(STDERR_FILENO))
        fputc('\n', stderr);
    return p->rc ? sw_cli_error(CMD, "%s", p->err) : 0;
}

int sw_cli_rl_eval(int argc, char **argv)
{
    sw_rl_eval p = {.policy_file = sw_rl_default_policy_path(),
                    .baselines = "bsp,asp,ssp:s=1,ssp:s=4,ssp:s=7",
                    .instances = 100,
                    .seeds = 3,
                    .jobs = 1};
    sw_cli_rl_defaults(&p.rl);
    int rc = sw_cli_parse(&command, argc, argv, &p, NULL);
    if (rc)
        return rc == 1 ? 0 : rc;
    const char *inputs[] = {p.policy_file, p.rl.data_spec, p.baselines, p.rl.sc.cluster};
    if ((rc = sw_cli_outputs_apart(CMD, 1, (const char *[]){"--csv"}, &p.csv_path, 4, inputs)))
        return rc;
    char err[SW_ERR_LEN];
    if (!(rc = make_policies(&p)) && p.csv_path &&
        !(p.csv = sw_file_create(p.csv_path, "--csv", err)))
        rc = sw_cli_error(CMD, "%s", err);
    if (p.csv)
        fprintf(p.csv, "instance,seed,policy,model,time,reached,steps_per_worker,applies,"
                       "idle_share,decide_share,pushes,regime\n");
    if (!rc && !(rc = sw_cli_rl_load(&p.rl, CMD)) && !(rc = run_all(&p)))
        sw_rl_eval_report(&p);
    if (sw_file_close(p.csv, p.csv_path, err) && !rc)
        rc = sw_cli_error(CMD, "%s", err);
    free(p.runs);
    free(p.finished);
    sw_data_free(&p.rl.data);
    return rc;
}
