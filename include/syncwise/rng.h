/* Seeded random streams.
 *
 * Every random choice in syncwise comes from an sw_rng, so that one seed reproduces a run bit for
 * bit; secrets alone do not (sw_rng_secret). A stream is identified by (seed, stream id): worker 3's batch order and worker 3's step
 * times are different streams of the same seed, so adding a consumer of randomness in one place
 * never shifts the numbers seen in another. The generator is xoshiro256** seeded through
 * splitmix64; it is a plain value (no allocation), cheap to copy and to keep per worker.
 */
#ifndef SYNCWISE_RNG_H
#define SYNCWISE_RNG_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sw_rng {
    uint64_t s[4];
} sw_rng;

/* Well-known stream ids, so that unrelated modules never share a stream by accident. */
enum {
    SW_STREAM_INIT = 1,   /* model parameter initialisation */
    SW_STREAM_SPLIT = 2,  /* train/validation split */
    SW_STREAM_DATA = 3,   /* synthetic data generation */
    SW_STREAM_SHARD = 4,  /* assignment of training examples to shards */
    SW_STREAM_RL = 5,     /* the RL agent: exploration and replay sampling */
    SW_STREAM_INSTANCE = 6, /* RL training instances: models, data subsets, seeds */
    SW_STREAM_REGIME = 7, /* RL instances: their other choices (workers, cluster, lr, optimizer) */
    SW_STREAM_BATCH = 16, /* + worker rank: mini-batch order */
};

/* Seeds r as stream `stream` of `seed`. Any values are valid. */
void sw_rng_seed(sw_rng *r, uint64_t seed, uint64_t stream);

uint64_t sw_rng_u64(sw_rng *r);

/* Uniform integer in [0, n), unbiased; 0 for n = 0. */
uint64_t sw_rng_below(sw_rng *r, uint64_t n);

/* Uniform double in [0, 1), with 53 random bits. */
double sw_rng_uniform(sw_rng *r);

/* Standard normal deviate (Box-Muller; one deviate per call, so the stream position is simple). */
double sw_rng_normal(sw_rng *r);

/* Exponential deviate with mean 1. */
double sw_rng_exp(sw_rng *r);

/* Fisher-Yates shuffle of idx[0..n). */
void sw_rng_shuffle(sw_rng *r, uint32_t *idx, size_t n);

/* 64 bits a stranger cannot guess, from the kernel's cryptographic generator (getrandom(2), or
 * /dev/urandom): membership tokens, a run's id, a server's route to its shards. Never drawn from
 * a seeded stream: xoshiro's outputs give its state away (five tokens told to joiners gave every
 * other). 0, or SW_EIO with the message on a system with neither source. */
int sw_rng_secret(uint64_t *out, char *err);

#ifdef __cplusplus
}
#endif

#endif
