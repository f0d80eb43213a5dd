/* The rig of the tests that run one scenario through the simulator and through the real server,
 * shards and workers on the in-process network's fake clock (sim_net_equivalence.c,
 * sim_net_shards.c): the scenario, both runs, and the comparisons of their logs. */
#ifndef SW_TESTS_SIM_NET_RIG_H
#define SW_TESTS_SIM_NET_RIG_H

#include <stddef.h>
#include <stdint.h>

#define DENSE_MODEL "softmax"
#define DENSE_DATA "synthetic:task=logistic,d=12,n=3000,test=300,val=300"
/* The learned policies: the source tree's networks (rlswitch's, both ways of choosing). */
#define RLP "rlp:file=" SW_RLP_SOURCE
#define RLSWITCH "rlswitch:file=" SW_POLICIES_DIR "/rlswitch.swrl"
#define RLSWITCH_ONCE "rlswitch:file=" SW_POLICIES_DIR "/rlswitch-once.swrl,choose=once"
#define SPARSE_MODEL "svm"
#define SPARSE_DATA "sparse:n=4000,test=400,dim=2000"

typedef struct scenario {
    const char *policy, *switch_to;
    const char *model, *data;
    float lr;
    const char *optim; /* syncwise/optim.h; NULL: plain SGD */
    uint32_t shards;   /* > 0: a sharded server, its θ on this many shards */
    double eval_every_s; /* the server's evaluations (0: none) */
} scenario;

/* The scenario's engine decisions are the same under both drivers, up to the rig's time slack. */
void same_decisions(const scenario *sc);

/* sc on each count of shards against the simulator's decisions and an unsharded server's model. */
void on_shards_n(scenario sc, const uint32_t *counts, size_t n_counts);

#endif
