/* A configured shard's refusals of a second INIT, each naming its likely cause: its own run's
 * INIT for another place from another link of its server's process (--shards names it twice,
 * spelt two ways), the same from another process (the run's server started again with the
 * shards in another order), another run's. */
#define _POSIX_C_SOURCE 200809L
#include "shard_test_rig.h"

static const char run9_shard0[] = "run=9\nshard=0\nshards=2\nparams=10\nslots=2\nchunk=5\n"
                                  "first=0,1\nwd=0\n";
static const char run8_shard0[] = "run=8\nshard=0\nshards=2\nparams=10\nslots=2\nchunk=5\n"
                                  "first=0,1\nwd=0\n";

static void a_second_init_is_refused_with_its_likely_cause(void **state)
{
    rig *g = *state;
    /* configured as shard 1 of run 9 by link 1 of a server process (server_shards.c, dial) */
    static const char init[] = "run=9\nshard=1\nshards=2\nparams=10\nslots=2\nchunk=5\n"
                               "first=0,1\nwd=0\n";
    sw_sock *link1 = dial(g, "sw-server-00000000000000ab-1");
    send_raw(link1, SW_MSG_SHARD_INIT, SW_NO_WORKER, 0, 7, init, strlen(init));
    settle(g);
    assert_false(g->r.refused);
    static const struct {
        const char *route, *init, *why;
    } cases[] = {
        {"sw-server-00000000000000ab-0", run9_shard0,
         "this shard is shard 1 of this run already (the server's --shards names it twice"},
        {"sw-server-00000000000000cd-0", run9_shard0,
         "does the server's --shards list the shards in another order than the run's?"},
        {"sw-server-00000000000000ab", run9_shard0, "another order"}, /* no link number */
        {"sw-server-00000000000000cd-0", run8_shard0, "this shard serves another server's run"},
        {"sw-server-00000000000000ab-1", init, "this shard is configured already"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        sw_sock *from = strcmp(cases[i].route, "sw-server-00000000000000ab-1")
                            ? dial(g, cases[i].route)
                            : link1;
        send_raw(from, SW_MSG_SHARD_INIT, SW_NO_WORKER, 0, 7, cases[i].init,
                 strlen(cases[i].init));
        expect_refused(g, from, cases[i].why);
        if (from != link1)
            sw_sock_close(from);
    }
    assert_false(g->r.done); /* refusals end nothing: the run is link 1's */
    sw_sock_close(link1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(a_second_init_is_refused_with_its_likely_cause, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
