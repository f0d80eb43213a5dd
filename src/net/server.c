/* The server: setup, the poll loop, heartbeats, evaluations and checkpoints.
 *
 * One thread, one ROUTER socket, one linear loop: wait for a message or the next deadline (the
 * policy's wake-up, a heartbeat check, an evaluation, a checkpoint), handle it, repeat.
 * Gradients are read where ZeroMQ received them; what the server sends is in outbox.c.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include "server_internal.h"
#include "syncwise/check.h"
#include "syncwise/ckpt.h"
#include "syncwise/clock.h"
#include "syncwise/curve.h"
#include "syncwise/err.h"
#include "syncwise/file.h"
#include "syncwise/log.h"

#define HEARTBEAT_CHECK_S 0.2

sw_server_params sw_server_default_params(void)
{
    return (sw_server_params){
        .bind = "tcp://127.0.0.1:5555", .policy = "asp", .model = "mlp:h=1,u=256",
        .data = "fashion-mnist", .batch = 16, .max_workers = 64, .lr = 0.01f, .seed = 1,
        .batch_mode = "sample", .heartbeat_timeout_s = 5, .eval_every_s = 5,
        .checkpoint_applies = 1000, .checkpoint_s = 30, .apply_threads = 1,
        .apply_mode = "locked",
    };
}

double sw__server_now(const server *s) { return sw_clock_now_s() - s->t0; }

const float *sw__server_params(server *s)
{
    if (!s->threaded)
        return sw_engine_params_ptr(s->engine);
    sw_engine_read_params(s->engine, s->snapshot);
    return s->snapshot;
}

bool sw__server_engine_ok(server *s, int rc, const char *what, uint32_t w)
{
    if (rc == 0)
        return true;
    if (!s->rc) {
        const char *why = sw_engine_error(s->engine);
        snprintf(s->msg, sizeof s->msg, "the engine refused the %s of worker %u: %s", what, w,
                 why ? why : sw_strerror(rc));
        sw_log(SW_LOG_ERROR, "%s", s->msg);
        s->rc = rc;
    }
    s->done = true;
    return false;
}

void sw__server_drop_worker(server *s, uint32_t w, bool crashed)
{
    s->conns[w].live = false;
    s->r->crashes += crashed;
    sw_engine_result res;
    int rc = sw_engine_leave(s->engine, w, sw__server_now(s), crashed, &res);
    if (sw__server_engine_ok(s, rc, crashed ? "crash" : "leave", w))
        sw__server_follow(s, &res);
    sw_log(SW_LOG_INFO, "worker %u %s", w, crashed ? "stopped answering: dropped" : "left");
}

/* A broken promise is a bug worth stopping a comparison for, not a real run: say so loudly and
 * go on; the run fails when it is over. */
static void promise_broken(server *s, const char *why)
{
    snprintf(s->r->broken, sizeof s->r->broken, "%s", why);
    sw_log(SW_LOG_ERROR, "the policy broke its promise: %s", why);
}

static void sink(void *ctx, const sw_event *ev)
{
    server *s = ctx;
    if (sw_run_stats_event(&s->stats, ev))
        sw_log(SW_LOG_WARN, "out of memory for the statistics");
    if (s->p->log)
        sw_event_write_jsonl(s->p->log, ev);
    char why[SW_ERR_LEN];
    if (s->check && !s->r->broken[0] && sw_check_event(s->check, ev, why))
        promise_broken(s, why);
}

/* A model's shape in words, for a mismatch: "softmax on 1x1x50 inputs, 2 classes, 102
 * parameters". */
static void describe(const sw_model_desc *d, size_t n_params, char *out, size_t cap)
{
    snprintf(out, cap, "'%s' on %ux%ux%u inputs, %u classes, %zu parameters", d->spec,
             d->in_shape[0], d->in_shape[1], d->in_shape[2], d->n_classes, n_params);
}

static int load_resume(server *s, float *init, uint64_t *version, char *err)
{
    sw_ckpt ck;
    int rc = sw_ckpt_load(s->p->checkpoint, &ck, err);
    if (rc)
        return rc;
    sw_model_desc run = sw_task_desc(s->task);
    if (ck.n_params != s->n || strcmp(ck.desc.spec, run.spec) != 0 ||
        memcmp(ck.desc.in_shape, run.in_shape, sizeof run.in_shape) != 0 ||
        ck.desc.n_classes != run.n_classes) {
        char held[200], runs[200];
        describe(&ck.desc, ck.n_params, held, sizeof held);
        describe(&run, s->n, runs, sizeof runs);
        rc = sw_fail(err, SW_EMISMATCH, "%s holds %s; the server runs %s", s->p->checkpoint,
                     held, runs);
    } else {
        memcpy(init, ck.params, s->n * sizeof *init);
        *version = ck.model_version;
    }
    sw_ckpt_free(&ck);
    return rc;
}

static double probe_loss(void *ctx, const float *params)
{
    server *s = ctx;
    return sw_task_probe_loss(s->task, params);
}

static int setup_engine(server *s, char *err)
{
    const sw_server_params *p = s->p;
    float *init = malloc(s->n * sizeof *init);
    if (!init)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    uint64_t version = 0;
    int rc = 0;
    if (p->resume)
        rc = load_resume(s, init, &version, err);
    else
        sw_task_init_params(s->task, init, p->seed);
    sw_engine_params ep = sw_engine_default_params();
    ep.n_params = s->n;
    ep.concurrent = s->threaded; /* the engine decides, the pool's threads apply */
    ep.concurrent_mode = (sw_apply_mode)sw_apply_mode_parse(p->apply_mode ? p->apply_mode : "");
    ep.init = init;
    ep.init_version = version;
    ep.lr = p->lr;
    ep.weight_decay = p->weight_decay;
    ep.max_workers = s->slots;
    ep.policy = p->policy;
    ep.seed = p->seed;
    ep.sink = sink;
    ep.sink_ctx = s;
    /* The loss probe of policies that want losses: the same held-out examples as the
     * simulator's (syncwise/task.h). */
    if (sw_task_has_probe(s->task)) {
        ep.loss_probe = probe_loss;
        ep.loss_probe_ctx = s;
    }
    s->lending = !s->threaded && !sw_task_is_sparse(s->task);
    sw__lender_init(&s->lender, s->n);
    if (s->lending) {
        ep.writable = sw__lender_engine_hook;
        ep.writable_ctx = &s->lender;
    }
    if (!rc)
        rc = sw_check_new(&s->check, p->policy, s->slots, version, err);
    if (!rc)
        rc = sw_engine_new(&s->engine, &ep, err);
    if (!rc && s->lending)
        sw_engine_params_mut(s->engine); /* θ moves into a buffer that can be lent */
    free(init);
    s->r->start_version = version;
    return rc;
}

static int setup(server *s, char *err)
{
    const sw_server_params *p = s->p;
    if (p->max_workers == 0 || p->batch == 0 || !(p->heartbeat_timeout_s > 0))
        return sw_fail(err, SW_EINVAL, "workers, batch and heartbeat timeout must be positive");
    if (p->checkpoint && sw_file_remove_stale(p->checkpoint) > 0)
        sw_log(SW_LOG_INFO, "removed what a killed server left half-written beside %s",
               p->checkpoint);
    if (p->wait_workers > p->max_workers)
        return sw_fail(err, SW_EINVAL, "cannot wait for %u workers with %u slots",
                       p->wait_workers, p->max_workers);
    s->started = p->wait_workers <= 1;
    int rc = sw_task_data_load(&s->data, p->model, p->data, p->seed, err);
    if (!rc)
        rc = sw_task_new(&s->task, p->model, &s->data, 256, SW_TASK_PROBE_EXAMPLES, err);
    if (rc)
        return rc;
    s->threaded = p->apply_threads > 1;
    if (s->threaded && sw_apply_mode_parse(p->apply_mode ? p->apply_mode : "") < 0)
        return sw_fail(err, SW_EINVAL, "apply mode '%s' is not locked, hogwild or atomic",
                       p->apply_mode ? p->apply_mode : "");
    s->n = sw_task_n_params(s->task);
    s->slots = p->max_workers;
    s->grad = malloc(s->n * sizeof *s->grad);
    s->sidx = malloc(s->n * sizeof *s->sidx);
    s->sval = malloc(s->n * sizeof *s->sval);
    s->conns = calloc(s->slots, sizeof *s->conns);
    int rc_stats = sw_run_stats_init(&s->stats, s->slots, err);
    if (rc_stats)
        return rc_stats;
    sw_stopper_init(&s->stopper, &(sw_stop_rules){.target_acc = p->target_acc,
                                                  .max_time = p->max_time_s,
                                                  .max_applies = p->max_applies});
    s->snapshot = s->threaded ? malloc(s->n * sizeof *s->snapshot) : NULL;
    if (!s->grad || !s->sidx || !s->sval || !s->conns || (s->threaded && !s->snapshot))
        return sw_fail(err, SW_ENOMEM, "out of memory for %zu parameters", s->n);
    return setup_engine(s, err);
}

/* The directory of this host's operator sockets: ours alone (0700), or the operator socket
 * would be open to every local user. */
static int private_dir(const char *ipc_path, char *err)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s", ipc_path);
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir)
        return 0;
    *slash = '\0';
    if (mkdir(dir, 0700) != 0 && errno != EEXIST)
        return sw_fail(err, SW_EIO, "cannot create %s: %s", dir, strerror(errno));
    struct stat st;
    if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid() ||
        (st.st_mode & 077))
        return sw_fail(err, SW_EIO, "%s is not a private directory of ours (mode 0700): the "
                       "operator socket would be open to others; give --ctl-bind", dir);
    return 0;
}

/* The operator socket: on this host's private ipc socket by default, or where --ctl-bind says
 * (then open to anyone who reaches it, as its owner chose). */
static int bind_operators(server *s, const char *bound, char *err)
{
    const char *want = s->p->ctl_bind;
    if (want && !strcmp(want, "none"))
        return 0;
    int rc = want ? 0 : sw_ctl_endpoint(bound, s->ops_ep, sizeof s->ops_ep, err);
    if (want)
        snprintf(s->ops_ep, sizeof s->ops_ep, "%s", want);
    bool private_ipc = !want && !strncmp(s->ops_ep, "ipc://", 6);
    if (!rc && private_ipc && (rc = private_dir(s->ops_ep + 6, err)))
        return rc;
    if (!rc && private_ipc)
        unlink(s->ops_ep + 6); /* a socket a killed server left behind */
    s->ops = rc ? NULL : zmq_socket(s->zctx, ZMQ_ROUTER);
    if (!rc && (!s->ops || zmq_bind(s->ops, s->ops_ep) != 0))
        return sw_fail(err, SW_EIO, "cannot bind the operator socket %s: %s", s->ops_ep,
                       zmq_strerror(errno));
    if (!rc && !strncmp(s->ops_ep, "ipc://", 6))
        chmod(s->ops_ep + 6, 0600);
    if (!rc)
        sw_log(want ? SW_LOG_WARN : SW_LOG_INFO, "operator commands on %s%s", s->ops_ep,
               want ? " (open to anyone who reaches it)" : "");
    return rc;
}

static int bind_socket(server *s, char *err)
{
    s->zctx = zmq_ctx_new();
    s->sock = s->zctx ? zmq_socket(s->zctx, ZMQ_ROUTER) : NULL;
    if (!s->sock)
        return sw_fail(err, SW_EIO, "cannot create a ZeroMQ socket: %s", zmq_strerror(errno));
    int linger = 1000;
    /* A sparse push may name every weight: 8 bytes each. */
    int64_t max = (int64_t)sw_msg_size((sw_task_is_sparse(s->task) ? 8 : 4) * s->n + 8192);
    zmq_setsockopt(s->sock, ZMQ_LINGER, &linger, sizeof linger);
    zmq_setsockopt(s->sock, ZMQ_MAXMSGSIZE, &max, sizeof max); /* oversized frames never land */
    if (s->p->curve_key) {
        sw_curve_keys keys;
        int rc;
        if (!sw_curve_available())
            return sw_fail(err, SW_ENOTFOUND, "this libzmq has no CURVE support");
        if (!s->p->curve_clients)
            return sw_fail(err, SW_EINVAL, "CURVE needs the authorised clients' keys");
        if ((rc = sw_curve_read(s->p->curve_key, 1, &keys, err)) ||
            (rc = sw_zap_new(&s->zap, s->zctx, s->p->curve_clients, s->p->curve_operators,
                             err)) ||
            (rc = sw_curve_server(s->sock, &keys, err)))
            return rc;
    }
    char bind[300];
    int rc = sw_endpoint_check(s->p->bind, true, bind, sizeof bind, err);
    if (rc)
        return rc;
    if (zmq_bind(s->sock, bind) != 0)
        return sw_fail(err, SW_EIO, "cannot bind %s: %s%s", s->p->bind, zmq_strerror(errno),
                       errno == ENODEV ? " (give an address, a host name or an interface)" : "");
    char ep[256];
    size_t len = sizeof ep;
    zmq_getsockopt(s->sock, ZMQ_LAST_ENDPOINT, ep, &len);
    sw_log(SW_LOG_INFO, "serving %s on %s (%zu parameters, version %llu)", s->p->policy, ep, s->n,
           (unsigned long long)s->r->start_version);
    if (s->p->endpoint_file) {
        FILE *f = fopen(s->p->endpoint_file, "w");
        if (!f || fprintf(f, "%s\n", ep) < 0 || fclose(f) != 0)
            return sw_fail(err, SW_EIO, "%s: cannot write the endpoint", s->p->endpoint_file);
    }
    return bind_operators(s, ep, err);
}

/* Discards the rest of a multi-frame message; returns how many frames it had beyond the first. */
static int drain(void *sock, zmq_msg_t *last)
{
    int extra = 0;
    while (zmq_msg_more(last)) {
        zmq_msg_close(last);
        zmq_msg_init(last);
        if (zmq_msg_recv(last, sock, 0) < 0)
            break;
        extra++;
    }
    return extra;
}

/* Receives and handles one message: the routing id frame, then exactly one message frame. A
 * sender may switch the policy when it came on the operator socket or holds an operator's
 * CURVE key. */
static void receive(server *s, void *sock)
{
    zmq_msg_t id, body, tail;
    zmq_msg_init(&id);
    zmq_msg_init(&body);
    zmq_msg_init(&tail);
    if (zmq_msg_recv(&id, sock, ZMQ_DONTWAIT) >= 0 && zmq_msg_more(&id) &&
        zmq_msg_recv(&body, sock, 0) >= 0) {
        const char *user = sock == s->sock ? zmq_msg_gets(&body, "User-Id") : NULL;
        peer from = {.route = zmq_msg_data(&id), .route_len = zmq_msg_size(&id), .sock = sock,
                     .operator = sock == s->ops || (user && !strcmp(user, SW_ZAP_OPERATOR))};
        sw_msg m;
        char why[SW_ERR_LEN];
        /* A sparse push may name every weight: 8 bytes each. */
        uint64_t limit = (sw_task_is_sparse(s->task) ? 8 : 4) * (uint64_t)s->n + 8192;
        s->r->bytes_in += zmq_msg_size(&body);
        if (zmq_msg_more(&body)) {
            zmq_msg_copy(&tail, &body);
            drain(sock, &tail);
            sw__server_refuse(s, &from, SW_NO_WORKER, 0, "a message must be a single frame");
        } else if (sw_msg_decode(zmq_msg_data(&body), zmq_msg_size(&body), limit, &m, why) == 0) {
            s->body = &body;
            sw__server_handle(s, &from, &m);
            s->body = NULL;
        } else {
            sw__server_refuse(s, &from, SW_NO_WORKER, 0, why);
        }
    }
    zmq_msg_close(&id);
    zmq_msg_close(&body);
    zmq_msg_close(&tail);
}

static void check_heartbeats(server *s)
{
    double now = sw__server_now(s);
    for (uint32_t w = 0; w < s->slots; w++)
        if (s->conns[w].live && now - s->conns[w].last_seen > s->p->heartbeat_timeout_s)
            sw__server_drop_worker(s, w, true);
}

static int checkpoint(server *s, char *err)
{
    if (!s->p->checkpoint)
        return 0;
    sw_ckpt c = {.desc = sw_task_desc(s->task),
                 .model_version = sw_engine_version(s->engine), .seed = s->p->seed,
                 .n_params = s->n, .params = (float *)sw__server_params(s)};
    snprintf(c.data_spec, sizeof c.data_spec, "%s", s->p->data);
    snprintf(c.note, sizeof c.note, "policy=%s", sw_engine_policy_name(s->engine));
    s->last_ckpt_applies = sw_engine_version(s->engine);
    s->next_ckpt = sw__server_now(s) + (s->p->checkpoint_s > 0 ? s->p->checkpoint_s : INFINITY);
    return sw_ckpt_save(s->p->checkpoint, &c, err);
}

static bool evaluate(server *s)
{
    sw_eval e;
    sw_task_evaluate(s->task, sw__server_params(s), &e);
    double now = sw__server_now(s);
    uint64_t V = sw_engine_version(s->engine);
    s->rate = now > s->last_rate_t ? (double)(V - s->rate_applies) / (now - s->last_rate_t) : 0;
    s->rate_applies = V;
    s->last_rate_t = now;
    s->r->final_acc = e.accuracy;
    s->r->final_loss = e.loss;
    sw_event ev = {.kind = SW_EV_EVAL, .t = now, .V = V, .loss = e.loss, .accuracy = e.accuracy};
    if (s->p->log)
        sw_event_write_jsonl(s->p->log, &ev);
    if (s->p->on_eval)
        s->p->on_eval(s->p->on_eval_ctx, now, V, e.loss, e.accuracy,
                      sw_engine_get_view(s->engine)->n_live);
    s->next_eval = now + s->p->eval_every_s;
    bool improved;
    return sw_stopper_eval(&s->stopper,
                           &(sw_stop_eval){.accuracy = e.accuracy, .loss = e.loss,
                                           .train_loss = NAN, .classify = true},
                           &improved) == SW_STOP_TARGET_ACC;
}

/* The next evaluation; once before the start (the initial model), then none until it. */
static double eval_due_at(const server *s)
{
    return s->started || s->next_eval == 0 ? s->next_eval : INFINITY;
}

static long timeout_ms(const server *s)
{
    double now = sw__server_now(s), next = now + HEARTBEAT_CHECK_S;
    next = eval_due_at(s) < next ? eval_due_at(s) : next;
    next = s->wake_at >= 0 && s->wake_at < next ? s->wake_at : next;
    return next > now ? (long)ceil((next - now) * 1000) : 0;
}

/* Handles a burst from one socket (at most 64 messages), then returns to the deadlines. */
static void drain_socket(server *s, void *sock)
{
    for (int k = 0; k < 64 && !s->done; k++) {
        zmq_pollitem_t again = {.socket = sock, .events = ZMQ_POLLIN};
        if (k > 0 && zmq_poll(&again, 1, 0) <= 0)
            break;
        receive(s, sock);
    }
}

static int loop(server *s, char *err)
{
    const sw_server_params *p = s->p;
    while (!s->done && !(p->stop && *p->stop)) {
        zmq_pollitem_t items[3] = {{.socket = s->sock, .events = ZMQ_POLLIN}};
        int n = 1, ops = -1, zap = -1;
        if (s->ops)
            items[ops = n++] = (zmq_pollitem_t){.socket = s->ops, .events = ZMQ_POLLIN};
        if (s->zap)
            items[zap = n++] = (zmq_pollitem_t){.socket = sw_zap_socket(s->zap),
                                                .events = ZMQ_POLLIN};
        if (zmq_poll(items, n, timeout_ms(s)) > 0) {
            if (zap >= 0 && (items[zap].revents & ZMQ_POLLIN))
                sw_zap_handle(s->zap);
            if (ops >= 0 && (items[ops].revents & ZMQ_POLLIN))
                drain_socket(s, s->ops);
            if (items[0].revents & ZMQ_POLLIN)
                drain_socket(s, s->sock);
        }
        double now = sw__server_now(s);
        check_heartbeats(s);
        if (s->wake_at >= 0 && now >= s->wake_at) {
            sw_engine_result res;
            if (sw__server_engine_ok(s, sw_engine_tick(s->engine, now, &res), "wake-up",
                                     SW_NO_WORKER))
                sw__server_follow(s, &res);
        }
        uint64_t V = sw_engine_version(s->engine);
        if (now >= eval_due_at(s) && evaluate(s))
            s->r->reached = s->done = true;
        if (sw_stopper_limits(&s->stopper, now, V - s->r->start_version, 0))
            s->done = true;
        bool due = (p->checkpoint_applies && V - s->last_ckpt_applies >= p->checkpoint_applies) ||
                   now >= s->next_ckpt;
        if (due && checkpoint(s, err))
            return SW_EIO;
    }
    return 0;
}

/* Tells every live worker the run is over, so that none waits for a reply that never comes. */
static void finish(server *s)
{
    for (uint32_t w = 0; w < s->slots; w++)
        if (s->conns[w].live) {
            peer to = {.route = s->conns[w].route, .route_len = s->conns[w].route_len};
            sw__server_send(s, &to, SW_MSG_RELEASE, w, SW_FLAG_DONE, "", 0);
        }
}

static void teardown(server *s)
{
    sw__pool_stop(&s->pool); /* its threads' sockets close before the context ends, and its
                              * jobs are done before the engine goes */
    free(s->snapshot);
    if (s->sock)
        zmq_close(s->sock);
    if (s->ops)
        zmq_close(s->ops);
    sw_zap_free(s->zap);
    if (s->zctx)
        zmq_ctx_term(s->zctx); /* after it, ZeroMQ holds no lent buffer */
    sw_engine_free(s->engine);
    sw_check_free(s->check);
    sw_run_stats_free(&s->stats);
    sw__lender_free(&s->lender);
    sw_task_free(s->task);
    sw_task_data_free(&s->data);
    free(s->sidx);
    free(s->sval);
    free(s->grad);
    free(s->conns);
}

/* The log's first line, the same "start" line the simulator writes. */
static void log_start(const server *s)
{
    const sw_server_params *p = s->p;
    sw_run_info info = {.driver = "server", .workers = p->wait_workers, .slots = s->slots,
                        .seed = p->seed, .version = s->r->start_version, .params = s->n,
                        .batch = p->batch, .lr = p->lr, .cluster = "real"};
    snprintf(info.policy, sizeof info.policy, "%s", p->policy);
    snprintf(info.model, sizeof info.model, "%s", sw_task_spec(s->task));
    sw_run_write_start(p->log, &info);
}

/* The run is over: the last engine call is judged, and the log closed with its end line. */
static void log_end(server *s)
{
    char why[SW_ERR_LEN];
    if (!s->r->broken[0] && sw_check_end(s->check, why))
        promise_broken(s, why);
    if (s->p->log)
        sw_run_write_end(s->p->log, sw__server_now(s), sw_engine_version(s->engine),
                         s->r->reached ? "target accuracy" : "stopped");
}

int sw_server_run(const sw_server_params *p, sw_server_result *out, char *err)
{
    memset(out, 0, sizeof *out);
    out->started_s = -1;
    server s = {.p = p, .r = out, .wake_at = -1};
    /* Tokens differ from one server run to the next: the clock and the process id seed them. */
    uint64_t now_ns = (uint64_t)(sw_clock_now_s() * 1e9);
    sw_rng_seed(&s.tokens, now_ns ^ (uint64_t)getpid(), 0x746f6b656eULL);
    int rc = setup(&s, err);
    if (!rc)
        rc = bind_socket(&s, err);
    if (!rc && s.threaded)
        rc = sw__pool_start(&s.pool, s.zctx, s.engine, s.n, p->apply_threads, err);
    if (!rc) {
        s.t0 = sw_clock_now_s();
        s.next_eval = 0;
        s.last_ckpt_applies = out->start_version;
        s.rate_applies = out->start_version;
        s.next_ckpt = p->checkpoint_s > 0 ? p->checkpoint_s : INFINITY;
        if (p->log)
            log_start(&s);
        rc = loop(&s, err);
        if (!rc && s.rc)
            rc = sw_fail(err, s.rc, "%s", s.msg);
        if (!rc)
            evaluate(&s);
        if (!rc)
            rc = checkpoint(&s, err);
        finish(&s);
        if (!rc)
            log_end(&s);
        if (!rc && out->broken[0])
            rc = sw_fail(err, SW_EPROMISE, "the policy broke its promise: %s", out->broken);
        out->elapsed_s = sw__server_now(&s);
        out->version = sw_engine_version(s.engine);
        out->applies = out->version - out->start_version;
    }
    teardown(&s);
    return rc;
}
