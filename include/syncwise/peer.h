/* The decentralized mode (paper 003, milestone 2): peers train a model (syncwise/task.h: a sparse
 * linear one, whose steps change the weights their batches touch, or a dense one) with no
 * server. Every peer keeps a replica of all the weights and owns a slice of them: with M members
 * sorted by endpoint, member k owns indices [k n / M, (k + 1) n / M). A peer computes gradients
 * on its own batches, applies them to its replica and sends each owner the deltas of its slice;
 * an owner adds the deltas it receives and broadcasts the current values of what changed in its
 * slice every round, so the replicas are eventually consistent.
 *
 * The first peer (no join) initialises the weights; a new peer says HELLO to any member, which
 * answers with the member list (to everyone) and its whole replica. A message from anyone else
 * who is not a member is ignored and counted. A peer silent for longer than the timeout (every
 * peer broadcasts each round) is dropped and the slices are reassigned. Only the first member
 * computes the loss (on the held-out set, each round); it stops everyone at the target loss or
 * after `patience` rounds without improvement, keeping the best weights it saw.
 */
#ifndef SYNCWISE_PEER_H
#define SYNCWISE_PEER_H

#include <stdbool.h>
#include <stdint.h>

#include "syncwise/stop.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sw_peer_params {
    const char *bind;          /* e.g. "tcp://127.0.0.1:*" */
    const char *endpoint_file; /* the bound endpoint is written there when set */
    const char *join;          /* a member's endpoint, or NULL to start a group */
    const char *model, *data;  /* a model and its data (syncwise/task.h) */
    uint32_t batch;
    float lr;
    uint64_t seed;        /* of the data; each peer's batch order also hashes its endpoint */
    uint32_t round_steps; /* steps between broadcasts and loss evaluations */
    double timeout_s;     /* a member silent this long is dropped */
    uint32_t wait_peers;  /* train only once this many members are in (0 or 1: at once), so a
                           * group starts whole rather than its first peer finishing alone */
    double target_loss;   /* 0: none */
    uint32_t patience;    /* rounds without improvement (0: none) */
    double max_time_s;    /* 0: none */
    double delay_s;       /* injected slowness per step */
    const char *out;      /* the judge writes its best weights there (text, one per line; a
                           * linear model's features' weights, then the bias); may be NULL */
    const char *curve_key; /* CURVE: the group's one key pair file, which every member holds;
                            * only its holders get in (NULL: plain TCP, anyone may say HELLO) */
    const sw_stop_flag *stop;
} sw_peer_params;

sw_peer_params sw_peer_default_params(void);

typedef struct sw_peer_result {
    bool reached;                           /* the target loss was met (as told by the loss peer) */
    bool loss_peer;                         /* this peer was the judge at the end */
    double best_loss, elapsed_s, join_loss; /* join_loss: of the weights received on joining */
    uint64_t steps, rounds, deltas_sent, bytes_sent, dropped_peers;
    uint64_t refused;                       /* messages ignored: malformed, or a non-member's */
    uint64_t refused_keys;                  /* connections refused for an unknown CURVE key */
    uint32_t members; /* at the end */
} sw_peer_result;

int sw_peer_run(const sw_peer_params *p, sw_peer_result *out, char *err);

#ifdef __cplusplus
}
#endif

#endif
