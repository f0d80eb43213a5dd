/* The simulator tests' run: six straggling workers on the shared fixture's task
 * (testutil/simdata.h) under a given policy. */
#ifndef SW_SIM_TEST_BASE_H
#define SW_SIM_TEST_BASE_H

#include "testutil/simdata.h"

static sw_sim_config base(const char *policy)
{
    return small_run(policy, 6, "shexp:1,base=1", 150);
}

#endif
