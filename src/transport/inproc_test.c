/* The in-process network's broken connections: a listener closed (its process killed) loses
 * what was queued for it, and what it sent that had not landed; its dialers keep what they send meanwhile, up to their queue, and
 * when another listener binds at the endpoint they connect to it, count the break, and deliver
 * what they kept, in order, before anything sent after. A fault that breaks a listener's
 * connections (sw_net_inproc_break) loses what was queued either way, and each dialer counts
 * it. A stall (a reader stopped as it read) moves the clock once. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "syncwise/err.h"
#include "syncwise/transport.h"

static sw_frame *byte_frame(uint8_t b)
{
    sw_frame *f = sw_frame_new(1);
    sw_frame_data(f)[0] = b;
    return f;
}

static sw_sock *listen_at(sw_net *n, const char *ep)
{
    sw_sock *l;
    sw_listen_params p = {.endpoint = ep};
    assert_int_equal(sw_listen(n, &l, &p, NULL), 0);
    return l;
}

/* A network of 10 ms latency with a listener at "here" and a dialer "d" to it, whose queue
 * holds `queue` frames while it has no listener (0: the default). */
static sw_net *connected(sw_sock **l, sw_sock **d, size_t queue)
{
    sw_net *n;
    sw_inproc_params np = {.latency_s = 0.01};
    assert_int_equal(sw_net_inproc_new(&n, &np, NULL), 0);
    *l = listen_at(n, "here");
    sw_dial_params dp = {.endpoint = "here", .identity = "d", .queue = queue};
    assert_int_equal(sw_dial(n, d, &dp, NULL), 0);
    return n;
}

static void disconnected(sw_net *n, sw_sock *l, sw_sock *d)
{
    sw_sock_close(d);
    sw_sock_close(l);
    sw_net_free(n);
}

/* The bytes of the frames socket l holds by `until` (their count). */
static size_t drain(sw_net *n, sw_sock *l, double until, uint8_t *out, size_t cap)
{
    size_t k = 0;
    bool ready;
    while (sw_net_wait(n, &l, 1, until, &ready, NULL) == 0 && ready) {
        sw_delivery d;
        assert_int_equal(sw_recv(l, &d), 0);
        assert_false(d.gone);
        assert_true(k < cap);
        out[k++] = sw_frame_data(d.frame)[0];
        sw_frame_unref(d.frame);
    }
    return k;
}

static void a_dialer_keeps_what_it_sends_until_a_listener_comes_back(void **state)
{
    (void)state;
    sw_sock *l, *d;
    sw_net *n = connected(&l, &d, 3);
    assert_true(sw_send(d, NULL, 0, byte_frame(1))); /* on its way when the listener dies */
    assert_true(sw_send(l, (const uint8_t *)"d", 1, byte_frame(9))); /* and from it */
    sw_sock_close(l);
    for (uint8_t b = 2; b <= 4; b++)
        assert_true(sw_send(d, NULL, 0, byte_frame(b)));
    errno = 0;
    assert_false(sw_send(d, NULL, 0, byte_frame(5))); /* past its queue: lost */
    assert_int_equal(errno, EAGAIN);
    assert_int_equal(sw_sock_reconnects(d), 0);

    l = listen_at(n, "here");
    assert_int_equal(sw_sock_reconnects(d), 1);
    assert_true(sw_send(d, NULL, 0, byte_frame(6)));
    uint8_t got[8];
    assert_int_equal(drain(n, l, 1.0, got, sizeof got), 4);
    assert_memory_equal(got, ((uint8_t[]){2, 3, 4, 6}), 4);
    assert_int_equal(drain(n, d, 1.0, got, sizeof got), 0); /* the dead one's frame is lost */

    /* A dialer closed while it waits gives up what it kept. */
    sw_sock_close(l);
    assert_true(sw_send(d, NULL, 0, byte_frame(7)));
    sw_sock_close(d);
    l = listen_at(n, "here");
    assert_int_equal(drain(n, l, 2.0, got, sizeof got), 0);
    sw_sock_close(l);
    sw_net_free(n);
}

static void a_break_loses_what_was_on_its_way_both_ways(void **state)
{
    (void)state;
    sw_sock *l, *d;
    sw_net *n = connected(&l, &d, 0);
    assert_true(sw_send(d, NULL, 0, byte_frame(1)));
    assert_true(sw_send(l, (const uint8_t *)"d", 1, byte_frame(2)));
    sw_net_inproc_break(l);
    assert_int_equal(sw_sock_reconnects(d), 1);
    assert_true(sw_send(d, NULL, 0, byte_frame(3))); /* the new connection carries on */
    assert_true(sw_send(l, (const uint8_t *)"d", 1, byte_frame(4)));
    uint8_t got[4];
    assert_int_equal(drain(n, l, 1.0, got, sizeof got), 1);
    assert_int_equal(got[0], 3);
    assert_int_equal(drain(n, d, 1.0, got, sizeof got), 1);
    assert_int_equal(got[0], 4);
    disconnected(n, l, d);
}

/* A reader that stands still as it reads (sw_net_inproc_stall): the clock jumps as it takes the
 * frame named, once, and frames that landed meanwhile are there at once. */
static void a_stall_moves_the_clock_as_its_frame_is_read(void **state)
{
    (void)state;
    sw_sock *l, *d;
    sw_net *n = connected(&l, &d, 0);
    sw_net_inproc_stall(n, "nowhere", false, 1, 5); /* no listener there: nothing */
    sw_net_inproc_stall(n, "here", false, 2, 3);
    for (uint8_t b = 1; b <= 3; b++)
        assert_true(sw_send(d, NULL, 0, byte_frame(b)));
    uint8_t got[4];
    assert_int_equal(drain(n, l, 0.005, got, sizeof got), 0); /* not landed yet */
    assert_int_equal(drain(n, l, 1, got, sizeof got), 3);
    assert_true(sw_net_now(n) >= 3 && sw_net_now(n) < 3.1); /* once, at the second */
    assert_true(sw_send(d, NULL, 0, byte_frame(4)));
    assert_int_equal(drain(n, l, 3.5, got, sizeof got), 1);
    assert_true(sw_net_now(n) == 3.5); /* the wait's end: no second jump */
    /* The dialers' side: the listener's reads do not count, the dialer's second does. */
    sw_net_inproc_stall(n, "here", true, 2, 4);
    for (uint8_t b = 5; b <= 6; b++) {
        assert_true(sw_send(d, NULL, 0, byte_frame(b)));
        assert_true(sw_send(l, (const uint8_t *)"d", 1, byte_frame(b)));
    }
    assert_int_equal(drain(n, l, 4, got, sizeof got), 2);
    assert_true(sw_net_now(n) == 4);
    assert_int_equal(drain(n, d, 5, got, sizeof got), 2);
    assert_true(sw_net_now(n) >= 8 && sw_net_now(n) < 8.1);
    disconnected(n, l, d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_dialer_keeps_what_it_sends_until_a_listener_comes_back),
        cmocka_unit_test(a_break_loses_what_was_on_its_way_both_ways),
        cmocka_unit_test(a_stall_moves_the_clock_as_its_frame_is_read),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
