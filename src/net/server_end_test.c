/* The end of a run on the in-process network: the server, stopped by its own limit, concludes
 * in its turn, tells every worker (and every shard) that the run is over, waits for the
 * workers' goodbyes, and then every agent of the loop is done: the loop empties long before
 * its deadline, each worker heard the end, and each shard ended at the server's version. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "syncwise/err.h"
#include "syncwise/net.h"
#include "syncwise/shard.h"
#include "syncwise/transport.h"

enum { WORKERS = 3, LIMIT = 40, SHARDS_MAX = 2 };
#define DEADLINE_S 600.0

static double tenth_second(void *ctx, uint32_t worker)
{
    (void)ctx;
    return 0.1 + 0.05 * worker; /* unequal, so that pushes are in flight at the end */
}

typedef struct rig {
    sw_net *net;
    sw_loop *loop;
    sw_shard *shards[SHARDS_MAX];
    sw_shard_params shard_p[SHARDS_MAX];
    sw_shard_result shard_r[SHARDS_MAX];
    char list[64];
} rig;

static void start_shards(rig *g, uint32_t n)
{
    char err[SW_ERR_LEN];
    for (uint32_t j = 0; j < n; j++) {
        static char eps[SHARDS_MAX][16];
        snprintf(eps[j], sizeof eps[j], "shard%u", j);
        snprintf(g->list + strlen(g->list), sizeof g->list - strlen(g->list), j ? ",%s" : "%s",
                 eps[j]);
        g->shard_p[j] = (sw_shard_params){.bind = eps[j]};
        if (sw_shard_new(&g->shards[j], g->net, &g->shard_p[j], &g->shard_r[j], err) ||
            sw_loop_add(g->loop, sw_shard_agent(g->shards[j]), err))
            fail_msg("shard %u: %s", j, err);
    }
}

/* The run's end lost on its way to shard 1: its link cut as the server concludes (what was
 * queued, the end among it, is lost), then mended 0.3 s later. Each link takes 50 ms, so that
 * the cut comes between the end's sending and its arrival. */
static void lose_the_end_of_shard_1(rig *g, const sw_server_result *r)
{
    char err[SW_ERR_LEN];
    double t = 0;
    while (r->elapsed_s == 0 && t < DEADLINE_S / 2)
        if (sw_loop_run(g->loop, NULL, t += 0.005, err))
            fail_msg("the loop: %s", err);
    assert_true(r->elapsed_s > 0);
    assert_false(g->shard_r[1].done);
    sw_sock *link = sw_shard_agent(g->shards[1])->socks[0];
    sw_net_inproc_cut(link);
    if (sw_loop_run(g->loop, NULL, t + 0.3, err))
        fail_msg("the loop: %s", err);
    sw_net_inproc_mend(link);
}

/* A run to LIMIT applies on `shards` shards (0: the server holds θ), to its end; lose_end:
 * shard 1's end is lost on its way. */
static void run_to_its_end(uint32_t shards, bool lose_end)
{
    char err[SW_ERR_LEN];
    rig g = {0};
    sw_inproc_params np = {.latency_s = lose_end ? 0.05 : 1e-4, .bandwidth = 1e9};
    if (sw_net_inproc_new(&g.net, &np, err) || sw_loop_new(&g.loop, g.net, err))
        fail_msg("%s", err);
    start_shards(&g, shards);
    sw_server_params p = sw_server_default_params();
    p.bind = "server";
    p.ctl_bind = "operators";
    p.policy = "asp";
    p.model = "softmax";
    p.data = "synthetic:task=logistic,d=12,n=3000,test=300,val=300";
    p.seed = 7;
    p.wait_workers = WORKERS;
    p.eval_every_s = 1e9;
    p.checkpoint_applies = 0;
    p.checkpoint_s = 0;
    p.max_applies = LIMIT;
    p.shards = shards ? g.list : NULL;
    sw_server_result r;
    sw_server *s;
    if (sw_server_new(&s, g.net, &p, &r, err) || sw_loop_add(g.loop, sw_server_agent(s), err))
        fail_msg("the server: %s", err);
    sw_worker_params wp = sw_worker_default_params();
    wp.connect = "server";
    wp.step_s = tenth_second;
    sw_worker *workers[WORKERS];
    sw_worker_result results[WORKERS];
    for (int w = 0; w < WORKERS; w++)
        if (sw_worker_new(&workers[w], g.net, &wp, &results[w], err) ||
            sw_loop_add(g.loop, sw_worker_agent(workers[w]), err))
            fail_msg("a worker: %s", err);
    if (lose_end)
        lose_the_end_of_shard_1(&g, &r);
    if (sw_loop_run(g.loop, NULL, DEADLINE_S, err))
        fail_msg("the loop: %s", err);
    /* every agent finished: the server, each worker told DONE, each shard told the run is over
     * (a shard waits for its server with no limit here: one whose end was lost never ends) */
    assert_true(sw_net_now(g.net) < DEADLINE_S / 2);
    for (int w = 0; w < WORKERS; w++) {
        assert_true(results[w].done);
        assert_int_equal(sw_worker_end(workers[w], err), 0);
    }
    if (sw_server_end(s, err))
        fail_msg("the server's run: %s", err);
    assert_int_equal(r.version - r.start_version, LIMIT);
    for (uint32_t j = 0; j < shards; j++) {
        assert_true(g.shard_r[j].done);
        assert_string_equal(g.shard_r[j].failed, "");
        assert_int_equal(g.shard_r[j].version, r.version);
        sw_shard_end(g.shards[j]);
    }
    sw_loop_free(g.loop);
    sw_net_free(g.net);
}

static void an_unsharded_run_ends_with_every_worker(void **state)
{
    (void)state;
    run_to_its_end(0, false);
}

static void a_sharded_run_ends_with_every_worker_and_shard(void **state)
{
    (void)state;
    run_to_its_end(2, false);
}

/* The server tells the end again until each shard answers it: a link that broke at the end
 * lost it, and that shard waited out its --server-timeout, then failed a run that ended well. */
static void a_shard_whose_end_was_lost_hears_it_again(void **state)
{
    (void)state;
    run_to_its_end(2, true);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(an_unsharded_run_ends_with_every_worker),
        cmocka_unit_test(a_sharded_run_ends_with_every_worker_and_shard),
        cmocka_unit_test(a_shard_whose_end_was_lost_hears_it_again),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
