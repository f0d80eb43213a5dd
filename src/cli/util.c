/* Option parsing helpers and help listings shared by the subcommands. */
#define _POSIX_C_SOURCE 200809L
#include <assert.h>
#include <cblas.h>
#include <errno.h>
#include <libgen.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "syncwise/clock.h"
#include "syncwise/cpus.h"
#include "syncwise/data.h"
#include "syncwise/err.h"
#include "syncwise/file.h"
#include "syncwise/log.h"
#include "syncwise/policy.h"
#include "syncwise/proto.h"
#include "syncwise/shard.h"
#include "syncwise/spec.h"
#include "syncwise/transport.h"

int sw_cli_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "syncwise %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return 1;
}

bool sw_cli_long(const char *cmd, const char *opt, const char *arg, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(arg, &end, 10);
    if (sw_spec_decimal(arg) && !*end && errno == ERANGE) { /* a number, out of any range */
        sw_cli_error(cmd, "%s: %s is outside [%ld, %ld]", opt, arg, lo, hi);
        return false;
    }
    if (!sw_spec_decimal(arg) || *end || errno) {
        sw_cli_error(cmd, "%s: '%s' is not an integer", opt, arg);
        return false;
    }
    if (v < lo || v > hi) {
        sw_cli_error(cmd, "%s: %ld is outside [%ld, %ld]", opt, v, lo, hi);
        return false;
    }
    *out = v;
    return true;
}

bool sw_cli_u64(const char *cmd, const char *opt, const char *arg, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(arg, &end, 10);
    if (sw_spec_decimal(arg) && !*end && errno == ERANGE && *arg != '-') {
        sw_cli_error(cmd, "%s: %s is too large", opt, arg);
        return false;
    }
    if (!sw_spec_decimal(arg) || *end || errno || *arg == '-') {
        sw_cli_error(cmd, "%s: '%s' is not a non-negative integer", opt, arg);
        return false;
    }
    *out = v;
    return true;
}

bool sw_cli_double(const char *cmd, const char *opt, const char *arg, double lo, double hi,
                   double *out)
{
    double v;
    const char *too;
    int rc = sw_spec_read_double(arg, &v, &too);
    if (rc == SW_EINVAL)
        sw_cli_error(cmd, "%s: '%s' is not a number", opt, arg);
    else if (rc)
        sw_cli_error(cmd, "%s: '%s' is too %s for a double", opt, arg, too);
    if (rc)
        return false;
    if (v < lo || v > hi) {
        sw_cli_error(cmd, "%s: %.9g is outside [%g, %g]", opt, v, lo, hi);
        return false;
    }
    *out = v;
    return true;
}

void sw_cli_set_threads(long threads)
{
    if (threads > 0)
        openblas_set_num_threads((int)threads);
}

int sw_cli_pin_cpus(const char *cmd, const char *list)
{
    char err[SW_ERR_LEN];
    int n = list ? sw_cpus_pin_process(list, err) : 0;
    if (n < 0)
        return sw_cli_error(cmd, "%s", err) + 1;
    if (n > 0 && openblas_get_num_threads() > n) /* its own choice: the CPUs it found at start */
        openblas_set_num_threads(n);
    if (n > 0)
        sw_log(SW_LOG_INFO, "every thread runs on CPU%s %s (--cpus)", n > 1 ? "s" : "", list);
    return 0;
}

void sw_cli_run_jobs(long jobs, void *(*worker)(void *), void *arg)
{
    enum { MAX_JOBS = 256 };
    long n = jobs > 0 ? jobs : sysconf(_SC_NPROCESSORS_ONLN);
    n = n < 1 ? 1 : n > MAX_JOBS ? MAX_JOBS : n;
    pthread_t th[MAX_JOBS];
    long started = 0;
    while (started < n && pthread_create(&th[started], NULL, worker, arg) == 0)
        started++;
    if (started == 0)
        worker(arg);
    for (long i = 0; i < started; i++)
        pthread_join(th[i], NULL);
}

/* "  name            help", the help wrapped at 100 columns under itself. */
static void print_item(const char *name, const char *help)
{
    enum { INDENT = 18, WIDTH = 100 };
    printf("  %-15s ", name);
    int col = INDENT;
    for (const char *w = help; *w;) {
        size_t len = strcspn(w, " ");
        if (col > INDENT && col + 1 + (int)len > WIDTH) {
            printf("\n%*s", INDENT, "");
            col = INDENT;
        } else if (col > INDENT) {
            putchar(' ');
            col++;
        }
        printf("%.*s", (int)len, w);
        col += (int)len;
        w += len;
        w += strspn(w, " ");
    }
    putchar('\n');
}

/* The data sets and models, the sparse ones only where the command runs them. */
static void data_help(bool sparse)
{
    printf("data sets (--data NAME:key=value,...):\n");
    for (const sw_data_source_info *s = sw_data_sources; s->name; s++)
        print_item(s->name, s->help);
    if (sparse)
        print_item("sparse", "sparse rows like bag-of-words text, for svm and logistic: n=20000, "
                             "test=2000, dim=10000, density=0.005, zipf=1.1, noise=0.02 "
                             "(libsvm:train=PATH,test=PATH,dim=D too stays sparse for them)");
}

static void model_help(bool sparse)
{
    printf("models (--model NAME:key=value,...):\n");
    for (const sw_model_arch_info *a = sw_model_archs; a->name; a++)
        print_item(a->name, a->help);
    if (sparse) {
        print_item("svm", "linear SVM (hinge loss, lambda=1e-4 L2) on sparse rows");
        print_item("logistic", "logistic regression (lambda=0 L2) on sparse rows");
    }
}

void sw_cli_print_data_and_models(void)
{
    data_help(true);
    printf("\n");
    model_help(true);
}

void sw_cli_print_dense_data_and_models(void)
{
    data_help(false);
    printf("\n");
    model_help(false);
}

void sw_cli_print_policy_help(void)
{
    printf("policies (--policy NAME:key=value,...):\n");
    const sw_policy_ops *o;
    for (size_t i = 0; (o = sw_policy_at(i)); i++) /* a plugin's too: a user looks here */
        print_item(o->name, o->help ? o->help : "(a policy of one's own, without help)");
}

void sw_cli_set_verbosity(bool quiet, bool verbose)
{
    if (quiet)
        sw_log_set_level(SW_LOG_WARN);
    if (verbose)
        sw_log_set_level(SW_LOG_DEBUG);
}

int sw_cli_mkdirs(const char *path)
{
    char buf[4096];
    if (!*path) { /* no directory named: mkdir's own answer for "" */
        errno = ENOENT;
        return -1;
    }
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0755) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    if (mkdir(buf, 0755) == 0)
        return 0;
    struct stat st; /* there already: as a directory, or it is no place for files */
    if (errno != EEXIST || stat(buf, &st) != 0)
        return -1;
    errno = S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
    return errno ? -1 : 0;
}

/* What a names among the files the output b_name (its option) at b keeps beside the file b
 * names in the end: a claimed output's lock (--checkpoint, --endpoint-file, --out: FILE.lock,
 * sw_file_claim) or a checkpoint's save before the last (FILE.prev, which a resume reads);
 * NULL for neither. A --log locks itself and keeps nothing beside. */
static const char *kept_beside(const char *a, const char *b_name, const char *b)
{
    bool checkpoint = !strcmp(b_name, "--checkpoint");
    bool claimed = checkpoint || !strcmp(b_name, "--endpoint-file") || !strcmp(b_name, "--out");
    char final[4096], lock[4200], prev[4200];
    const char *at = sw_file_final_name(b, final) ? final : b;
    snprintf(lock, sizeof lock, "%s.lock", at);
    snprintf(prev, sizeof prev, "%s.prev", at);
    if (claimed && sw_file_same(a, lock))
        return "lock";
    return checkpoint && sw_file_same(a, prev) ? "save before the last" : NULL;
}

/* A usage error (2, said) when two of the n named paths name one file (NULL: not given), or
 * one names a file another keeps beside it (kept_beside). */
static int distinct_files(const char *cmd, int n, const char *const names[],
                          const char *const paths[])
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            if (!paths[i] || !paths[j] || i == j)
                continue;
            if (i < j && sw_file_same(paths[i], paths[j]))
                return sw_cli_error(cmd, "%s and %s name the same file (%s): give each its own",
                                    names[i], names[j], paths[j]) + 1;
            const char *kept = kept_beside(paths[i], names[j], paths[j]);
            if (kept)
                return sw_cli_error(cmd, "%s %s is %s %s's %s: give each its own file", names[i],
                                    paths[i], names[j], paths[j], kept) + 1;
        }
    return 0;
}

/* Whether path is a file that exists in directory dir (a data set given as a directory, such
 * as fashion-mnist:dir=D, reads the files in it). */
static bool existing_file_in(const char *dir, const char *path)
{
    struct stat sd, sp;
    if (stat(dir, &sd) != 0 || !S_ISDIR(sd.st_mode) || stat(path, &sp) != 0)
        return false;
    char copy[4096];
    snprintf(copy, sizeof copy, "%s", path);
    return sw_file_same(dirname(copy), dir);
}

bool sw_cli_spec_names(const char *spec, const char *path)
{
    char buf[4096];
    if (!spec || !path || snprintf(buf, sizeof buf, "%s", spec) >= (int)sizeof buf)
        return false;
    char *save = NULL;
    for (char *part = strtok_r(buf, ",;@|", &save); part; part = strtok_r(NULL, ",;@|", &save)) {
        char *value = strrchr(part, '=');
        value = value ? value + 1 : strchr(part, ':') ? strchr(part, ':') + 1 : part;
        if (*value && (sw_file_same(value, path) || existing_file_in(value, path)))
            return true;
        if (!strcmp(part, "fashion-mnist") && existing_file_in(SW_FASHION_MNIST_DIR, path))
            return true; /* its default directory */
    }
    return false;
}

/* Whether path could be opened for writing: the file itself when it exists, else its
 * directory. Checked before any work, so that a typo in a directory costs no data load; the
 * open itself still decides (a device like /dev/stdout passes here as it opens there). */
static bool writable_place(const char *path)
{
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) { /* every output here is a file */
        errno = EISDIR;
        return false;
    }
    if (access(path, F_OK) == 0)
        return access(path, W_OK) == 0;
    char copy[4096];
    snprintf(copy, sizeof copy, "%s", path);
    const char *dir = dirname(copy);
    if (stat(dir, &st) == 0 && !S_ISDIR(st.st_mode)) { /* not "Permission denied" (X_OK) */
        errno = ENOTDIR;
        return false;
    }
    return access(dir, W_OK | X_OK) == 0;
}

int sw_cli_outputs_apart(const char *cmd, int n_out, const char *const out_names[],
                         const char *const outs[], int n_in, const char *const inputs[])
{
    int rc = distinct_files(cmd, n_out, out_names, outs); /* '' never parses as a value */
    for (int i = 0; i < n_out && !rc; i++)
        for (int j = 0; j < n_in && !rc; j++)
            if (outs[i] && sw_cli_spec_names(inputs[j], outs[i]))
                rc = sw_cli_error(cmd, "%s %s is a file this run reads: give it its own",
                                  out_names[i], outs[i]) + 1;
    for (int i = 0; i < n_out && !rc; i++)
        if (outs[i] && !writable_place(outs[i]))
            rc = errno == EISDIR ? sw_cli_error(cmd, "%s %s: is a directory: give a file's name",
                                                out_names[i], outs[i])
                                 : sw_cli_error(cmd, "%s %s: cannot write there: %s",
                                                out_names[i], outs[i], strerror(errno));
    return rc;
}

void sw_cli_file_part(const char *spec, char *out, size_t cap)
{
    snprintf(out, cap, "%s", spec);
    for (char *c = out; *c; c++)
        if (*c == ':' || *c == ',' || *c == '/' || *c == ' ')
            *c = *c == ':' ? '-' : '_';
}

const sw_dataset *sw_cli_split(const sw_data *d, const char *name)
{
    if (strcmp(name, "train") == 0)
        return d->train;
    if (strcmp(name, "val") == 0)
        return d->val;
    return strcmp(name, "test") == 0 ? d->test : NULL;
}

static sw_stop_flag g_stop;
static_assert(ATOMIC_INT_LOCK_FREE == 2 && ATOMIC_LLONG_LOCK_FREE == 2,
              "a signal handler may touch lock-free atomics only");

static atomic_llong g_first_ns; /* when the first signal came (sw_clock_now_s); 0: not yet */

/* The first signal asks for a clean stop; a second, while that stop takes its time (the last
 * checkpoint, the goodbyes), is obeyed at once, as the user who sent it means, unless it came
 * within a second of the first: one Ctrl-C under mpirun is the terminal's SIGINT and the
 * launcher's SIGTERM, a single request. Handlers may run on two threads at once, so the flag and
 * the first time are atomics: the exchange picks one first signal, which stores its time after. */
static void on_signal(int sig)
{
    /* sw_clock_now_s reads clock_gettime, async-signal-safe as signal and raise are */
    long long now = (long long)(sw_clock_now_s() * 1e9);
    if (!atomic_exchange(&g_stop, 1)) {
        atomic_store(&g_first_ns, now);
        return;
    }
    /* A first signal's time not yet stored (its handler runs on another thread) is as now: this
     * one is part of the same request, never a reason to kill. */
    long long first = atomic_load(&g_first_ns);
    if (first == 0 || now - first < 1000000000LL)
        return;
    signal(sig, SIG_DFL);
    raise(sig);
}

const sw_stop_flag *sw_cli_catch_signals(void)
{
    struct sigaction sa, was;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask); /* none of the three nests in another's handler on one thread */
    sigaddset(&sa.sa_mask, SIGINT);
    sigaddset(&sa.sa_mask, SIGTERM);
    sigaddset(&sa.sa_mask, SIGHUP);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    /* A closed terminal stops cleanly, as Ctrl-C, not as a crash; unless its SIGHUP was ignored
     * already (nohup), which the user asked for. */
    if (sigaction(SIGHUP, NULL, &was) == 0 && was.sa_handler != SIG_IGN)
        sigaction(SIGHUP, &sa, NULL);
    return &g_stop;
}

/* One more part of a policy list: a spec of its own, or the continuation of the one before;
 * false when out of memory. */
static bool add_part(char **out, int *n, const char *part, bool continues)
{
    if (!continues) {
        if (!(out[*n] = strdup(part)))
            return false;
        ++*n;
        return true;
    }
    char *prev = out[*n - 1];
    size_t need = strlen(prev) + strlen(part) + 2;
    char *joined = malloc(need);
    if (!joined)
        return false;
    snprintf(joined, need, "%s%c%s", prev, strchr(prev, ':') ? ',' : ':', part);
    free(prev);
    out[*n - 1] = joined;
    return true;
}

int sw_cli_policy_list(const char *cmd, const char *opt, const char *list, char **out, int max)
{
    char *copy = strdup(list), *save = NULL;
    int n = 0;
    bool too_many = false, no_memory = !copy;
    /* ';' always ends a spec; within a ';'-part, ',' may continue one */
    for (char *group = copy ? strtok_r(copy, ";", &save) : NULL; group && !too_many && !no_memory;
         group = strtok_r(NULL, ";", &save)) {
        char *in = NULL;
        bool first = true;
        for (char *part = strtok_r(group, ",", &in); part && !too_many && !no_memory;
             part = strtok_r(NULL, ",", &in), first = false) {
            bool continues = !first && strchr(part, '=') && !strchr(part, ':');
            too_many = !continues && n == max;
            no_memory = !too_many && !add_part(out, &n, part, continues);
        }
    }
    free(copy);
    if (!too_many && !no_memory && n > 0)
        return n;
    while (n > 0)
        free(out[--n]);
    if (too_many)
        sw_cli_error(cmd, "%s: more than %d policies", opt, max);
    else if (no_memory)
        sw_cli_error(cmd, "out of memory");
    else
        sw_cli_error(cmd, "%s is empty", opt);
    return -1;
}

char *sw_cli_policy_list_joined(const char *cmd, const char *opt, const char *list, int max)
{
    char *specs[64];
    int n = sw_cli_policy_list(cmd, opt, list, specs, max < 64 ? max : 64);
    if (n < 0)
        return NULL;
    size_t len = 1;
    for (int i = 0; i < n; i++)
        len += strlen(specs[i]) + 1;
    char *joined = malloc(len);
    if (joined)
        joined[0] = '\0';
    for (int i = 0; i < n; i++) {
        if (joined)
            strcat(strcat(joined, i ? ";" : ""), specs[i]);
        free(specs[i]);
    }
    if (!joined)
        sw_cli_error(cmd, "out of memory");
    return joined;
}

int sw_cli_endpoint_ok(const char *cmd, const char *opt, const char *ep, bool bind)
{
    char out[512], err[SW_ERR_LEN];
    int rc = ep ? sw_endpoint_check(ep, bind, out, sizeof out, err) : 0;
    if (!rc)
        return 0;
    /* A path another process listens on is no usage error: the run could not start (1). */
    return sw_cli_error(cmd, "%s: %s", opt, err) + (rc != SW_ESTATE);
}

int sw_cli_job_ok(const char *cmd, const char *job)
{
    if (!job)
        return 0;
    size_t n = strlen(job), ok = strspn(job, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                             "0123456789._:-");
    if (n && n <= SW_JOB_MAX && ok == n)
        return 0;
    return sw_cli_error(cmd, "--job: '%s' is no job name (1 to %d letters, digits, '.', '_', ':' "
                        "or '-')", job, SW_JOB_MAX) + 1;
}

int sw_cli_shard_list_ok(const char *cmd, const char *list)
{
    if (!list)
        return 0;
    char(*eps)[SW_SHARD_EP_LEN] = malloc(SW_SHARDS_MAX * sizeof *eps), err[SW_ERR_LEN];
    uint32_t n = 0;
    int rc = !eps ? sw_cli_error(cmd, "out of memory") : 0;
    if (!rc && sw_shard_list_parse(list, eps, &n, err))
        rc = sw_cli_error(cmd, "--shards: %s", err) + 1;
    for (uint32_t j = 0; !rc && j < n; j++)
        rc = sw_cli_endpoint_ok(cmd, "--shards", eps[j], false);
    free(eps);
    return rc;
}

int sw_cli_curve_pair(const char *cmd, const char *key_opt, const char *key, const char *other_opt,
                      const char *other)
{
    if (!key == !other)
        return 0;
    return sw_cli_error(cmd, "%s and %s go together: %s alone would run without CURVE", key_opt,
                        other_opt, key ? key_opt : other_opt) + 1;
}

int sw_cli_spec_shown(const char *spec)
{
    size_t len = strlen(spec);
    return (int)(len - (len > 0 && spec[len - 1] == ':'));
}
