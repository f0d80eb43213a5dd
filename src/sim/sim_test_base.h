/* The simulator tests' fixture: a small synthetic classification task, loaded once per test
 * group, and a run of six straggling workers on it under a given policy. */
#ifndef SW_SIM_TEST_BASE_H
#define SW_SIM_TEST_BASE_H

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

static sw_sim_config base(const char *policy)
{
    sw_sim_config c = sw_sim_default_config();
    c.policy = policy;
    c.workers = 6;
    c.cluster = "shexp:1,base=1";
    c.data = &data;
    c.model = "mlp:h=1,u=16";
    c.lr = 0.05f;
    c.max_time = 150;
    c.eval_every = 10;
    return c;
}

#endif
