/* The simulator tests' fixture: a small synthetic classification task, loaded once per test
 * group (cmocka's setup and teardown), and a run of a small MLP on it. Included by test files
 * only, after cmocka. */
#ifndef SW_TESTUTIL_SIMDATA_H
#define SW_TESTUTIL_SIMDATA_H

#include "syncwise/sim.h"
#include "syncwise/task.h"

static sw_task_data data;

static int setup(void **state)
{
    (void)state;
    return sw_task_data_load(&data, "mlp", "synthetic:task=logistic,d=20,n=3000,test=500", 1,
                             NULL);
}

static int teardown(void **state)
{
    (void)state;
    sw_task_data_free(&data);
    return 0;
}

/* A run of `workers` on `cluster` under `policy`, evaluated every 10 s, to max_time. */
static inline sw_sim_config small_run(const char *policy, uint32_t workers, const char *cluster,
                                      double max_time)
{
    sw_sim_config c = sw_sim_default_config();
    c.policy = policy;
    c.workers = workers;
    c.cluster = cluster;
    c.data = &data;
    c.model = "mlp:h=1,u=16";
    c.lr = 0.05f;
    c.max_time = max_time;
    c.eval_every = 10;
    return c;
}

#endif
