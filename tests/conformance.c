/* Every policy keeps its promise on random scenarios: this program draws scenarios (1 to 64
 * workers; every cluster model, per-worker groups and traces included; crashes, departures,
 * joins and switches between any two policies; no model or a tiny one), runs each through the
 * real `syncwise sim` with an event log, and holds the log to the promise checker
 * (syncwise/check.h). A failure prints the one command that reproduces it and keeps its files.
 *
 *   conformance SYNCWISE SCENARIOS [SEED]
 *
 * The same seed draws the same scenarios. Exit status: 0 when every promise was kept, 1
 * otherwise. */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "syncwise/check.h"
#include "syncwise/err.h"
#include "syncwise/rng.h"

extern char **environ;

#define MAX_ARGS 48
#define RUN_LIMIT_S 60 /* a scenario that runs longer has hung */

typedef struct scenario {
    char *argv[MAX_ARGS];
    int argc;
    char text[8192]; /* the arguments' storage */
    size_t used;
    uint32_t workers, slots;
} scenario;

static const char *dir;       /* scratch directory */
static const char *rlp_file;  /* the shipped learned policies */
static const char *rlswitch_file;

static void arg(scenario *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *at = s->text + s->used;
    int n = vsnprintf(at, sizeof s->text - s->used, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof s->text - s->used || s->argc + 1 >= MAX_ARGS) {
        fprintf(stderr, "conformance: a scenario outgrew its storage\n");
        exit(2);
    }
    s->used += (size_t)n + 1;
    s->argv[s->argc++] = at;
    s->argv[s->argc] = NULL;
}

static uint32_t below(sw_rng *r, uint32_t n) { return (uint32_t)sw_rng_below(r, n); }
static double between(sw_rng *r, double lo, double hi) { return lo + (hi - lo) * sw_rng_uniform(r); }

/* A policy spec with random parameters, valid for a run of `slots` worker slots. */
static void random_policy(sw_rng *r, uint32_t slots, char *out, size_t cap)
{
    static const char *const algos[] = {"sweep", "zipline", "ziplineopt", "ziplineoptbs",
                                        "gridscan"};
    const char *agg = below(r, 3) == 0 ? ",agg=mean" : "";
    switch (below(r, 12)) {
    case 0: snprintf(out, cap, "bsp%s", *agg ? ":agg=mean" : ""); break;
    case 1: snprintf(out, cap, "asp%s", below(r, 2) ? ":lr_mod=staleness" : ""); break;
    case 2: snprintf(out, cap, "ssp:s=%u", below(r, 7)); break;
    case 3: {
        uint32_t lo = below(r, 5);
        snprintf(out, cap, "dssp:lo=%u,hi=%u", lo, lo + below(r, 9));
        break;
    }
    case 4: snprintf(out, cap, "sync:grads_to_wait=%u", 1 + below(r, slots)); break;
    case 5:
        if (below(r, 2))
            snprintf(out, cap, "backup:k=%u%s", 1 + below(r, slots), agg);
        else
            snprintf(out, cap, "backup:b=%u%s", below(r, slots), agg);
        break;
    case 6: {
        static const char *const gain[] = {"", ",gain=eta", ",gain=eta,L=3"};
        snprintf(out, cap, "dbw:D=%u%s%s", 1 + below(r, 8), agg, gain[below(r, 3)]);
        break;
    }
    case 7: snprintf(out, cap, "bdbw%s", *agg ? ":agg=mean" : ""); break;
    case 8:
        snprintf(out, cap, "ebsp:R=%u,algo=%s", 1 + below(r, 20), algos[below(r, 5)]);
        break;
    case 9: snprintf(out, cap, "actions"); break;
    case 10: snprintf(out, cap, "rlp:file=%s", rlp_file); break;
    default: { /* exploring, it hands over between its policies at every other stretch; choosing
                * once, it keeps a random first pick */
        static const char *const how[] = {"", ",eps=0.7", ",choose=once,eps=0.7"};
        snprintf(out, cap, "rlswitch:file=%s%s", rlswitch_file, how[below(r, 3)]);
        break;
    }
    }
}

/* A trace of step times: one shared column, or a row per (worker, seconds). */
static void write_trace(sw_rng *r, const char *path, uint32_t slots)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        exit(2);
    }
    bool shared = below(r, 2);
    uint32_t rows = 1 + below(r, 6);
    for (uint32_t w = 0; w < (shared ? 1 : slots); w++)
        for (uint32_t i = 0; i < rows; i++) {
            double t = between(r, 0.2, 8);
            if (shared)
                fprintf(f, "%.4f\n", t);
            else
                fprintf(f, "%u,%.4f\n", w, t);
        }
    fclose(f);
}

/* One cluster model with random parameters. */
static int random_model(sw_rng *r, uint32_t slots, uint64_t id, bool *trace_used, char *out,
                        size_t cap)
{
    char speed[32] = "";
    if (below(r, 4) == 0)
        snprintf(speed, sizeof speed, ",speed=%.2f", between(r, 0.3, 4));
    switch (below(r, *trace_used ? 5 : 6)) {
    case 0: return snprintf(out, cap, "const:%.3f%s", between(r, 0.2, 3), speed);
    case 1: {
        double lo = between(r, 0, 2);
        return snprintf(out, cap, "uniform:%.3f,%.3f%s", lo, lo + between(r, 0.01, 5), speed);
    }
    case 2:
        return snprintf(out, cap, "shexp:%.2f,base=%.2f%s", between(r, 0, 1), between(r, 0.2, 3),
                        speed);
    case 3:
        return snprintf(out, cap, "pareto:%.2f,%.2f%s", between(r, 1.1, 4), between(r, 0.2, 2),
                        speed);
    case 4:
        return snprintf(out, cap, "straggle:p=%.2f,mean=%.1f,sd=%.1f,base=%.2f,jitter=%.2f,"
                        "mode=%s%s", between(r, 0, 0.8), between(r, 0, 20), between(r, 0, 8),
                        between(r, 0.2, 6), between(r, 0, 0.3), below(r, 2) ? "worker" : "step",
                        speed);
    default: {
        char path[512];
        snprintf(path, sizeof path, "%s/trace-%llu.csv", dir, (unsigned long long)id);
        write_trace(r, path, slots);
        *trace_used = true;
        return snprintf(out, cap, "trace:%s%s", path, speed);
    }
    }
}

/* One model for everyone, or a default and up to two groups of workers with their own. */
static void random_cluster(sw_rng *r, uint32_t slots, uint64_t id, char *out, size_t cap)
{
    bool trace_used = false;
    int n = random_model(r, slots, id, &trace_used, out, cap);
    uint32_t groups = slots > 1 ? below(r, 3) : 0, from = 0;
    for (uint32_t g = 0; g < groups && from < slots && (size_t)n < cap; g++) {
        uint32_t first = from + below(r, slots - from), last = first + below(r, slots - first);
        n += snprintf(out + n, cap - (size_t)n, ";");
        n += random_model(r, slots, id, &trace_used, out + n, cap - (size_t)n);
        n += snprintf(out + n, cap - (size_t)n, "@%u-%u", first, last);
        from = last + 1;
    }
}

/* Crashes, departures, joins (new workers or returning ones) and switches in [0, horizon]. */
static uint32_t random_events(sw_rng *r, uint32_t workers, double horizon, char *out,
                              size_t cap, uint32_t *slots)
{
    uint32_t n_ev = below(r, 9), joins = 0;
    for (uint32_t i = 0; i < n_ev; i++)
        joins += below(r, 4) == 0;
    *slots = workers + joins;
    size_t len = 0;
    out[0] = '\0';
    for (uint32_t i = 0, new_joins = 0; i < n_ev && len < cap; i++) {
        double t = between(r, 0, horizon);
        const char *sep = len ? ";" : "";
        uint32_t kind = below(r, 4);
        if (new_joins < joins && (kind == 0 || n_ev - i <= joins - new_joins)) {
            new_joins++;
            len += (size_t)snprintf(out + len, cap - len, "%sjoin:t=%.3f", sep, t);
        } else if (kind == 1) {
            len += (size_t)snprintf(out + len, cap - len, "%sjoin:w=%u,t=%.3f", sep,
                                    below(r, workers), t);
        } else if (kind == 2) {
            uint32_t w = below(r, *slots);
            len += (size_t)snprintf(out + len, cap - len, "%s%s:w=%u,t=%.3f", sep,
                                    below(r, 2) ? "crash" : "leave", w, t);
            if (w < workers && below(r, 3) == 0 && len < cap) /* back soon: its gradient waits */
                len += (size_t)snprintf(out + len, cap - len, ";join:w=%u,t=%.3f", w,
                                        t + between(r, 0, horizon / 50));
        } else {
            char policy[600];
            random_policy(r, *slots, policy, sizeof policy);
            len += (size_t)snprintf(out + len, cap - len, "%sswitch:t=%.3f,policy=%s", sep, t,
                                    policy);
        }
    }
    return n_ev;
}

static uint32_t random_workers(sw_rng *r)
{
    uint32_t u = below(r, 10);
    return u < 5 ? 1 + below(r, 8) : u < 8 ? 9 + below(r, 16) : 25 + below(r, 40);
}

/* Transfers' costs, and a third of the time parameters on shards behind one control plane
 * (which reorders arrivals and adds the control plane's turns). */
static void random_net(sw_rng *r, scenario *s)
{
    char shards[160] = "";
    if (below(r, 3) == 0)
        snprintf(shards, sizeof shards, ",shards=%u,decide=%.3g,fanout=%.3g,entry=%.3g",
                 1 + below(r, 6), between(r, 0, 0.01), between(r, 0, 0.01), between(r, 0, 0.005));
    arg(s, "bw=%.3g,lat=%.3g%s", between(r, 1e5, 1e10), between(r, 0, 0.5), shards);
}

/* A tiny model: real gradients, norms for dbw, losses for rlp; dense or (where every step
 * pulls, as a sparse model's must) sparse, any optimizer, each worker its shard or the whole
 * set. */
static void tiny_model(sw_rng *r, scenario *s, double horizon, bool may_be_sparse)
{
    static const char *const dense[] = {"softmax", "mlp:h=1,u=4"};
    static const char *const optim[] = {"sgd:momentum=0.9", "sgd:momentum=0.5,nesterov=1",
                                        "adam"};
    bool sparse = may_be_sparse && below(r, 4) == 0;
    arg(s, "--data");
    arg(s, "%s", sparse ? "sparse:n=300,test=60,dim=40,density=0.1"
                        : "synthetic:task=logistic,d=6,n=300");
    arg(s, "--model");
    arg(s, "%s", sparse ? (below(r, 2) ? "svm" : "logistic") : dense[below(r, 2)]);
    arg(s, "--batch");
    arg(s, "4");
    arg(s, "--eval-every");
    arg(s, "%.3f", horizon / 5);
    if (below(r, 3) == 0) {
        arg(s, "--optimizer");
        arg(s, "%s", optim[below(r, 3)]);
    }
    if (below(r, 3) == 0) {
        arg(s, "--batch-mode");
        arg(s, "sample");
    }
}

static void draw(scenario *s, const char *syncwise, uint64_t seed, uint64_t id)
{
    sw_rng r;
    sw_rng_seed(&r, seed, id);
    memset(s, 0, sizeof s->argv);
    s->argc = 0;
    s->used = 0;
    s->workers = random_workers(&r);
    double horizon = between(&r, 20, 400);
    char events[4096], cluster[2048], policy[600];
    random_events(&r, s->workers, horizon, events, sizeof events, &s->slots);
    random_cluster(&r, s->slots, id, cluster, sizeof cluster);
    random_policy(&r, s->slots, policy, sizeof policy);
    if (below(&r, 6) == 0) /* a learning rate of the policy's own (any spec takes lr=) */
        snprintf(policy + strlen(policy), sizeof policy - strlen(policy), "%slr=%.3g",
                 strchr(policy, ':') ? "," : ":", between(&r, 0.001, 0.03));
    arg(s, "%s", syncwise);
    arg(s, "sim");
    arg(s, "--policy");
    arg(s, "%s", policy);
    arg(s, "--workers");
    arg(s, "%u", s->workers);
    arg(s, "--cluster");
    arg(s, "%s", cluster);
    if (events[0]) {
        arg(s, "--events");
        arg(s, "%s", events);
    }
    arg(s, "--seed");
    arg(s, "%llu", (unsigned long long)(1 + below(&r, 1000)));
    arg(s, "--max-time");
    arg(s, "%.3f", horizon * 1.5);
    arg(s, "--max-applies");
    arg(s, "%u", 50 + below(&r, 3000));
    bool local_steps = below(&r, 4) == 0;
    if (local_steps) {
        arg(s, "--get-model-frequency");
        arg(s, "%u", 2 + below(&r, 3));
    }
    if (below(&r, 4) == 0) {
        arg(s, "--net");
        random_net(&r, s);
    }
    if (below(&r, 8) == 0)
        tiny_model(&r, s, horizon, !local_steps);
    else
        arg(s, "--no-model");
    arg(s, "-q");
    arg(s, "--log");
    arg(s, "%s/run-%llu.jsonl", dir, (unsigned long long)id);
}

/* The command as a shell would take it. */
static void print_command(const scenario *s)
{
    for (int i = 0; i < s->argc; i++)
        printf("%s'%s'", i ? " " : "    ", s->argv[i]);
    printf("\n");
}

/* Runs the scenario; 0 when the sim ended well, else why in err. */
static int run(const scenario *s, char *err)
{
    char out[600];
    snprintf(out, sizeof out, "%s/run.out", dir);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    pid_t pid;
    int rc = posix_spawn(&pid, s->argv[0], &fa, NULL, s->argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc)
        return sw_fail(err, SW_EIO, "cannot run %s", s->argv[0]);
    int status = 0;
    for (int waited = 0; waitpid(pid, &status, WNOHANG) == 0; waited++) {
        if (waited > RUN_LIMIT_S * 100) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            return sw_fail(err, SW_ESTATE, "still running after %d s", RUN_LIMIT_S);
        }
        nanosleep(&(struct timespec){.tv_nsec = 10000000}, NULL);
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 0;
    FILE *f = fopen(out, "r");
    char said[SW_ERR_LEN] = "";
    if (f && !fgets(said, sizeof said, f))
        said[0] = '\0';
    if (f)
        fclose(f);
    said[strcspn(said, "\n")] = '\0';
    return sw_fail(err, SW_ESTATE, "the sim failed (%s %d): %s",
                   WIFEXITED(status) ? "exit" : "signal",
                   WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), said);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: conformance SYNCWISE SCENARIOS [SEED]\n");
        return 2;
    }
    long n = atol(argv[2]);
    uint64_t seed = argc > 3 ? strtoull(argv[3], NULL, 10) : 1;
    static char scratch[512];
    const char *base = getenv("SW_TEST_TMPDIR");
    snprintf(scratch, sizeof scratch, "%s/conformance.XXXXXX", base && *base ? base : "/tmp");
    if (base && *base)
        mkdir(base, 0755); /* ctest's scratch root; it may exist already */
    if (!mkdtemp(scratch)) {
        perror(scratch);
        return 2;
    }
    dir = scratch;
    rlp_file = SW_RLP_SOURCE;
    rlswitch_file = SW_RLSWITCH_SOURCE;
    time_t t0 = time(NULL);
    int failures = 0;
    uint64_t events = 0, pushes = 0, applies = 0, switches = 0, workers = 0;
    for (long i = 0; i < n && failures < 5; i++) {
        scenario s;
        draw(&s, argv[1], seed, (uint64_t)i);
        char err[2 * SW_ERR_LEN];
        int rc = run(&s, err);
        sw_check_summary sum;
        if (!rc)
            rc = sw_check_log(s.argv[s.argc - 1], &sum, err);
        if (rc) {
            printf("FAIL scenario %ld of seed %llu: %s\n  reproduce with:\n", i,
                   (unsigned long long)seed, err);
            print_command(&s);
            failures++;
            continue;
        }
        events += sum.events;
        pushes += sum.pushes;
        applies += sum.applies;
        switches += sum.switches;
        workers += s.workers;
        remove(s.argv[s.argc - 1]);
    }
    if (failures) {
        printf("%d scenario(s) broke a promise; their files are in %s\n", failures, dir);
        return 1;
    }
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "conformance: could not remove %s\n", dir);
    printf("%ld random scenarios of seed %llu (%.1f workers on average): every promise kept "
           "over %llu events, %llu pushes, %llu applies, %llu switches (%lld s)\n", n,
           (unsigned long long)seed, n ? (double)workers / (double)n : 0.0,
           (unsigned long long)events, (unsigned long long)pushes, (unsigned long long)applies,
           (unsigned long long)switches, (long long)(time(NULL) - t0));
    return 0;
}
