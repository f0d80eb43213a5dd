/* Shared pieces of the `syncwise` command: the subcommand table, option value parsing that
 * names the option in its error, and opening a run's data and model the same way everywhere. */
#ifndef SW_CLI_H
#define SW_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "syncwise/data.h"
#include "syncwise/model.h"
#include "syncwise/sim.h"
#include "syncwise/stop.h"

/* --endpoint-file's help, one text for the server, the shard and the peer that write it. */
#define SW_CLI_ENDPOINT_FILE_HELP                                                               \
    "write the bound endpoint there once bound (remove\nan earlier run's first: until then it "   \
    "is left as it is);\none process per file: FILE.lock claims it while it\nruns, removed at its end"

typedef struct sw_cli_cmd {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv);
} sw_cli_cmd;

int sw_cli_train(int argc, char **argv);
int sw_cli_eval(int argc, char **argv);
int sw_cli_sim(int argc, char **argv);
int sw_cli_compare(int argc, char **argv);
int sw_cli_zipline(int argc, char **argv);
int sw_cli_report(int argc, char **argv);
int sw_cli_check(int argc, char **argv);
int sw_cli_server(int argc, char **argv);
int sw_cli_worker(int argc, char **argv);
int sw_cli_ctl(int argc, char **argv);
int sw_cli_launch(int argc, char **argv);
int sw_cli_keygen(int argc, char **argv);
int sw_cli_rl(int argc, char **argv);
int sw_cli_data(int argc, char **argv);
int sw_cli_peer(int argc, char **argv);
int sw_cli_shard(int argc, char **argv);
int sw_cli_rl_train(int argc, char **argv);
int sw_cli_rl_eval(int argc, char **argv);

/* Option values: on a bad value print "syncwise CMD: --opt: ..." and return false. */
bool sw_cli_long(const char *cmd, const char *opt, const char *arg, long lo, long hi, long *out);
bool sw_cli_u64(const char *cmd, const char *opt, const char *arg, uint64_t *out);
bool sw_cli_double(const char *cmd, const char *opt, const char *arg, double lo, double hi,
                   double *out);

/* Prints "syncwise CMD: message" on standard error; returns the exit status 1 for convenience. */
int sw_cli_error(const char *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* The log level of -q (warnings and errors only) and -v (debug messages too). */
void sw_cli_set_verbosity(bool quiet, bool verbose);

/* Loads the plugins SYNCWISE_PLUGINS names and registers their policies; 1 after saying why
 * one failed, 0 otherwise (also without plugins). A plugin named twice loads once. With
 * only_help (the command only describes itself) a failure is said and passed over. */
int sw_cli_load_plugins(bool only_help);
/* A crash (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT) says which run the crashing thread was
 * running, as sw_cli_crash_note_doing last said (crash_note.c); spec NULL: none of note. The
 * first run of a thread gives it a stack of its own for the note, which
 * sw_cli_crash_note_done frees when the thread has no more runs. */
void sw_cli_crash_note_install(const char *cmd);
void sw_cli_crash_note_doing(const char *spec, uint64_t seed);
void sw_cli_crash_note_done(void);
/* The path of the loaded plugin whose list holds the policy `name` (its first `len` bytes);
 * NULL for a built-in or unknown one. */
const char *sw_cli_plugin_of(const char *name, size_t len);

/* Creates a directory and its missing parents (mkdir -p); -1 with errno on failure, ENOTDIR
 * when path is there but no directory. */
int sw_cli_mkdirs(const char *path);
/* Whether one of the file names a spec holds (after ':' or '=', between ',', ';', '@', '|')
 * names path, or names a directory in which path is an existing file (a data set read from a
 * directory): a log must not overwrite the trace or data file a run reads. */
bool sw_cli_spec_names(const char *spec, const char *path);
/* A usage error (2, said) unless the n_out outputs (options out_names, paths outs) are apart:
 * no two name one file and none is a file that one of the n_in inputs
 * (specs or paths, as sw_cli_spec_names reads them) names. NULL entries are not given. Then 1
 * (said) when one cannot be written where it is to go (its file, else its directory: a
 * directory the command makes is the caller's to leave out). */
int sw_cli_outputs_apart(const char *cmd, int n_out, const char *const out_names[],
                         const char *const outs[], int n_in, const char *const inputs[]);
/* A policy spec as a file-name part: "ssp:s=2,x=1" -> "ssp-s=2_x=1" (no '/', ':' or ','). */
void sw_cli_file_part(const char *spec, char *out, size_t cap);

/* The train, val or test set of d by name; NULL for another name or a missing split. */
const sw_dataset *sw_cli_split(const sw_data *d, const char *name);

/* Makes SIGINT, SIGTERM and SIGHUP set the returned flag (a clean stop) instead of killing;
 * a second signal kills, as it would have without this. */
const sw_stop_flag *sw_cli_catch_signals(void);

/* Applies a --threads value to OpenBLAS (0 leaves its own choice). */
void sw_cli_set_threads(long threads);

/* Applies a --cpus LIST (NULL: none) to every thread of the process, and holds OpenBLAS to at
 * most one thread per CPU listed (as it would choose started on them; a --threads applied
 * after wins); 0, or the usage error's status after saying why it is refused. */
int sw_cli_pin_cpus(const char *cmd, const char *list);

/* Runs worker(arg) on `jobs` threads at once (0: one per core; at most 256), or on the caller's
 * when no thread starts, and returns when every one has: each takes its next run itself, under
 * the caller's lock, until none is left. */
void sw_cli_run_jobs(long jobs, void *(*worker)(void *), void *arg);

/* Lists data sources, model architectures and policies, for --help texts. */
void sw_cli_print_policy_help(void);
void sw_cli_print_data_and_models(void); /* both lists, a blank line apart */
void sw_cli_print_dense_data_and_models(void); /* the same without the sparse ones (train) */

/* Splits a list of policy specs at ',' and ';' into out (at most max, each malloc'd: the caller
 * frees them). A ','-part without ':' but with '=' continues the spec before it: "bsp,lr=0.1" is
 * bsp:lr=0.1 and "ssp:s=2,lr=0.1" one spec; ';' always ends one. The count, or -1 after a
 * message naming cmd and opt. */
int sw_cli_policy_list(const char *cmd, const char *opt, const char *list, char **out, int max);
/* The same list with each spec spelled as sw_cli_policy_list reads it and ';' between them (as
 * sw_is_baseline takes it), malloc'd; NULL after a message. At most min(max, 64) specs. */
char *sw_cli_policy_list_joined(const char *cmd, const char *opt, const char *list, int max);

/* An endpoint given to `opt` (NULL: none given), checked before anything starts: 0, or 2 with
 * the message (a bad endpoint is the command line's, said before a socket opens). A list (the
 * server's --shards) is checked entry by entry. */
int sw_cli_endpoint_ok(const char *cmd, const char *opt, const char *ep, bool bind);
int sw_cli_shard_list_ok(const char *cmd, const char *list);
/* A --job name (NULL: none): 1 to SW_JOB_MAX of [A-Za-z0-9._:-]; 0, or 2 with the message. */
int sw_cli_job_ok(const char *cmd, const char *job);

/* CURVE options that only work together (our key pair and the peer's public key or the
 * clients' list): one without the other would run without CURVE, unasked. Fails (status 2)
 * naming both. */
int sw_cli_curve_pair(const char *cmd, const char *key_opt, const char *key, const char *other_opt,
                      const char *other);

/* The run summary of one simulation (src/cli/summary.c). */
void sw_cli_print_summary(FILE *f, const char *policy, const sw_sim_result *r);
/* A progress line's evaluation: "loss L  acc A (best B)", keeping the best accuracy in
 * *best; only the loss when acc is NAN (a regression task). */
void sw_cli_eval_text(char *out, size_t cap, double loss, double acc, double *best);

/* How much of a spec to print before a colon of ours ("%.*s: "): "ssp:" is "ssp" with its
 * defaults, and its own colon before ours would read "ssp::". */
int sw_cli_spec_shown(const char *spec);

#endif
