/* The tables of `syncwise rl eval` (rl_eval.h). A speedup is the mean over instances of
 * T_baseline / T_rlp, each T the mean over an instance's seeds, with a 95% interval over
 * instances; "the best classic policy of each instance" takes, per instance, the baseline with
 * the smallest T, which no single policy could do without knowing the instance. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rl_eval.h"
#include "syncwise/compare.h"

/* The instances a table covers: all of them, or those whose draw holds one key=value. */
typedef struct part {
    const char *token; /* NULL: every instance */
    long *at, n;
} part;

/* T of policy k on instance i (its mean over the seeds), and the mean pushes. */
static double mean_time(const sw_rl_eval *p, long i, int k)
{
    double t = 0;
    for (long r = 0; r < p->seeds; r++)
        t += sw_rl_eval_run(p, i, r, k)->time;
    return t / (double)p->seeds;
}

static double mean_pushes(const sw_rl_eval *p, const part *q, int k)
{
    double s = 0;
    for (long j = 0; j < q->n; j++)
        for (long r = 0; r < p->seeds; r++)
            s += (double)sw_rl_eval_run(p, q->at[j], r, k)->iterations;
    return s / (double)(q->n * p->seeds);
}

/* The mean over the part of T_k, or of the best baseline's T per instance when k < 0. */
static double base_time(const sw_rl_eval *p, long i, int k)
{
    if (k >= 0)
        return mean_time(p, i, k);
    double best = INFINITY;
    for (int b = 1; b < p->n; b++)
        best = fmin(best, mean_time(p, i, b));
    return best;
}

/* The mean over the part's instances of T_over / T_of (base_time's k for each). */
static void ratio_ci(const sw_rl_eval *p, const part *q, int over, int of, double *m, double *h)
{
    double *ratio = malloc((size_t)q->n * sizeof *ratio);
    *m = *h = NAN;
    if (!ratio)
        return;
    for (long j = 0; j < q->n; j++)
        ratio[j] = base_time(p, q->at[j], over) / base_time(p, q->at[j], of);
    sw_mean_ci(ratio, (size_t)q->n, sizeof *ratio, m, h);
    free(ratio);
}

/* How many runs on the part of policies a and b reached the target (b < 0: of every baseline),
 * and in *runs how many there were. A run that missed has its time where it stopped: a ratio
 * of such times is no speedup when none reached, and only a bound when some did. */
static long count_reached(const sw_rl_eval *p, const part *q, int a, int b, long *runs)
{
    long reached = 0;
    *runs = 0;
    for (long j = 0; j < q->n; j++)
        for (long r = 0; r < p->seeds; r++)
            for (int k = 0; k < p->n; k++)
                if (k == a || k == b || (b < 0 && k > 0)) {
                    ++*runs;
                    reached += sw_rl_eval_run(p, q->at[j], r, k)->reached;
                }
    return reached;
}

/* The learned policy's (policy 0's) speedup over baseline k (every baseline's best when k < 0);
 * NaN when no run of either reached the target (compare and report show "-" then). */
static void speedup(const sw_rl_eval *p, const part *q, int k, double *m, double *h)
{
    long runs;
    if (count_reached(p, q, 0, k, &runs) == 0)
        *m = *h = NAN;
    else
        ratio_ci(p, q, k, 0, m, h);
}

/* The baseline with the smallest mean time on the part (prefix: only specs starting so). */
static int best_single(const sw_rl_eval *p, const part *q, const char *prefix)
{
    int best = -1;
    double best_t = INFINITY;
    for (int k = 1; k < p->n; k++) {
        if (prefix && strncmp(p->specs[k], prefix, strlen(prefix)) != 0)
            continue;
        double t = 0;
        for (long j = 0; j < q->n; j++)
            t += mean_time(p, q->at[j], k);
        if (t < best_t) {
            best_t = t;
            best = k;
        }
    }
    return best;
}

static void print_table(const sw_rl_eval *p, const part *all)
{
    int width = 32; /* the policy column holds the longest spec (a policy file's path) */
    for (int k = 0; k < p->n; k++)
        width = (int)strlen(p->specs[k]) > width ? (int)strlen(p->specs[k]) : width;
    printf("%-*s %20s %8s %12s %9s %6s %9s %7s\n", width, "policy", "time to target (s)",
           "reached", "steps/worker", "applies", "idle", "deciding", "probe");
    double *t = malloc((size_t)all->n * sizeof *t);
    for (int k = 0; t && k < p->n; k++) {
        double steps = 0, applies = 0, idle = 0, decide = 0, probe = 0, reached = 0, m, h;
        for (long i = 0; i < p->instances; i++) {
            t[i] = mean_time(p, i, k);
            for (long r = 0; r < p->seeds; r++) {
                const sw_rl_run *run = sw_rl_eval_run(p, i, r, k);
                steps += run->steps_per_worker, applies += (double)run->applies;
                idle += run->idle_share, decide += run->decide_share;
                probe += run->probe_share, reached += run->reached;
            }
        }
        double n = (double)(p->instances * p->seeds);
        sw_mean_ci(t, (size_t)all->n, sizeof *t, &m, &h);
        printf("%-*s %11.0f +- %5.0f %7.1f%% %12.1f %9.0f %5.1f%% %8.3f%% %6.1f%%\n", width,
               p->specs[k], m, h, 100 * reached / n, steps / n, applies / n, 100 * idle / n,
               100 * decide / n, 100 * probe / n);
    }
    free(t);
}

static void print_speedup(const sw_rl_eval *p, const part *q, int k, const char *label)
{
    double m, h;
    speedup(p, q, k, &m, &h);
    if (isnan(m)) {
        printf("speedup over %-30s -  (no run of either reached the target)\n", label);
        return;
    }
    printf("speedup over %-30s %.2fx", label, m);
    if (q->n > 1)
        printf(" +- %.2f (95%% CI over %ld instances)", h, q->n);
    else
        printf(" (one instance: no interval)");
    long runs;
    printf("%s\n", count_reached(p, q, 0, k, &runs) < runs
                       ? " (some runs missed the target: their times are where they stopped)"
                       : "");
}

static void print_speedups(const sw_rl_eval *p, const part *all)
{
    for (int k = 1; k < p->n; k++)
        print_speedup(p, all, k, p->specs[k]);
    char label[340];
    int ssp = best_single(p, all, "ssp");
    if (ssp > 0) {
        snprintf(label, sizeof label, "best SSP (%s)", p->specs[ssp]);
        print_speedup(p, all, ssp, label);
    }
    int single = best_single(p, all, NULL);
    snprintf(label, sizeof label, "best single (%s)", p->specs[single]);
    print_speedup(p, all, single, label);
    print_speedup(p, all, -1, "best of each instance");
    /* What picking the right classic policy per instance would give: the headroom a learned
     * policy has over the best single one without doing better than any classic policy. */
    double m, h;
    long runs;
    if (count_reached(p, all, single, -1, &runs) == 0) {
        printf("each instance's best over the best single  -  (no baseline's run reached the "
               "target)\n");
        return;
    }
    ratio_ci(p, all, single, -1, &m, &h);
    printf("each instance's best over the best single  %.2fx", m);
    if (all->n > 1)
        printf(" +- %.2f", h);
    printf(" (what choosing the right classic policy per instance would give)\n");
}

/* The index of a policy by its spec, or -1. */
static int policy_index(const sw_rl_eval *p, const char *spec)
{
    for (int k = 1; k < p->n; k++)
        if (strcmp(p->specs[k], spec) == 0)
            return k;
    return -1;
}

/* One row per part: its instances, its best single baseline, the learned policy's speedups over
 * the family's best single baseline, the part's own and each instance's best; ASP's and BSP's
 * pushes to the target (the RLP paper's Table 1) when both ran. */
static void print_part(const sw_rl_eval *p, const part *q, int width, int family_best,
                       double *lowest)
{
    int own = best_single(p, q, NULL), asp = policy_index(p, "asp"), bsp = policy_index(p, "bsp");
    double fm, fh, om, oh, em, eh;
    speedup(p, q, family_best, &fm, &fh);
    speedup(p, q, own, &om, &oh);
    speedup(p, q, -1, &em, &eh);
    *lowest = fmin(*lowest, fm); /* a part where no run reached the target has none (NaN) */
    printf("%-*s %5ld  %-10s", width, q->token, q->n, p->specs[own]);
    const double shown[3][2] = {{fm, fh}, {om, oh}, {em, eh}};
    for (int i = 0; i < 3; i++)
        if (isnan(shown[i][0]))
            printf(" %11s", "-");
        else
            printf(" %5.2fx+-%.2f", shown[i][0], shown[i][1]);
    if (asp > 0 && bsp > 0) {
        double a = mean_pushes(p, q, asp), b = mean_pushes(p, q, bsp);
        printf("  %7.0f %7.0f %5.2f", a, b, a / b);
    }
    putchar('\n');
}

/* Whether token (a "key=value" of some instance's draw) is one of the words of regime. */
static bool holds(const char *regime, const char *token)
{
    size_t len = strlen(token);
    for (const char *at = regime; (at = strstr(at, token)); at += len)
        if ((at == regime || at[-1] == ' ') && (at[len] == ' ' || at[len] == '\0'))
            return true;
    return false;
}

static int by_text(const void *a, const void *b)
{
    return strcmp(a, b);
}

/* The distinct words of every instance's draw, sorted (so a key's values stand together). */
static size_t tokens(const sw_rl_eval *p, char (*out)[SW_RL_REGIME_LEN], size_t cap)
{
    size_t n = 0;
    for (long i = 0; i < p->instances; i++) {
        char copy[SW_RL_REGIME_LEN], *save = NULL;
        snprintf(copy, sizeof copy, "%s", sw_rl_eval_run(p, i, 0, 0)->regime);
        for (char *w = strtok_r(copy, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
            size_t j = 0;
            while (j < n && strcmp(out[j], w) != 0)
                j++;
            if (j == n && n < cap)
                snprintf(out[n++], SW_RL_REGIME_LEN, "%s", w);
        }
    }
    qsort(out, n, sizeof *out, by_text);
    return n;
}

static void print_parts(const sw_rl_eval *p, const part *all)
{
    enum { MAX_TOKENS = 64 };
    static char words[MAX_TOKENS][SW_RL_REGIME_LEN];
    size_t n = tokens(p, words, MAX_TOKENS);
    int family_best = best_single(p, all, NULL);
    printf("\nby part (the instances that drew it; speedups of %s over the family's best single\n"
           "baseline %s, over the part's best single baseline and over each instance's best;\n"
           "pushes to the target of asp and bsp and their ratio, the RLP paper's Table 1)\n",
           p->specs[0], p->specs[family_best]);
    int width = 8; /* the part column fits its longest name */
    for (size_t t = 0; t < n; t++)
        width = strlen(words[t]) > (size_t)width ? (int)strlen(words[t]) : width;
    printf("%-*s %5s  %-10s %11s %11s %11s  %7s %7s %5s\n", width, "part", "inst", "best", "family",
           "part", "instance", "asp", "bsp", "ratio");
    double lowest = INFINITY;
    print_part(p, all, width, family_best, &lowest);
    part q = {.at = malloc((size_t)p->instances * sizeof *q.at)};
    for (size_t t = 0; q.at && t < n; t++) {
        q.token = words[t];
        q.n = 0;
        for (long i = 0; i < p->instances; i++)
            if (holds(sw_rl_eval_run(p, i, 0, 0)->regime, words[t]))
                q.at[q.n++] = i;
        print_part(p, &q, width, family_best, &lowest);
    }
    free(q.at);
    if (n && isfinite(lowest))
        printf("lowest speedup of a part over the family's best single baseline: %.2fx\n",
               lowest);
}

void sw_rl_eval_report(const sw_rl_eval *p)
{
    part all = {.token = "all", .at = malloc((size_t)p->instances * sizeof *all.at),
                .n = p->instances};
    if (!all.at) {
        fprintf(stderr, "rl eval: out of memory for the report\n");
        return;
    }
    for (long i = 0; i < p->instances; i++)
        all.at[i] = i;
    print_table(p, &all);
    print_speedups(p, &all);
    print_parts(p, &all);
    free(all.at);
}
