/* The statistics of a comparison of policies (syncwise/compare.h). */
#include "syncwise/compare.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double sw_t95(long df)
{
    static const double q[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262,
                               2.228,  2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101,
                               2.093,  2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052,
                               2.048,  2.045, 2.042};
    return df >= 1 && df <= 30 ? q[df - 1] : 1.96;
}

static double at(const double *x, size_t i, size_t stride)
{
    return *(const double *)(const void *)((const char *)x + i * stride);
}

void sw_mean_ci(const double *x, size_t n, size_t stride, double *mean, double *half)
{
    *mean = *half = 0;
    if (n == 0)
        return;
    double sum = 0, ss = 0;
    for (size_t i = 0; i < n; i++)
        sum += at(x, i, stride);
    *mean = sum / (double)n;
    for (size_t i = 0; i < n; i++) /* about the mean: no cancellation far from zero */
        ss += (at(x, i, stride) - *mean) * (at(x, i, stride) - *mean);
    *half = n > 1 ? sw_t95((long)n - 1) * sqrt(ss / (double)(n - 1)) / sqrt((double)n) : 0;
}

sw_trials sw_trials_summarize(const sw_trial *runs, size_t n)
{
    sw_trials s = {.n = (long)n};
    for (size_t i = 0; i < n; i++) {
        s.applies += runs[i].applies / (double)n;
        s.idle += runs[i].idle / (double)n;
        s.reached += runs[i].reached;
    }
    if (n)
        sw_mean_ci(&runs[0].time, n, sizeof *runs, &s.mean, &s.half);
    return s;
}

bool sw_is_baseline(const char *policy, const char *baselines)
{
    if (!baselines)
        return !strncmp(policy, "bsp", 3) || !strncmp(policy, "asp", 3) ||
               !strncmp(policy, "ssp", 3);
    size_t len = strlen(policy);
    for (const char *b = baselines; (b = strstr(b, policy)); b += len)
        if ((b == baselines || b[-1] == ';') && (b[len] == ';' || b[len] == '\0'))
            return true;
    return false;
}

/* Whether policy i ranks above policy k (compare.h). A tie goes to the first name, so that
 * compare (in command order) and report (in log order) name the same policy. */
static bool ranks_above(const char *const *policies, const sw_trials *s, int i, int k)
{
    double share_i = (double)s[i].reached / (double)s[i].n,
           share_k = (double)s[k].reached / (double)s[k].n;
    if (share_i != share_k)
        return share_i > share_k;
    if (s[i].mean != s[k].mean)
        return s[i].mean < s[k].mean;
    return strcmp(policies[i], policies[k]) < 0;
}

/* The best-ranked policy among those with runs that are baselines (all when only_baselines is
 * false), or -1. */
static int best_of(const char *const *policies, const sw_trials *s, int n, bool only_baselines,
                   const char *baselines)
{
    int best = -1;
    for (int i = 0; i < n; i++) {
        if (!s[i].n || (only_baselines && !sw_is_baseline(policies[i], baselines)))
            continue;
        if (best < 0 || ranks_above(policies, s, i, best))
            best = i;
    }
    return best;
}

int sw_best_baseline(const char *const *policies, const sw_trials *s, int n, const char *baselines)
{
    return best_of(policies, s, n, true, baselines);
}

int sw_fastest(const char *const *policies, const sw_trials *s, int n)
{
    return best_of(policies, s, n, false, NULL);
}

double sw_speedup(const sw_trials *b, const sw_trials *s)
{
    return s->mean > 0 ? b->mean / s->mean : 0;
}

const char *sw_speedup_bound(const sw_trials *b, const sw_trials *s)
{
    bool s_short = s->reached < s->n, b_short = b->reached < b->n;
    if (!(s->mean > 0) || (s_short && b_short && s != b))
        return NULL;
    return s == b ? "" : s_short ? "<=" : b_short ? ">=" : "";
}

static bool a_pair(const sw_trial *b, const sw_trial *s)
{
    return b->reached && s->reached && b->time > 0 && s->time > 0;
}

sw_paired sw_paired_speedup(const sw_trial *b, const sw_trial *s, size_t n)
{
    sw_paired p = {0};
    double *logs = malloc((n ? n : 1) * sizeof *logs), mean, half;
    for (size_t i = 0; logs && i < n; i++)
        if (a_pair(&b[i], &s[i])) {
            logs[p.n++] = log(b[i].time / s[i].time);
            p.faster += s[i].time < b[i].time;
        }
    if (p.n) {
        sw_mean_ci(logs, p.n, sizeof *logs, &mean, &half);
        p.ratio = exp(mean);
        p.lo = exp(mean - half);
        p.hi = exp(mean + half);
    }
    free(logs);
    return p;
}
