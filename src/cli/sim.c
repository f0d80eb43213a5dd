/* `syncwise sim`: one policy on one simulated cluster, with a JSONL event log and a summary. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scenario.h"
#include "syncwise/clock.h"
#include "syncwise/err.h"
#include "syncwise/file.h"
#include "syncwise/log.h"
#include "syncwise/logread.h"

#define CMD "sim"

typedef struct sim_opts {
    sw_cli_scenario sc; /* first: the shared table's offsets are into it */
    const char *log_path;
} sim_opts;

#define AT(field) offsetof(sim_opts, field)
static const sw_opt own[] = {
    {SW_OPT_ROW(SW_OPT_STR, "policy", 0, AT(sc.cfg.policy), 0, 0, "SPEC",
                "synchronization policy")},
    {SW_OPT_ROW(SW_OPT_U64, "seed", 0, AT(sc.cfg.seed), 0, SW_LOG_MAX_SEED, "N",
                "seed of the cluster, the initial parameters and the\nbatch order (the data set is "
                "the spec's alone; at most 2^53, which\nthe log's JSON keeps exactly)")},
    {SW_OPT_ROW(SW_OPT_STR, "log", 0, AT(log_path), 0, 0, "FILE",
                "JSONL event log (see docs/log.md)")},
    SW_OPT_END_ROW,
};
#undef AT

static void lists(void)
{
    sw_cli_print_policy_help();
    printf("\n");
    sw_cli_print_data_and_models();
}

static const sw_cmd_opts command = {
    .cmd = CMD,
    .about = "Runs one synchronization policy on a simulated cluster on a virtual clock: the\n"
             "gradients are really computed, at the parameters each worker pulled. Prints a\n"
             "summary (steps, step time and idle share per worker, applies, staleness, time\n"
             "spent deciding); --log writes every event as one JSON object per line.",
    .tables = {own, sw_cli_scenario_opts},
    .epilog = lists,
};

typedef struct progress {
    bool live, quiet, verbose;
    double max_time, best, t0, last_line;
} progress;

/* One updating line on a terminal; a plain line every 10 s (every evaluation with -v) when the
 * output is not a terminal. */
static void show_eval(void *ctx, double t, uint64_t version, double loss, double acc)
{
    progress *p = ctx;
    double now = sw_clock_now_s(), el = now - p->t0;
    char eval[96];
    sw_cli_eval_text(eval, sizeof eval, loss, acc, &p->best);
    if (p->quiet || (!p->live && !p->verbose && now - p->last_line < 10))
        return;
    p->last_line = now;
    char left[64] = "";
    if (p->max_time > 0 && t > 0)
        snprintf(left, sizeof left, ", %.0f%% of the time limit, about %.0f s left",
                 100 * t / p->max_time, el * (p->max_time - t) / t);
    fprintf(stderr,
            "%svirtual t=%.1f s  V=%llu  %s  wall %.0f s%s%s",
            p->live && !p->verbose ? "\r\033[K" : "", t, (unsigned long long)version, eval, el,
            left, p->live && !p->verbose ? "" : "\n");
}

/* The run, its summary and its log: the exit status, after saying what went wrong. */
static int run(sw_cli_scenario *sc, const char *log_path)
{
    sw_task_data data = {0};
    char err[SW_ERR_LEN];
    int rc = sc->data_spec ? sw_task_data_load(&data, sc->cfg.model, sc->data_spec,
                                               SW_DATA_SEED, err)
                           : 0;
    if (rc)
        return sw_cli_error(CMD, "%s", err) * sw_cli_load_status(rc);
    sc->cfg.data = sc->data_spec ? &data : NULL;
    rc = sw_cli_scenario_check_data(sc, CMD, sc->cfg.policy, sc->cfg.data);
    if (rc) { /* said, before any log is emptied */
        sw_task_data_free(&data);
        return rc;
    }
    FILE *log = NULL;
    if (log_path && !(log = sw_file_open_log(log_path, false, "--log", err)))
        rc = SW_EIO;
    sc->cfg.log = log;
    progress pr = {.live = isatty(STDERR_FILENO),
                   .quiet = sc->quiet,
                   .verbose = sc->verbose,
                   .max_time = sc->cfg.max_time,
                   .t0 = sw_clock_now_s()};
    sc->cfg.on_eval = show_eval;
    sc->cfg.on_eval_ctx = &pr;
    sw_sim_result r;
    if (!rc && !(rc = sw_sim_run(&sc->cfg, &r, err))) {
        if (pr.live && !pr.quiet && !pr.verbose)
            fprintf(stderr, "\r\033[K");
        sw_cli_print_summary(stdout, sc->cfg.policy, &r);
        if (r.diverged_t >= 0)
            rc = sw_fail(err, SW_ERANGE, "the model diverged at t=%.1f s: its %s loss is not "
                         "finite (a lower --lr?)", r.diverged_t, r.held_out);
        sw_sim_result_free(&r);
    }
    int crc = sw_file_close(log, log_path, rc ? NULL : err);
    rc = rc ? rc : crc;
    sw_task_data_free(&data);
    return rc ? sw_cli_error(CMD, "%s", err) : 0;
}

int sw_cli_sim(int argc, char **argv)
{
    sim_opts o = {0};
    sw_cli_scenario_defaults(&o.sc);
    int prc = sw_cli_parse(&command, argc, argv, &o, NULL);
    if (prc)
        return prc == 1 ? 0 : prc;
    sw_cli_scenario *sc = &o.sc;
    if ((prc = sw_cli_scenario_finish(sc, CMD, &sc->cfg.policy, 1)))
        return prc;
    const char *inputs[] = {sc->cfg.cluster, sc->data_spec, sc->cfg.policy, sc->cfg.events};
    if ((prc = sw_cli_outputs_apart(CMD, 1, (const char *[]){"--log"}, &o.log_path, 4, inputs)))
        return prc;
    sw_cli_set_threads(sc->threads);
    return run(sc, o.log_path);
}
