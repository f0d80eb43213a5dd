/* The comparison's record in --log-dir: compare_journal.h. */
#define _POSIX_C_SOURCE 200809L
#include "compare_journal.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmdline.h"
#include "syncwise/err.h"
#include "syncwise/file.h"
#include "syncwise/log.h"

#define HEADER                                                                                     \
    "policy,seed,reached,time_to_target,end_t,applies,pushes,drops,idle_share,final_loss,"         \
    "final_acc,decide_share,diverged_t"
#define FIELDS 13                  /* the header's columns */
#define MAX_FILE ((size_t)1 << 30) /* a results.csv larger than this is not ours */

/* The policy as a CSV field's text: its double quotes doubled (the field is quoted). */
static char *csv_text(const char *policy)
{
    char *out = malloc(2 * strlen(policy) + 1), *at = out;
    for (const char *c = policy; out && *c; c++) {
        *at++ = *c;
        if (*c == '"')
            *at++ = '"';
    }
    if (out)
        *at = '\0';
    return out;
}

char *sw__cmp_row_format(const char *spec, uint64_t seed, const sw_sim_result *r)
{
    char *policy = csv_text(spec);
    if (!policy)
        return NULL;
    const sw_run_stats *st = &r->stats;
    /* empty: no model (no loss), regression (no accuracy), did not diverge */
    char loss[32] = "", acc[32] = "", div[32] = "";
    if (r->n_params)
        snprintf(loss, sizeof loss, "%.6g", r->final_loss);
    if (r->n_params && r->classify)
        snprintf(acc, sizeof acc, "%.6g", r->final_acc);
    if (r->diverged_t >= 0)
        snprintf(div, sizeof div, "%.17g", r->diverged_t);
    double time = r->target_t >= 0 ? r->target_t : r->end_t;
    const char *fmt = "\"%s\",%" PRIu64 ",%d,%.17g,%.17g,%llu,%llu,%llu,%.17g,%s,%s,%.6g,%s";
#define ROW_ARGS                                                                                   \
    policy, seed, r->target_t >= 0, time, r->end_t, (unsigned long long)st->applies,               \
        (unsigned long long)st->pushes, (unsigned long long)st->drops,                             \
        sw_run_stats_idle_share(st), loss, acc, r->decide_s / (r->wall_s + 1e-12), div
    int len = snprintf(NULL, 0, fmt, ROW_ARGS);
    char *row = len < 0 ? NULL : malloc((size_t)len + 1);
    if (row)
        snprintf(row, (size_t)len + 1, fmt, ROW_ARGS);
#undef ROW_ARGS
    free(policy);
    return row;
}

/* One field of a row: all of it a number, or empty where the column may be (-1 then). */
static bool number(const char *text, bool may_be_empty, double *out)
{
    if (!*text) {
        *out = -1;
        return may_be_empty;
    }
    char *end;
    errno = 0;
    *out = strtod(text, &end); /* decimal as the table writes it: no hex or +1 */
    return !errno && *end == '\0' &&
           (sw_spec_decimal(text) || !strcmp(text + (*text == '-'), "inf") ||
            !strcmp(text + (*text == '-'), "nan")); /* a diverged run's loss, as printf says it */
}

/* The quoted field at the start of line (its "" read as "), into out; what follows it, or NULL
 * when it is no such field or too long. */
static const char *quoted_field(const char *line, char *out, size_t cap)
{
    if (*line++ != '"')
        return NULL;
    size_t n = 0;
    for (; *line && n + 1 < cap; line++) {
        if (*line == '"' && line[1] != '"') {
            out[n] = '\0';
            return line + 1;
        }
        line += *line == '"'; /* "" */
        out[n++] = *line;
    }
    return NULL;
}

bool sw__cmp_row_parse(const char *line, sw__cmp_row *out)
{
    const char *close = quoted_field(line, out->policy, sizeof out->policy);
    if (!close || *close != ',')
        return false;
    double v[FIELDS - 1];
    int n = 0;
    for (const char *f = close + 1;; f += strcspn(f, ",") + 1) {
        size_t len = strcspn(f, ",");
        char text[64];
        if (n == FIELDS - 1 || len >= sizeof text)
            return false;
        memcpy(text, f, len);
        text[len] = '\0';
        /* final_loss, final_acc and diverged_t: empty where a run has none */
        if (!number(text, n == 8 || n == 9 || n == 11, &v[n]))
            return false;
        n++;
        if (f[len] == '\0')
            break;
    }
    if (n != FIELDS - 1 || !(v[0] >= 1 && v[0] < 0x1p53) || v[0] != (double)(uint64_t)v[0] ||
        (v[1] != 0 && v[1] != 1) || !(v[2] >= 0 && v[2] <= v[3] && v[3] < INFINITY) ||
        !(v[4] >= 0) ||
        !(v[7] >= 0 && v[7] <= 1)) /* times, applies and shares a run can have */
        return false;
    out->seed = (uint64_t)v[0];
    out->trial = (sw_trial){.time = v[2], .reached = v[1] == 1, .applies = v[4], .idle = v[7]};
    out->diverged_t = v[11];
    return true;
}

/* ---- The scenario ----------------------------------------------------------------------- */

static int check_scenario(const char *path, const char *scenario, sw__cmp_scenario_fn canon,
                          char *err)
{
    uint8_t *kept;
    size_t len;
    char why[SW_ERR_LEN];
    /* Rows without a scenario are not this command line's (2); a record there but out of
     * reach (a dangling link, no permission) is damage (1), said below. */
    struct stat st;
    if (lstat(path, &st) != 0 && errno == ENOENT)
        return sw_fail(err, SW_EINVAL, "--resume: no comparison to resume there (%s is missing)",
                       path);
    if (sw_file_read_all(path, 1 << 20, &kept, &len, why)) /* there but unreadable: damage */
        return sw_fail(err, SW_EIO, "--resume: the comparison's record cannot be read: %s", why);
    /* as kept, or as this version reads what an earlier one kept */
    size_t cap = len + 1 > 8192 ? len + 1 : 8192;
    char *text = malloc(len + 1), *now = malloc(cap);
    if (!text || !now) {
        free(text), free(now), free(kept);
        return sw_fail(err, SW_ENOMEM, "out of memory");
    }
    memcpy(text, kept, len);
    text[len] = '\0';
    /* A NUL (the zeros a crash or a bad disk leaves) or nothing but blanks is no record: read
     * as text up to its first NUL it passed for this scenario or for another. */
    bool readable = !memchr(kept, '\0', len) && text[strspn(text, " \t\r\n")] != '\0';
    bool same = readable && !strcmp(text, scenario);
    if (readable && !same && canon) {
        readable = canon(text, now, cap);
        same = readable && !strcmp(now, scenario);
    }
    if (!readable) { /* a damaged record: not a scenario of another comparison */
        free(text), free(now), free(kept);
        return sw_fail(err, SW_EFORMAT,
                       "--resume: %s is no comparison's record this version reads (damaged, "
                       "edited, or a newer version's?): restore it, or move the directory's "
                       "files aside to start afresh", path);
    }
    if (!same) /* both in full: the message buffer is too short for them */
        sw_cli_print_both("compare", "the comparison to resume ran with", (const char *)kept, len,
                          "and this one runs with", scenario);
    free(text);
    free(now);
    free(kept);
    return same ? 0
                : sw_fail(err, SW_EMISMATCH,
                          "--resume: %s holds another scenario (above); "
                          "the policies, --seeds and --jobs may change, not the rest",
                          path);
}

/* A row read, and what it says; -1 out of memory. */
static int keep_row(sw__cmp_journal *j, char *line, const sw__cmp_row *facts)
{
    if (j->n_old == j->cap_old) {
        size_t cap = j->cap_old ? 2 * j->cap_old : 64;
        char **old = realloc(j->old, cap * sizeof *old);
        if (old)
            j->old = old;
        sw__cmp_row *more = old ? realloc(j->facts, cap * sizeof *more) : NULL;
        if (!more)
            return -1;
        j->facts = more;
        j->cap_old = cap;
    }
    j->facts[j->n_old] = *facts;
    j->old[j->n_old++] = line;
    return 0;
}

static int by_run(const void *a, const void *b)
{
    const sw__cmp_row *x = *(const sw__cmp_row *const *)a, *y = *(const sw__cmp_row *const *)b;
    int c = strcmp(x->policy, y->policy);
    if (!c)
        c = (x->seed > y->seed) - (x->seed < y->seed);
    return c ? c : (x > y) - (x < y); /* then in the file's order */
}

/* One row a run: a row written twice over (the same text) is kept once; two rows that differ
 * for one policy and seed are no table compare wrote (its runs are deterministic and each is
 * written once): which to believe is the user's call, not ours to make silently. */
static int one_row_a_run(sw__cmp_journal *j, char *err)
{
    const sw__cmp_row **order = malloc((j->n_old ? j->n_old : 1) * sizeof *order);
    if (!order)
        return sw_fail(err, SW_ENOMEM, "out of memory reading %s", j->csv);
    for (size_t i = 0; i < j->n_old; i++)
        order[i] = &j->facts[i];
    qsort(order, j->n_old, sizeof *order, by_run);
    int rc = 0;
    for (size_t i = 1; i < j->n_old && !rc; i++) {
        const sw__cmp_row *a = order[i - 1], *b = order[i];
        if (strcmp(a->policy, b->policy) || a->seed != b->seed)
            continue;
        size_t first = (size_t)(a - j->facts), again = (size_t)(b - j->facts);
        if (j->old[first] && j->old[again] && strcmp(j->old[first], j->old[again]))
            rc = sw_fail(err, SW_EFORMAT,
                         "%s: lines %zu and %zu give different results for policy \"%s\" and "
                         "seed %" PRIu64 ": remove the one not to keep, or move the file aside "
                         "to run them again",
                         j->csv, a->line, b->line, a->policy, a->seed);
        free(j->old[again]); /* the same text twice: one is enough */
        j->old[again] = j->old[first];
        j->old[first] = NULL; /* the later line stands for both, as when they are compared */
    }
    free(order);
    return rc;
}

/* The rows a results.csv holds, after its header; a line a crash cut short is not one. */
static int read_rows(sw__cmp_journal *j, char *err)
{
    uint8_t *text;
    size_t len;
    if (access(j->csv, F_OK) != 0)
        return 0; /* killed before its first run ended */
    int rc = sw_file_read_all(j->csv, MAX_FILE, &text, &len, err);
    if (rc)
        return rc;
    for (size_t at = 0, line = 0; at < len && !rc; line++) {
        const uint8_t *nl = memchr(text + at, '\n', len - at);
        size_t n = nl ? (size_t)(nl - (text + at)) : len - at;
        sw__cmp_row row;
        /* A NUL (the zeros a crash can leave in an appended file) ends the text early: such a
         * line is no row, whatever comes before it. */
        bool nul = memchr(text + at, '\0', n) != NULL;
        char *copy = strndup((const char *)text + at, n);
        at += n + 1;
        if (copy && !nul && n && copy[n - 1] == '\r') /* written on another system */
            copy[n - 1] = '\0';
        if (copy && (line == 0 || !nl || nul || !sw__cmp_row_parse(copy, &row))) {
            if (line == 0 && (nul || strcmp(copy, HEADER)))
                rc = sw_fail(err, SW_EFORMAT, /* a damaged file: 1, not a usage error */
                             "%s: its first line is not the header of this "
                             "version's results table (%s)",
                             j->csv, HEADER);
            j->unread += line > 0 && copy[strspn(copy, " \t")]; /* a torn last line too */
            free(copy);
            continue;
        }
        row.line = line + 1;
        if (!copy || keep_row(j, copy, &row)) {
            free(copy);
            rc = sw_fail(err, SW_ENOMEM, "out of memory reading %s", j->csv);
        }
    }
    free(text);
    return rc ? rc : one_row_a_run(j, err);
}

int sw__cmp_journal_start(sw__cmp_journal *j, const char *dir, const char *scenario, bool resume,
                          sw__cmp_scenario_fn canon, char *err)
{
    *j = (sw__cmp_journal){.lock_fd = -1};
    char path[4096], prev[4200];
    snprintf(path, sizeof path, "%s/compare.scenario", dir);
    snprintf(j->csv, sizeof j->csv, "%s/results.csv", dir);
    int rc = sw_file_claim(j->csv, "--log-dir's table", &j->lock_fd, err);
    if (rc == SW_ESTATE)
        return sw_fail(err, SW_ESTATE, "%s: another comparison is running there", dir);
    if (rc)
        return rc;
    bool fresh = resume && access(path, F_OK) != 0 && access(j->csv, F_OK) != 0;
    if (fresh)
        sw_log(SW_LOG_INFO, "%s holds no comparison yet: every run runs", dir);
    if (resume && !fresh) {
        rc = check_scenario(path, scenario, canon, err);
        return rc ? rc : read_rows(j, err);
    }
    struct stat st; /* a comparison run again without --resume: its rows are kept aside */
    snprintf(prev, sizeof prev, "%s.prev", j->csv);
    if (stat(j->csv, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > (off_t)sizeof HEADER) {
        if (rename(j->csv, prev) != 0)
            return sw_fail(err, SW_EIO, "%s: cannot keep it as %s: %s", j->csv, prev,
                           strerror(errno));
        sw_log(SW_LOG_INFO,
               "the earlier comparison's rows are kept as %s (--resume would have "
               "gone on with them)",
               prev);
    }
    return sw_file_write_atomic(path, (const uint8_t *)scenario, strlen(scenario),
                                "comparison's scenario", err);
}

char *sw__cmp_journal_take(sw__cmp_journal *j, const char *policy, uint64_t seed)
{
    for (size_t i = 0; i < j->n_old; i++) { /* one row a run (one_row_a_run) */
        if (j->old[i] && j->facts[i].seed == seed && !strcmp(j->facts[i].policy, policy)) {
            char *found = j->old[i];
            j->old[i] = NULL;
            return found;
        }
    }
    return NULL;
}

size_t sw__cmp_journal_unclaimed(const sw__cmp_journal *j)
{
    size_t n = 0;
    for (size_t i = 0; i < j->n_old; i++)
        n += j->old[i] != NULL;
    return n;
}

/* The header, every row given, then the rows kept that no run claimed (nothing computed is
 * lost), as the file's whole text. */
static int write_all(const sw__cmp_journal *j, char *const *rows, size_t n, char *err)
{
    size_t len = sizeof HEADER + 1; /* its newline, and sprintf's last nul */
    for (size_t i = 0; i < n + j->n_old; i++) {
        const char *row = i < n ? rows[i] : j->old[i - n];
        len += row ? strlen(row) + 1 : 0;
    }
    char *text = malloc(len), *at = text;
    if (!text)
        return sw_fail(err, SW_ENOMEM, "out of memory writing %s", j->csv);
    at += sprintf(at, "%s\n", HEADER);
    for (size_t i = 0; i < n + j->n_old; i++) {
        const char *row = i < n ? rows[i] : j->old[i - n];
        if (row)
            at += sprintf(at, "%s\n", row);
    }
    int rc = sw_file_write_atomic(j->csv, (const uint8_t *)text, (size_t)(at - text),
                                  "--log-dir's table", err);
    free(text);
    return rc;
}

int sw__cmp_journal_open(sw__cmp_journal *j, char *const *rows, size_t n, char *err)
{
    int rc = write_all(j, rows, n, err);
    if (!rc && !(j->f = sw_file_open_log(j->csv, true, "--log-dir's table", err)))
        rc = SW_EIO;
    if (!rc && fseek(j->f, 0, SEEK_END) != 0)
        rc = sw_fail(err, SW_EIO, "%s: %s", j->csv, strerror(errno));
    return rc;
}

int sw__cmp_journal_add(sw__cmp_journal *j, const char *row, char *err)
{
    if (fprintf(j->f, "%s\n", row) < 0 || fflush(j->f) != 0 || fsync(fileno(j->f)) != 0)
        return sw_fail(err, SW_EIO, "%s: %s", j->csv, strerror(errno));
    return 0;
}

int sw__cmp_journal_finish(sw__cmp_journal *j, char *const *rows, size_t n, char *err)
{
    int rc = sw_file_close(j->f, j->csv, err);
    j->f = NULL;
    return rc ? rc : write_all(j, rows, n, err);
}

void sw__cmp_journal_free(sw__cmp_journal *j)
{
    if (j->f)
        fclose(j->f);
    sw_file_release(j->lock_fd);
    for (size_t i = 0; i < j->n_old; i++)
        free(j->old[i]);
    free(j->old);
    free(j->facts);
    *j = (sw__cmp_journal){.lock_fd = -1};
}
