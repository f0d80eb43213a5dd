/* The server's run limits on the in-process network, where one turn of the server can read
 * several workers' pushes together. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "syncwise/err.h"
#include "syncwise/net.h"
#include "syncwise/transport.h"

static double one_second(void *ctx, uint32_t worker)
{
    (void)ctx, (void)worker;
    return 1.0;
}

/* Workers whose every step takes the same time push at the same instant, so one turn of the
 * server reads all their pushes: --max-applies still stops the run at its count, not at the
 * burst's end. */
static void a_limit_holds_within_a_burst(void **state)
{
    (void)state;
    enum { MANY = 6, LIMIT = 4 };
    char err[SW_ERR_LEN];
    sw_net *net;
    sw_loop *loop;
    sw_inproc_params np = {.latency_s = 1e-7, .bandwidth = 1e12};
    if (sw_net_inproc_new(&net, &np, err) || sw_loop_new(&loop, net, err))
        fail_msg("%s", err);
    sw_server_params p = sw_server_default_params();
    p.bind = "server";
    p.ctl_bind = "operators";
    p.policy = "asp";
    p.model = "softmax";
    p.data = "synthetic:task=logistic,d=12,n=3000,test=300,val=300";
    p.lr = 0.05f;
    p.seed = 7;
    p.max_workers = MANY;
    p.wait_workers = MANY; /* all start together, and stay in step */
    p.heartbeat_timeout_s = 1e9;
    p.eval_every_s = 1e9;
    p.checkpoint_applies = 0;
    p.checkpoint_s = 0;
    p.max_applies = LIMIT;
    sw_server_result r;
    sw_server *s;
    if (sw_server_new(&s, net, &p, &r, err) || sw_loop_add(loop, sw_server_agent(s), err))
        fail_msg("the server: %s", err);
    sw_worker_params wp = sw_worker_default_params();
    wp.connect = "server";
    wp.server_timeout_s = 1e9;
    wp.step_s = one_second;
    sw_worker *workers[MANY];
    sw_worker_result results[MANY];
    for (int w = 0; w < MANY; w++)
        if (sw_worker_new(&workers[w], net, &wp, &results[w], err) ||
            sw_loop_add(loop, sw_worker_agent(workers[w]), err))
            fail_msg("a worker: %s", err);
    if (sw_loop_run(loop, NULL, 120.0, err))
        fail_msg("the loop: %s", err);
    for (int w = 0; w < MANY; w++)
        sw_worker_end(workers[w], NULL);
    if (sw_server_end(s, err))
        fail_msg("the server's run: %s", err);
    assert_int_equal(r.version - r.start_version, LIMIT); /* without the check per message: 6 */
    sw_loop_free(loop);
    sw_net_free(net);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_limit_holds_within_a_burst),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
