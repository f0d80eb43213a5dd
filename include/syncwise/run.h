/* What every driver of the engine shares: a run's statistics, fed by its events; the rules that
 * stop it; and its log file, written and read the same way for the simulator and the server.
 *
 * Statistics follow the events alone (syncwise/engine.h), so a live run and a log read back give
 * the same figures: idle time runs from a worker's push (or join) to its release; the staleness
 * of a gradient is the version it is applied at minus the version it was computed at. A log is a
 * "start" line (sw_run_info), the engine's events (docs/log.md) and, when the run finished, an
 * "end" line; a server that restarts appends a new start line.
 */
#ifndef SYNCWISE_RUN_H
#define SYNCWISE_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "syncwise/engine.h"
#include "syncwise/stop.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Statistics -------------------------------------------------------------------------- */

#define SW_STALE_BINS 64 /* staleness 0..62, and 63 or more */

typedef struct sw_run_stats {
    uint32_t n_slots;
    uint64_t applies, pushes, drops;
    uint64_t *steps;                /* per worker: accepted pushes */
    double *idle_s, *live_s;        /* per worker: time waiting, time live (see sw_run_stats_close) */
    double *last_push_t;            /* per worker: its last push (< 0: none) */
    double *busy_s;                 /* per worker: time from a release to its push, summed over
                                     * the steps it finished (a refused one too) ... */
    uint64_t *finished;             /* ... and counted: a step cut off by the run's end is not */
    double *stale_sum;              /* per worker: staleness of its applied gradients, summed */
    uint64_t *stale_n;              /* ... and counted */
    uint64_t stale_hist[SW_STALE_BINS];
    uint32_t switches;              /* policy switches, the last to switched_to */
    char switched_to[256];
    /* Private: what an interval or an apply still waits for. */
    double *wait_since, *joined_t;  /* < 0: not waiting, not live */
    double *run_since;              /* < 0: not in a step */
    uint32_t *pending_w;            /* buffered gradients: their workers and versions */
    uint64_t *pending_ver;
    size_t n_pending, cap_pending;
} sw_run_stats;

/* Statistics for `slots` workers, all zero. Fails with SW_ENOMEM. */
int sw_run_stats_init(sw_run_stats *s, uint32_t slots, char *err);
void sw_run_stats_free(sw_run_stats *s);
/* One event (an evaluation or tick changes nothing). Fails with SW_ENOMEM only. */
int sw_run_stats_event(sw_run_stats *s, const sw_event *ev);
/* The run ends at t: live workers' open intervals are closed there. */
void sw_run_stats_close(sw_run_stats *s, double t);
/* Idle time over live time, all workers together (0 with no live time). */
double sw_run_stats_idle_share(const sw_run_stats *s);
/* Worker w's share of its live time spent waiting for a release (0 if it never lived). */
double sw_run_stats_worker_idle_share(const sw_run_stats *s, uint32_t w);
/* Mean staleness of every applied gradient, or of worker w's (0 when none). */
double sw_run_stats_mean_staleness(const sw_run_stats *s);
double sw_run_stats_worker_staleness(const sw_run_stats *s, uint32_t w);

/* A rate over the last `window` seconds of a count that only grows (applies, pushes): samples
 * at most every window / 8, in a ring that reaches back more than a window. */
#define SW_RATE_SAMPLES 24
typedef struct sw_rate {
    double window;
    double t[SW_RATE_SAMPLES];
    uint64_t count[SW_RATE_SAMPLES];
    unsigned head, n;
    double last_t;       /* the latest count, sampled or not */
    uint64_t last_count;
} sw_rate;

void sw_rate_init(sw_rate *r, double window);
/* The count is `count` at time t (times do not go back). */
void sw_rate_add(sw_rate *r, double t, uint64_t count);
/* Per second over about the last window, given the count now; 0 before two moments apart. */
double sw_rate_get(const sw_rate *r, double now, uint64_t count);

/* ---- Stopping ---------------------------------------------------------------------------- */

typedef enum sw_stop_reason {
    SW_STOP_NONE = 0,
    SW_STOP_TARGET_ACC,
    SW_STOP_TARGET_LOSS,
    SW_STOP_MAX_TIME,
    SW_STOP_MAX_APPLIES,
    SW_STOP_MAX_PUSHES,
    SW_STOP_PATIENCE,
    SW_STOP_NO_WORKERS,
} sw_stop_reason;

/* "target accuracy", "time limit", ... */
const char *sw_stop_reason_name(sw_stop_reason r);
/* What a run's end line may give as its reason (docs/log.md): a stop reason's name, "stopped"
 * (a server stopped by a signal), or "failed: WHY" (a run that failed: a server whose shard was
 * lost, a diverged model). */
#define SW_END_FAILED "failed: "
/* A simulated run whose model diverged failed too, but ran on to a clean stop: its log is
 * judged whole, where another failure may have cut its last engine call short. */
#define SW_END_DIVERGED SW_END_FAILED "the model diverged"
bool sw_end_reason_known(const char *why);

/* The rules: the first that holds ends a run; 0 disables one. */
typedef struct sw_stop_rules {
    double target_acc;   /* validation accuracy */
    double target_loss;  /* training loss (on a fixed sample the driver measures) */
    double max_time;     /* seconds (virtual or real, as the driver's clock) */
    uint64_t max_applies, max_pushes;
    uint32_t patience;   /* evaluations without improvement */
} sw_stop_rules;

typedef struct sw_stopper {
    sw_stop_rules rules;
    double best;         /* the best metric so far */
    uint32_t evals, since_best; /* evals: those with a finite loss */
} sw_stopper;

/* One evaluation, as a driver measured it. */
typedef struct sw_stop_eval {
    double accuracy, loss; /* on the validation set */
    double train_loss;     /* NAN unless a target loss is set */
    bool classify;         /* improvement is in accuracy, else in loss */
} sw_stop_eval;

void sw_stopper_init(sw_stopper *st, const sw_stop_rules *rules);
/* Fails when the rules ask for what no run or the task cannot give, so that the run would go on
 * to its limits: a target accuracy outside [0, 1] (nor could a log say it), or one of a
 * regression task, which has no accuracy. */
int sw_stop_rules_check(const sw_stop_rules *rules, bool classify, char *err);
/* After an evaluation: a target met, patience run out, or SW_STOP_NONE. *improved says it was
 * the best so far (the weights early stopping keeps). */
sw_stop_reason sw_stopper_eval(sw_stopper *st, const sw_stop_eval *e, bool *improved);
/* The limits at time t after `applies` applies and `pushes` pushes. */
sw_stop_reason sw_stopper_limits(const sw_stopper *st, double t, uint64_t applies,
                                 uint64_t pushes);
/* A command asked to stop by a signal (*stop; stop may be NULL) while it loaded its data fails
 * with SW_ESTATE, before it binds or writes anything: a run it would only start to end. The
 * signal is the cause too when the load failed (a read it interrupted). Else rc, the load's. */
int sw_run_stopped_early(const sw_stop_flag *stop, int rc, char *err);

/* ---- The log file ------------------------------------------------------------------------ */

/* What a run is: its log's "start" line. */
typedef struct sw_run_info {
    char driver[16];     /* "sim" or "server" */
    char policy[256];    /* the spec at the start */
    uint32_t workers;    /* at the start (the server: the workers it waits for) */
    uint32_t slots;      /* the worker table's size */
    uint64_t seed;
    uint64_t version;    /* V at the start: 0, or a resumed checkpoint's */
    char model[128];     /* its spec, or "none" */
    size_t params;
    uint32_t batch;
    float lr;
    char optimizer[SW_OPTIM_SPEC_LEN]; /* its spec (syncwise/optim.h); "sgd" in older logs */
    double target_acc;   /* the run's target validation accuracy, 0 for none */
    bool regress;        /* a regression task: its evaluations have no accuracy */
    char cluster[1024];  /* the simulated cluster's spec, or "real" */
} sw_run_info;

void sw_run_write_start(FILE *f, const sw_run_info *info);
/* The "end" line a run writes when it finishes (not when it is killed): at time t, at version
 * V, for `why`. A log without one was cut short; none is written to a stream that failed. */
void sw_run_write_end(FILE *f, double t, uint64_t V, const char *why);

/* What reading a log hands out, in order, each with its line's number. Any callback may be
 * NULL; one that fails stops the reading with its code and message, which should say where
 * (the reader adds the file's name only). Strings in an event (a switch's policy) live until
 * the next callback. */
typedef struct sw_run_reader {
    int (*start)(void *ctx, const sw_run_info *info, size_t line, char *err);
    int (*event)(void *ctx, const sw_event *ev, size_t line, char *err);
    int (*end)(void *ctx, double t, uint64_t V, const char *why, size_t line, char *err);
    void *ctx;
} sw_run_reader;

/* Reads a log from a file (errors begin "PATH:") or from a string. A log begins with a start
 * line; evaluations are events too (SW_EV_EVAL). Fails with SW_EFORMAT on a line that is not a
 * log line ("PATH:LINE: ..."), SW_EIO when the file cannot be read. */
int sw_run_read_log(const char *path, const sw_run_reader *r, char *err);
int sw_run_read_text(const char *text, const sw_run_reader *r, char *err);

#ifdef __cplusplus
}
#endif

#endif
