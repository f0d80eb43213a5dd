/* The run summary, in the manner of Table 1 of the RLP paper: steps, step time and idle share per
 * worker, then applies, overall idle share, staleness and the share of time spent deciding. */
#include <math.h>
#include <stdio.h>

#include "cli.h"

static void row_u64(FILE *f, const char *label, const uint64_t *v, uint32_t n)
{
    fprintf(f, "  %-12s", label);
    for (uint32_t w = 0; w < n; w++)
        fprintf(f, " %7llu", (unsigned long long)v[w]);
    fputc('\n', f);
}

/* Workers shown one a column: a wider table is read in the log (a run of 100000 workers printed
 * rows of 800 KB). */
#define WORKER_COLUMNS 32

static void per_worker(FILE *f, const sw_run_stats *st)
{
    uint32_t n = st->n_slots < WORKER_COLUMNS ? st->n_slots : WORKER_COLUMNS;
    if (n < st->n_slots)
        fprintf(f, "  (workers 0-%u of %u; the event log, or syncwise report, has them all)\n",
                n - 1, st->n_slots);
    fprintf(f, "  %-12s", "worker");
    for (uint32_t w = 0; w < n; w++)
        fprintf(f, " %7u", w);
    fputc('\n', f);
    row_u64(f, "steps", st->steps, n);
    fprintf(f, "  %-12s", "step time s"); /* of the steps it finished */
    for (uint32_t w = 0; w < n; w++) {
        if (st->finished[w])
            fprintf(f, " %7.2f", st->busy_s[w] / (double)st->finished[w]);
        else
            fprintf(f, " %7s", "-");
    }
    fprintf(f, "\n  %-12s", "idle %");
    for (uint32_t w = 0; w < n; w++)
        fprintf(f, " %7.1f", 100 * sw_run_stats_worker_idle_share(st, w));
    fputc('\n', f);
}

/* Staleness 0 to 15, and 16 or more together. */
#define SHOWN 16

static void staleness(FILE *f, const sw_run_stats *st)
{
    uint64_t total = 0, shown[SHOWN + 1] = {0};
    for (int i = 0; i < SW_STALE_BINS; i++) {
        total += st->stale_hist[i];
        shown[i < SHOWN ? i : SHOWN] += st->stale_hist[i];
    }
    fprintf(f, "  staleness   ");
    if (!total) {
        fprintf(f, " (no gradients applied)\n");
        return;
    }
    for (int i = 0; i <= SHOWN; i++)
        if (shown[i])
            fprintf(f, " %d%s:%.1f%%", i, i == SHOWN ? "+" : "",
                    100.0 * (double)shown[i] / (double)total);
    fprintf(f, "  (mean %.2f)\n", sw_run_stats_mean_staleness(st));
}

void sw_cli_eval_text(char *out, size_t cap, double loss, double acc, double *best)
{
    if (isnan(acc)) {
        snprintf(out, cap, "loss %.4f", loss);
        return;
    }
    *best = acc > *best ? acc : *best;
    snprintf(out, cap, "loss %.4f  acc %.4f (best %.4f)", loss, acc, *best);
}

void sw_cli_print_summary(FILE *f, const char *policy, const sw_sim_result *r)
{
    const sw_run_stats *st = &r->stats;
    fprintf(f, "policy %.*s", sw_cli_spec_shown(policy), policy);
    if (st->switches) /* the figures below are the whole run's, under every policy in turn */
        fprintf(f, " (then %u switch%s, the last to %.*s)", st->switches,
                st->switches == 1 ? "" : "es", sw_cli_spec_shown(st->switched_to),
                st->switched_to);
    fprintf(f, ": stopped by %s at t=%.1f s", sw_stop_reason_name(r->stop), r->end_t);
    if (r->target_t >= 0)
        fprintf(f, "; target reached at t=%.1f s", r->target_t);
    if (r->diverged_t >= 0)
        fprintf(f, "; DIVERGED at t=%.1f s (the %s loss is not finite: a lower --lr?)",
                r->diverged_t, r->held_out);
    fputc('\n', f);
    per_worker(f, st);
    fprintf(f, "  applies %llu, pushes %llu, dropped %llu, idle %.1f%% of worker time\n",
            (unsigned long long)st->applies, (unsigned long long)st->pushes,
            (unsigned long long)st->drops, 100 * sw_run_stats_idle_share(st));
    staleness(f, st);
    if (r->shards)
        fprintf(f,
                "  %u shards: the busiest shard link carrying %.1f%% of the time, the control "
                "plane deciding %.1f%%\n",
                r->shards, 100 * r->link_load, 100 * r->ctl_load);
    fprintf(f, "  deciding %.3f%% of %.2f s real time", 100 * r->decide_s / (r->wall_s + 1e-12),
            r->wall_s);
    if (r->probe_s > 0)
        fprintf(f, ", loss probe %.2f%%", 100 * r->probe_s / (r->wall_s + 1e-12));
    if (r->n_params && isfinite(r->final_loss))
        fprintf(f, "; final %s loss %.4f", r->held_out, r->final_loss);
    else if (r->n_params) /* printf's "-nan" says nothing */
        fprintf(f, "; final %s loss not finite (diverged)", r->held_out);
    if (r->n_params && r->classify)
        fprintf(f, " accuracy %.4f", r->final_acc);
    fputc('\n', f);
}
