/* The promise checker's replay state, shared by its core (check.c) and the promises of the
 * policies (promise_*.c). The core keeps what the engine keeps, rebuilt from events alone; a
 * promise reads it and keeps what its own policy's rules need (quotas, phases). */
#ifndef SW_CHECK_INTERNAL_H
#define SW_CHECK_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "syncwise/check.h"
#include "syncwise/engine.h"
#include "syncwise/err.h"
#include "syncwise/spec.h"

typedef struct ck_worker {
    sw_worker_state state;
    uint64_t clock;
    bool fresh;              /* joined and not yet released: its clock is provisional */
    uint32_t released_epoch; /* the policy epoch of its last release */
    uint64_t released_at;    /* applies done when it was last released */
    uint64_t released_V;     /* the version then */
    uint64_t pulled;         /* the newest version its pushes say it computed at: its pulls
                              * never go back (pulls may be less frequent than steps) */
    uint32_t own_in_buffer;  /* its gradients in the buffer pushed under the policy in force */
    uint32_t wait_seq;       /* counts its waits (and drops), to tell stale heap entries */
    uint64_t granted_call;   /* the engine call (c->g.where) of its last grant */
    uint32_t grants_in_call; /* its grants in that call: the engine takes at most one per worker
                              * and decision (sw_decision_grant) */
} ck_worker;

/* A started worker waiting at a clock, in the heap of waiting clocks; stale once the worker
 * waited again, moved, or stopped waiting. */
typedef struct ck_wait {
    uint64_t clock;
    uint32_t worker, seq;
} ck_wait;

/* A gradient in the aggregation buffer. */
typedef struct ck_grad {
    uint32_t worker;
    uint64_t ver;   /* the version it was computed at */
    uint32_t epoch; /* the policy epoch it was pushed under */
} ck_grad;

/* What an apply held, worked out by the core at the apply event. */
typedef struct ck_apply {
    uint32_t n, carried; /* gradients; those pushed under an earlier policy */
    uint32_t stale;      /* pushed under this policy and computed at a version older than the
                          * one they were applied to */
    uint32_t twice;      /* a worker with two gradients pushed under this policy, or UINT32_MAX */
    uint32_t missing;    /* for promises that judge barriers: a live worker released under this
                          * policy since the last apply, with no gradient in it, or UINT32_MAX */
    bool all_waiting;    /* every live worker was waiting */
    float lr_scale;
} ck_apply;

/* The engine call being replayed: one starting event (a push, a join, a departure, a switch, a
 * tick; none for the first events of a log) and what the decision did. */
typedef struct ck_group {
    sw_event_kind start;
    bool started;
    double t;               /* when it started */
    uint64_t where;         /* where its first event is (sw_check_event_at) */
    uint32_t worker;        /* the starting event's worker */
    uint64_t push_ver, push_V; /* a push: its version, and V when it arrived */
    bool dropped, applied, granted;
    ck_apply apply;
    uint32_t waiting_at_decision; /* waiting workers just before the decision's releases */
    uint32_t live_at_decision;
    bool decided;           /* a release (or the end) has fixed waiting_at_decision */
    uint32_t released;      /* workers the policy released */
    uint32_t liveness;      /* workers the liveness rule released */
    bool pusher_released;
    int phase;              /* the latest step of the call's order seen (check.c, call_phase) */
} ck_group;

typedef struct ck_promise ck_promise;

struct sw_check {
    ck_worker *w;
    uint32_t slots;
    uint64_t V, applies, pushes, switches, events;
    uint32_t n_live, n_waiting;
    /* The live workers' slots, n_live of them (syncwise/roster.h): what the engine's state asks
     * of every worker is asked of these, so that a table of millions of slots and a few
     * workers costs the few (scans of every slot at each apply made a log of 1M slots and
     * 1796 applies take 22 s to check, 0.5 s now). */
    uint32_t *live;
    ck_grad *buf;
    uint32_t n_buf, cap_buf;
    uint32_t n_buf_own;     /* of those, pushed under the policy in force (epoch) */
    uint32_t buf_twice;     /* a worker with two own gradients in the buffer, or UINT32_MAX */
    uint32_t epoch;         /* counts switches */
    double wake_at;         /* a pending wake-up, < 0 when none */
    double wake_due;        /* when its tick is owed on a virtual clock: at, or the request's
                             * time if at was already past */
    bool simulated;         /* the driver is the simulator (sw_check_simulated) */
    double last_t;          /* the time of the last event: it never goes back */
    uint64_t min_clock;     /* the slowest started clock, kept as the engine keeps it */
    uint32_t n_at_min;      /* started workers at min_clock */
    ck_wait *waits;         /* min-heap by clock of started waiting workers, with stale entries */
    uint32_t n_waits, cap_waits;
    uint32_t fresh_waiting; /* joiners waiting for their first release */
    ck_group g;
    const ck_promise *promise; /* NULL: a policy the checker does not know */
    void *pstate;
    char unknown[SW_SPEC_NAME_LEN]; /* the first policy the checker does not know, or "" */
    char spec[SW_SPEC_VAL_LEN];
    char broken[2 * SW_ERR_LEN]; /* the first broken promise, with where it showed */
    uint64_t broken_where;
};

/* A policy's promise. Every callback returns 0 or a broken promise through sw__ck_broken; it reads
 * the replay state and must not change it. */
struct ck_promise {
    const char *policy; /* the policy's registered name */
    size_t state_size;
    bool judges_barriers; /* the core works out ck_apply.missing (a scan of the live) */
    bool grants;          /* the policy logs grants; from any other a grant breaks a promise */
    /* Reads the policy's parameters (defaults as in syncwise/policy.h); the spec was accepted
     * by the engine, so unknown keys are ignored. */
    int (*init)(void *state, sw_spec *spec, sw_check *c, char *err);
    /* After the core replayed ev, which belongs to the group c->g. NULL: nothing to check. */
    int (*on_event)(void *state, sw_check *c, const sw_event *ev, char *err);
    /* The engine call c->g is complete. NULL: nothing to check. */
    int (*on_end)(void *state, sw_check *c, char *err);
    /* Frees what init allocated. NULL: nothing. */
    void (*fini)(void *state);
};

/* The promises the checker knows, NULL-terminated. */
extern const ck_promise *const sw__promises[];
/* The adapter that runs a promise of one's own (promise_plugin.c), and the one registered for
 * `policy` (NULL: none). */
extern const ck_promise sw__promise_own;
const sw_promise_ops *sw__ck_own_promise(const char *policy);
/* The promise the checker holds `policy` to: its own, the adapter of one registered for it, or
 * NULL (only the rules every run keeps). */
const ck_promise *sw__ck_promise_for(const char *policy);

/* Fails with SW_EPROMISE and the message, prefixed by the policy in force. */
int sw__ck_broken(const sw_check *c, char *err, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* A rule every run keeps, whatever the policy, broken: SW_EPROMISE with "every run: ...". */
int sw__ck_engine_broke(char *err, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* The promise of the policy `spec_text` names takes over from the one before (none for a policy
 * the checker does not know); a spec no engine takes is broken (rule 7). */
int sw__ck_start_promise(sw_check *c, const char *spec_text, char *err);
void sw__ck_stop_promise(sw_check *c);

/* The smallest clock among started live workers, as the engine's min_live_clock: fresh joiners
 * do not count, and with no started worker it is the last one seen. */
uint64_t sw__ck_min_clock(const sw_check *c);
/* The largest clock among live workers. */
uint64_t sw__ck_max_clock(const sw_check *c);
/* How many steps worker w is ahead of the slowest started worker (0 for a fresh joiner, which
 * starts at that clock). */
uint64_t sw__ck_lead(const sw_check *c, uint32_t w);
/* A waiting worker at most `bound` steps ahead (joiners count as 0 ahead), or UINT32_MAX. */
uint32_t sw__ck_waiting_within(sw_check *c, uint64_t bound);

/* The replay's side of the clocks (clocks.c): the engine's recount of the minimum; whether k
 * counts at the minimum now, and after it moved up or left, sw__ck_left_min; worker w starts waiting
 * at its clock (0, or SW_ENOMEM). */
void sw__ck_recount_min(sw_check *c);
bool sw__ck_at_min(const sw_check *c, const ck_worker *k);
void sw__ck_left_min(sw_check *c);
int sw__ck_wait_at(sw_check *c, uint32_t w);

/* Shared rules of the promises (promise_common.c). */

/* The policy itself never leaves every live worker waiting: no release by the liveness rule. */
int sw__ck_no_liveness(const sw_check *c, const sw_event *ev, char *err);
/* A push is never dropped and is applied in its own engine call. */
int sw__ck_push_applied_at_once(const sw_check *c, char *err);
/* Nobody waits when the engine call is over. */
int sw__ck_nobody_waits(const sw_check *c, char *err);
/* A push is dropped exactly when its version is older than the server's. */
int sw__ck_drops_exactly_late(const sw_check *c, char *err);
/* An apply's learning-rate scale is n (agg=sum) or 1 (agg=mean); or 1, for the policies that
 * never scale it. */
int sw__ck_agg_scale(const sw_check *c, bool mean, char *err);
int sw__ck_unit_scale(const sw_check *c, const sw_event *ev, char *err);
/* Reads agg=sum|mean. */
bool sw__ck_agg_mean(sw_spec *spec);

#endif
