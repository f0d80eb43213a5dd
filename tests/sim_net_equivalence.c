/* One engine under two clocks, unsharded: every policy, a sparse model and the stateful
 * optimizers decide alike in the simulator and on the real server (sim_net_rig.h says how). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sim_net_rig.h"

static void every_policy(void **state)
{
    (void)state;
    const char *policies[][2] = {
        {"bsp", "asp"},
        {"asp", "bsp"},
        {"ssp:s=2", "dssp:lo=1,hi=4"},
        {"dssp:lo=1,hi=4", "ssp:s=1"},
        {"backup:b=1", "bsp"},
        {"backup:k=2,agg=sum", "asp"},
        {"dbw", "ssp:s=3"},
        {"bdbw", "asp"},
        {"sync:grads_to_wait=3", "backup:k=2"},
        {"ebsp:R=20", "ssp:s=2"},
        {"actions", "bsp"},
        {RLP, "ssp:s=2"},
        {RLSWITCH, "bsp"},
        {RLSWITCH_ONCE, "ssp:s=1"},
    };
    for (size_t i = 0; i < sizeof policies / sizeof *policies; i++) {
        scenario sc = {.policy = policies[i][0], .switch_to = policies[i][1],
                       .model = DENSE_MODEL, .data = DENSE_DATA, .lr = 0.05f};
        same_decisions(&sc);
    }
}

/* A sparse model: the worker pulls the weights its batch touches (one more round trip than
 * the simulator models, within the slack). */
static void a_sparse_model(void **state)
{
    (void)state;
    const char *policies[] = {"asp", "bsp", "ssp:s=1"};
    for (size_t i = 0; i < sizeof policies / sizeof *policies; i++) {
        scenario sc = {.policy = policies[i], .switch_to = "asp", .model = SPARSE_MODEL,
                       .data = SPARSE_DATA, .lr = 0.35f};
        same_decisions(&sc);
    }
}

/* Momentum and Adam: the server steps as the simulator; what reads loss or norms decides alike. */
static void stateful_optimizers(void **state)
{
    (void)state;
    const scenario dense[] = {
        {.policy = RLP, .switch_to = "asp", .optim = "sgd:momentum=0.9"},
        {.policy = RLSWITCH_ONCE, .switch_to = "asp", .optim = "sgd:momentum=0.9"},
        {.policy = RLSWITCH, .switch_to = "ssp:s=2", .optim = "sgd:momentum=0.5"},
        {.policy = "dbw", .switch_to = "bsp", .optim = "adam"},
        {.policy = "bsp:lr=0.02", .switch_to = "asp", .optim = "sgd:momentum=0.5,nesterov=1"},
    };
    for (size_t i = 0; i < sizeof dense / sizeof *dense; i++) {
        scenario sc = dense[i];
        sc.model = DENSE_MODEL, sc.data = DENSE_DATA, sc.lr = 0.01f;
        same_decisions(&sc);
    }
    scenario sparse = {.policy = "asp", .switch_to = "ssp:s=1", .model = SPARSE_MODEL,
                       .data = SPARSE_DATA, .lr = 0.05f, .optim = "sgd:momentum=0.9"};
    same_decisions(&sparse);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_policy),
        cmocka_unit_test(a_sparse_model),
        cmocka_unit_test(stateful_optimizers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
