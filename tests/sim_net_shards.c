/* One engine under two clocks, sharded: the engine of a server whose θ is on shards decides as
 * the simulator's, and the shards hold the model an unsharded server would (sim_net_rig.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sim_net_rig.h"

static void on_shards(scenario sc)
{
    static const uint32_t few[] = {2, 3};
    on_shards_n(sc, few, 2);
}

/* A sharded server: its engine decides as the simulator's on the facts the shards report
 * (DBW's on the norms they report of each push and apply, which here come before the next
 * decision), and the shards hold the model an unsharded server would, dense or sparse (whose
 * workers pull and push at the shards their batches touch). */
static void sharded(void **state)
{
    (void)state;
    const scenario policies[] = {
        {.policy = "bsp", .switch_to = "asp"},
        {.policy = "asp", .switch_to = "bsp"},
        {.policy = "ssp:s=2", .switch_to = "dssp:lo=1,hi=4"},
        {.policy = "backup:b=1", .switch_to = "bsp"},
        {.policy = "backup:k=2,agg=sum", .switch_to = "asp"},
        {.policy = "sync:grads_to_wait=3", .switch_to = "backup:k=2"},
        {.policy = "ebsp:R=20", .switch_to = "ssp:s=2"},
        {.policy = "bsp:lr=0.02", .switch_to = "asp", .optim = "sgd:momentum=0.5,nesterov=1"},
        {.policy = "asp", .switch_to = "ssp:s=1", .optim = "adam"},
        {.policy = "dbw", .switch_to = "bdbw"},
        {.policy = "bdbw", .switch_to = "dbw", .optim = "adam"},
        {.policy = RLSWITCH_ONCE, .switch_to = "asp", .optim = "sgd:momentum=0.9"},
    };
    for (size_t i = 0; i < sizeof policies / sizeof *policies; i++) {
        scenario sc = policies[i];
        sc.model = DENSE_MODEL, sc.data = DENSE_DATA, sc.lr = sc.optim ? 0.01f : 0.05f;
        on_shards(sc);
    }
    const scenario sparse[] = {
        {.policy = "asp", .switch_to = "ssp:s=1"},
        {.policy = "bsp", .switch_to = "backup:b=1"},
        {.policy = "ssp:s=2", .switch_to = "asp", .optim = "sgd:momentum=0.9"},
    };
    for (size_t i = 0; i < sizeof sparse / sizeof *sparse; i++) {
        scenario sc = sparse[i];
        sc.model = SPARSE_MODEL, sc.data = SPARSE_DATA, sc.lr = 0.05f;
        on_shards(sc);
    }
}

/* More shards than one 64-bit word of a set names: pushes, applies and sparse steps name
 * their shards in two and three words, and the run still decides and trains as unsharded. */
static void many_shards(void **state)
{
    (void)state;
    static const uint32_t two_words[] = {70}, three_words[] = {130};
    scenario dense = {.policy = "asp", .switch_to = "backup:b=1", .model = "mlp:h=1,u=8",
                      .data = DENSE_DATA, .lr = 0.05f};
    on_shards_n(dense, two_words, 1); /* 122 parameters */
    scenario sparse = {.policy = "bsp", .switch_to = "ssp:s=1", .model = SPARSE_MODEL,
                       .data = SPARSE_DATA, .lr = 0.05f};
    on_shards_n(sparse, three_words, 1);
}

/* One shard holds the whole model: a worker's push is its gradient buffer lent as it lies,
 * and the shard's slice goes from where θ lies (src/net/lend.h), under plain SGD and under an
 * optimizer that keeps state, dense and sparse. */
static void one_shard(void **state)
{
    (void)state;
    static const uint32_t one[] = {1};
    const scenario dense[] = {
        {.policy = "asp", .switch_to = "bsp"},
        {.policy = "backup:b=1", .switch_to = "ssp:s=1", .optim = "adam"},
    };
    for (size_t i = 0; i < sizeof dense / sizeof *dense; i++) {
        scenario sc = dense[i];
        sc.model = DENSE_MODEL, sc.data = DENSE_DATA, sc.lr = sc.optim ? 0.01f : 0.05f;
        on_shards_n(sc, one, 1);
    }
    scenario sparse = {.policy = "ssp:s=2", .switch_to = "asp", .model = SPARSE_MODEL,
                       .data = SPARSE_DATA, .lr = 0.05f};
    on_shards_n(sparse, one, 1);
}

/* A model of 4 parameters on 2 shards: shard 0's slice of a gradient is the buffer's first two
 * floats, whose push (16 bytes of head, 8 of floats) must be copied, never lent as if it were
 * the whole buffer with a shorter head (a review found it lent so, and the run stalled). */
static void a_tiny_model(void **state)
{
    (void)state;
    static const uint32_t two[] = {2};
    scenario sc = {.policy = "asp", .switch_to = "bsp", .model = "softmax",
                   .data = "synthetic:task=lsq,d=3,n=3000,test=300,val=300", .lr = 0.05f};
    on_shards_n(sc, two, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sharded),
        cmocka_unit_test(one_shard),
        cmocka_unit_test(a_tiny_model),
        cmocka_unit_test(many_shards),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
