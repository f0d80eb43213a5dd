/* A sharded worker's pulls across a shard's restore: a step never reads slices from both sides
 * of one. A test server and two test shards on the in-process network drive a real worker:
 * the shards answer its pulls with slices of chosen restore marks (SHARD_SLICE), and the
 * worker must push only once every slice of the step carries the same mark. And the slices
 * the server orders sent (RELEASE with SW_FLAG_SENT): read whether they come before the
 * release or after, pulled when they do not come. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "syncwise/bytes.h"
#include "syncwise/net.h"
#include "syncwise/proto.h"
#include "syncwise/transport.h"

/* A softmax on 4 features and 2 classes: 10 parameters, 5 on each shard. */
#define DATA "synthetic:task=logistic,d=4,n=40,test=10,val=10"
enum { SLICE = 5 };

typedef struct rig {
    sw_net *net;
    sw_loop *loop;
    sw_worker *worker;
    sw_worker_params p;
    sw_worker_result r;
    sw_sock *server, *shard[2];
    uint8_t route[SW_ROUTE_MAX]; /* the worker's, at the server */
    size_t route_len;
    uint8_t shard_route[2][SW_ROUTE_MAX];
    size_t shard_route_len[2];
} rig;

static void settle(rig *g, double seconds)
{
    assert_int_equal(sw_loop_run(g->loop, NULL, sw_net_now(g->net) + seconds, NULL), 0);
}

static void send_on(sw_sock *s, const uint8_t *route, size_t route_len, sw_msg_type type,
                    uint32_t flags, uint64_t version, const void *payload, size_t len)
{
    sw_frame *f = sw_frame_new(sw_msg_size(len));
    sw_msg m = {.type = type, .worker = 0, .flags = flags, .version = version,
                .payload = payload, .payload_len = len};
    sw_msg_encode(&m, sw_frame_data(f));
    sw_send(s, route, route_len, f);
}

/* The next message on s of `type` (others, such as heartbeats, passed over and lost): true,
 * with the sender's route kept in route/len when they are not NULL. */
static bool next_of(sw_sock *s, sw_msg_type type, uint8_t *route, size_t *len)
{
    sw_delivery d;
    while (sw_recv(s, &d) == 0) {
        sw_msg m;
        bool match = d.frame &&
                     sw_msg_decode(sw_frame_data(d.frame), sw_frame_size(d.frame), 1 << 20, &m,
                                   NULL) == 0 &&
                     m.type == type;
        if (match && route) {
            memcpy(route, d.route, d.route_len);
            *len = d.route_len;
        }
        sw_frame_unref(d.frame);
        if (match)
            return true;
    }
    return false;
}

static int setup(void **state)
{
    static rig g;
    memset(&g, 0, sizeof g);
    assert_int_equal(sw_net_inproc_new(&g.net, &(sw_inproc_params){.latency_s = 1e-4}, NULL), 0);
    const char *names[] = {"srv", "s0", "s1"};
    sw_sock **socks[] = {&g.server, &g.shard[0], &g.shard[1]};
    for (int i = 0; i < 3; i++)
        assert_int_equal(sw_listen(g.net, socks[i], &(sw_listen_params){.endpoint = names[i]},
                                   NULL), 0);
    g.p = sw_worker_default_params();
    g.p.connect = "srv";
    assert_int_equal(sw_worker_new(&g.worker, g.net, &g.p, &g.r, NULL), 0);
    assert_int_equal(sw_loop_new(&g.loop, g.net, NULL), 0);
    assert_int_equal(sw_loop_add(g.loop, sw_worker_agent(g.worker), NULL), 0);
    settle(&g, 0.01);
    assert_true(next_of(g.server, SW_MSG_JOIN, g.route, &g.route_len));
    const char *welcome = "worker=0\nslots=1\ndata=" DATA "\nmodel=softmax\nbatch=4\nlr=0.1\n"
                          "wd=0\nseed=1\nparams=10\nbatch_mode=shard\ntoken=77\nchecksum=on\n"
                          "shards=s0,s1\nchunk=5\nfirst=0,1\n";
    send_on(g.server, g.route, g.route_len, SW_MSG_WELCOME, 0, 0, welcome, strlen(welcome));
    *state = &g;
    return 0;
}

static int teardown(void **state)
{
    rig *g = *state;
    sw_worker_end(g->worker, NULL);
    sw_loop_free(g->loop);
    sw_sock_close(g->server);
    sw_sock_close(g->shard[0]);
    sw_sock_close(g->shard[1]);
    sw_net_free(g->net);
    return 0;
}

/* The server releases the worker at `version`: it pulls from both shards. */
static void release(rig *g, uint64_t version)
{
    send_on(g->server, g->route, g->route_len, SW_MSG_RELEASE, SW_FLAG_MODEL, version, NULL, 0);
    settle(g, 0.01);
    for (int j = 0; j < 2; j++)
        assert_true(next_of(g->shard[j], SW_MSG_SHARD_PULL, g->shard_route[j],
                            &g->shard_route_len[j]));
}

/* Shard j's slice at `version`, marked by the restore at `mark`. */
static void answer(rig *g, int j, uint64_t version, uint64_t mark)
{
    uint8_t pay[8 + 4 * SLICE];
    sw_put_u64(pay, mark);
    for (int i = 0; i < SLICE; i++)
        sw_put_f32(pay + 8 + 4 * i, 0.01f * (float)(i + 1));
    send_on(g->shard[j], g->shard_route[j], g->shard_route_len[j], SW_MSG_SHARD_SLICE, 0,
            version, pay, sizeof pay);
    settle(g, 0.01);
}

static bool asked_again(rig *g, int j)
{
    return next_of(g->shard[j], SW_MSG_SHARD_PULL, g->shard_route[j], &g->shard_route_len[j]);
}

static bool pushed(rig *g)
{
    return next_of(g->shard[0], SW_MSG_SHARD_PUSH, NULL, NULL) &&
           next_of(g->shard[1], SW_MSG_SHARD_PUSH, NULL, NULL);
}

static void a_newer_mark_sends_the_older_slices_back(void **state)
{
    rig *g = *state;
    release(g, 3);
    answer(g, 0, 3, 0);
    answer(g, 1, 3, 7); /* shard 1 was restored at version 7 meanwhile: shard 0's is older */
    assert_true(asked_again(g, 0));
    assert_false(asked_again(g, 1));
    assert_false(pushed(g));
    answer(g, 0, 3, 7);
    assert_true(pushed(g));
    assert_int_equal(g->r.steps, 1);
}

static void an_older_mark_is_asked_again(void **state)
{
    rig *g = *state;
    release(g, 3);
    answer(g, 0, 3, 7);
    answer(g, 1, 3, 0); /* shard 1 has not taken the restore shard 0 has */
    assert_false(asked_again(g, 0)); /* shard 0's slice stands */
    assert_false(asked_again(g, 1) || pushed(g));
    settle(g, 1.1);                  /* a pull unanswered for a second is asked again */
    assert_true(asked_again(g, 1));
    answer(g, 1, 3, 7);
    assert_true(pushed(g));
}

static void equal_marks_make_a_step(void **state)
{
    rig *g = *state;
    release(g, 3);
    answer(g, 0, 3, 7);
    answer(g, 1, 4, 7); /* a newer version is fine: the step's version is the lowest */
    assert_true(pushed(g));
    assert_false(asked_again(g, 0) || asked_again(g, 1));
}

/* A first step, pulled, after which the server orders slices sent: the shards know the
 * worker's connections. */
static void first_step(rig *g)
{
    release(g, 3);
    answer(g, 0, 3, 0);
    answer(g, 1, 3, 0);
    assert_true(pushed(g));
}

static void released_with_sent(rig *g, uint64_t version)
{
    send_on(g->server, g->route, g->route_len, SW_MSG_RELEASE, SW_FLAG_MODEL | SW_FLAG_SENT,
            version, NULL, 0);
    settle(g, 0.01);
}

/* A slice the server ordered sent may overtake its RELEASE: it is kept and read then, and
 * the worker pulls nothing. One older than the release (an answer to a pull sent again) is
 * passed over. */
static void slices_sent_before_their_release_are_read(void **state)
{
    rig *g = *state;
    first_step(g);
    answer(g, 1, 3, 0); /* late and stale */
    answer(g, 0, 4, 0); /* before the release it belongs to */
    assert_false(pushed(g));
    released_with_sent(g, 4);
    assert_false(asked_again(g, 0) || asked_again(g, 1));
    assert_false(pushed(g)); /* shard 1's is not in: the stale one does not count */
    answer(g, 1, 4, 0);
    assert_true(pushed(g));
    assert_int_equal(g->r.steps, 2);
    assert_false(asked_again(g, 0) || asked_again(g, 1));
}

/* A slice ordered sent that does not come within a second is pulled. */
static void sent_slices_that_do_not_come_are_pulled(void **state)
{
    rig *g = *state;
    first_step(g);
    released_with_sent(g, 4);
    answer(g, 0, 4, 0);
    assert_false(asked_again(g, 0) || asked_again(g, 1) || pushed(g));
    settle(g, 1.1);
    assert_false(asked_again(g, 0));
    assert_true(asked_again(g, 1));
    answer(g, 1, 4, 0);
    assert_true(pushed(g));
}

/* The server ends our membership (ERROR UNKNOWN: it restarted, from an older version) and we
 * join it again with the same shards. */
static void join_again(rig *g)
{
    send_on(g->server, g->route, g->route_len, SW_MSG_ERROR, SW_FLAG_UNKNOWN, 0, "unknown", 7);
    settle(g, 0.05);
    assert_true(next_of(g->server, SW_MSG_JOIN, g->route, &g->route_len));
    const char *welcome = "worker=0\nslots=1\ndata=" DATA "\nmodel=softmax\nbatch=4\nlr=0.1\n"
                          "wd=0\nseed=1\nparams=10\nbatch_mode=shard\ntoken=78\nchecksum=on\n"
                          "shards=s0,s1\nchunk=5\nfirst=0,1\n";
    send_on(g->server, g->route, g->route_len, SW_MSG_WELCOME, 0, 0, welcome, strlen(welcome));
    settle(g, 0.05);
}

/* Slices kept for a release that never came (the server died) are not the next membership's:
 * neither read as its slices of a version they reach, nor holding its step back with a restore
 * mark its run never had. */
static void kept_slices_end_with_the_membership(void **state)
{
    rig *g = *state;
    first_step(g);
    answer(g, 0, 9, 8); /* after a restore at 8, for a release that never came */
    answer(g, 1, 9, 0);
    join_again(g);      /* the restarted server resumed at version 2 */
    release(g, 2);      /* the new membership's first release is pulled */
    answer(g, 0, 2, 2);
    answer(g, 1, 2, 2);
    assert_true(pushed(g));
    released_with_sent(g, 3);
    assert_false(pushed(g)); /* no slice of version 3 has come */
    answer(g, 0, 3, 2);
    answer(g, 1, 3, 2);
    assert_true(pushed(g));
    assert_int_equal(g->r.steps, 3);
}

/* A release without SENT is pulled, and what was kept before it is older: dropped, so that a
 * slice of a later restore mark does not hold the next release's step back. */
static void a_pulled_release_drops_the_slices_kept(void **state)
{
    rig *g = *state;
    first_step(g);
    answer(g, 0, 5, 7); /* an answer sent again, kept while the push awaits its release */
    release(g, 4);
    answer(g, 0, 4, 0);
    answer(g, 1, 4, 0);
    assert_true(pushed(g));
    released_with_sent(g, 5);
    answer(g, 0, 5, 0);
    answer(g, 1, 5, 0);
    assert_true(pushed(g));
    assert_false(asked_again(g, 0) || asked_again(g, 1));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(a_newer_mark_sends_the_older_slices_back, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(an_older_mark_is_asked_again, setup, teardown),
        cmocka_unit_test_setup_teardown(equal_marks_make_a_step, setup, teardown),
        cmocka_unit_test_setup_teardown(slices_sent_before_their_release_are_read, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(sent_slices_that_do_not_come_are_pulled, setup, teardown),
        cmocka_unit_test_setup_teardown(kept_slices_end_with_the_membership, setup, teardown),
        cmocka_unit_test_setup_teardown(a_pulled_release_drops_the_slices_kept, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
