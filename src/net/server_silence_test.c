/* A worker's or a shard's silence on the in-process network, judged only while the server
 * listened: a server that stood still (SIGSTOP, a frozen machine) takes no live worker or shard
 * for dead when it goes on, wherever in its turn it stopped; a worker that stopped answering
 * is still dropped. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "syncwise/err.h"
#include "syncwise/net.h"
#include "syncwise/shard.h"
#include "syncwise/transport.h"

enum { WORKERS = 3, APPLIES = 150, SHARDS = 2 };

static double a_tenth(void *ctx, uint32_t worker)
{
    (void)ctx, (void)worker;
    return 0.1;
}

typedef struct rig {
    sw_net *net;
    sw_loop *loop;
    sw_server_params p;
    sw_server *server;
    sw_server_result r;
    sw_worker_params wp;
    sw_worker *workers[WORKERS];
    sw_worker_result wr[WORKERS];
    sw_shard *shards[SHARDS]; /* a sharded run's, or NULL */
    sw_shard_params shard_p[SHARDS];
    sw_shard_result shard_r[SHARDS];
} rig;

/* A run of WORKERS in-process workers under `policy`, whose every step takes a tenth of a
 * second, judged silent after a second without a word (in process, workers send no heartbeats:
 * their pushes are what the server hears). Sharded, on two shards each judged silent after a
 * second (the server pings them every quarter of a second), and the workers never. */
static void start(rig *g, const char *policy, bool sharded)
{
    char err[SW_ERR_LEN];
    *g = (rig){0};
    sw_inproc_params np = {.latency_s = 1e-4, .bandwidth = 1e9};
    if (sw_net_inproc_new(&g->net, &np, err) || sw_loop_new(&g->loop, g->net, err))
        fail_msg("%s", err);
    g->p = sw_server_default_params();
    g->p.bind = "server";
    g->p.ctl_bind = "operators";
    g->p.policy = policy;
    g->p.model = "softmax";
    g->p.data = "synthetic:task=logistic,d=12,n=3000,test=300,val=300";
    g->p.lr = 0.05f;
    g->p.seed = 7;
    g->p.wait_workers = WORKERS;
    g->p.heartbeat_timeout_s = 1;
    g->p.eval_every_s = 1e9;
    g->p.checkpoint_applies = 0;
    g->p.checkpoint_s = 0;
    g->p.max_applies = APPLIES;
    for (int j = 0; sharded && j < SHARDS; j++) {
        g->shard_p[j] = (sw_shard_params){.bind = j ? "shard1" : "shard0"};
        if (sw_shard_new(&g->shards[j], g->net, &g->shard_p[j], &g->shard_r[j], err) ||
            sw_loop_add(g->loop, sw_shard_agent(g->shards[j]), err))
            fail_msg("shard %d: %s", j, err);
        g->p.shards = "shard0,shard1";
        g->p.shard_wait_s = 1;
        g->p.heartbeat_timeout_s = 1e9;
    }
    if (sw_server_new(&g->server, g->net, &g->p, &g->r, err) ||
        sw_loop_add(g->loop, sw_server_agent(g->server), err))
        fail_msg("the server: %s", err);
    g->wp = sw_worker_default_params();
    g->wp.connect = "server";
    g->wp.server_timeout_s = 1e9;
    g->wp.step_s = a_tenth;
    for (int w = 0; w < WORKERS; w++)
        if (sw_worker_new(&g->workers[w], g->net, &g->wp, &g->wr[w], err) ||
            sw_loop_add(g->loop, sw_worker_agent(g->workers[w]), err))
            fail_msg("a worker: %s", err);
}

static void run_until(rig *g, double t)
{
    char err[SW_ERR_LEN];
    if (sw_loop_run(g->loop, NULL, t, err))
        fail_msg("the loop: %s", err);
}

static void end(rig *g)
{
    char err[SW_ERR_LEN];
    for (int w = 0; w < WORKERS; w++)
        if (g->workers[w])
            sw_worker_end(g->workers[w], NULL);
    if (sw_server_end(g->server, err))
        fail_msg("the server's run: %s", err);
    for (int j = 0; j < SHARDS; j++)
        if (g->shards[j])
            sw_shard_end(g->shards[j]);
    sw_loop_free(g->loop);
    sw_net_free(g->net);
}

/* The server stands still for 2.5 s as it reads one frame, at 12 points of a run, each in a
 * different place of its turns: every worker (and every shard) stays. The server used to judge
 * the others' silence after its reads, 2.5 s of its own stillness counted as theirs, and drop
 * the workers, or end a sharded run for a silent shard. */
static void stopped_as_it_read(bool sharded)
{
    rig g;
    start(&g, "bsp", sharded);
    run_until(&g, 600);
    double unstalled = sw_net_now(g.net); /* in process, a run is the same every time */
    end(&g);
    for (unsigned at = 20; at < 20 + 12 * 7; at += 7) {
        start(&g, "bsp", sharded);
        run_until(&g, 0.5);
        if (sharded) /* as it reads one shard's word (the other's old), or a worker reads */
            sw_net_inproc_stall(g.net, "shard1", true, at, 2.5);
        else
            sw_net_inproc_stall(g.net, "server", false, at, 2.5);
        run_until(&g, 600);
        double stalled = sw_net_now(g.net);
        end(&g); /* fails the test if the server's run failed (a shard taken for dead) */
        /* it stood still: as long as the stall unsharded, most of it sharded (a worker's
         * read of its slice may stall the world while the others wait anyway) */
        assert_true(stalled >= unstalled + (sharded ? 2 : 2.4));
        if (g.r.crashes != 0)
            fail_msg("stalled at frame %u: %llu workers dropped", at,
                     (unsigned long long)g.r.crashes);
        assert_int_equal(g.r.version, APPLIES);
        assert_int_equal(g.r.joins, WORKERS);
        for (int j = 0; sharded && j < SHARDS; j++)
            assert_int_equal(g.shard_r[j].version, APPLIES);
    }
}

static void a_server_stopped_as_it_read_drops_no_one(void **state)
{
    (void)state;
    stopped_as_it_read(false);
}

static void a_sharded_server_stopped_as_it_read_keeps_its_shard(void **state)
{
    (void)state;
    stopped_as_it_read(true);
}

/* A worker that stops answering (no more turns: SIGSTOP) is dropped after the timeout, the
 * others going on (asp: held at a barrier, they too would say nothing here). */
static void a_worker_stopped_is_dropped(void **state)
{
    (void)state;
    rig g;
    start(&g, "asp", false);
    run_until(&g, 1);
    sw_loop_remove(g.loop, sw_worker_agent(g.workers[0]));
    run_until(&g, 600);
    end(&g);
    assert_int_equal(g.r.crashes, 1);
    assert_int_equal(g.r.version, APPLIES);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_server_stopped_as_it_read_drops_no_one),
        cmocka_unit_test(a_sharded_server_stopped_as_it_read_keeps_its_shard),
        cmocka_unit_test(a_worker_stopped_is_dropped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
