/* The run summary, in the manner of Table 1 of the RLP paper: steps, step time and idle share per
 * worker, then applies, overall idle share, staleness and the share of time spent deciding. */
#include <stdio.h>

#include "cli.h"

static void row_u64(FILE *f, const char *label, const uint64_t *v, uint32_t n)
{
    fprintf(f, "  %-12s", label);
    for (uint32_t w = 0; w < n; w++)
        fprintf(f, " %7llu", (unsigned long long)v[w]);
    fputc('\n', f);
}

static void per_worker(FILE *f, const sw_sim_result *r)
{
    uint32_t n = r->n_slots;
    fprintf(f, "  %-12s", "worker");
    for (uint32_t w = 0; w < n; w++)
        fprintf(f, " %7u", w);
    fputc('\n', f);
    row_u64(f, "steps", r->steps, n);
    fprintf(f, "  %-12s", "step time s");
    for (uint32_t w = 0; w < n; w++) {
        double busy = r->live_s[w] - r->idle_s[w];
        if (r->steps[w])
            fprintf(f, " %7.2f", busy / (double)r->steps[w]);
        else
            fprintf(f, " %7s", "-");
    }
    fprintf(f, "\n  %-12s", "idle %");
    for (uint32_t w = 0; w < n; w++)
        fprintf(f, " %7.1f", r->live_s[w] > 0 ? 100 * r->idle_s[w] / r->live_s[w] : 0.0);
    fputc('\n', f);
}

static void staleness(FILE *f, const sw_sim_result *r)
{
    uint64_t total = 0;
    double mean = 0;
    for (int i = 0; i < SW_STALE_BINS; i++) {
        total += r->stale_hist[i];
        mean += (double)i * (double)r->stale_hist[i];
    }
    fprintf(f, "  staleness   ");
    if (!total) {
        fprintf(f, " (no gradients applied)\n");
        return;
    }
    for (int i = 0; i < SW_STALE_BINS; i++)
        if (r->stale_hist[i])
            fprintf(f, " %d%s:%.1f%%", i, i == SW_STALE_BINS - 1 ? "+" : "",
                    100.0 * (double)r->stale_hist[i] / (double)total);
    fprintf(f, "  (mean %.2f)\n", mean / (double)total);
}

void sw_cli_print_summary(FILE *f, const char *policy, const sw_sim_result *r)
{
    double idle = 0, live = 0;
    for (uint32_t w = 0; w < r->n_slots; w++) {
        idle += r->idle_s[w];
        live += r->live_s[w];
    }
    fprintf(f, "policy %s: stopped by %s at t=%.1f s", policy, sw_stop_reason_name(r->stop),
            r->end_t);
    if (r->target_t >= 0)
        fprintf(f, "; target reached at t=%.1f s", r->target_t);
    fputc('\n', f);
    per_worker(f, r);
    fprintf(f, "  applies %llu, pushes %llu, dropped %llu, idle %.1f%% of worker time\n",
            (unsigned long long)r->applies, (unsigned long long)r->pushes,
            (unsigned long long)r->drops, live > 0 ? 100 * idle / live : 0.0);
    staleness(f, r);
    fprintf(f, "  deciding %.3f%% of %.2f s real time", 100 * r->decide_s / (r->wall_s + 1e-12),
            r->wall_s);
    if (r->probe_s > 0)
        fprintf(f, ", loss probe %.2f%%", 100 * r->probe_s / (r->wall_s + 1e-12));
    if (r->n_params)
        fprintf(f, "; final validation loss %.4f accuracy %.4f", r->final_loss, r->final_acc);
    fputc('\n', f);
}
