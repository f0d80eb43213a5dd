/* The table a comparison ends with (compare_plan.h): each policy's mean time with its interval,
 * its speedup over the best baseline, the answer in one line, and the speedups seed by seed. */
#include <stdio.h>
#include <stdlib.h>

#include "compare_plan.h"

sw_trials sw__cmp_summarize(const plan *p, int policy)
{
    sw_trial *t = malloc((size_t)p->seeds * sizeof *t);
    size_t n = 0;
    for (size_t i = 0; t && i < p->n_runs; i++) {
        const job *j = &p->runs[i];
        if (j->policy == policy && j->done && !j->rc)
            t[n++] = j->facts.trial;
    }
    sw_trials s = sw_trials_summarize(t, n);
    free(t);
    return s;
}

void sw__cmp_list_failed(const plan *p, FILE *out)
{
    for (size_t i = 0; i < p->n_runs; i++) {
        const job *j = &p->runs[i];
        if (j->rc)
            fprintf(out, "run %s seed %llu failed: %s\n", p->policies[j->policy],
                    (unsigned long long)j->seed, j->err);
        else if (j->facts.diverged_t >= 0) /* counted as not reaching the target: it never will */
            fprintf(out, "run %s seed %llu diverged at t=%.1f s (a lower --lr?)\n",
                    p->policies[j->policy], (unsigned long long)j->seed, j->facts.diverged_t);
    }
}

/* The answer in one line: the fastest policy, and by how much it beats the best baseline. */
static void print_answer(const plan *p, const sw_trials *s, int best)
{
    int fastest = sw_fastest((const char *const *)p->policies, s, p->n_policies);
    if (fastest < 0)
        return;
    int reached = 0;
    for (int i = 0; i < p->n_policies; i++)
        reached += s[i].reached;
    if (!reached) { /* every time above is a run's end: nothing is fastest */
        bool target = p->sc.cfg.target_acc > 0 || p->sc.cfg.target_loss > 0;
        printf("%s: the times are where the runs stopped\n",
               target ? "no run reached the target" : "no target was given");
        return;
    }
    const char *censored =
        s[fastest].reached < s[fastest].n ? " (not every run reached the target)" : "";
    if (best < 0)
        printf("fastest: %s, at %.1f virtual s%s\n", p->policies[fastest], s[fastest].mean,
               censored);
    else if (fastest == best)
        printf("fastest: %s, the best baseline, at %.1f virtual s%s\n", p->policies[best],
               s[best].mean, censored);
    else if (!(s[fastest].mean > 0)) /* met at once: a time of 0 has no ratio */
        printf("fastest: %s, at 0.0 virtual s (the target was met at once)%s\n",
               p->policies[fastest], censored);
    else if (sw_speedup_bound(&s[best], &s[fastest]))
        printf("fastest: %s, %s%.2fx the best baseline (%s)%s\n", p->policies[fastest],
               sw_speedup_bound(&s[best], &s[fastest]), sw_speedup(&s[best], &s[fastest]),
               p->policies[best], censored);
    else
        printf("fastest: %s, at %.1f virtual s%s\n", p->policies[fastest], s[fastest].mean,
               censored);
}

/* A policy's runs by seed into t (p->seeds of them): one that failed or is not done counts as
 * not reached. */
static void by_seed(const plan *p, int policy, sw_trial *t)
{
    for (long k = 0; k < p->seeds; k++)
        t[k] = (sw_trial){.reached = false};
    for (size_t i = 0; i < p->n_runs; i++) {
        const job *j = &p->runs[i];
        if (j->policy == policy && j->done && !j->rc)
            t[j->seed - 1] = j->facts.trial;
    }
}

/* Each policy's speedup over the best baseline seed by seed, where two seeds or more pair:
 * each seed is one scenario for both, so the ratio on it leaves out the spread between
 * scenarios that widens the intervals of the means (two policies the table cannot tell apart
 * may be told apart here). */
static void print_paired(const plan *p, int best)
{
    sw_trial *b = calloc((size_t)p->seeds, sizeof *b), *t = calloc((size_t)p->seeds, sizeof *t);
    bool said = false;
    if (b && t && best >= 0)
        by_seed(p, best, b);
    for (int i = 0; b && t && best >= 0 && i < p->n_policies; i++) {
        if (i == best)
            continue;
        by_seed(p, i, t);
        sw_paired q = sw_paired_speedup(b, t, (size_t)p->seeds);
        if (q.n < 2)
            continue;
        if (!said)
            printf("speedup seed by seed over %s (the geometric mean of its time over each "
                   "policy's on the seeds both reached the target):\n", p->policies[best]);
        said = true;
        printf("  %-22s %.2fx (95%% interval %.2f-%.2f), faster on %zu of %zu seeds\n",
               p->policies[i], q.ratio, q.lo, q.hi, q.faster, q.n);
    }
    free(b);
    free(t);
}

void sw__cmp_report(const plan *p)
{
    sw_trials s[MAX_POLICIES];
    for (int i = 0; i < p->n_policies; i++)
        s[i] = sw__cmp_summarize(p, i);
    int best = sw_best_baseline((const char *const *)p->policies, s, p->n_policies, p->baselines);
    printf("\n%-22s %8s %26s %9s %9s %7s\n", "policy", "reached", "time to target (virtual s)",
           "speedup", "applies", "idle %");
    for (int i = 0; i < p->n_policies; i++) {
        char cell[64] = "- (no run finished)";
        if (s[i].n) /* a time of 0.0 for runs that all failed would read as the fastest */
            snprintf(cell, sizeof cell, "%.1f +- %.1f%s", s[i].mean, s[i].half,
                     s[i].reached < s[i].n ? " (>=)" : "");
        printf("%-22s %3ld/%-4ld %26s", p->policies[i], s[i].reached, s[i].n, cell);
        const char *bound = best >= 0 ? sw_speedup_bound(&s[best], &s[i]) : NULL;
        char speedup[32] = "-";
        if (bound && s[i].n)
            snprintf(speedup, sizeof speedup, "%s%.2fx", bound, sw_speedup(&s[best], &s[i]));
        printf(" %9s", speedup);
        if (s[i].n)
            printf(" %9.0f %7.1f\n", s[i].applies, 100 * s[i].idle);
        else
            printf(" %9s %7s\n", "-", "-");
    }
    if (best >= 0 && p->seeds > 1)
        printf("\nspeedup: mean time of the best baseline (%s) over each policy's; "
               "+- is the 95%% confidence half-width over %ld seeds.\n",
               p->policies[best], p->seeds);
    else if (best >= 0) /* one sample has no spread to show */
        printf("\nspeedup: time of the best baseline (%s) over each policy's; one seed, so "
               "no interval (the +- 0.0).\n", p->policies[best]);
    else if (p->seeds > 1)
        printf("\nspeedup: none, as no policy is a baseline (every bsp, asp and ssp, or "
               "--baselines); +- is the 95%% confidence half-width over %ld seeds.\n", p->seeds);
    else
        printf("\nspeedup: none, as no policy is a baseline (every bsp, asp and ssp, or "
               "--baselines); one seed, so no interval (the +- 0.0).\n");
    print_answer(p, s, best);
    print_paired(p, best);
    sw__cmp_list_failed(p, stdout);
}

