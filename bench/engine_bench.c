/* Engine overhead and scale.
 *
 * 1. With the gradient computation switched off (no model), how many pushes per real second the
 *    simulator handles under bsp, asp and ssp with 100 workers, beside a baseline run of the
 *    same driver loop with the cheapest policy (asp) so the policy's own cost shows as a ratio.
 *    The goal is 1,000,000 pushes per second for each.
 * 2. 1,000 simulated workers training the synthetic model (least squares, d = 100) under asp,
 *    bsp and ssp: pushes per second with real gradients.
 */
#include <stdio.h>
#include <stdlib.h>

#include "bench_args.h"
#include "syncwise/sim.h"

static double pushes_per_s(const char *policy, uint32_t workers, const sw_task_data *data,
                           uint64_t pushes)
{
    sw_sim_config c = sw_sim_default_config();
    c.policy = policy;
    c.workers = workers;
    c.cluster = "shexp:1";
    c.data = data;
    c.model = "softmax";
    c.max_pushes = pushes;
    c.eval_every = 1e12; /* one evaluation at the start only: this measures the run itself */
    sw_sim_result r;
    char err[256];
    if (sw_sim_run(&c, &r, err)) {
        fprintf(stderr, "bench: %s\n", err);
        exit(1);
    }
    double rate = (double)r.stats.pushes / r.wall_s;
    sw_sim_result_free(&r);
    return rate;
}

int main(int argc, char **argv)
{
    bench_usage(argc, argv, 1,
                "[PUSHES]\n"
                "The engine's pushes per second without gradients (100 workers, each policy\n"
                "beside asp), then 1000 simulated workers with real gradients.\n"
                "  PUSHES  pushes a run of the first part (default 3000000)\n");
    uint64_t n = argc > 1 ? (uint64_t)bench_long(argv[0], "PUSHES", argv[1], 1000, 1L << 40)
                          : 3000000;
    const char *policies[] = {"asp", "bsp", "ssp:s=3", "ssp:s=0", "sync:grads_to_wait=10"};
    printf("engine overhead: 100 workers, no gradients, %llu pushes per run\n",
           (unsigned long long)n);
    printf("  %-22s %14s %12s %12s\n", "policy", "pushes/s", "vs asp", "vs 1M goal");
    double base = 0;
    for (int i = 0; i < 5; i++) {
        double best = 0;
        for (int rep = 0; rep < 3; rep++) { /* best of three: the machine is shared */
            double r = pushes_per_s(policies[i], 100, NULL, n);
            best = r > best ? r : best;
        }
        if (i == 0)
            base = best;
        printf("  %-22s %14.0f %11.2fx %11.2fx\n", policies[i], best, best / base, best / 1e6);
        fflush(stdout);
    }
    sw_task_data data;
    char err[256];
    if (sw_task_data_load(&data, "softmax", "synthetic:task=lsq,d=100,n=100000,test=1000,val=1000",
                          1, err)) {
        fprintf(stderr, "bench: %s\n", err);
        return 1;
    }
    printf("\nscale: 1000 workers, synthetic least squares d=100, batch 16, real gradients\n");
    const char *scale[] = {"asp", "bsp", "ssp:s=3"};
    for (int i = 0; i < 3; i++)
        printf("  %-22s %14.0f pushes/s\n", scale[i], pushes_per_s(scale[i], 1000, &data, 500000));
    sw_task_data_free(&data);
    return 0;
}
