/* A ZeroMQ dialer whose listener is started again: the break is counted
 * (sw_sock_reconnects) by the time the new connection's first message is received, even by a
 * reader that never waits, so that a caller can mend the break before it handles anything
 * the new connection brings (a sharded server restores its shards first). A second listener
 * never takes an ipc:// path a live one holds. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "syncwise/err.h"
#include "syncwise/transport.h"

static sw_frame *text_frame(const char *text)
{
    sw_frame *f = sw_frame_new(strlen(text));
    memcpy(sw_frame_data(f), text, strlen(text));
    return f;
}

/* The next message s receives within `tries` tenths of a second (waiting for it), which
 * must be `want`: its route into d. False when none came. */
static bool receive_within(sw_net *n, sw_sock *s, sw_delivery *d, const char *want, int tries)
{
    for (int i = 0; i < tries; i++) {
        bool ready;
        assert_int_equal(sw_net_wait(n, &s, 1, sw_net_now(n) + 0.1, &ready, NULL), 0);
        if (ready && sw_recv(s, d) == 0) {
            assert_memory_equal(sw_frame_data(d->frame), want, strlen(want));
            sw_frame_unref(d->frame);
            return true;
        }
    }
    return false;
}

static void receive(sw_net *n, sw_sock *s, sw_delivery *d, const char *want)
{
    if (!receive_within(n, s, d, want, 100))
        fail_msg("no %s within 10 s", want);
}

static void a_break_is_counted_before_the_new_connection_speaks(void **state)
{
    (void)state;
    sw_net *n;
    char err[SW_ERR_LEN];
    assert_int_equal(sw_net_zmq_new(&n, err), 0);
    sw_sock *l, *d;
    sw_listen_params lp = {.endpoint = "tcp://127.0.0.1:*"};
    assert_int_equal(sw_listen(n, &l, &lp, err), 0);
    char endpoint[256];
    snprintf(endpoint, sizeof endpoint, "%s", sw_sock_endpoint(l));
    sw_dial_params dp = {.endpoint = endpoint};
    assert_int_equal(sw_dial(n, &d, &dp, err), 0);
    sw_delivery got;
    assert_true(sw_send(d, NULL, 0, text_frame("hello")));
    receive(n, l, &got, "hello");
    assert_true(sw_send(l, got.route, got.route_len, text_frame("first")));
    receive(n, d, &got, "first");
    assert_int_equal(sw_sock_reconnects(d), 0);

    sw_sock_close(l); /* the listener's process killed, and started again */
    lp.endpoint = endpoint;
    int bound = -1; /* ZeroMQ lets the port go in its own thread, a moment later */
    for (int i = 0; i < 500 && bound; i++)
        if ((bound = sw_listen(n, &l, &lp, err)))
            nanosleep(&(struct timespec){.tv_nsec = 10000000}, NULL);
    assert_int_equal(bound, 0);
    bool heard = false; /* one sent before the dialer saw the old connection go is lost */
    for (int i = 0; i < 50 && !heard; i++) {
        assert_true(sw_send(d, NULL, 0, text_frame("again")));
        heard = receive_within(n, l, &got, "again", 2);
    }
    assert_true(heard);
    assert_true(sw_send(l, got.route, got.route_len, text_frame("second")));
    int rc = 1; /* read without waiting, as a reader busy with its turn does */
    for (int i = 0; i < 10000 && rc; i++) {
        rc = sw_recv(d, &got);
        nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
    }
    assert_int_equal(rc, 0);
    assert_memory_equal(sw_frame_data(got.frame), "second", 6);
    sw_frame_unref(got.frame);
    assert_int_equal(sw_sock_reconnects(d), 1);
    sw_sock_close(d);
    sw_sock_close(l);
    sw_net_free(n);
}

/* ZeroMQ removes the socket file an ipc:// bind finds: a second server given the path took it
 * from a running one, whose workers then reached the newcomer. Refused; a path left by a
 * process gone is taken. */
static void a_live_ipc_path_is_not_taken(void **state)
{
    (void)state;
    sw_net *n;
    char err[SW_ERR_LEN], endpoint[128];
    assert_int_equal(sw_net_zmq_new(&n, err), 0);
    snprintf(endpoint, sizeof endpoint, "ipc:///tmp/sw-zmq-test-%ld.sock", (long)getpid());
    sw_sock *first, *second;
    sw_listen_params lp = {.endpoint = endpoint};
    assert_int_equal(sw_listen(n, &first, &lp, err), 0);
    assert_int_equal(sw_listen(n, &second, &lp, err), SW_ESTATE);
    assert_non_null(strstr(err, "another process listens there"));
    sw_sock_close(first); /* ZeroMQ's thread closes the listening socket a moment later */
    int rc = SW_ESTATE;
    for (int i = 0; i < 100 && rc == SW_ESTATE; i++)
        if ((rc = sw_listen(n, &second, &lp, err)) == SW_ESTATE)
            nanosleep(&(struct timespec){.tv_nsec = 20 * 1000 * 1000}, NULL);
    assert_int_equal(rc, 0);
    sw_sock_close(second);
    sw_net_free(n);
    unlink(endpoint + strlen("ipc://"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_break_is_counted_before_the_new_connection_speaks),
        cmocka_unit_test(a_live_ipc_path_is_not_taken),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
