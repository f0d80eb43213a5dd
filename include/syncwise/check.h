/* The promise checker: what each synchronization policy promises, written as predicates on its
 * event stream (docs/promises.md), in one implementation that the tests, `syncwise check`, the
 * simulator and the server share.
 *
 * The checker replays events as the engine reports them (syncwise/engine.h), live or read back
 * from a JSONL log: membership, clocks, the version, the aggregation buffer (which gradients
 * each apply holds, pushed at which version and under which policy), grants and wake-ups. On
 * every event it checks the rules every run keeps (the version counts applies, nothing dropped
 * is applied, releases only of waiting workers, no stall while a live worker waits and nothing is
 * in flight) and the promise of the policy in force (ssp never releases a worker more than s
 * steps ahead of the slowest live worker, bsp applies one gradient per live worker, ...). After a
 * switch the new policy's promise holds for what happens under it; gradients and waits carried
 * over from the old policy are judged by the rules docs/promises.md gives for switches.
 *
 * A policy the checker does not know (one of a caller's own) is held to the rules every run
 * keeps, and to the promise it brings, if any (sw_check_register_promise).
 */
#ifndef SYNCWISE_CHECK_H
#define SYNCWISE_CHECK_H

#include <stdbool.h>
#include <stdint.h>

#include "syncwise/engine.h"
#include "syncwise/spec.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sw_check sw_check;

/* A checker for a run that starts under `policy` (a spec, "ssp:s=2") with `slots` worker slots
 * at version `version` (0, or a resumed checkpoint's). Fails with SW_EINVAL on no spec or a bad
 * slot count, and with SW_EPROMISE on a spec no engine takes (rule 7: a log that names it
 * broke a promise; the message says why). */
int sw_check_new(sw_check **out, const char *policy, uint32_t slots, uint64_t version,
                 char *err);
void sw_check_free(sw_check *c);
/* The run's driver is the simulator ("driver": "sim"), which a server's log is held to less
 * strictly: on its virtual clock a wake-up's tick comes before any event later than it is due
 * (a server may serve a message first); a worker computes at most at the version it was
 * released at (a sharded server's worker may pull slices newer); an evaluation reads the
 * version of its moment; nothing restores (promises.md, rules 1, 2 and 6). Call before the
 * first event. */
void sw_check_simulated(sw_check *c);

/* Replays one event. Returns 0, or SW_EPROMISE with the broken promise in err (which event, what
 * was promised, what happened); the checker then stays broken and refuses every later event.
 * sw_check_event_at also says where the event is (a log line's number), so that
 * sw_check_where can place a broken promise: at its event, or, for an engine call's decision
 * as a whole, at the event that began the call. sw_check_event counts events instead. */
int sw_check_event(sw_check *c, const sw_event *ev, char *err);
int sw_check_event_at(sw_check *c, const sw_event *ev, uint64_t where, char *err);
uint64_t sw_check_where(const sw_check *c);

/* The stream ended: checks the last engine call as complete. Same returns as sw_check_event. */
int sw_check_end(sw_check *c, char *err);
/* A log's end line (docs/log.md), `where` as in sw_check_event_at: at time t, not before the
 * last event, at the version the events reached (its reason is the log reader's to check); then
 * sw_check_end, unless the run failed ("failed: ..."), whose last engine call may have been cut
 * as a killed run's. */
int sw_check_end_line(sw_check *c, double t, uint64_t V, const char *why, uint64_t where,
                      char *err);

/* The replay as it stands after the events fed so far, for callers that want the figures the
 * promises are made of: worker w's state and clock (its provisional one while it has not
 * started), and how many steps it is ahead of the slowest started worker (0 for a joiner not
 * yet started). A w outside the slots is absent, at clock 0, and leads by 0. */
sw_worker_state sw_check_worker(const sw_check *c, uint32_t w, uint64_t *clock);
uint64_t sw_check_lead(const sw_check *c, uint32_t w);

/* Events replayed so far, and the first policy in force the checker has no promise for (""
 * when it knew them all; else only the rules every run keeps were checked for it). */
uint64_t sw_check_count(const sw_check *c);
const char *sw_check_unknown_policy(const sw_check *c);

/* ---- A promise of one's own -----------------------------------------------------------------
 * A policy of one's own (a plugin's) may bring the predicate it promises; the checker holds
 * every run of the policy to it, beside the rules every run keeps, wherever logs are checked
 * (docs/promises.md, "A promise of one's own"). It is called on each event of an engine call
 * under the policy, after the checker's own replay of the event, and once the call is complete;
 * it reads the replay through sw_check_call_facts, sw_check_worker and sw_check_lead, and keeps
 * no pointer to it. A callback returns 0, or nonzero with what broke in `why` (SW_ERR_LEN
 * bytes), which the checker reports and places as it does its own promises'. */

/* The engine call being replayed: the event that began it and what its decision did so far. */
typedef struct sw_check_call {
    bool started;          /* false for a log's first events, before any call began */
    sw_event_kind start;   /* push, join, leave, crash, switch or tick, once started */
    uint32_t worker;       /* the starting event's worker */
    uint64_t push_version; /* a push: the version its gradient was computed at, */
    uint64_t push_V;       /* and the version when it arrived */
    bool dropped, applied; /* the push's gradient was refused; the buffer was applied */
    uint32_t applied_n;    /* gradients the apply held */
    float lr_scale;        /* the apply's learning-rate scale */
    uint32_t released;     /* workers the policy released */
    uint32_t liveness;     /* workers the engine's liveness rule released */
    bool pusher_released;
    uint32_t live_at_decision; /* live workers when the decision was made */
    uint32_t live, waiting;    /* live and waiting workers now */
    uint32_t buffered;         /* gradients in the aggregation buffer now */
    uint32_t slots;            /* the worker table's size (sw_check_worker's bound) */
    uint64_t V;                /* the version now */
} sw_check_call;
void sw_check_call_facts(const sw_check *c, sw_check_call *out);

typedef struct sw_promise_ops {
    const char *policy; /* the registered policy it is the promise of */
    size_t state_size;  /* zeroed before init */
    /* Reads the spec's parameters (the engine took it, so its keys are the policy's); nonzero:
     * a spec no engine takes (promises.md, rule 7). May be NULL. */
    int (*init)(void *state, sw_spec *spec, char *why);
    int (*on_event)(void *state, const sw_check *c, const sw_event *ev, char *why); /* or NULL */
    int (*on_end)(void *state, const sw_check *c, char *why);                       /* or NULL */
    void (*fini)(void *state);                                                      /* or NULL */
} sw_promise_ops;

/* Gives ops->policy, a registered policy of one's own (not a built-in one), its promise; ops must
 * outlive every checker. At most SW_POLICY_MAX_REGISTERED. Fails with a message. */
int sw_check_register_promise(const sw_promise_ops *ops, char *err);

/* What a plugin (SYNCWISE_PLUGINS, syncwise/policy.h) may define beside sw_plugin_policies: the
 * promises of its policies, a NULL-terminated list. */
const sw_promise_ops *const *sw_plugin_promises(void);

/* What checking a log file found. */
typedef struct sw_check_summary {
    uint64_t events, applies, pushes, switches;
    uint32_t segments; /* runs in the file: a server that restarted appends a new one */
    char policy[256];  /* the policy at the start */
    char unknown_policy[48]; /* the first policy without a promise of its own, or "" */
    bool cut;          /* the last run has no "end" line: killed, or still running; its last
                        * engine call was not judged */
} sw_check_summary;

/* Checks a JSONL event log (docs/log.md), whose first line is the "start" line naming the
 * policy, the slots and the version it starts at; an "end" line closes a run, and a later
 * "start" line begins the next (a restarted server). Fails with "PATH:LINE: ..." in err:
 * SW_EPROMISE on a broken promise, SW_EFORMAT on a line that is not a log line, SW_EIO when
 * the file cannot be read. */
int sw_check_log(const char *path, sw_check_summary *out, char *err);

#ifdef __cplusplus
}
#endif

#endif
