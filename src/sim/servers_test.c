/* The simulator's model of a sharded server (servers.h): the shards' shares follow the chunk
 * table, each link queues its direction's transfers, the control plane decides one push at a
 * time; and whole runs on the model take the times those queues imply, keep every policy's
 * promise, and refuse keys that mean nothing. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "servers.h"
#include "syncwise/err.h"
#include "syncwise/shard.h"
#include "syncwise/sim.h"

static const sw__sim_ctl_costs no_cost = {0};

static void shares_follow_the_chunk_table(void **state)
{
    (void)state;
    const size_t sizes[] = {7, 1000, 262144 * 5 + 3, 25000000};
    const uint32_t shards[] = {1, 2, 3, 7, 60};
    const size_t chunks[] = {0, 1, 100, 4096}; /* floats: --net chunk= / 4, as server --chunk */
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        for (size_t k = 0; k < sizeof shards / sizeof *shards; k++)
            for (size_t c = 0; c < sizeof chunks / sizeof *chunks; c++) {
                if (shards[k] > sizes[i])
                    continue;
                sw__sim_servers v;
                sw_chunk_table t;
                assert_int_equal(
                    sw__sim_servers_init(&v, shards[k], sizes[i], chunks[c], 1, 0, no_cost, NULL),
                    0);
                assert_int_equal(sw_chunk_table_init(&t, sizes[i], chunks[c], shards[k], NULL), 0);
                double sum = 0;
                for (uint32_t j = 0; j < shards[k]; j++) {
                    double slice = (double)sw_chunk_slice_len(&t, j) / (double)sizes[i];
                    assert_true(fabs(v.share[j] - slice) < 1e-12);
                    sum += v.share[j];
                }
                assert_true(fabs(sum - 1) < 1e-9);
                sw__sim_servers_free(&v);
            }
    /* beyond a run's SW_SHARDS_MAX: 100 chunks over 128 shards cannot be 1 each, so the model
     * takes smaller chunks as the table would; the shares still cover the model once */
    sw__sim_servers v;
    assert_int_equal(sw__sim_servers_init(&v, 128, 25000000, 0, 1, 0, no_cost, NULL), 0);
    double sum = 0, most = 0;
    for (uint32_t j = 0; j < 128; j++) {
        sum += v.share[j];
        most = v.share[j] > most ? v.share[j] : most;
    }
    assert_true(fabs(sum - 1) < 1e-9 && most < 1.05 / 128);
    sw__sim_servers_free(&v);
    assert_int_equal(sw__sim_servers_init(&v, 8, 7, 0, 1, 0, no_cost, NULL), SW_EINVAL);
    /* more chunks than a run may have (32 bits): refused, where the count would wrap */
    assert_int_equal(sw__sim_servers_init(&v, 2, (size_t)1 << 33, 1, 1, 0, no_cost, NULL),
                     SW_EINVAL);
    assert_int_equal(sw__sim_servers_init(&v, 3, 0, 0, 1, 0, no_cost, NULL), 0); /* no size: even */
    assert_true(fabs(v.share[2] - 1.0 / 3) < 1e-12);
    sw__sim_servers_free(&v);
}

static void links_queue_each_direction(void **state)
{
    (void)state;
    sw__sim_servers v; /* 2 shards of 1000 floats, 100 bytes/s each, latency 0.5 s */
    assert_int_equal(sw__sim_servers_init(&v, 2, 1000, 0, 100, 0.5, no_cost, NULL), 0);
    /* 400 bytes: 200 on each link, 2 s; the second pull waits for the first */
    assert_true(fabs(sw__sim_servers_transfer(&v, 0, 400, SW_SIM_PULL) - 2.5) < 1e-12);
    assert_true(fabs(sw__sim_servers_transfer(&v, 1, 400, SW_SIM_PULL) - 4.5) < 1e-12);
    /* a push is not queued behind pulls: a link carries both ways at once */
    assert_true(fabs(sw__sim_servers_transfer(&v, 1, 400, SW_SIM_PUSH) - 3.5) < 1e-12);
    /* an idle link starts at once */
    assert_true(fabs(sw__sim_servers_transfer(&v, 10, 400, SW_SIM_PULL) - 12.5) < 1e-12);
    assert_true(fabs(sw__sim_servers_link_load(&v, 12) - 0.5) < 1e-12);
    assert_true(sw__sim_servers_link_load(&v, 1) == 1); /* work queued past the end */
    sw__sim_servers_free(&v);
}

static void the_control_plane_takes_the_pushes_that_waited_in_one_turn(void **state)
{
    (void)state;
    sw__sim_servers v; /* 0.5 s a decision, 0.25 s a turn per shard, 0.1 s a push per shard */
    sw__sim_ctl_costs costs = {.decide = 0.5, .fanout = 0.25, .entry = 0.1};
    assert_int_equal(sw__sim_servers_init(&v, 2, 1000, 0, 100, 0, costs, NULL), 0);
    assert_true(fabs(sw__sim_servers_decide(&v, 0) - 1.2) < 1e-12);   /* a turn of its own */
    assert_true(fabs(sw__sim_servers_decide(&v, 0) - 2.4) < 1e-12);   /* came as it began */
    assert_true(fabs(sw__sim_servers_decide(&v, 0.5) - 3.1) < 1e-12); /* joins that turn */
    assert_true(fabs(sw__sim_servers_decide(&v, 1.1) - 3.8) < 1e-12); /* and so does this */
    assert_true(fabs(sw__sim_servers_decide(&v, 1.2) - 5.0) < 1e-12); /* it began: the next */
    assert_true(fabs(sw__sim_servers_decide(&v, 10) - 11.2) < 1e-12); /* idle again */
    assert_true(fabs(sw__sim_servers_ctl_load(&v, 20) - 6.2 / 20) < 1e-12);
    sw__sim_servers_free(&v);
}

static sw_sim_config timing(const char *policy, const char *net, double max_time)
{
    sw_sim_config c = sw_sim_default_config();
    c.policy = policy;
    c.workers = 4;
    c.cluster = "const:1";
    c.data = NULL;
    c.net = net;
    c.max_time = max_time;
    return c;
}

/* BSP on 4 workers, 2 shards of one chunk each (1 MiB a slice at 2 MiB/s: q = 0.5 s), workers' own
 * links too fast to matter, no latency: the pulls end at 0.5, 1, 1.5, 2 s, each push follows its
 * step of 1 s without waiting (the links carry one at a time and the pulls came 0.5 s apart),
 * the last arrives at (4 + 1) q + 1 = 3.5 s. With a control plane of 0.3 s a push, the last
 * push's facts wait for nothing either (they come 0.5 s apart): 3.8 s a round. */
static void a_bsp_round_takes_what_the_queues_imply(void **state)
{
    (void)state;
    sw_sim_result r;
    char err[SW_ERR_LEN];
    const char *net = "bw=1e15,lat=0,params=524288,shards=2,server_bw=2097152";
    sw_sim_config c = timing("bsp", net, 36);
    if (sw_sim_run(&c, &r, err))
        fail_msg("%s", err);
    assert_int_equal(r.stats.applies, 10); /* at 3.5, 7, ..., 35 */
    assert_int_equal(r.shards, 2);
    /* each link pulls 2 s a round: 11 rounds of pulls (the last queued at 35) of 36 s */
    assert_true(fabs(r.link_load - 22.0 / 36) < 1e-9);
    sw_sim_result_free(&r);
    c.max_time = 34.9;
    assert_int_equal(sw_sim_run(&c, &r, err), 0);
    assert_int_equal(r.stats.applies, 9);
    sw_sim_result_free(&r);
    c.net = "bw=1e15,lat=0,params=524288,shards=2,server_bw=2097152,decide=0.1,fanout=0.1";
    c.max_time = 38.5;
    assert_int_equal(sw_sim_run(&c, &r, err), 0);
    assert_int_equal(r.stats.applies, 10); /* at 3.8, 7.6, ..., 38 */
    sw_sim_result_free(&r);
    c.max_time = 37.9;
    assert_int_equal(sw_sim_run(&c, &r, err), 0);
    assert_int_equal(r.stats.applies, 9);
    sw_sim_result_free(&r);
}

/* ASP on 8 fast workers and a small model: the control plane, at 0.1 s a push, is what bounds
 * the run, at 10 pushes a second, and says it is busy all the time. */
/* The same with a control plane whose cost is all in its frames (0.1 s a turn per shard, 1 ms a
 * push): one push a turn would make 2.5 a second; the pushes that waited share a turn (here a
 * turn of one, the first back, and one of the seven behind it: about 10 a second). */
static void pushes_that_wait_share_a_turn(void **state)
{
    (void)state;
    sw_sim_result r;
    sw_sim_config c =
        timing("asp", "bw=1e9,lat=1e-5,params=1000,shards=4,decide=1e-3,fanout=0.1", 50);
    c.workers = 8;
    c.cluster = "const:0.01";
    assert_int_equal(sw_sim_run(&c, &r, NULL), 0);
    assert_true(r.stats.pushes > 3 * 50 / 0.401);
    assert_true(r.ctl_load > 0.99);
    sw_sim_result_free(&r);
}

static void a_slow_control_plane_bounds_the_pushes(void **state)
{
    (void)state;
    sw_sim_result r;
    sw_sim_config c = timing("asp", "bw=1e9,lat=1e-5,params=1000,shards=4,decide=0.1", 50);
    c.workers = 8;
    c.cluster = "const:0.01";
    assert_int_equal(sw_sim_run(&c, &r, NULL), 0);
    assert_true(r.stats.pushes >= 495 && r.stats.pushes <= 500);
    assert_true(r.ctl_load > 0.99);
    assert_true(r.link_load < 0.01);
    sw_sim_result_free(&r);
}

/* Every kind of policy keeps its promise (the run checks it on every event) and learns on a
 * model whose transfers queue at 3 shards, with a crash and a join on the way. */
static void policies_keep_their_promises_on_shards(void **state)
{
    (void)state;
    sw_task_data data;
    char err[SW_ERR_LEN];
    assert_int_equal(
        sw_task_data_load(&data, "mlp", "synthetic:task=logistic,d=20,n=3000,test=500", 1, err), 0);
    const char *policies[] = {
        "asp",      "bsp", "ssp:s=2", "dssp:lo=1,hi=4", "backup:b=1", "dbw", "sync:grads_to_wait=3",
        "ebsp:R=20"};
    for (size_t i = 0; i < sizeof policies / sizeof *policies; i++) {
        sw_sim_config c = timing(policies[i], "bw=1e5,lat=1e-3,shards=3,decide=0.05", 150);
        c.workers = 6;
        c.cluster = "shexp:1,base=1";
        c.data = &data;
        c.model = "mlp:h=1,u=16";
        c.lr = 0.05f;
        c.eval_every = 10;
        c.events = "crash:w=2,t=40;join:t=70";
        sw_sim_result r;
        if (sw_sim_run(&c, &r, err))
            fail_msg("%s: %s", policies[i], err);
        assert_true(r.stats.applies > 20);
        assert_true(r.final_acc > 0.7);
        assert_true(r.link_load > 0 && r.ctl_load > 0);
        sw_sim_result_free(&r);
    }
    sw_task_data_free(&data);
}

static void keys_that_mean_nothing_are_refused(void **state)
{
    (void)state;
    sw_sim_result r;
    char err[SW_ERR_LEN];
    const char *bad[] = {"decide=1",     "server_bw=1e9",       "fanout=1e-5",     "shards=-1",
                         "shards=70000", "params=10,shards=11", "shards=2,speed=3"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        sw_sim_config c = timing("asp", bad[i], 10);
        int rc = sw_sim_run(&c, &r, err);
        if (rc == 0)
            fail_msg("--net %s was taken", bad[i]);
    }
    sw_task_data data; /* a model has its own size */
    assert_int_equal(
        sw_task_data_load(&data, "mlp", "synthetic:task=logistic,d=20,n=300,test=50", 1, err), 0);
    sw_sim_config c = timing("asp", "params=1000", 10);
    c.data = &data;
    c.model = "mlp:h=1,u=16";
    assert_int_equal(sw_sim_run(&c, &r, err), SW_EINVAL);
    assert_non_null(strstr(err, "params="));
    c.net = "params=0,shards=2"; /* said, if only as 0 (it was taken then, and meant nothing) */
    assert_int_equal(sw_sim_run(&c, &r, err), SW_EINVAL);
    assert_non_null(strstr(err, "params="));
    sw_task_data_free(&data);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(shares_follow_the_chunk_table),
        cmocka_unit_test(links_queue_each_direction),
        cmocka_unit_test(the_control_plane_takes_the_pushes_that_waited_in_one_turn),
        cmocka_unit_test(a_bsp_round_takes_what_the_queues_imply),
        cmocka_unit_test(a_slow_control_plane_bounds_the_pushes),
        cmocka_unit_test(pushes_that_wait_share_a_turn),
        cmocka_unit_test(policies_keep_their_promises_on_shards),
        cmocka_unit_test(keys_that_mean_nothing_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
