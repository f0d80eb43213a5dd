/* Concurrent applies (issue: lock-free concurrent apply): applies per second and updates lost to
 * races for the locked, hogwild and atomic modes of syncwise/concurrent.h, with 1, 2 and 4
 * threads, on two workloads side by side:
 *   sparse: the SVM's pushes on text-like data, 64 pairs drawn with power-law frequencies from
 *           100000 weights (collisions happen on the frequent words only)
 *   hot:    every push names the same 64 weights (the worst contention)
 * Each update adds exactly 1 (value -1, lr 1) so lost updates are counted exactly from the sums.
 * The machine has 2 cores: 4 threads measure contention, not extra speed. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_args.h"
#include "syncwise/clock.h"
#include "syncwise/concurrent.h"
#include "syncwise/rng.h"

enum { NNZ = 64, PUSHES = 200000, DIM = 100000, BATCHES = 256 };

typedef struct job {
    sw_shared_params *p;
    const uint32_t *idx; /* BATCHES rows of NNZ indices */
} job;

static void *work(void *arg)
{
    job *j = arg;
    float val[NNZ];
    for (int k = 0; k < NNZ; k++)
        val[k] = -1.0f;
    for (int i = 0; i < PUSHES; i++)
        sw_shared_apply_sparse(j->p, j->idx + (size_t)(i % BATCHES) * NNZ, val, NNZ, 1.0f, 0);
    return NULL;
}

static int by_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* BATCHES sorted rows of NNZ distinct indices: Zipf(1.1) over DIM, or 0..NNZ-1 (hot). */
static void make_rows(uint32_t *idx, int hot)
{
    double *cdf = malloc(DIM * sizeof *cdf), total = 0;
    for (int j = 0; j < DIM; j++)
        cdf[j] = total += pow(j + 1, -1.1);
    sw_rng r;
    sw_rng_seed(&r, 1, 0);
    for (int b = 0; b < BATCHES; b++) {
        uint32_t *row = idx + (size_t)b * NNZ;
        for (int k = 0; k < NNZ; k++) {
            if (hot) {
                row[k] = (uint32_t)k;
                continue;
            }
            for (;;) { /* a fresh index not yet in the row */
                double u = sw_rng_uniform(&r) * total;
                uint32_t lo = 0, hi = DIM - 1;
                while (lo < hi) {
                    uint32_t mid = (lo + hi) / 2;
                    if (cdf[mid] < u)
                        lo = mid + 1;
                    else
                        hi = mid;
                }
                int seen = 0;
                for (int q = 0; q < k; q++)
                    seen |= row[q] == lo;
                if (!seen) {
                    row[k] = lo;
                    break;
                }
            }
        }
        qsort(row, NNZ, sizeof *row, by_u32);
    }
    free(cdf);
}

static void measure(const char *name, const uint32_t *idx, sw_apply_mode mode, int threads)
{
    sw_shared_params *p;
    sw_shared_new(&p, DIM, NULL, mode, NULL);
    pthread_t th[8];
    job j = {p, idx};
    double t0 = sw_clock_now_s();
    for (int t = 0; t < threads; t++)
        pthread_create(&th[t], NULL, work, &j);
    for (int t = 0; t < threads; t++)
        pthread_join(th[t], NULL);
    double dt = sw_clock_now_s() - t0;
    float *out = malloc(DIM * sizeof *out);
    sw_shared_read(p, out);
    double sum = 0;
    for (int q = 0; q < DIM; q++)
        sum += out[q];
    double want = (double)threads * PUSHES * NNZ;
    printf("%-7s %-8s %7d %14.0f %16.2e\n", name, sw_apply_mode_name(mode), threads,
           threads * PUSHES / dt, (want - sum) / want);
    free(out);
    sw_shared_free(p);
}

int main(int argc, char **argv)
{
    bench_usage(argc, argv, 0,
                "(no arguments)\n"
                "Concurrent applies per second and updates lost, locked, hogwild and atomic,\n"
                "on 1, 2 and 4 threads, sparse and hot workloads.\n");
    uint32_t *sparse = malloc((size_t)BATCHES * NNZ * sizeof *sparse);
    uint32_t *hot = malloc((size_t)BATCHES * NNZ * sizeof *hot);
    make_rows(sparse, 0);
    make_rows(hot, 1);
    printf("concurrent applies: %d pushes of %d pairs per thread, %d weights\n", PUSHES, NNZ, DIM);
    printf("%-7s %-8s %7s %14s %16s\n", "load", "mode", "threads", "applies/s", "updates lost");
    for (int load = 0; load < 2; load++)
        for (int mode = 0; mode < 3; mode++)
            for (int threads = 1; threads <= 4; threads *= 2)
                measure(load ? "hot" : "sparse", load ? hot : sparse, (sw_apply_mode)mode, threads);
    free(sparse);
    free(hot);
    return 0;
}
