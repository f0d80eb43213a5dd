/* The worker against a server that fails it: a JOIN swallowed by a server that then died is
 * sent again, and the server that comes up next admits the worker once. Server and worker run
 * as threads of this process, on loopback. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <zmq.h>

#include "syncwise/err.h"
#include "syncwise/net.h"
#include "syncwise/proto.h"

typedef struct worker_run {
    sw_worker_params p;
    sw_worker_result r;
    int rc;
    char err[SW_ERR_LEN];
} worker_run;

static void *work(void *arg)
{
    worker_run *w = arg;
    w->rc = sw_worker_run(&w->p, &w->r, w->err);
    return NULL;
}

typedef struct server_run {
    sw_server_params p;
    sw_server_result r;
    int rc;
    char err[SW_ERR_LEN];
} server_run;

static void *serve(void *arg)
{
    server_run *s = arg;
    s->rc = sw_server_run(&s->p, &s->r, s->err);
    return NULL;
}

/* A server that reads one message, answers nothing and goes away: what a worker sees when the
 * server dies between reading its JOIN and answering. Returns the message's type. */
static int swallow_one(const char *bind_to, char *endpoint, size_t cap, pthread_t *worker,
                       worker_run *w)
{
    void *ctx = zmq_ctx_new(), *sock = zmq_socket(ctx, ZMQ_ROUTER);
    int linger = 0;
    zmq_setsockopt(sock, ZMQ_LINGER, &linger, sizeof linger);
    assert_int_equal(zmq_bind(sock, bind_to), 0);
    zmq_getsockopt(sock, ZMQ_LAST_ENDPOINT, endpoint, &cap);
    w->p.connect = endpoint;
    assert_int_equal(pthread_create(worker, NULL, work, w), 0);
    zmq_msg_t id, body;
    zmq_msg_init(&id);
    zmq_msg_init(&body);
    assert_true(zmq_msg_recv(&id, sock, 0) >= 0);
    assert_true(zmq_msg_recv(&body, sock, 0) >= 0);
    sw_msg m;
    assert_int_equal(sw_msg_decode(zmq_msg_data(&body), zmq_msg_size(&body), 1 << 16, &m, NULL),
                     0);
    int type = (int)m.type;
    zmq_msg_close(&id);
    zmq_msg_close(&body);
    zmq_close(sock);
    zmq_ctx_term(ctx);
    return type;
}

static sw_stop_flag stop;

static void on_usr1(int sig)
{
    (void)sig;
    stop = 1;
}

static void a_swallowed_join_is_sent_again(void **state)
{
    (void)state;
    assert_int_equal(sigaction(SIGUSR1, &(struct sigaction){.sa_handler = on_usr1}, NULL), 0);
    worker_run w = {.p = sw_worker_default_params()};
    w.p.max_steps = 3;
    w.p.server_timeout_s = 8; /* without the retry the worker would give up after this */
    char endpoint[256];
    pthread_t worker;
    assert_int_equal(swallow_one("tcp://127.0.0.1:*", endpoint, sizeof endpoint, &worker, &w),
                     SW_MSG_JOIN);

    server_run s = {.p = sw_server_default_params()};
    s.p.bind = endpoint; /* the same endpoint, as a restarted server */
    s.p.data = "synthetic:task=logistic,d=10,n=200,test=20,val=20";
    s.p.model = "softmax";
    s.p.eval_every_s = 1e9;
    s.p.checkpoint_applies = 0;
    s.p.checkpoint_s = 0;
    s.p.stop = &stop;
    pthread_t server;
    assert_int_equal(pthread_create(&server, NULL, serve, &s), 0);
    pthread_join(worker, NULL);
    /* As a user's Ctrl-C: the flag is set by a handler in the server's own thread (set from
     * this thread it would be a data race, which the flag's type does not prevent). */
    assert_int_equal(pthread_kill(server, SIGUSR1), 0);
    pthread_join(server, NULL);
    assert_int_equal(w.rc, 0);
    assert_int_equal(w.r.steps, 3);
    assert_int_equal(s.rc, 0);
    assert_int_equal(s.r.joins, 1); /* the repeats of one JOIN are one worker */
    assert_int_equal(s.r.pushes, 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_swallowed_join_is_sent_again),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
