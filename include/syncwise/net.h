/* The networked runtime: the engine behind a server, and the workers that train against it
 * (protocol: syncwise/proto.h, docs/protocol.md), on either network of syncwise/transport.h:
 * ZeroMQ between real processes on the real clock, or in one process on a fake clock.
 *
 * The server is an agent of the loop with one listener and a handler per message type. It
 * assigns worker ids on JOIN, carries out the engine's releases (RELEASE with the parameters),
 * notices a dead worker when its heartbeats stop or its connection closes (the engine then
 * removes it from every wait), evaluates on the held-out set, checkpoints atomically, and
 * answers operator commands (CTL: "status", "policy SPEC"). Every message is checked; a refused
 * one is counted and answered with ERROR, and the server goes on serving everyone else.
 *
 * A worker is an agent too: it joins, learns the run's configuration from WELCOME, loads the
 * same data set itself, and then on each RELEASE computes a gradient on its next mini-batch
 * (syncwise/task.h) and PUSHes it when its step is over. A worker process also sends heartbeats
 * from a thread of its own. When the server restarts (from its checkpoint) the worker's next
 * message is answered "unknown worker" and it joins again by itself.
 *
 * sw_server_run and sw_worker_run run one of them on ZeroMQ until it is done; sw_server_new and
 * sw_worker_new make agents for a loop of the caller's (tests run a server and its workers in
 * process so).
 */
#ifndef SYNCWISE_NET_H
#define SYNCWISE_NET_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "syncwise/err.h"
#include "syncwise/optim.h"
#include "syncwise/stop.h"
#include "syncwise/transport.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Whether payloads carry a checksum (CRC-32C), agreed at join: WELCOME says it. */
typedef enum sw_checksum_mode {
    SW_CHECKSUM_AUTO = 0, /* on over plain TCP; off under CURVE, whose authenticator covers
                           * every byte already */
    SW_CHECKSUM_ON,
    SW_CHECKSUM_OFF,      /* for trusted links; values are still checked to be finite */
} sw_checksum_mode;

typedef struct sw_server_params {
    const char *bind;            /* e.g. "tcp://127.0.0.1:5555"; port "*" picks a free one */
    const char *endpoint_file;   /* when set, the bound endpoint is written there */
    const char *policy, *model, *data;
    const char *job;             /* the launcher's job, told to workers (WELCOME job=), or NULL */
    bool policy_default;         /* policy is the default, not asked for: a resumed run's own
                                  * policy replaces it without a word */
    uint32_t batch, max_workers;
    uint32_t wait_workers;       /* release no one until this many workers have joined (also
                                  * after --resume); 0 or 1: start with the first */
    float lr, weight_decay;
    sw_optim_params optim;       /* the engine's update; kept in checkpoints and resumed */
    bool optim_default;          /* optim is the default, not asked for: a resumed run takes up
                                  * its checkpoint's optimizer and state */
    uint64_t seed;
    const char *batch_mode;      /* "shard" or "sample", told to the workers */
    double heartbeat_timeout_s;  /* a worker silent this long is dead */
    /* A running worker that pushes nothing this long after its release or its last push is
     * dropped as hung, though its heartbeats (another thread's) go on: a step stuck for good
     * would hold a synchronous run for ever (0: never) */
    double step_timeout_s;
    double dead_link_s;          /* as sw_worker_params', on its workers' connections */
    const char *checkpoint;      /* file to checkpoint into, or NULL */
    uint64_t checkpoint_applies; /* checkpoint every this many applies (0: never by count) */
    double checkpoint_s;         /* and every this many seconds (0: never by time) */
    bool resume;                 /* start from the checkpoint */
    double target_acc, max_time_s, eval_every_s;
    uint64_t max_applies;
    FILE *log;                   /* JSONL event log, or NULL; opened for appending, it is
                                  * emptied when the run starts (resumed: a torn last line is
                                  * cut), so that a refused start leaves it as it was */
    const sw_stop_flag *stop; /* set from a signal handler to stop cleanly; may be NULL */
    const char *curve_key;       /* CURVE: the server's key pair file, or NULL for none */
    const char *curve_clients;   /* CURVE: the authorised workers' public keys (required) */
    const char *curve_operators; /* CURVE: the operators' public keys, who may also switch the
                                  * policy from afar; may be NULL */
    /* Where operator commands (ctl policy) are taken: NULL for this host's private operator
     * socket (sw_ctl_endpoint of the bound endpoint, in a directory only its owner can enter),
     * "none" for nowhere but CURVE operators, or an endpoint of the caller's choice (anyone who
     * reaches it may then switch the policy). ctl status is answered everywhere. */
    const char *ctl_bind;
    sw_checksum_mode checksum;
    /* A sharded run (syncwise/shard.h): the shards' endpoints, comma-separated; the server
     * then holds no parameters but runs the one engine on each push's facts, and workers push
     * and pull at the shards. NULL: the server holds θ. */
    const char *shards;
    /* How long a sharded run waits for a silent shard (killed, or cut off) to come back,
     * resumed from its checkpoint, before it ends. */
    double shard_wait_s;
    /* A sharded run's chunk size in bytes, a multiple of 4 (less when every shard would not get
     * a chunk otherwise); 0: the rule of syncwise/placement.h. A resumed run keeps the chunks
     * its record gives, and a chunk_bytes that would cut otherwise is refused. */
    size_t chunk_bytes;
    /* Concurrent applies: the engine decides every push in the main thread, after its checks,
     * and this many threads (1: the main thread itself) apply what it accepted, in apply_mode
     * "locked", "hogwild" or "atomic" (syncwise/concurrent.h), with the engine's optimizer.
     * Only policies that apply each gradient alone on arrival can run so (asp, ssp, dssp,
     * ebsp; a switch to another is refused). The version counts decided applies; the
     * parameters may lag it by the jobs still queued for the threads. */
    uint32_t apply_threads;
    const char *apply_mode;
    /* Progress after each evaluation; may be NULL. acc is NAN for a regression task. */
    void (*on_eval)(void *ctx, double t, uint64_t version, double loss, double acc,
                    uint32_t live);
    void *on_eval_ctx;
} sw_server_params;

sw_server_params sw_server_default_params(void);

typedef struct sw_server_result {
    bool reached;          /* the target accuracy was met */
    bool configured;       /* data, model, optimizer and policy were accepted; false when the
                            * server refused its configuration (a usage error), or a signal
                            * stopped it as it loaded its data */
    double elapsed_s, final_acc, final_loss;
    bool classify;         /* the task has an accuracy (final_acc is 0 for regression) */
    const char *held_out;  /* the set evaluated: "validation", "test" or "training" */
    double started_s;      /* when training started: the first join, or when the --wait-workers
                            * were in; elapsed_s includes it. Negative: it never started */
    uint64_t start_version, version, applies, pushes, refused, joins, crashes;
    uint64_t bytes_in, bytes_out; /* message bytes received and sent (headers included) */
    /* A sharded run: of those, the model's floats between the server and the shards (the
     * initial parameters set, the slices gathered for evaluations and checkpoints): the rest is
     * the control plane. */
    uint64_t model_bytes;
    /* A sharded run: frames received from the shards, and the messages they carried (a batch
     * carries a turn's, docs/protocol.md "Batches"). */
    uint64_t shard_frames, shard_messages;
    char broken[SW_ERR_LEN]; /* the first promise the policy broke (syncwise/check.h), or "" */
} sw_server_result;

/* Runs the server until a stopping condition or *stop. Fails with a message on a bad
 * configuration, a bind failure or a checkpoint that cannot be read or written. Every event is
 * held to the policy's promise (syncwise/check.h): a broken one is logged at once and shown by
 * ctl status, training goes on (a real run is worth more than its promise), and the finished
 * run then fails with SW_EPROMISE, the result filled in as for a success. The log, when given,
 * opens with its "start" line and, when the run finishes, closes with an "end" line. */
int sw_server_run(const sw_server_params *p, sw_server_result *out, char *err);

/* The same server as an agent of the caller's loop on `net` (borrowed, as are p and out, until
 * sw_server_end): set up, bound, its log started. sw_server_end ends the run as sw_server_run
 * does (a last evaluation and checkpoint, DONE to the live workers, the log's end line), frees
 * the server and returns the run's code. */
typedef struct sw_server sw_server;
int sw_server_new(sw_server **out, sw_net *net, const sw_server_params *p, sw_server_result *r,
                  char *err);
sw_agent *sw_server_agent(sw_server *s);
const char *sw_server_endpoint(const sw_server *s); /* where it listens */
int sw_server_end(sw_server *s, char *err);

typedef struct sw_worker_params {
    const char *connect;          /* e.g. "tcp://127.0.0.1:5555" */
    const char *name;             /* for logs; may be NULL */
    const char *job;              /* the server must serve this job (WELCOME job=), or NULL */
    uint32_t get_model_frequency; /* pull every f steps, apply own gradients in between */
    double heartbeat_s, server_timeout_s;
    double dead_link_s;           /* a connection whose peer's host acknowledges nothing this
                                   * long is closed (TCP; 0: the system's, about 15 min) */
    uint64_t max_steps;           /* 0: until the server says the run is done */
    double delay_s;               /* injected slowness: a step's push waits this long */
    /* Or a step's time after its gradient, asked for each step of the worker with this id (a
     * scripted cluster, in process); NULL: delay_s. */
    double (*step_s)(void *ctx, uint32_t worker);
    void *step_ctx;
    const sw_stop_flag *stop;
    const char *curve_key;        /* CURVE: this worker's key pair file, or NULL for none */
    const char *curve_server;     /* CURVE: the server's public key file */
} sw_worker_params;

sw_worker_params sw_worker_default_params(void);

typedef struct sw_worker_result {
    uint64_t steps, drops, joins;
    bool done; /* the server ended the run */
} sw_worker_result;

/* Runs a worker on ZeroMQ, with its heartbeat thread, until the server ends the run, max_steps
 * or *stop. Fails with a message on a bad configuration, a server silent too long, or a refusal
 * it cannot recover from. */
int sw_worker_run(const sw_worker_params *p, sw_worker_result *out, char *err);

/* The same worker as an agent of the caller's loop on `net` (p, out and net borrowed until
 * sw_worker_end), without heartbeats. sw_worker_end closes its connection (in process, the
 * server hears it close: a crash, unless it left), frees it and returns its run's code. */
typedef struct sw_worker sw_worker;
int sw_worker_new(sw_worker **out, sw_net *net, const sw_worker_params *p, sw_worker_result *r,
                  char *err);
sw_agent *sw_worker_agent(sw_worker *k);
/* Leaves the run now (LEAVE to the server when it has joined); its agent is done. A worker
 * stopped by *stop leaves so too. */
void sw_worker_leave(sw_worker *k);
int sw_worker_end(sw_worker *k, char *err);

/* The private operator endpoint of a server bound at server_endpoint (tcp://HOST:PORT or
 * ipc://PATH), on this host: ipc://DIR/syncwise-PORT.ctl with DIR $XDG_RUNTIME_DIR/syncwise, or
 * /tmp/syncwise-UID, or ipc://PATH.ctl. Fails on other transports, a port that is not a number
 * (not bound yet) or a path too long for a socket. */
int sw_ctl_endpoint(const char *server_endpoint, char *out, size_t cap, char *err);
/* Whether an endpoint a client would connect to names this host (ipc://, a loopback or
 * wildcard address, or one of this machine's interfaces): only then may its private operator
 * endpoint be the server's, since the port alone names it. */
bool sw_ctl_is_this_host(const char *endpoint);
/* Whether a listener answers at the local socket PATH (another server's operator socket, where
 * a file a killed one left does not). */
bool sw_ctl_socket_answers(const char *path);

/* Sends one operator command ("status", "policy SPEC") and stores the reply (NUL-terminated)
 * in reply. With CURVE, curve_key and curve_server name the key files (else NULL). */
int sw_ctl(const char *connect, const char *command, double timeout_s, const char *curve_key,
           const char *curve_server, char *reply, size_t reply_cap, char *err);

#ifdef __cplusplus
}
#endif

#endif
