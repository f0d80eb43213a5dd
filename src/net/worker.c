/* A worker process: join, learn the run's configuration, then loop on RELEASE -> gradient ->
 * PUSH (worker_sparse.c: RELEASE -> PULL_SPARSE -> gradient -> PUSH_SPARSE). A second thread
 * with its own socket sends heartbeats, so a long step never looks like a crash. When the server
 * answers "unknown worker" (it restarted), the worker joins again. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zmq.h>

#include "syncwise/clock.h"
#include "syncwise/curve.h"
#include "syncwise/err.h"
#include "syncwise/log.h"
#include "syncwise/net.h"
#include "syncwise/optim.h"
#include "syncwise/proto.h"
#include "worker_internal.h"

sw_worker_params sw_worker_default_params(void)
{
    return (sw_worker_params){.connect = "tcp://127.0.0.1:5555", .get_model_frequency = 1,
                              .heartbeat_s = 0.5, .server_timeout_s = 30};
}

/* Messages are encoded in ZeroMQ's own buffer, which is then sent without another copy; a
 * gradient in one of the lender's buffers is sent as it is (lend.h). With floats, they are the
 * payload (written little-endian) and payload is ignored. */
void sw__worker_send(worker *k, void *sock, sw_msg_type type, uint32_t flags, uint64_t version,
                       const void *payload, size_t len, const float *floats)
{
    sw_msg m = {.type = type, .worker = atomic_load(&k->id), .flags = flags, .version = version,
                .payload = floats ? NULL : payload, .payload_len = len};
    zmq_msg_t frame;
    k->held = false; /* an answer is due */
    if (!sw__frame_build(&k->lender, &m, floats, &frame))
        return; /* no memory: the server's silence or ours decides what happens next */
    if (zmq_msg_send(&frame, sock, 0) < 0)
        zmq_msg_close(&frame);
}

static void send_msg(worker *k, void *sock, sw_msg_type type, uint32_t flags, uint64_t version,
                     const void *payload, size_t len)
{
    sw__worker_send(k, sock, type, flags, version, payload, len, NULL);
}

static double heard_s(worker *k) { return (double)atomic_load(&k->heard_us) / 1e6; }

static int silent(const worker *k, double seconds, char *err)
{
    return sw_fail(err, SW_EIO, "the server at %s has been silent for %.0f s", k->p->connect,
                   seconds);
}

/* Waits up to `patience` seconds of silence for one message: 0 and the frame in *frame,
 * SW_EIO on silence, SW_ESTATE on a stop, SW_ENOTFOUND when the server forgot us. A worker the
 * server holds (at a barrier) hears only the echoes of its heartbeats: then the server is silent
 * when neither socket heard from it. */
static int receive_within(worker *k, zmq_msg_t *frame, sw_msg *m, double patience, char *err)
{
    double since = sw_clock_now_s();
    for (;;) {
        if (k->p->stop && *k->p->stop)
            return sw_fail(err, SW_ESTATE, "stopped");
        /* A worker waiting at a barrier sends nothing, so only its heartbeats learn that a
         * restarted server does not know it. */
        if (atomic_exchange(&k->rejoin, false))
            return SW_ENOTFOUND;
        zmq_pollitem_t item = {.socket = k->sock, .events = ZMQ_POLLIN};
        if (zmq_poll(&item, 1, 200) > 0 && zmq_msg_recv(frame, k->sock, 0) >= 0) {
            char why[SW_ERR_LEN];
            if (sw_msg_decode(zmq_msg_data(frame), zmq_msg_size(frame), 4 * (uint64_t)k->cfg.params
                              + 8192, m, why) == 0) {
                k->held = m->type == SW_MSG_WAIT || m->type == SW_MSG_WELCOME;
                return 0;
            }
            sw_log(SW_LOG_WARN, "ignoring a malformed message from the server: %s", why);
        }
        double heard = k->held && heard_s(k) > since ? heard_s(k) : since;
        if (sw_clock_now_s() - heard > patience)
            return silent(k, patience, err);
    }
}

int sw__worker_receive(worker *k, zmq_msg_t *frame, sw_msg *m, char *err)
{
    return receive_within(k, frame, m, k->p->server_timeout_s, err);
}

static int parse_config(const sw_msg *m, config *c, char *err)
{
    char text[2048];
    size_t len = m->payload_len < sizeof text - 1 ? m->payload_len : sizeof text - 1;
    memcpy(text, m->payload, len);
    text[len] = '\0';
    memset(c, 0, sizeof *c);
    unsigned long long seed = 0, token = 0;
    double lr = 0, wd = 0;
    int found = 0;
    for (char *save, *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
        found += sscanf(line, "worker=%u", &c->worker) + sscanf(line, "slots=%u", &c->slots) +
                 sscanf(line, "batch=%u", &c->batch) + sscanf(line, "params=%zu", &c->params) +
                 sscanf(line, "lr=%lf", &lr) + sscanf(line, "wd=%lf", &wd) +
                 sscanf(line, "seed=%llu", &seed) + sscanf(line, "data=%511s", c->data) +
                 sscanf(line, "model=%127s", c->model) +
                 sscanf(line, "batch_mode=%15s", c->batch_mode) +
                 sscanf(line, "token=%llu", &token);
    c->lr = (float)lr;
    c->wd = (float)wd;
    c->seed = seed;
    c->token = token;
    if (found < 11 || c->worker >= c->slots || !c->batch || !c->params)
        return sw_fail(err, SW_EFORMAT, "the server's welcome is incomplete");
    return 0;
}

static void let_go_of_model(worker *k)
{
    if (k->holding)
        zmq_msg_close(&k->model_frame);
    k->holding = false;
    k->theta = k->params;
}

static void unload(worker *k)
{
    let_go_of_model(k);
    sw_learner_free(k->learner);
    if (k->task && sw_task_is_sparse(k->task))
        sw_grad_free(&k->grad); /* a dense one is the lender's */
    sw_task_free(k->task);
    sw_task_data_free(&k->data);
    free(k->params);
    free(k->pulled);
    free(k->scratch);
    sw__lender_free(&k->lender);
    k->learner = NULL;
    k->task = NULL;
    k->grad = (sw_grad){0};
    k->params = k->pulled = NULL;
    k->scratch = NULL;
    k->theta = NULL;
    k->loaded = false;
}

/* The data, model and buffers a configuration names (the data again only when it changed). */
static int load_task(worker *k, const config *c, char *err)
{
    int rc = sw_task_data_load(&k->data, c->model, c->data, c->seed, err);
    if (!rc)
        rc = sw_task_new(&k->task, c->model, &k->data, c->batch, 0, err);
    if (rc)
        return rc;
    size_t n = sw_task_n_params(k->task);
    if (n != c->params)
        return sw_fail(err, SW_EMISMATCH, "the server's model has %zu parameters, ours %zu",
                       c->params, n);
    bool sparse = sw_task_is_sparse(k->task);
    if (sparse && k->p->get_model_frequency > 1)
        return sw_fail(err, SW_EINVAL, "a sparse model pulls the weights of each batch: "
                                       "--get-model-frequency must be 1");
    k->theta = k->params = calloc(n, sizeof *k->params);
    sw__lender_init(&k->lender, n);
    if (sparse) {
        k->pulled = malloc(n * sizeof *k->pulled);
        k->scratch = malloc(8 * n);
    } else {
        k->grad.dense = sw__lender_writable(&k->lender, NULL, false);
    }
    if (!k->params || (sparse ? !k->pulled || !k->scratch : !k->grad.dense))
        return sw_fail(err, SW_ENOMEM, "out of memory for %zu parameters", n);
    k->loaded = true;
    return 0;
}

/* Loads the data, model and learner a configuration names (again when it changed). */
static int load(worker *k, const config *c, char *err)
{
    bool same = k->loaded && !strcmp(c->data, k->cfg.data) && !strcmp(c->model, k->cfg.model) &&
                c->params == k->cfg.params && c->batch == k->cfg.batch && c->seed == k->cfg.seed;
    uint32_t old_id = k->cfg.worker, old_slots = k->cfg.slots;
    k->cfg = *c;
    if (same && old_id == c->worker && old_slots == c->slots)
        return 0;
    int rc = 0;
    if (!same) {
        unload(k);
        rc = load_task(k, c, err);
    }
    sw_learner_free(k->learner);
    k->learner = NULL;
    if (!rc)
        rc = sw_learner_new(&k->learner, k->task, &(sw_learner_params){
            .batch = c->batch, .rank = c->worker, .ranks = c->slots, .seed = c->seed,
            .mode = strcmp(c->batch_mode, "sample") ? SW_BATCH_SHARD : SW_BATCH_SAMPLE}, err);
    if (!rc && sw_task_is_sparse(k->task) && !k->grad.idx)
        rc = sw_grad_alloc(&k->grad, k->learner, err);
    return rc;
}

static void send_join(worker *k)
{
    uint8_t hello[SW_PROTO_HEADER + 64];
    const char *name = k->p->name ? k->p->name : "worker";
    size_t len = strlen(name) < 64 ? strlen(name) : 64;
    sw_msg m = {.type = SW_MSG_JOIN, .worker = SW_NO_WORKER,
                .payload = (const uint8_t *)name, .payload_len = len};
    sw_msg_encode(&m, hello);
    k->held = false;
    /* Never block: with no connection to queue on (a refused CURVE handshake), the next retry
     * tries again, and the server's silence decides. */
    zmq_send(k->sock, hello, sw_msg_size(len), ZMQ_DONTWAIT);
}

/* The server's answer to JOIN. Until we have an id we send no heartbeats, so a JOIN lost with
 * a server that died would never be noticed: it is sent again every JOIN_RETRY_S (the server
 * answers a repeat from the same connection with the same id). Answers to what we sent before
 * this join may come first (a push queued while the server was down is answered "unknown
 * worker" by its successor): they are skipped. */
#define JOIN_RETRY_S 1.0
static int await_welcome(worker *k, zmq_msg_t *frame, sw_msg *reply, char *err)
{
    double start = sw_clock_now_s();
    for (;;) {
        int rc = receive_within(k, frame, reply, JOIN_RETRY_S, err);
        if (rc == SW_EIO && sw_clock_now_s() - start < k->p->server_timeout_s) {
            send_join(k);
            continue;
        }
        if (rc == SW_EIO)
            return sw_fail(err, SW_EIO,
                           "no server answered at %s within %.0f s (not started yet? the run "
                           "over?%s --server-timeout waits longer)",
                           k->p->connect, k->p->server_timeout_s,
                           k->curve ? " our CURVE key refused?" : "");
        if (rc || reply->type == SW_MSG_WELCOME ||
            (reply->type == SW_MSG_ERROR && !(reply->flags & SW_FLAG_UNKNOWN)))
            return rc;
        zmq_msg_close(frame);
        zmq_msg_init(frame);
    }
}

static int join(worker *k, char *err)
{
    atomic_store(&k->id, SW_NO_WORKER);
    atomic_store(&k->rejoin, false);
    send_join(k);
    zmq_msg_t frame;
    zmq_msg_init(&frame);
    sw_msg reply;
    int rc = await_welcome(k, &frame, &reply, err);
    if (!rc && reply.type != SW_MSG_WELCOME)
        rc = sw_fail(err, SW_ESTATE, "the server answered a join with '%.*s'",
                     (int)reply.payload_len, (const char *)reply.payload);
    config c;
    if (!rc)
        rc = parse_config(&reply, &c, err);
    zmq_msg_close(&frame);
    if (!rc)
        rc = load(k, &c, err);
    if (!rc) {
        atomic_store(&k->token, c.token);
        atomic_store(&k->id, c.worker);
        k->since_pull = UINT32_MAX; /* the first release carries the parameters */
        k->redo = false;
        k->r->joins++;
        sw_log(SW_LOG_INFO, "joined %s as worker %u", k->p->connect, c.worker);
    }
    return rc;
}

/* Sleeps --delay seconds after computing: a straggler on purpose. */
void sw__worker_straggle(const worker *k)
{
    if (k->p->delay_s > 0) { /* a straggler on purpose */
        struct timespec ts = {.tv_sec = (time_t)k->p->delay_s,
                              .tv_nsec = (long)((k->p->delay_s - (time_t)k->p->delay_s) * 1e9)};
        nanosleep(&ts, NULL);
    }
}

/* The parameters a release carries: read where they arrived when they can be (the frame is
 * kept), else copied into k->params. */
static int take_model(worker *k, const sw_msg *rel, zmq_msg_t *frame, char *err)
{
    char why[SW_ERR_LEN] = "";
    bool in_place = sw_msg_floats_in_place(rel, k->cfg.params, why) != NULL;
    if (why[0])
        return sw_fail(err, SW_EFORMAT, "%s", why);
    let_go_of_model(k);
    zmq_msg_init(&k->model_frame); /* moving into a message closes it first: it must be one */
    if (in_place && zmq_msg_move(&k->model_frame, frame) == 0) {
        k->holding = true; /* a frame this long keeps its data where it is */
        k->theta = (const float *)(const void *)((const uint8_t *)zmq_msg_data(&k->model_frame) +
                                                 SW_PROTO_HEADER);
        return 0;
    }
    zmq_msg_close(&k->model_frame);
    return sw_msg_get_floats(rel, k->params, k->cfg.params, err);
}

/* k->params, holding the current parameters, for writing. */
static float *own_params(worker *k)
{
    if (k->theta != k->params)
        memcpy(k->params, k->theta, k->cfg.params * sizeof *k->params);
    let_go_of_model(k);
    return k->params;
}

/* One step after a release (in `frame`): take the parameters (or apply our own last gradient),
 * compute, push. */
static int step(worker *k, const sw_msg *rel, zmq_msg_t *frame, char *err)
{
    if (sw_task_is_sparse(k->task))
        return sw__worker_sparse_step(k, rel, err);
    if (rel->flags & SW_FLAG_MODEL) {
        int rc = take_model(k, rel, frame, err);
        if (rc)
            return rc;
        k->version = rel->version;
        k->since_pull = 0;
    } else if (!k->redo) {
        sw_sgd_step(own_params(k), k->grad.dense, k->cfg.params, k->cfg.lr, k->cfg.wd);
    }
    if (!k->redo && !(rel->flags & SW_FLAG_DROPPED)) /* a refused gradient: the same batch */
        sw_learner_next(k->learner);
    k->r->drops += (rel->flags & SW_FLAG_DROPPED) != 0;
    k->redo = false;
    /* the last push may be in flight */
    k->grad.dense = sw__lender_writable(&k->lender, k->grad.dense, false);
    sw_learner_grad(k->learner, k->theta, &k->grad);
    sw__worker_straggle(k);
    k->since_pull++;
    bool want = k->since_pull >= k->p->get_model_frequency;
    sw__worker_send(k, k->sock, SW_MSG_PUSH, want ? SW_FLAG_WANT_MODEL : 0, k->version, NULL,
               4 * k->cfg.params, k->grad.dense);
    k->r->steps++;
    return 0;
}

static void *heartbeats(void *arg)
{
    worker *k = arg;
    void *hb = zmq_socket(k->zctx, ZMQ_DEALER);
    int linger = 0;
    zmq_setsockopt(hb, ZMQ_LINGER, &linger, sizeof linger);
    if (k->curve)
        sw_curve_client(hb, &k->keys, k->server_keys.pub, NULL);
    zmq_connect(hb, k->p->connect);
    uint8_t buf[SW_PROTO_HEADER];
    while (!atomic_load(&k->quit)) {
        /* The token read between two equal reads of the id belongs to that membership: join()
         * clears the id before it stores the token and sets the new id after. */
        uint32_t id = atomic_load(&k->id);
        uint64_t token = atomic_load(&k->token);
        if (id != SW_NO_WORKER && id == atomic_load(&k->id)) {
            sw_msg m = {.type = SW_MSG_HEARTBEAT, .worker = id, .version = token};
            sw_msg_encode(&m, buf);
            zmq_send(hb, buf, sizeof buf, ZMQ_DONTWAIT);
        }
        /* Read the server's answers as they come (a worker whose push was lost with the old
         * server learns here that it must join again): an "unknown worker" error means it
         * restarted, unless it answers a heartbeat of our previous membership, sent before we
         * joined again (the new server may give us the same id). */
        double until = sw_clock_now_s() + k->p->heartbeat_s;
        zmq_msg_t reply;
        zmq_msg_init(&reply);
        for (double left = k->p->heartbeat_s; left > 0 && !atomic_load(&k->quit);
             left = until - sw_clock_now_s()) {
            zmq_pollitem_t item = {.socket = hb, .events = ZMQ_POLLIN};
            if (zmq_poll(&item, 1, (long)(left * 1000) + 1) <= 0 ||
                zmq_msg_recv(&reply, hb, ZMQ_DONTWAIT) < 0)
                continue;
            sw_msg m;
            if (sw_msg_decode(zmq_msg_data(&reply), zmq_msg_size(&reply), 1 << 16, &m, NULL) != 0)
                continue;
            atomic_store(&k->heard_us, (unsigned long long)(sw_clock_now_s() * 1e6));
            if (m.type == SW_MSG_ERROR && (m.flags & SW_FLAG_UNKNOWN) &&
                m.worker == atomic_load(&k->id) && m.worker != SW_NO_WORKER &&
                m.version == atomic_load(&k->token))
                atomic_store(&k->rejoin, true);
        }
        zmq_msg_close(&reply);
    }
    zmq_close(hb);
    return NULL;
}

static int run(worker *k, char *err)
{
    int rc = join(k, err);
    while (!rc) {
        if (k->p->max_steps && k->r->steps >= k->p->max_steps) {
            send_msg(k, k->sock, SW_MSG_LEAVE, 0, k->version, "", 0);
            return 0;
        }
        zmq_msg_t frame;
        zmq_msg_init(&frame);
        sw_msg m;
        rc = sw__worker_receive(k, &frame, &m, err);
        if (rc == SW_ENOTFOUND) {
            sw_log(SW_LOG_INFO, "the server does not know us (it restarted?): joining again");
            zmq_msg_close(&frame);
            rc = join(k, err);
            continue;
        }
        if (!rc && (m.flags & SW_FLAG_DONE)) {
            k->r->done = true;
            zmq_msg_close(&frame);
            return 0;
        }
        if (!rc && m.type == SW_MSG_RELEASE && (rc = step(k, &m, &frame, err)) == SW_ENOTFOUND) {
            sw_log(SW_LOG_INFO, "the server does not know us (it restarted?): joining again");
            zmq_msg_close(&frame);
            rc = join(k, err);
            continue;
        }
        if (!rc && k->r->done) {
            zmq_msg_close(&frame);
            return 0;
        }
        else if (!rc && m.type == SW_MSG_WAIT)
            k->redo |= (m.flags & SW_FLAG_DROPPED) != 0;
        else if (!rc && m.type == SW_MSG_ERROR && (m.flags & SW_FLAG_UNKNOWN) &&
                 m.worker == atomic_load(&k->id)) {
            sw_log(SW_LOG_INFO, "the server does not know us (it restarted?): joining again");
            zmq_msg_close(&frame);
            rc = join(k, err);
            continue;
        } else if (!rc && m.type == SW_MSG_ERROR && (m.flags & SW_FLAG_UNKNOWN)) {
            /* about an id we no longer have: an answer from before we rejoined */
        } else if (!rc && m.type == SW_MSG_ERROR) {
            rc = sw_fail(err, SW_ESTATE, "the server refused our message: %.*s",
                         (int)m.payload_len, (const char *)m.payload);
        }
        zmq_msg_close(&frame);
    }
    return rc;
}

int sw_worker_run(const sw_worker_params *p, sw_worker_result *out, char *err)
{
    memset(out, 0, sizeof *out);
    if (p->get_model_frequency == 0 || !(p->heartbeat_s > 0) || !(p->server_timeout_s > 0))
        return sw_fail(err, SW_EINVAL, "get_model_frequency, heartbeat and timeout must be "
                                       "positive");
    worker *k = calloc(1, sizeof *k);
    if (!k)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    k->p = p;
    k->r = out;
    atomic_init(&k->id, SW_NO_WORKER);
    atomic_init(&k->quit, false);
    atomic_init(&k->rejoin, false);
    atomic_init(&k->token, 0);
    atomic_init(&k->heard_us, 0);
    k->cfg.params = 1 << 20; /* what we accept before WELCOME says the model's size */
    k->zctx = zmq_ctx_new();
    k->sock = k->zctx ? zmq_socket(k->zctx, ZMQ_DEALER) : NULL;
    int rc = k->sock ? 0 : sw_fail(err, SW_EIO, "cannot create a ZeroMQ socket");
    int linger = 2000;
    if (!rc && p->curve_key) {
        k->curve = true;
        if (!p->curve_server)
            rc = sw_fail(err, SW_EINVAL, "CURVE needs the server's public key");
        if (!rc && !(rc = sw_curve_read(p->curve_key, 1, &k->keys, err)) &&
            !(rc = sw_curve_read(p->curve_server, 0, &k->server_keys, err)))
            rc = sw_curve_client(k->sock, &k->keys, k->server_keys.pub, err);
    }
    char checked[300];
    if (!rc)
        rc = sw_endpoint_check(p->connect, false, checked, sizeof checked, err);
    if (!rc) {
        zmq_setsockopt(k->sock, ZMQ_LINGER, &linger, sizeof linger);
        if (zmq_connect(k->sock, p->connect) != 0)
            rc = sw_fail(err, SW_EIO, "cannot connect to %s: %s", p->connect,
                         zmq_strerror(errno));
    }
    pthread_t hb;
    bool hb_started = !rc && pthread_create(&hb, NULL, heartbeats, k) == 0;
    if (!rc)
        rc = run(k, err);
    atomic_store(&k->quit, true);
    if (hb_started)
        pthread_join(hb, NULL);
    if (k->sock)
        zmq_close(k->sock);
    if (k->zctx)
        zmq_ctx_term(k->zctx);
    unload(k);
    free(k);
    return rc;
}
