/* A shard's apply on 1, 2 and 4 threads (syncwise shard --apply-threads, src/net/shard_step.c):
 * the time to sum k = 4 pushed slices and step θ, plain SGD and momentum, for slices of 256k,
 * 1M and 4M floats cut into one part per thread (a shard cuts none below SW_SHARD_PART_MIN), each thread count's median over interleaved trials, and its speed against
 * one thread measured beside it. The apply is memory-bound: extra threads help only on idle
 * cores (on this 2-core machine 4 threads measure contention, not speed).
 *
 *   bench_shard_apply [TRIALS]    (default 31) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_args.h"
#include "shard_internal.h"
#include "syncwise/clock.h"
#include "syncwise/optim.h"
#include "syncwise/team.h"

enum { K = 4, MAX_TRIALS = 201 };

static int by_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One apply of the K held slices on the team (as shard_apply.c runs its plan). */
static double one_apply(sw_team *team, const sw__held *const *g, float *theta, float *sum,
                        size_t len, sw_optim *opt)
{
    sw__apply_plan p = {.g = g, .n_g = K, .theta = theta, .sum = sum, .len = len,
                        .opt = opt, .step = opt ? opt->steps + 1 : 0, .lr = 1e-4f, .n = K};
    uint32_t parts = sw_team_size(team); /* one per thread, whatever SW_SHARD_PART_MIN says:
                                           * the bench is what sets it */
    double t0 = sw_clock_now_s();
    sw_team_run(team, parts, sw__shard_apply_part, &p);
    double dt = sw_clock_now_s() - t0;
    if (opt)
        opt->steps = p.step;
    return dt;
}

int main(int argc, char **argv)
{
    bench_usage(argc, argv, 1,
                "[TRIALS]\n"
                "A shard's apply of 4 pushed slices on 1, 2 and 4 threads, plain SGD and\n"
                "momentum, slices of 256k, 1M and 4M floats.\n"
                "  TRIALS  interleaved trials, 1 to 201 (default 31)\n");
    int trials = argc > 1 ? (int)bench_long(argv[0], "TRIALS", argv[1], 1, MAX_TRIALS) : 31;
    const char *core = getenv("OPENBLAS_CORETYPE");
    printf("shard apply of %d slices, median of %d interleaved trials; OPENBLAS_CORETYPE=%s "
           "(no BLAS call here)\n", K, trials, core ? core : "unset");
    const uint32_t team_sizes[] = {1, 2, 4};
    sw_team *teams[3];
    for (int i = 0; i < 3; i++)
        if (sw_team_new(&teams[i], team_sizes[i], NULL))
            return 1;
    const size_t lens[] = {1 << 18, 1 << 20, 1 << 22};
    for (int o = 0; o < 2; o++)
        for (int l = 0; l < 3; l++) {
            size_t len = lens[l];
            float *theta = calloc(len, 4), *sum = malloc(4 * len), *g[K];
            sw__held held[K];
            const sw__held *named[K];
            for (int k = 0; k < K; k++) {
                g[k] = malloc(4 * len);
                for (size_t j = 0; j < len; j++)
                    g[k][j] = (float)((j * (k + 1)) % 97) * 1e-3f;
                held[k] = (sw__held){.g = g[k]};
                named[k] = &held[k];
            }
            sw_optim opt = {0};
            sw_optim_params op;
            if (o && (sw_optim_parse(&op, "sgd:momentum=0.9", NULL) ||
                      sw_optim_init(&opt, &op, len, NULL)))
                return 1;
            static double t[3][MAX_TRIALS];
            for (int r = 0; r < trials; r++)
                for (int i = 0; i < 3; i++)
                    t[i][r] = one_apply(teams[i], named, theta, sum, len, o ? &opt : NULL);
            double median[3];
            for (int i = 0; i < 3; i++) {
                qsort(t[i], (size_t)trials, sizeof t[i][0], by_double);
                median[i] = t[i][trials / 2];
            }
            printf("%-9s %5zuk floats: 1 thread %.3f ms; 2 threads %.3f ms (%.2fx); "
                   "4 threads %.3f ms (%.2fx)\n", o ? "momentum" : "sgd", len >> 10,
                   median[0] * 1e3, median[1] * 1e3, median[0] / median[1], median[2] * 1e3,
                   median[0] / median[2]);
            sw_optim_free(&opt);
            for (int k = 0; k < K; k++)
                free(g[k]);
            free(theta);
            free(sum);
        }
    for (int i = 0; i < 3; i++)
        sw_team_free(teams[i]);
    return 0;
}
