/* The simulator's run state, shared by the driver loop, the event sink and the scheduled-event
 * parser. */
#ifndef SW_SIM_INTERNAL_H
#define SW_SIM_INTERNAL_H

#include <stdbool.h>

#include "heap.h"
#include "servers.h"
#include "syncwise/check.h"
#include "syncwise/cluster.h"
#include "syncwise/err.h"
#include "syncwise/sim.h"
#include "syncwise/task.h"

/* EV_SEND and EV_FACTS happen only with shards (servers.h): a push leaving its worker, and its
 * facts reaching the control plane; without, a push is scheduled straight to its EV_ARRIVE. */
enum { EV_ARRIVE, EV_TICK, EV_JOIN, EV_LEAVE, EV_CRASH, EV_EVAL, EV_SWITCH, EV_SEND, EV_FACTS };

/* A simulated worker's own side of the protocol. */
typedef struct sim_worker {
    uint64_t epoch;        /* bumped when it leaves: its in-flight push is lost */
    sw_learner *learner;
    sw_grad grad;          /* the gradient of its current step */
    float *local;          /* its local model when get_model_frequency > 1, else NULL */
    uint64_t version;      /* version its current gradient was computed at */
    uint32_t since_pull;   /* steps since its last pull */
    bool redo;             /* its last gradient was dropped: recompute the same batch */
    bool live;
    /* Its recent steps' times as drawn, and as the virtual clock moved by them (moving sums):
     * apart when the clock is too coarse to hold them (clock_holds, sim.c). */
    double steps_asked, steps_moved;
} sim_worker;

typedef struct sim {
    const sw_sim_config *c;
    sw_engine *engine;
    sw_check *check;         /* the policy's promise, held on every event (NULL: not asked) */
    sw_cluster *cluster;
    sw_task *task;                /* NULL: a run without a model (timing only) */
    sw__heap heap;
    sim_worker *w;
    uint32_t n_slots;
    size_t n_params;
    size_t n_wire;           /* floats a dense transfer carries: n_params, or --net params= */
    double bw, lat;          /* a worker's link: bytes per second, seconds per message */
    sw__sim_servers servers; /* the shards' links and the control plane (off by default) */
    double scheduled_wake;   /* the tick already in the heap, < 0 if none */
    /* The last evaluation: when, and at which version. One due at an unchanged version would
     * repeat it, so evaluations rest until the next apply (parked): a run whose versions stand
     * still for a long virtual time costs nothing per interval. */
    double eval_t;
    uint64_t eval_V;
    bool eval_parked;
    float *best;             /* best weights so far (patience) */
    sw_stopper stopper;
    int rc;                  /* the run's first failure (0: none): it ends the run */
    char msg[SW_ERR_LEN];    /* what it was */
    char **switches;         /* policy specs of scheduled switches; EV_SWITCH's worker indexes */
    uint32_t n_switches;
    sw_sim_result *r;
} sim;

/* Records the run's first failure (later ones are consequences) and returns rc. */
int sw__sim_fail(sim *s, int rc, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* The engine's event sink: statistics into s->r->stats, a JSONL line when a log is open, and
 * the promise checker. */
void sw__sim_sink(void *ctx, const sw_event *ev);

/* Whether a worker's event is of a life it has left (it crashed or left since, and its push in
 * flight went with it). */
static inline bool sw__sim_outlived(const sim *s, const sw__sim_event *ev)
{
    const sim_worker *k = &s->w[ev->worker];
    return ev->epoch != k->epoch || !k->live;
}

/* Puts an event in the heap (a full heap that cannot grow fails the run). */
void sw__sim_enqueue(sim *s, sw__sim_event ev);

/* --net (sim_net.c): a worker's link (bw, lat), the size of a run without a model (params=),
 * and the servers (shards=, server_bw=, decide=, fanout=). After the task is set up. */
int sw__sim_parse_net(sim *s, char *err);
/* When a transfer of worker k's step (its pull or its push) that starts at t has crossed its
 * link, and with shards theirs too. */
double sw__sim_transfer_end(sim *s, const sim_worker *k, double t, sw__sim_dir dir);
/* With shards: a push leaves its worker (EV_SEND), crosses the links, and its facts go on to
 * the control plane in one more message (EV_FACTS); there they wait their turn to be decided,
 * and arrive (EV_ARRIVE). A worker gone meanwhile takes its push with it. */
void sw__sim_on_send(sim *s, const sw__sim_event *ev);
void sw__sim_on_facts(sim *s, const sw__sim_event *ev);

/* Parses the scheduled events of c->events into the heap, checking worker ids. Returns the
 * number of extra worker slots that joins need, or a negative error. */
int sw__sim_schedule(sim *s, const char *events, uint32_t workers, char *err);
/* Counts the joins in an events string (to size the worker table before parsing). */
uint32_t sw__sim_count_joins(const char *events);

/* sim_setup.c: a run's configuration checked (sizes, stopping conditions, data and model); s's
 * result, task, network, cluster, workers, engine, checker and event heap made, for s->n_slots
 * workers; and everything s holds freed (whatever part of it was made). */
int sw__sim_check_run(const sw_sim_config *c, char *err);
int sw__sim_setup(sim *s, char *err);
void sw__sim_teardown(sim *s);

#endif
