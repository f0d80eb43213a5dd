/* The worker's state, shared by its turns and handlers (worker.c), its joining (worker_join.c),
 * its steps (worker_step.c) and its heartbeat thread (worker_heartbeat.c). */
#ifndef SW_NET_WORKER_INTERNAL_H
#define SW_NET_WORKER_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

#include "syncwise/err.h"
#include "syncwise/net.h"
#include "syncwise/proto.h"
#include "syncwise/shard.h"
#include "syncwise/task.h"
#include "syncwise/transport.h"
#include "lend.h"
#include "shard_set.h"

/* The run's configuration, as WELCOME states it. */
typedef struct config {
    uint32_t worker, slots, batch;
    size_t params;
    float lr, wd;
    uint64_t seed;
    uint64_t token; /* this membership's: heartbeats carry it */
    bool unchecked; /* checksum=off: payloads go without checksums, and may come so */
    bool has_data_crc; /* data_crc=: the server's data set's fingerprint (absent: not checked) */
    uint32_t data_crc;
    char data[512], model[128], batch_mode[16];
    char job[SW_JOB_MAX + 1]; /* job=: the launcher's job the server serves ("" for none) */
    /* A sharded run's (WELCOME's shards=, chunk= and first=): where the shards are and which
     * parameters each holds; n_shards 0 otherwise. */
    uint32_t n_shards;
    char shards[SW_SHARDS_MAX][SW_SHARD_EP_LEN];
    sw_chunk_table table;
} config;

/* Where the worker is in the protocol. */
typedef enum worker_state {
    JOINING,  /* JOIN sent, WELCOME due (sent again every JOIN_RETRY_S) */
    HELD,     /* the server holds us (WELCOME before the first RELEASE, or WAIT): it may be
               * silent as long as it echoes our heartbeats */
    ANSWER,   /* we pushed: WAIT or RELEASE due */
    PULLING,  /* a sparse step asked for its weights: MODEL_SPARSE due */
    COMPUTED, /* the gradient is ready: it goes at push_at */
    OVER,     /* done: the run is over, max_steps, or a failure */
} worker_state;

struct sw_worker {
    const sw_worker_params *p;
    sw_worker_result *r;
    sw_net *net;
    sw_sock *sock;
    sw_agent agent;
    worker_state state;
    double since;   /* when the state began (JOINING: the first JOIN) */
    double sent_at; /* JOINING: the last JOIN */
    bool said_waiting; /* JOINING: "no answer yet" said (once a join) */
    double push_at; /* COMPUTED */
    int rc;         /* the failure that ended the run (0: none), and what it was */
    char msg[SW_ERR_LEN];
    config cfg;
    bool loaded;
    sw_task_data data;
    sw_task *task;
    sw_learner *learner;
    sw_grad grad; /* dense: one of the lender's buffers, sent without a copy (lend.h) */
    float *params;
    /* The parameters the next gradient is computed at: params, or read in place from the last
     * release's frame, held until they are replaced or must be written (a 4 MB copy a step
     * saved on a 1M-float model). */
    const float *theta;
    sw_frame *model_frame;
    sw__lender lender;
    float *pulled; /* sparse: the weights a pull brought */
    uint64_t version;
    uint32_t since_pull;
    bool redo; /* the last gradient was refused: the same batch again */
    /* A sharded run: a connection per shard (also in the agent's sockets), and the slices a
     * step waits for. */
    sw_sock *shard_socks[SW_SHARDS_MAX];
    uint32_t n_shard_socks;
    sw_shard_set awaited; /* the shards whose slices are still due */
    sw_shard_set asked;   /* the shards the step reads */
    uint64_t pull_min;  /* the version the release named */
    uint64_t slice_min; /* the lowest version among the slices in */
    uint64_t pull_mark; /* the newest restore mark among the slices in (SHARD_SLICE) */
    uint32_t retries;   /* pulls sent again this step (a shard not told of us yet) */
    /* Per shard, a slice that came while our push awaited its release: one the server
     * ordered sent may overtake that RELEASE, on another connection (NULL: none). Forgotten
     * by a release without SW_FLAG_SENT and by a new membership. */
    sw_frame *early[SW_SHARDS_MAX];
    bool sent_step; /* the step's slices were ordered sent, and none was pulled yet */
    size_t part[SW_SHARDS_MAX + 1]; /* a sparse step: shard j's touched indices are
                                     * [part[j], part[j + 1]) of the learner's */
    double asked_at;    /* when what is still due was last asked for: the slices, or (ANSWER)
                         * the push's answer */
    double again_s;     /* how long after asked_at it is asked for again */
    uint64_t seq;       /* the number of the next push */
    uint32_t push_flags; /* the last push's, for sending it again */
    bool leaving;        /* LEAVE goes once the server answers the last push, or at leave_by */
    double leave_by;
    double full_at; /* when a join was last refused for want of a slot (< 0: never) */
    /* Shared with the heartbeat thread. */
    atomic_uint id;
    atomic_bool rejoin; /* the server no longer knows us */
    unsigned reconnects; /* the breaks of our connection to the server seen so far */
    atomic_ullong token; /* the membership's token (WELCOME): heartbeats carry it */
    atomic_ullong heard_us; /* when the heartbeat socket last heard the server (clock, us) */
    bool beating;           /* a heartbeat thread runs */
    bool server_gone;       /* it never answered or fell silent: what is queued for it goes */
    pthread_t heartbeat;
    atomic_bool quit;
};
typedef struct sw_worker worker;

/* The flags every message the worker sends carries: SW_FLAG_UNCHECKED when WELCOME said
 * checksum=off. */
static inline uint32_t sw__worker_link_flags(const worker *k)
{
    return k->cfg.unchecked ? SW_FLAG_UNCHECKED : 0;
}

/* What to add to a message about values that are not finite (a push the server refused, a
 * release's parameters): the run diverged. "" for any other message. */
static inline const char *sw__worker_divergence_hint(const char *why)
{
    return strstr(why, "not finite") ? " (the run diverged: a lower --lr?)" : "";
}

/* Sends a message in a frame of its own, or with floats (the payload) lent when they are one of
 * the lender's buffers. An answer is due unless the message is LEAVE. */
void sw__worker_send(worker *k, sw_msg_type type, uint32_t flags, uint64_t version,
                     const void *payload, size_t len, const float *floats);
/* Ends the run with a failure (the first one counts). */
void sw__worker_fail(worker *k, int rc, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Until we have an id we send no heartbeats, so a JOIN lost with a server that died would never
 * be noticed: it is sent again every SW_JOIN_RETRY_S (the server answers a repeat from the same
 * connection with the same id). */
#define SW_JOIN_RETRY_S 1.0

/* A join unanswered this long (or half --server-timeout, if less) is said once, so a worker started before its server (or pointed at
 * the wrong one) is not silent for the whole --server-timeout. */
#define SW_JOIN_WAIT_SAY_S 5.0

/* The worker is done (--max-steps, or stopped): LEAVE. In a sharded run the server hears of a
 * push from the shards, and a LEAVE sent at once could overtake the last one, which the server
 * would then forget; so while a push awaits its answer, LEAVE waits for it (SW_LEAVE_WAIT_S at
 * most, or --server-timeout if shorter). */
#define SW_LEAVE_WAIT_S 5.0
void sw__worker_leave_when_answered(worker *k, double now);

/* Joining: JOIN now (and again when it is not answered); WELCOME's configuration, loaded. */
void sw__worker_join(worker *k, double now);
void sw__worker_rejoin_due(worker *k, double now);
void sw__worker_welcome(worker *k, const sw_msg *m, double now);
void sw__worker_unload(worker *k);

/* A step: RELEASE starts it (the parameters taken, the batch chosen; a sparse step pulls its
 * weights first, MODEL_SPARSE brings them); the gradient goes at push_at. */
void sw__worker_release(worker *k, const sw_msg *m, sw_frame *frame, double now);
void sw__worker_pulled(worker *k, const sw_msg *m, double now);
/* A sparse step's weights are in k->pulled (in the order of the touched indices), at
 * `version`: they go into the parameters and the gradient is computed. */
void sw__worker_sparse_ready(worker *k, uint64_t version, double now);
void sw__worker_push(worker *k, double now);

/* A sharded run (worker_shards.c): the connections WELCOME's shards call for (kept while
 * they stay the same), a release's pull, what a shard sends, and a push of every slice (a
 * sparse one: to the shards it touches). */
int sw__worker_shards_connect(worker *k, const config *c, char *err);
void sw__worker_shards_close(worker *k);
/* Drops the slices kept for a release to come (a membership ends). */
void sw__worker_shards_forget_early(worker *k);
/* Pulls from the shards what the step at `version` or later reads: every slice (dense), or
 * the touched weights from the shards holding them (sparse). `sent`: the server ordered the
 * slices sent (SW_FLAG_SENT), and only those that do not come within a second are pulled. */
void sw__worker_shards_pull(worker *k, uint64_t version, bool sent, double now);
void sw__worker_shards_take(worker *k, uint32_t j, sw_frame *frame, double now);
void sw__worker_shards_push(worker *k, uint32_t flags, double now);
/* When the slices still due, or the last push if no answer came, are sent again (a shard that
 * died lost them; started again, it answers the next), INFINITY when nothing is due; and doing
 * so when it is time. */
double sw__worker_shards_again_at(const worker *k);
void sw__worker_shards_again_due(worker *k, double now);
/* The gradient at the parameters now held (k->theta): computed, to be pushed when the step's
 * time is over. */
void sw__worker_compute(worker *k, double now);

/* The heartbeat thread of a worker process (ZeroMQ). */
int sw__worker_heartbeat_start(worker *k, char *err);
void sw__worker_heartbeat_stop(worker *k);

#endif
