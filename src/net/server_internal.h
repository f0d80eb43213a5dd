/* The server's state, shared by its setup (server.c), its turns (server_turn.c), its message
 * handlers (handlers.c) and what it sends (outbox.c). */
#ifndef SW_SERVER_INTERNAL_H
#define SW_SERVER_INTERNAL_H

#include "syncwise/engine.h"
#include "syncwise/err.h"
#include "syncwise/net.h"
#include "apply_pool.h"
#include "lend.h"
#include "server_shards.h"
#include "syncwise/proto.h"
#include "syncwise/rng.h"
#include "syncwise/run.h"
#include "syncwise/task.h"
#include "syncwise/transport.h"

/* One worker slot's connection. */
typedef struct conn {
    uint8_t route[SW_ROUTE_MAX]; /* the route of the connection it joined from */
    size_t route_len;
    double last_seen;
    /* When its own connection last carried a message from it, and when it was last probed:
     * heartbeats come on another connection, and cannot tell that this one is gone. */
    double heard_on_route, probed;
    bool live, wants_model, dropped;
    /* A frame to its route found no connection: it broke at our end, though the worker's end
     * may not know (its heartbeats, on their own connection, would keep it a member). Dropped
     * as a crash at the next turn; its heartbeats then hear UNKNOWN, and it joins again. */
    bool unreachable;
    bool used; /* a worker held this slot once */
    /* Sharded: every shard has had a push of this membership since the last restore, so knows
     * the connection to send its slices by (SHARD_SEND). */
    bool routed;
    uint64_t token; /* this membership's, from WELCOME: a worker's heartbeats carry it */
    /* The newest version its pushes were computed at: a worker's parameters never go back (but
     * to a restore's version), so an older push is refused before the engine counts it. */
    uint64_t pushed_version;
    char name[65];    /* the --name it joined with */
    char address[48]; /* where it joined from */
} conn;

/* The sender of the message being handled. */
typedef struct peer {
    const uint8_t *route;
    size_t route_len;
    sw_sock *sock; /* the socket it came on */
    bool operator; /* it may switch the policy: on the operator socket, or a CURVE operator */
    const char *address; /* where it is, as the transport says ("" when it cannot) */
} peer;

struct sw_server {
    const sw_server_params *p;
    int ckpt_lock; /* the lock that claims --checkpoint (sw_file_claim), or -1 */
    bool lock_made; /* this process made --checkpoint's lock file (sw_file_release_claim) */
    int ep_lock;    /* the lock that claims --endpoint-file, or -1: one file, one process */
    /* --resume, unless its --checkpoint was never saved (a run killed before its first save) or
     * holds only a sharded run's start record: such a run starts afresh (a start record's run
     * keeps its id, so that the shards it configured take it again). */
    bool resuming;
    sw_net *net;
    sw_sock *sock;
    sw_sock *ops;           /* the operator socket (ctl_bind), or NULL */
    char ops_ep[256];
    char policy[256];       /* the spec it starts under: --policy, or a resumed checkpoint's */
    sw_optim_params optim;  /* its update: --optimizer's, or a resumed checkpoint's */
    float *shards_init;     /* a sharded run's starting θ until its shards have it, or NULL */
    sw_agent agent;         /* its turns (server_turn.c) */
    sw_engine *engine;
    struct sw_check *check; /* the policy's promise, held on every event */
    sw_run_stats stats;     /* fed by every event: per worker steps, last push, staleness */
    sw_stopper stopper;
    sw_task_data data;
    char data_crc[24]; /* WELCOME's data_crc= line (its fingerprint: every worker must load
                        * the same), or "" for a generated set */
    sw_task *task;          /* the model and its data, dense or sparse */
    bool threaded;          /* --apply-threads > 1: a concurrent engine, its jobs in the pool */
    sw__apply_pool pool;
    float *snapshot;        /* threaded: the parameters as last read from the engine */
    sw__lender lender;      /* dense and not threaded: θ is sent without a copy (lend.h) */
    bool lending;
    sw_frame *body;         /* the frame being handled (for handing it to the pool) */
    size_t n;               /* parameters */
    float *grad;            /* a decoded gradient */
    uint32_t *sidx;         /* a decoded sparse gradient or index list (n entries) */
    float *sval;
    conn *conns;
    uint32_t slots;
    /* The live connections' slots (syncwise/roster.h): the heartbeat check of every turn walks
     * these, not the table (with --max-workers 65536 its scan halved the pushes served). */
    uint32_t *live_conns, n_live_conns;
    double t0, wake_at, next_eval, next_ckpt;
    double last_turn;            /* when the last turn began (a long gap: the server stalled) */
    /* A worker's step is timed (--step-timeout) from its release or push, or from this when
     * later: the last moment no worker could push (the server stalled, a shard was out). */
    double steps_timed_from;
    bool log_failed;             /* a write to --log failed (said once) */
    uint64_t last_ckpt_applies;
    /* Resumed, and no apply or switch since: the checkpoint file is the run as it stands, and a
     * save would only put this command's options in it (a resume given another --optimizer by
     * mistake, stopped at once, lost the momentum the file held). */
    bool as_resumed;
    uint64_t eval_version;  /* the version the last evaluation saw */
    sw_rate recent;         /* applies per second over the last seconds, for ctl status */
    bool unchecked;         /* payloads go without checksums, and may come so (WELCOME says) */
    sw__shards shards;      /* --shards: the shards hold θ, the engine none (server_shards.h) */
    bool finished;          /* done, and a sharded run's last gather and evaluation are over */
    bool started;           /* wait_workers have joined: the engine knows the live workers */
    bool done;
    sw_stop_reason limit; /* the limit that ended the run (the log's end line says it), or none */
    bool concluded;         /* sw__server_conclude ran: the workers were told DONE */
    bool said_waiting;      /* the wait for goodbyes was said (say_waiting) */
    bool signalled_by_end;  /* *stop was set when it concluded (else a signal cuts the
                             * goodbyes short) */
    double farewell_by;     /* until when the workers told DONE are waited for */
    int rc;                 /* a failure that ends the run (0: none), and what it was */
    char msg[SW_ERR_LEN];
    sw_server_result *r;
};
typedef struct sw_server server;

double sw__server_now(const server *s);
/* An event of the server's own, not the engine's (an evaluation, a restore): into the log and
 * through the promise checker, as the engine's events go. */
void sw__server_note(server *s, const sw_event *ev);
/* The flags every message the server sends carries: SW_FLAG_UNCHECKED on a run without
 * checksums. */
static inline uint32_t sw__server_link_flags(const server *s)
{
    return s->unchecked ? SW_FLAG_UNCHECKED : 0;
}
/* The parameters now: the engine's own, or a snapshot of a concurrent engine's; in a sharded
 * run the last gathered ones (NULL: none). Their version into *version. */
const float *sw__server_params_at(server *s, uint64_t *version);
const float *sw__server_params(server *s);

/* Sends a message to a peer (payload copied from `payload`, or the parameters for a MODEL or
 * a RELEASE with SW_FLAG_MODEL when payload is NULL). */
void sw__server_send(server *s, const peer *to, sw_msg_type type, uint32_t worker,
                     uint32_t flags, const void *payload, size_t len);
/* The same with the header's version given, not the engine's. */
void sw__server_send_at(server *s, const peer *to, sw_msg_type type, uint32_t worker,
                        uint32_t flags, uint64_t version, const void *payload, size_t len);
/* Answers a refused message with ERROR; `worker` is the id the refused message claimed, so that
 * a worker can tell an old answer from a new one. */
void sw__server_refuse(server *s, const peer *to, uint32_t worker, uint32_t flags,
                       const char *why);
/* The same for a decoded message m, whose version field goes back in ERROR's: a worker's
 * heartbeats carry its join count there, so that it can tell an "unknown worker" about its
 * previous membership from one about its current one. */
void sw__server_refuse_echo(server *s, const peer *to, const sw_msg *m, uint32_t flags,
                            const char *why);

/* An engine call's code: true when it succeeded; otherwise the run ends with that failure
 * (which `what` of which worker it was, and the engine's own words). */
bool sw__server_engine_ok(server *s, int rc, const char *what, uint32_t w);

/* The end of the run, once: its last evaluation and checkpoint, RELEASE with DONE to every live
 * worker (saying why, when the run failed), the log's end line. Each worker told answers with
 * LEAVE: until every one has, for a --heartbeat-timeout (10 s) at most, the server serves on
 * (sw__server_farewells_due), so that DONE reaches a worker whose link stalled across the end,
 * where closing at once could reset the connection with DONE still on its way. */
void sw__server_conclude(server *s);
bool sw__server_farewells_due(const server *s);

/* Carries out an engine result: RELEASE to every released worker, and the wake-up. */
void sw__server_follow(server *s, const sw_engine_result *res);

/* A push's checks (a released worker, a version the server had; refused with ERROR
 * otherwise), and the push into the engine: dense, or nnz pairs in s->sidx/s->sval, or with
 * neither in a sharded run (the shards hold the gradient); the answer to the worker. */
bool sw__server_push_allowed(server *s, const peer *from, const sw_msg *m);
void sw__server_accept_push(server *s, const peer *from, const sw_msg *m, const float *dense,
                            size_t nnz);

/* Binds the listener workers reach and the operator socket (server_sockets.c); then says the
 * server is ready, writing the endpoint where --endpoint-file says. */
uint64_t sw__server_run_payload(const server *s);
int sw__server_bind(server *s, char *err);
int sw__server_announce(server *s, char *err);

/* Handles one decoded message from `from`. */
void sw__server_handle(server *s, const peer *from, const sw_msg *m);

/* Removes worker w (crashed or leaving) from the engine and forgets its connection. */
void sw__server_drop_worker(server *s, uint32_t w, bool crashed);
/* The same, having said why itself. */
void sw__server_remove_worker(server *s, uint32_t w, bool crashed);
/* The live worker that joined from this route (one at most: a repeated JOIN from it gets the
 * same id), or s->slots. */
uint32_t sw__server_worker_at(const server *s, const uint8_t *route, size_t len);
/* Worker w's connection is live (a join) or no longer (a departure, a goodbye). */
void sw__server_conn_live(server *s, uint32_t w, bool live);

/* Records the failure that ends the run (the first one) and stops it. */
void sw__server_fail(server *s, int rc, const char *why);
/* Ends the run (done) when it reached --max-time or --max-applies. */
void sw__server_check_limits(server *s);
/* Once the run is over: what waits on the workers' socket is read once more, so that a JOIN
 * sent as the run ended is told DONE at once, not left to wait out its --server-timeout. */
void sw__server_answer_late(server *s);
/* Why a run that did not fail ended: the target, the limit that stopped it, or "stopped". */
const char *sw__server_end_reason(const server *s);

/* One turn (sw_agent.turn): what arrived, then what is due; the next turn's time. */
double sw__server_turn(void *ctx, double now);
/* An evaluation on the held-out set, logged; whether it met the target accuracy. It reads
 * the engine's θ, or in a sharded run the last gathered one (none: no evaluation, false). */
bool sw__server_evaluate(server *s);
/* A sharded run's gather is in: its evaluation (which may end the run). */
void sw__server_gathered(server *s);
/* A checkpoint, when the run keeps one. */
int sw__server_checkpoint(server *s, char *err);
/* A sharded run's whole model at its end (its last gather) as FILE.model beside --checkpoint's
 * record: the shards' files hold a slice each, which eval cannot read. 0 with nothing to do. */
int sw__server_save_gathered(server *s, char *err);
/* The parameters, version and optimizer state of an unsharded run's checkpoint (which must
 * hold this run's model), and the policy it was under (sw__server_resume_policy). */
int sw__server_load_resume(server *s, float *init, uint64_t *version, sw_optim *o, char *err);
/* The policy a resumed run goes on with, from its checkpoint's "policy=SPEC" line: the one in
 * force when it was saved, so that a switch by ctl survives a restart; a different --policy
 * does not override it (the log says so). Sets s->policy; SW_ENOTFOUND for a policy this
 * process does not know (a plugin's, not loaded). */
int sw__server_resume_policy(server *s, const char *record, char *err);
/* Whether each line the record holds (policy, lr, slots, optimizer, params) says what a run writes: a
 * line that is there but unreadable is damage (SW_EFORMAT, naming it), where a line that is
 * not there is an older record's. */
int sw__server_resume_record_ok(const server *s, const char *record, char *err);
/* What a checkpoint records of the run for a resume to read back (the policy in force, the
 * learning rate, the worker slots), as key=value lines into out; the length written. */
int sw__server_resume_facts(const server *s, char *out, size_t cap);

/* A resumed run given no optimizer (optim_default) takes up the one its checkpoint's record
 * names (or, older, the spec `held` of an unsharded run's checkpoint; NULL: a sharded run's
 * record). A sharded run given another one is refused (SW_EMISMATCH): its shards restore
 * their own optimizer's state. */
int sw__server_resume_optim(server *s, const char *record, const char *held, char *err);
/* A resume keeps the checkpoint's worker slots (its log goes on as the same run); an older
 * checkpoint that does not say passes. SW_EMISMATCH with a message otherwise. */
int sw__server_resume_slots(const server *s, const char *record, char *err);
/* Another --wd than the record's: taken and said (unsharded), refused (sharded: the shards keep
 * the one they saved). */
int sw__server_resume_wd(const server *s, const char *record, bool sharded, char *err);

#endif
