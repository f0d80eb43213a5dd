/* The worker process's state, shared by its dense path (worker.c) and its sparse path
 * (worker_sparse.c). */
#ifndef SW_NET_WORKER_INTERNAL_H
#define SW_NET_WORKER_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <zmq.h>

#include "syncwise/curve.h"
#include "syncwise/net.h"
#include "syncwise/proto.h"
#include "syncwise/task.h"
#include "lend.h"

/* The run's configuration, as WELCOME states it. */
typedef struct config {
    uint32_t worker, slots, batch;
    size_t params;
    float lr, wd;
    uint64_t seed;
    uint64_t token; /* this membership's: heartbeats carry it */
    char data[512], model[128], batch_mode[16];
} config;

typedef struct worker {
    const sw_worker_params *p;
    void *zctx, *sock;
    config cfg;
    bool loaded;
    sw_task_data data;
    sw_task *task;
    sw_learner *learner;
    sw_grad grad;  /* dense: one of the lender's buffers, sent without a copy (lend.h) */
    float *params;
    /* The parameters the next gradient is computed at: params, or read in place from the last
     * release's frame, held until they are replaced or must be written (a 4 MB copy a step
     * saved on a 1M-float model). */
    const float *theta;
    zmq_msg_t model_frame;
    bool holding; /* model_frame holds them */
    sw__lender lender;
    float *pulled;    /* sparse: the weights a pull brought */
    uint8_t *scratch; /* sparse: an encoded payload */
    uint64_t version;
    uint32_t since_pull;
    bool redo;
    atomic_uint id; /* read by the heartbeat thread */
    atomic_bool quit;
    atomic_bool rejoin; /* set by the heartbeat thread when the server no longer knows us */
    atomic_ullong token; /* the membership's token (WELCOME): heartbeats carry it as their version */
    atomic_ullong heard_us; /* when the heartbeat socket last heard the server (clock, us) */
    /* The server answered and holds us (WAIT, or WELCOME before the first RELEASE): its silence
     * may last, as long as it echoes our heartbeats. Otherwise an answer is due at once, and
     * silence means a lost message or a dead server. */
    bool held;
    bool curve;
    sw_curve_keys keys, server_keys;
    sw_worker_result *r;
} worker;

/* Sends a message, encoded in ZeroMQ's own buffer; with floats, they are the payload. */
void sw__worker_send(worker *k, void *sock, sw_msg_type type, uint32_t flags, uint64_t version,
                     const void *payload, size_t len, const float *floats);
/* Waits for one message; 0 and the frame, SW_ENOTFOUND when the server forgot us, SW_EIO on
 * silence or a stop. */
int sw__worker_receive(worker *k, zmq_msg_t *frame, sw_msg *m, char *err);
/* Sleeps the injected straggler delay, if any. */
void sw__worker_straggle(const worker *k);

/* The sparse path: one step after a release (pull the weights the batch touches, compute, push
 * the pairs). */
int sw__worker_sparse_step(worker *k, const sw_msg *rel, char *err);

#endif
