/* Cluster models: how long each simulated worker's steps take.
 *
 * A cluster spec gives one timing model to every worker, or different models to ranges of
 * workers, separated by ';' with '@FIRST-LAST' (or '@W') after a model:
 *
 *   const:T                        every step takes T seconds (default 1)
 *   uniform:LO,HI                  uniform in [LO, HI]
 *   shexp:A,base=B                 B * (1 - A + A * Exp(1)): the DBW paper's round trips
 *   pareto:SHAPE,SCALE             Pareto with minimum SCALE: heavy-tailed stragglers
 *   straggle:p=0.3,mean=10,sd=4,base=4.5,jitter=0.05,mode=worker
 *                                  the RLP paper's stragglers: a step takes base (with a
 *                                  Gaussian relative jitter) plus, for a straggler, a sleep drawn
 *                                  from N(mean, sd) clipped at 0. mode=worker makes each worker a
 *                                  straggler for the whole run with probability p (the paper's
 *                                  Table 1 shows persistent per-worker step times); mode=step
 *                                  draws the sleep for every step with probability p
 *   trace:FILE                     replays recorded step times from a CSV of "worker,seconds"
 *                                  rows (or "seconds" rows, shared by all), cyclically
 *
 * Every model also takes speed=F, a factor on its times (a heterogeneous cluster), e.g.
 * "const:1;const:1,speed=3@8-9" makes workers 8 and 9 three times slower. Unnamed workers use
 * the first group without a range. Each worker draws from its own seeded stream.
 */
#ifndef SYNCWISE_CLUSTER_H
#define SYNCWISE_CLUSTER_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sw_cluster sw_cluster;

/* Builds the timing models of n_workers workers from spec. Fails with a message naming the
 * group and parameter at fault. */
int sw_cluster_new(sw_cluster **out, const char *spec, uint32_t n_workers, uint64_t seed,
                   char *err);
void sw_cluster_free(sw_cluster *c);

/* Draws the compute time (seconds, > 0) of worker w's next step. */
double sw_cluster_step_s(sw_cluster *c, uint32_t w);

/* Whether worker w is a straggler for the whole run (mode=worker), for summaries. */
int sw_cluster_is_straggler(const sw_cluster *c, uint32_t w);

#ifdef __cplusplus
}
#endif

#endif
