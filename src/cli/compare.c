/* `syncwise compare`: every policy on the same scenarios (one per seed), mean time to target
 * with a 95% confidence interval, and each policy's speedup over the best classic baseline.
 *
 * Runs are independent, so they are spread over --jobs threads, each with its own engine and
 * model (OpenBLAS is held to one thread per run). A run that misses its target within the limits
 * counts with its end time and is reported as censored, which makes that policy's mean a lower
 * bound; the table says so.
 */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compare_plan.h"
#include "syncwise/clock.h"
#include "syncwise/compare.h"
#include "syncwise/err.h"
#include "syncwise/file.h"
#include "syncwise/log.h"

#define AT(field) offsetof(plan, field)
static const sw_opt own[] = {
    {SW_OPT_ROW(
        SW_OPT_STR, "policies", 0, AT(list), 0, 0, "LIST",
        "policies separated by ';' or ',' (a ','-part without ':'\n"
        "but with '=' continues the policy before it), e.g.\nbsp,asp,ssp:s=2,ssp:s=5 (required)")},
    {SW_OPT_ROW(SW_OPT_LONG, "seeds", 0, AT(seeds), 1, 100000, "N",
                "scenarios per policy, seeds 1..N")},
    {SW_OPT_ROW(SW_OPT_LONG, "jobs", 'j', AT(jobs), 0, 256, "N",
                "runs at once (0: one per core)"),
     .shown = "the cores"},
    {SW_OPT_ROW(SW_OPT_STR, "log-dir", 0, AT(log_dir), 0, 0, "DIR",
                "keep every run's JSONL event log there (for syncwise\n"
                "report DIR/*.jsonl), results.csv with one row per run\n"
                "(the rows before as results.csv.prev; results.csv.lock\n"
                "keeps a second compare out), compare.scenario, the\n"
                "options --resume must give again, and compare.files,\n"
                "the size and CRC-32C of each file the runs read (a\n"
                "policy's file=, a trace, the data, a plugin), which\n"
                "must not change before a --resume")},
    {SW_OPT_ROW(SW_OPT_FLAG, "resume", 0, AT(resume), 0, 0, NULL,
                "with --log-dir: keep the runs its results.csv holds\n"
                "(each row is written as its run ends) and run the\n"
                "others; the scenario must be the one run there")},
    {SW_OPT_ROW(SW_OPT_STR, "baselines", 0, AT(baselines), 0, 0, "LIST",
                "which of the policies are baselines for the speedup\n"
                "(a list as --policies takes, each spelled as there)"),
     .shown = "every bsp, asp and ssp"},
    SW_OPT_END_ROW,
};
#undef AT

static const sw_cmd_opts command = {
    .cmd = CMD,
    .usage = "--policies LIST [OPTIONS]",
    .about = "Runs every policy on the same simulated scenarios, one per seed, and prints the\n"
             "mean virtual time to the target with a 95% confidence interval (Student's t) and\n"
             "each policy's speedup over the best classic baseline (bsp, asp, ssp): of the\n"
             "means, and seed by seed (each seed is one scenario for every policy), with its\n"
             "95% interval.",
    .tables = {own, sw_cli_scenario_opts},
    .epilog = sw_cli_print_policy_help,
};

/* Every policy once (by its log's name: two would write one file), and every baseline one of
 * the policies; 0, or 1 said. */
static int check_list(const plan *p)
{
    for (int i = 0; i < p->n_policies; i++)
        for (int k = 0; k < i; k++) {
            char a[256], b[256];
            sw_cli_file_part(p->policies[i], a, sizeof a);
            sw_cli_file_part(p->policies[k], b, sizeof b);
            if (!strcmp(a, b))
                return sw_cli_error(CMD, "--policies names '%s' and '%s', which would write one "
                                    "log", p->policies[k], p->policies[i]);
        }
    for (const char *b = p->baselines; b && *b; b += strcspn(b, ";"), b += *b == ';') {
        int len = (int)strcspn(b, ";"), found = 0;
        for (int i = 0; i < p->n_policies && !found; i++)
            found = (int)strlen(p->policies[i]) == len && !strncmp(p->policies[i], b, len);
        if (!found && len)
            return sw_cli_error(CMD, "--baselines: '%.*s' is not one of --policies (a baseline "
                                "is one of the policies run, spelled as there)", len, b);
    }
    return 0;
}

/* --baselines in --policies' syntax, each spec as that list spells it, ';' between them. */
static int read_baselines(plan *p)
{
    p->baselines_read = sw_cli_policy_list_joined(CMD, "--baselines", p->baselines, MAX_POLICIES);
    p->baselines = p->baselines_read;
    return p->baselines ? 0 : -1;
}

/* DIR/POLICY-seedN.jsonl, with the spec's ':' and ',' made file-name friendly. */
static void log_path(const plan *p, const job *j, char *out, size_t cap)
{
    char name[256];
    sw_cli_file_part(p->policies[j->policy], name, sizeof name);
    snprintf(out, cap, "%s/%s-seed%llu.jsonl", p->log_dir, name, (unsigned long long)j->seed);
}

/* No file the comparison writes into --log-dir (results.csv, a run's log) is one it reads: a
 * trace, a data file or a policy file kept there. */
static int outputs_apart(const plan *p)
{
    if (!p->log_dir || access(p->log_dir, F_OK) != 0) /* made later: it holds no input yet */
        return 0;
    const char *in[MAX_POLICIES + 3] = {p->sc.cfg.cluster, p->sc.data_spec, p->sc.cfg.events};
    for (int i = 0; i < p->n_policies; i++)
        in[3 + i] = p->policies[i];
    int rc = 0;
    for (long k = -1; !rc && k < p->seeds * p->n_policies; k++) { /* -1: results.csv */
        char out[4096];
        if (k < 0)
            snprintf(out, sizeof out, "%s/results.csv", p->log_dir);
        else /* the runs in the order run_all makes them */
            log_path(p, &(job){.policy = (int)(k % p->n_policies),
                               .seed = 1 + (uint64_t)(k / p->n_policies)}, out, sizeof out);
        rc = sw_cli_outputs_apart(CMD, 1, (const char *[]){"--log-dir"}, (const char *[]){out},
                                  3 + p->n_policies, in);
    }
    return rc;
}

static int parse(int argc, char **argv, plan *p)
{
    int rc = sw_cli_parse(&command, argc, argv, p, NULL);
    if (rc)
        return rc == 1 ? -1 : rc;
    if (!p->list)
        return sw_cli_error(CMD, "--policies LIST is required (see --help)") + 1;
    p->n_policies = sw_cli_policy_list(CMD, "--policies", p->list, p->policies, MAX_POLICIES);
    if (p->n_policies < 0) {
        p->n_policies = 0;
        return 2;
    }
    if ((p->baselines && read_baselines(p)) || check_list(p))
        return 2;
    if (p->resume && !p->log_dir)
        return sw_cli_error(CMD, "--resume needs --log-dir DIR, the comparison to go on with") + 1;
    rc = sw_cli_scenario_finish(&p->sc, CMD, (const char *const *)p->policies, p->n_policies);
    return rc ? rc : outputs_apart(p);
}

static void run_job(plan *p, job *j)
{
    sw_sim_config cfg = p->sc.cfg;
    cfg.policy = p->policies[j->policy];
    cfg.seed = j->seed;
    cfg.data = p->data;
    char path[4096];
    if (p->log_dir) {
        log_path(p, j, path, sizeof path);
        if (!(cfg.log = sw_file_open_log(path, false, "the log", j->err))) {
            j->rc = SW_EIO;
            return;
        }
    }
    j->rc = sw_sim_run(&cfg, &j->r, j->err);
    int crc = sw_file_close(cfg.log, path, j->rc ? NULL : j->err);
    j->rc = j->rc ? j->rc : crc;
    if (j->rc)
        return;
    /* The table reads the row, as it reads a row kept from an earlier comparison. */
    j->row = sw__cmp_row_format(p->policies[j->policy], j->seed, &j->r);
    if (!j->row)
        j->rc = sw_fail(j->err, SW_ENOMEM, "out of memory for the run's row");
    else if (!sw__cmp_row_parse(j->row, &j->facts))
        j->rc = sw_fail(j->err, SW_ERANGE,
                        "the run's row cannot be read back (a policy spec of "
                        "%zu characters?)",
                        strlen(p->policies[j->policy]));
}

/* The fastest policy of the runs done, by the table's own ranking (a policy whose runs a limit
 * cut short is not crowned for the short times). */
static void best_so_far(const plan *p, char *out, size_t cap)
{
    sw_trials s[MAX_POLICIES];
    for (int k = 0; k < p->n_policies; k++)
        s[k] = sw__cmp_summarize(p, k);
    int who = sw_fastest((const char *const *)p->policies, s, p->n_policies);
    if (who >= 0)
        snprintf(out, cap, "; fastest so far %s, a mean %.0f virtual s (%ld/%ld reached)",
                 p->policies[who], s[who].mean, s[who].reached, s[who].n);
    else
        out[0] = '\0';
}

static void *worker(void *arg)
{
    plan *p = arg;
    for (;;) {
        pthread_mutex_lock(&p->lock);
        size_t i = sw_stop_requested(p->stop) ? p->n_runs : p->next++;
        pthread_mutex_unlock(&p->lock);
        if (i >= p->n_runs) {
            sw_cli_crash_note_done();
            return NULL;
        }
        job *j = &p->runs[i];
        if (j->done) /* kept from an earlier comparison */
            continue;
        sw_cli_crash_note_doing(p->policies[j->policy], j->seed);
        run_job(p, j);
        sw_cli_crash_note_doing(NULL, 0);
        pthread_mutex_lock(&p->lock);
        j->done = true;
        p->done++;
        if (!j->rc && p->log_dir)
            j->rc = sw__cmp_journal_add(&p->journal, j->row, j->err);
        if (!p->sc.quiet) {
            double el = sw_clock_now_s() - p->t0, ran = (double)(p->done - p->resumed);
            char best[300];
            best_so_far(p, best, sizeof best);
            fprintf(stderr,
                    isatty(STDERR_FILENO)
                        ? "\r\033[K%zu/%zu runs in %.0f s of wall time, about %.0f s left%s"
                        : "%zu/%zu runs in %.0f s of wall time, about %.0f s left%s\n",
                    p->done, p->n_runs, el, el / ran * (double)(p->n_runs - p->done), best);
        }
        pthread_mutex_unlock(&p->lock);
    }
}

/* results.csv in the comparison's order, one row per run (syncwise report reads the logs). */
static int write_results(plan *p, char *err)
{
    char **rows = malloc(p->n_runs * sizeof *rows);
    if (!rows)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    for (size_t i = 0; i < p->n_runs; i++)
        rows[i] = p->runs[i].rc ? NULL : p->runs[i].row;
    int rc = sw__cmp_journal_finish(&p->journal, rows, p->n_runs, err);
    free(rows);
    return rc;
}

/* Whether a file name is one of this comparison's logs: POLICY-seedN.jsonl (log_path) with a
 * policy of its own (parts: their file-name parts) and N one of its seeds. */
static bool our_log(const plan *p, char parts[][256], const char *name)
{
    for (int k = 0; k < p->n_policies; k++) {
        size_t len = strlen(parts[k]);
        if (strncmp(name, parts[k], len) || strncmp(name + len, "-seed", 5))
            continue;
        char *end;
        long seed = strtol(name + len + 5, &end, 10);
        if (seed >= 1 && seed <= p->seeds && !strcmp(end, ".jsonl") && isdigit(name[len + 5]))
            return true;
    }
    return false;
}

/* Logs in --log-dir that this comparison did not write (an earlier one's) would join it in
 * a report of every log in DIR: the user is told, and their files are left alone. */
static void warn_of_other_logs(const plan *p)
{
    char parts[MAX_POLICIES][256];
    for (int k = 0; k < p->n_policies; k++)
        sw_cli_file_part(p->policies[k], parts[k], sizeof parts[k]);
    DIR *d = opendir(p->log_dir);
    size_t others = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len >= 6 && !strcmp(e->d_name + len - 6, ".jsonl"))
            others += !our_log(p, parts, e->d_name);
    }
    if (d)
        closedir(d);
    if (others)
        sw_log(SW_LOG_WARN, "%s holds %zu log%s this comparison did not write (an earlier "
               "one's?): report %s/*.jsonl would read %s too", p->log_dir, others,
               others == 1 ? "" : "s", p->log_dir, others == 1 ? "it" : "them");
}

static const char *const not_scenario[] = {"quiet", "verbose", NULL};

/* Whether a kept record's line is "--NAME" or "--NAME VALUE" for a scenario option NAME not
 * named before (seen: one flag per row of the table): the lines this version writes. Another
 * tool's line, or a newer version's option, would otherwise be passed over unread. */
#define RECORD_ROWS 128 /* the scenario table's rows, headings included, at most */
static bool record_line_ours(const char *line, bool seen[RECORD_ROWS])
{
    if (strncmp(line, "--", 2))
        return false;
    size_t len = strcspn(line + 2, " ");
    for (size_t i = 0; i < RECORD_ROWS && sw_cli_scenario_opts[i].type != SW_OPT_END; i++) {
        const sw_opt *o = &sw_cli_scenario_opts[i];
        if (o->type != SW_OPT_SECTION && strlen(o->name) == len &&
            !strncmp(o->name, line + 2, len))
            return !seen[i] && (seen[i] = true);
    }
    return false;
}

/* A kept record ("--name VALUE" lines) as this version spells it: its lines made a command line
 * again and recorded anew. */
static bool record_anew(const char *kept, char *out, size_t cap)
{
    size_t n = strlen(kept);
    char *text = malloc(n + 1), **argv = malloc((2 * n + 2) * sizeof *argv);
    int argc = 0;
    bool ok = text && argv;
    if (ok) {
        memcpy(text, kept, n + 1);
        argv[argc++] = "compare";
        bool seen[RECORD_ROWS] = {false};
        for (char *save = NULL, *line = strtok_r(text, "\n", &save); ok && line;
             line = strtok_r(NULL, "\n", &save)) {
            ok = record_line_ours(line, seen);
            char *space = strchr(line, ' ');
            if (space)
                *space = '\0';
            argv[argc++] = line;
            if (space)
                argv[argc++] = space + 1;
        }
        argv[argc] = NULL;
        ok = ok && !sw_cli_options_given(&command, argc, argv, sw_cli_scenario_opts,
                                         not_scenario, out, cap);
    }
    free(argv);
    free(text);
    return ok;
}

/* Whether the log of a run results.csv keeps is missing from --log-dir. */
static bool log_gone(const plan *p, const job *j)
{
    char path[4096];
    log_path(p, j, path, sizeof path);
    return access(path, F_OK) != 0 && errno == ENOENT;
}

/* The comparison's record in --log-dir: its scenario, the rows of the runs it keeps (on
 * --resume), and results.csv open for the rows to come. */
static int open_journal(plan *p, int argc, char **argv, char *err)
{
    char scenario[8192];
    if (sw_cli_options_given(&command, argc, argv, sw_cli_scenario_opts, not_scenario, scenario,
                             sizeof scenario))
        return sw_fail(err, SW_ERANGE, "the scenario's options are too long to record");
    int rc = sw__cmp_journal_start(&p->journal, p->log_dir, scenario, p->resume, record_anew,
                                   err);
    const char *texts[MAX_POLICIES + 3] = {p->sc.cfg.cluster, p->sc.cfg.events, p->sc.data_spec};
    for (int i = 0; i < p->n_policies; i++)
        texts[3 + i] = p->policies[i];
    if (!rc)
        rc = sw__cmp_files_check(p->log_dir, texts, 3 + (size_t)p->n_policies, p->resume, err);
    char **kept = rc ? NULL : calloc(p->n_runs, sizeof *kept);
    bool target = p->sc.cfg.target_acc > 0 || p->sc.cfg.target_loss > 0;
    if (!rc && !kept)
        rc = sw_fail(err, SW_ENOMEM, "out of memory");
    size_t gone = 0;
    for (size_t i = 0; !rc && i < p->n_runs; i++) {
        job *j = &p->runs[i];
        kept[i] = j->row = sw__cmp_journal_take(&p->journal, p->policies[j->policy], j->seed);
        if (!j->row)
            continue;
        /* A target reached where none was set: no row this scenario wrote. */
        if (sw__cmp_row_parse(j->row, &j->facts) && (target || !j->facts.trial.reached)) {
            j->done = true;
            p->done++;
            p->resumed++;
            gone += log_gone(p, j);
            continue;
        }
        free(j->row);
        kept[i] = j->row = NULL;
        p->journal.unread++;
    }
    if (!rc && p->journal.unread)
        sw_log(SW_LOG_WARN,
               "%zu lines of results.csv are no row this version reads (cut short "
               "by a kill, or edited): their runs run again",
               p->journal.unread);
    if (gone) /* rows kept from another sitting without their logs (bench/adaptive.sh) */
        sw_log(SW_LOG_WARN, "%zu run%s results.csv keeps %s no log in %s (removed, or kept from "
               "another sitting): the table counts %s, report %s/*.jsonl would not", gone,
               gone == 1 ? "" : "s", gone == 1 ? "has" : "have", p->log_dir,
               gone == 1 ? "it" : "them", p->log_dir);
    size_t others = rc ? 0 : sw__cmp_journal_unclaimed(&p->journal);
    if (others)
        sw_log(SW_LOG_WARN,
               "results.csv holds %zu rows of runs outside this comparison (another "
               "policy or seed): they stay at its end, out of the table",
               others);
    if (!rc && p->resume)
        sw_log(SW_LOG_INFO, "%zu of the %zu runs were done: %zu to run", p->resumed, p->n_runs,
               p->n_runs - p->resumed);
    rc = rc ? rc : sw__cmp_journal_open(&p->journal, kept, p->n_runs, err);
    free(kept);
    return rc;
}

static int run_all(plan *p, int argc, char **argv, char *err)
{
    p->n_runs = (size_t)p->seeds * (size_t)p->n_policies;
    p->runs = calloc(p->n_runs, sizeof *p->runs);
    if (!p->runs)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    /* Seed-major order: the first results to come in cover every policy. */
    for (size_t i = 0; i < p->n_runs; i++) {
        p->runs[i].policy = (int)(i % (size_t)p->n_policies);
        p->runs[i].seed = 1 + i / (size_t)p->n_policies;
    }
    int rc = p->log_dir ? open_journal(p, argc, argv, err) : 0;
    if (rc)
        return rc;
    p->t0 = sw_clock_now_s();
    sw_cli_crash_note_install(CMD);
    pthread_mutex_init(&p->lock, NULL);
    sw_cli_run_jobs(p->jobs, worker, p);
    pthread_mutex_destroy(&p->lock);
    if (!p->sc.quiet && isatty(STDERR_FILENO))
        fprintf(stderr, "\r\033[K");
    return 0;
}

int sw_cli_compare(int argc, char **argv)
{
    plan p = {.seeds = 10, .stop = sw_cli_catch_signals()}; /* a second signal: at once */
    sw_cli_scenario_defaults(&p.sc);
    /* --threads 1 by default (the scenario's), as parallel runs each take one core */
    int rc = parse(argc, argv, &p);
    char err[SW_ERR_LEN];
    sw_task_data data = {0};
    if (rc == 0) {
        sw_cli_set_threads(p.sc.threads);
        if (p.sc.data_spec && (rc = sw_task_data_load(&data, p.sc.cfg.model, p.sc.data_spec,
                                                      SW_DATA_SEED, err)))
            rc = sw_cli_error(CMD, "%s", err) * sw_cli_load_status(rc);
        p.data = p.sc.data_spec ? &data : NULL;
        if (!rc) /* the model, targets and shares hold for every policy: the first says */
            rc = sw_cli_scenario_check_data(&p.sc, CMD, p.policies[0], p.data);
        if (!rc && p.log_dir && sw_cli_mkdirs(p.log_dir) != 0)
            rc = sw_cli_error(CMD, "--log-dir %s: cannot create: %s", p.log_dir, strerror(errno));
        if (!rc && (rc = run_all(&p, argc, argv, err))) /* --resume of another scenario: 2 */
            rc = sw_cli_error(CMD, "%s", err) * sw_cli_scenario_status(rc);
        if (!rc && sw_stop_requested(p.stop) && p.done < p.n_runs) /* half a table would mislead */
            rc = sw_cli_error(CMD, "stopped by a signal after %zu of %zu runs%s", p.done,
                              p.n_runs, p.log_dir ? ": the same command with --resume goes on "
                                                    "from the runs done"
                                                  : " (give --log-dir to keep runs done)");
        /* A full disk, say (the runs' logs may have filled it): the table is printed all the
         * same, from the runs in memory, and the rows written as each run ended stay. */
        bool unwritten = !rc && p.log_dir && write_results(&p, err);
        if (!rc && p.log_dir && !unwritten)
            warn_of_other_logs(&p);
        if (!rc)
            sw__cmp_report(&p);
        if (unwritten)
            rc = sw_cli_error(CMD, "%s: the table above holds every run that ended; "
                              "results.csv keeps the rows written as each run ended "
                              "(--resume goes on from them)", err);
        size_t diverged = 0;
        for (size_t i = 0; !rc && i < p.n_runs; i++) {
            if (p.runs[i].rc) /* the table stands, but the comparison is not whole */
                rc = sw_cli_error(CMD, "%s", "some runs failed (listed under the table)");
            diverged += p.runs[i].facts.diverged_t >= 0;
        }
        if (!rc && p.n_runs && diverged == p.n_runs) /* as sim fails on its one run */
            rc = sw_cli_error(CMD, "every run diverged (listed under the table): nothing compares");
    }
    for (size_t i = 0; p.runs && i < p.n_runs; i++) {
        sw_sim_result_free(&p.runs[i].r);
        free(p.runs[i].row);
    }
    sw__cmp_journal_free(&p.journal);
    free(p.runs);
    for (int i = 0; i < p.n_policies; i++)
        free(p.policies[i]);
    free(p.baselines_read);
    sw_task_data_free(&data);
    return rc < 0 ? 0 : rc;
}
