/* The answer of a report (syncwise/report.h): each run's time to its target, each policy's
 * mean with its 95% interval and speedup over the best baseline, and each policy's accuracy
 * over its seeds as a mean with the lowest and highest run around it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "syncwise/err.h"
#include "syncwise/report.h"

/* The time run i reached the target (given, else its own), or -1. A run ends on its own
 * target accuracy at the first evaluation that meets it, so a log cut short of its end line
 * after such an evaluation reached it there. */
static double reached_at(const sw_report_run *run, double target)
{
    if (target <= 0 && (run->finished || !(run->target_acc > 0)))
        return run->ended_on_target ? run->end_t : -1;
    if (target <= 0)
        target = run->target_acc;
    for (size_t k = 0; k < run->n_evals; k++)
        if (run->eval_acc[k] >= target)
            return run->eval_t[k];
    return -1;
}

/* The index of policy among the first n, or n. */
static int find_policy(const sw_report_policy *p, int n, const char *policy)
{
    int i = 0;
    while (i < n && strcmp(p[i].policy, policy) != 0)
        i++;
    return i;
}

/* One policy's trials, in the order its runs came. */
/* Whether a run counts in the times to target: it reached the target (at >= 0), or ran to its
 * end; a log cut short of both (a run killed, still going, or a simulation stopped by a broken
 * promise) says nothing of its time. */
static bool counts(const sw_report_run *run, double at)
{
    return at >= 0 || run->finished;
}

/* "" or which runs do not count, for the report to say. */
static void note_unfinished(sw_report *r, double target)
{
    uint32_t n = 0, first = 0;
    for (uint32_t i = 0; i < r->n_runs; i++)
        if (!counts(&r->runs[i], reached_at(&r->runs[i], target)) && n++ == 0)
            first = i;
    r->unfinished[0] = '\0';
    if (n)
        snprintf(r->unfinished, sizeof r->unfinished,
                 "%u run%s (%.100s%s) stop%s without an end "
                 "line, short of the target (killed, still going, or a simulation that broke "
                 "its policy's promise: syncwise check names it): %s out of the times to "
                 "target",
                 n, n == 1 ? "" : "s", r->runs[first].name, n > 1 ? ", ..." : "", n == 1 ? "s" : "",
                 n == 1 ? "it is left" : "they are left");
}

/* The runs whose policy was switched: the tables count each as the policy it started with. */
static void note_switched(sw_report *r)
{
    uint32_t n = 0, first = 0;
    for (uint32_t i = 0; i < r->n_runs; i++)
        if (r->runs[i].switches && n++ == 0)
            first = i;
    r->switched[0] = '\0';
    if (n)
        snprintf(r->switched, sizeof r->switched,
                 "%u run%s (%.100s%s) switched policies (%.100s: %u switch%s, the last to "
                 "%.100s): the tables count each as the policy it started with",
                 n, n == 1 ? "" : "s", r->runs[first].name, n > 1 ? ", ..." : "",
                 r->runs[first].name, r->runs[first].switches,
                 r->runs[first].switches == 1 ? "" : "es", r->runs[first].switched_to);
}

/* Whether a run of `policy` counts in its times to target; its trial then into t. */
static bool run_trial(const sw_report_run *run, const char *policy, double target, sw_trial *t)
{
    double at = reached_at(run, target);
    if (strcmp(run->policy, policy) != 0 || !counts(run, at))
        return false;
    *t = (sw_trial){.time = at >= 0 ? at : run->end_t,
                    .reached = at >= 0,
                    .applies = (double)run->applies,
                    .idle = run->idle};
    return true;
}

static sw_trials policy_trials(const sw_report *r, const char *policy, double target)
{
    sw_trial *t = calloc(r->n_runs ? r->n_runs : 1, sizeof *t);
    if (!t)
        return (sw_trials){0};
    size_t n = 0;
    for (uint32_t i = 0; i < r->n_runs; i++)
        n += run_trial(&r->runs[i], policy, target, &t[n]);
    sw_trials s = sw_trials_summarize(t, n);
    free(t);
    return s;
}

/* A policy's speedup over the baseline seed by seed: each of its runs paired with the
 * baseline's first run of the same seed (one scenario for both, as compare's logs are). */
static sw_paired paired_over(const sw_report *r, const char *base, const char *policy,
                             double target)
{
    sw_trial *b = calloc(r->n_runs ? r->n_runs : 1, sizeof *b),
             *s = calloc(r->n_runs ? r->n_runs : 1, sizeof *s);
    size_t n = 0;
    for (uint32_t i = 0; b && s && i < r->n_runs; i++) {
        if (!run_trial(&r->runs[i], policy, target, &s[n]))
            continue;
        uint32_t j = 0;
        while (j < r->n_runs && (r->runs[j].seed != r->runs[i].seed ||
                                 strcmp(r->runs[j].policy, base) != 0))
            j++;
        n += j < r->n_runs && run_trial(&r->runs[j], base, target, &b[n]);
    }
    sw_paired q = b && s ? sw_paired_speedup(b, s, n) : (sw_paired){0};
    free(b);
    free(s);
    return q;
}

/* A run's accuracy at time t: its last evaluation at or before t (NAN before the first). */
static double accuracy_at(const sw_report_run *run, double t, size_t *cursor)
{
    while (*cursor < run->n_evals && run->eval_t[*cursor] <= t)
        (*cursor)++;
    return *cursor ? run->eval_acc[*cursor - 1] : NAN;
}

static int mean_curve(const sw_report *r, const char *policy, FILE *out)
{
    size_t *cursor = calloc(r->n_runs ? r->n_runs : 1, sizeof *cursor);
    if (!cursor)
        return SW_ENOMEM;
    double end = 0;
    for (uint32_t i = 0; i < r->n_runs; i++)
        if (!strcmp(r->runs[i].policy, policy) && r->runs[i].end_t > end)
            end = r->runs[i].end_t;
    for (int g = 0; g <= SW_REPORT_GRID; g++) {
        double t = end * g / SW_REPORT_GRID, sum = 0, lo = INFINITY, hi = -INFINITY;
        int n = 0;
        for (uint32_t i = 0; i < r->n_runs; i++) {
            if (strcmp(r->runs[i].policy, policy) != 0)
                continue;
            double a = accuracy_at(&r->runs[i], t, &cursor[i]);
            if (isnan(a))
                continue;
            sum += a, n++;
            lo = a < lo ? a : lo;
            hi = a > hi ? a : hi;
        }
        if (n)
            fprintf(out, "%s,%.9g,%.6g,%.6g,%.6g,%d\n", policy, t, sum / n, lo, hi, n);
    }
    free(cursor);
    return 0;
}

/* The target the runs share: the one given, else the runs' own when they agree, else 0. */
static double shared_target(const sw_report *r, double given)
{
    if (given > 0)
        return given;
    double t = r->n_runs ? r->runs[0].target_acc : 0;
    for (uint32_t i = 1; i < r->n_runs; i++)
        if (r->runs[i].target_acc != t)
            return 0;
    return t;
}

/* The baselines named (specs as the logs spell them or as the tables label them, ';' between
 * them) as the tables label
 * their runs, into *labels (the caller frees it); SW_EINVAL, said in err, when one is the policy
 * of no run (a typo would leave no speedup at all). */
static int baseline_labels(const sw_report *r, const char *baselines, char **labels, char *err)
{
    size_t entries = 1;
    for (const char *c = baselines; *c; c++)
        entries += *c == ';';
    size_t cap = entries * (sizeof r->runs[0].policy + 1) + 1; /* a label, ';', for each */
    char *out = calloc(1, cap);
    size_t len = 0;
    if (!(*labels = out))
        return sw_fail(err, SW_ENOMEM, "out of memory");
    for (const char *b = baselines; *b; b += strcspn(b, ";"), b += *b == ';') {
        int n = (int)strcspn(b, ";");
        const sw_report_run *run = NULL;
        for (uint32_t i = 0; i < r->n_runs && !run; i++) /* as the logs spell it, or the tables */
            if (((int)strlen(r->runs[i].spec) == n && !strncmp(r->runs[i].spec, b, n)) ||
                ((int)strlen(r->runs[i].policy) == n && !strncmp(r->runs[i].policy, b, n)))
                run = &r->runs[i];
        if (!run && n)
            return sw_fail(err, SW_EINVAL, "--baselines: '%.*s' is the policy of no run (a "
                           "baseline is spelled as the logs' start lines spell it, or as the "
                           "tables label it)", n, b);
        if (run)
            len += (size_t)snprintf(out + len, cap - len, "%s%s", len ? ";" : "", run->policy);
    }
    return 0;
}

/* sw_report_summarize with the baselines as the tables label them. */
static int summarize(sw_report *r, double target_acc, const char *baselines, char *err)
{
    for (uint32_t i = 0; i < r->n_runs && target_acc > 0; i++)
        if (r->runs[i].regress)
            return sw_fail(err, SW_EINVAL,
                           "%s is a run of a regression task, which has no accuracy: a target "
                           "accuracy cannot apply (without one, each run's end line says "
                           "whether it reached its own target)",
                           r->runs[i].name);
    r->target_acc = shared_target(r, target_acc);
    for (uint32_t i = 1; i < r->n_runs && target_acc <= 0 && !r->mixed[0]; i++)
        if (r->runs[i].target_acc != r->runs[0].target_acc) /* each judged on its own */
            snprintf(r->mixed, sizeof r->mixed, "runs %.100s and %.100s differ in their target "
                     "accuracy ('%g' and '%g'): their times do not compare (--target-acc gives "
                     "one)", r->runs[0].name, r->runs[i].name, r->runs[0].target_acc,
                     r->runs[i].target_acc);
    free(r->policies);
    r->n_policies = 0;
    r->best = r->fastest = -1;
    note_unfinished(r, target_acc);
    note_switched(r);
    if (!(r->policies = calloc(r->n_runs ? r->n_runs : 1, sizeof *r->policies)))
        return sw_fail(err, SW_ENOMEM, "out of memory");
    for (uint32_t i = 0; i < r->n_runs; i++) {
        const sw_report_run *run = &r->runs[i];
        double at = reached_at(run, target_acc);
        fprintf(r->csv[SW_CSV_TARGETS], "%s,%s,%llu,%d,%.9g,%.9g\n", run->name, run->policy,
                (unsigned long long)run->seed, at >= 0, at >= 0 ? at : run->end_t, run->end_t);
        int p = find_policy(r->policies, r->n_policies, run->policy);
        if (p < r->n_policies)
            continue;
        snprintf(r->policies[p].policy, sizeof r->policies[p].policy, "%s", run->policy);
        r->policies[p].trials = policy_trials(r, run->policy, target_acc);
        r->n_policies++;
        if (mean_curve(r, run->policy, r->csv[SW_CSV_ACCURACY]))
            return sw_fail(err, SW_ENOMEM, "out of memory");
    }
    const char **names = calloc((size_t)r->n_policies + 1, sizeof *names);
    sw_trials *s = calloc((size_t)r->n_policies + 1, sizeof *s);
    if (!names || !s) {
        free(names);
        free(s);
        return sw_fail(err, SW_ENOMEM, "out of memory");
    }
    for (int i = 0; i < r->n_policies; i++)
        names[i] = r->policies[i].policy, s[i] = r->policies[i].trials;
    r->best = sw_best_baseline(names, s, r->n_policies, baselines);
    r->fastest = sw_fastest(names, s, r->n_policies);
    for (int i = 0; r->best >= 0 && i < r->n_policies; i++)
        if (i != r->best)
            r->policies[i].paired =
                paired_over(r, names[r->best], r->policies[i].policy, target_acc);
    free(names);
    free(s);
    return 0;
}

int sw_report_summarize(sw_report *r, double target_acc, const char *baselines, char *err)
{
    char *labels = NULL;
    int rc = baselines ? baseline_labels(r, baselines, &labels, err) : 0;
    if (!rc)
        rc = summarize(r, target_acc, labels, err);
    free(labels);
    return rc;
}

/* text as a Markdown code span: fenced by one backtick more than its longest run of them
 * (padded where it starts or ends with one), and in a table cell its '|' escaped, which would
 * split the cell even inside the span (a policy spec names files, which may hold either). */
static void md_code(FILE *md, const char *text, bool in_table)
{
    size_t longest = 0, run = 0;
    for (const char *c = text; *c; c++) {
        run = *c == '`' ? run + 1 : 0;
        longest = run > longest ? run : longest;
    }
    bool pad = *text == '`' || (*text && text[strlen(text) - 1] == '`');
    for (size_t k = 0; k <= longest; k++)
        fputc('`', md);
    if (pad)
        fputc(' ', md);
    for (const char *c = text; *c; c++) {
        if (*c == '|' && in_table)
            fputc('\\', md);
        fputc(*c, md);
    }
    if (pad)
        fputc(' ', md);
    for (size_t k = 0; k <= longest; k++)
        fputc('`', md);
}

static void write_answer(const sw_report *r, FILE *md)
{
    int f = r->fastest, b = r->best, reached = 0;
    if (f < 0)
        return;
    for (int i = 0; i < r->n_policies; i++)
        reached += r->policies[i].trials.reached;
    if (!reached) { /* every time is a run's end: nothing is fastest */
        fprintf(md, "**No run reached the target**: the times are where the runs stopped.\n\n");
        return;
    }
    const sw_report_policy *p = &r->policies[f];
    const char *all = p->trials.reached == p->trials.n ? "" : " (not every run reached it)";
    const char *bound = b >= 0 ? sw_speedup_bound(&r->policies[b].trials, &p->trials) : NULL;
    fputs("**Fastest: ", md);
    md_code(md, p->policy, false);
    if (b >= 0 && b != f && bound) { /* a time of 0, or two lower bounds, have no ratio */
        fprintf(md, ", %s%.2fx the best baseline (", bound,
                sw_speedup(&r->policies[b].trials, &p->trials));
        md_code(md, r->policies[b].policy, false);
        fprintf(md, ")**%s.\n\n", all);
    } else {
        fprintf(md, ", at %.1f s on average**%s.\n\n", p->trials.mean, all);
    }
}

/* The speedups seed by seed, where two seeds or more pair (compare prints the same). */
static void write_paired(const sw_report *r, FILE *md)
{
    bool said = false;
    for (int i = 0; i < r->n_policies; i++) {
        const sw_paired *q = &r->policies[i].paired;
        if (q->n < 2)
            continue;
        if (!said) {
            fputs("\nSeed by seed over the best baseline (", md);
            md_code(md, r->policies[r->best].policy, false);
            fputs("): each seed is one scenario for every policy, so the geometric mean of the "
                  "baseline's time over the policy's on the seeds both reached the target "
                  "leaves out the spread between scenarios (Student's t on the logarithms):\n\n"
                  "| policy | speedup seed by seed | 95% interval | faster on |\n"
                  "| --- | --- | --- | --- |\n", md);
            said = true;
        }
        fputs("| ", md);
        md_code(md, r->policies[i].policy, true);
        fprintf(md, " | %.2fx | %.2f-%.2f | %zu of %zu seeds |\n", q->ratio, q->lo, q->hi,
                q->faster, q->n);
    }
}

void sw_report_write_table(const sw_report *r, FILE *md)
{
    write_answer(r, md);
    if (r->target_acc > 0)
        fprintf(md,
                "Time to a validation accuracy of %.4g (seconds of each run's clock: virtual "
                "for the simulator):\n\n",
                r->target_acc);
    else
        fprintf(md, "Time to each run's target (seconds of each run's clock: virtual for the "
                    "simulator):\n\n");
    fprintf(md, "| policy | reached | time to target | speedup | applies | idle %% |\n"
                "| --- | --- | --- | --- | --- | --- |\n");
    for (int i = 0; i < r->n_policies; i++) {
        const sw_trials *t = &r->policies[i].trials;
        fputs("| ", md);
        md_code(md, r->policies[i].policy, true);
        if (!t->n) { /* a time of 0.0 for runs that all failed would read as the fastest */
            fprintf(md, " | 0/0 | - (no run finished) | - | - | - |\n");
            continue;
        }
        fprintf(md, " | %ld/%ld | %.1f +- %.1f%s | ", t->reached, t->n, t->mean, t->half,
                t->reached < t->n ? " (>=)" : "");
        const sw_trials *b = r->best >= 0 ? &r->policies[r->best].trials : NULL;
        const char *bound = b ? sw_speedup_bound(b, t) : NULL;
        if (bound)
            fprintf(md, "%s%.2fx", bound, sw_speedup(b, t));
        else
            fputs("-", md);
        fprintf(md, " | %.0f | %.1f |\n", t->applies, 100 * t->idle);
    }
    fputs("\n+- is the half-width of the 95% confidence interval over the runs (Student's t); "
          "(>=) marks a mean that counts runs which missed the target at their end time, a lower "
          "bound, so that a speedup is a bound too (<=, >=) or unknown (-) where both missed.",
          md);
    if (r->best >= 0) {
        fputs(" Speedup: the mean time of the best baseline (", md);
        md_code(md, r->policies[r->best].policy, false);
        fputs(") over each policy's.", md);
    }
    fputs("\n", md);
    write_paired(r, md);
}
