/* The server's message handlers, one per message type, and the operator commands. Every handler
 * trusts nothing about the sender: ids, states and payloads are checked, and a refused message
 * is counted and answered with ERROR. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "kv_text.h"
#include "server_internal.h"
#include "syncwise/err.h"
#include "syncwise/log.h"

typedef void (*handler)(server *s, const peer *from, const sw_msg *m);

/* A member's own connection quiet this long while its heartbeats come is probed (on_heartbeat). */
#define PROBE_S 2.0

/* The sender must be the live worker it claims to be (same socket as when it joined). */
static bool same_route(const conn *c, const peer *from)
{
    return c->route_len == from->route_len && !memcmp(c->route, from->route, c->route_len);
}

/* The sender is the live worker it claims to be, on the connection it joined from; only then is
 * its message a sign of life (a stranger naming a dead worker's id keeps nothing alive). */
static bool is_worker(server *s, const peer *from, const sw_msg *m)
{
    if (from->sock != s->sock || m->worker >= s->slots || !s->conns[m->worker].live ||
        !same_route(&s->conns[m->worker], from))
        return false;
    s->conns[m->worker].last_seen = s->conns[m->worker].heard_on_route = sw__server_now(s);
    return true;
}

static void refuse_unknown(server *s, const peer *from, const sw_msg *m)
{
    char why[80];
    snprintf(why, sizeof why, "unknown worker %u: join again", m->worker);
    sw__server_refuse_echo(s, from, m, SW_FLAG_UNKNOWN, why);
}

/* The run's configuration; a sharded run's adds where the shards are and what each holds. */
static void welcome(server *s, const peer *to, uint32_t w)
{
    const sw_server_params *p = s->p;
    char text[SW_WELCOME_MAX];
    int len = snprintf(text, sizeof text,
                       "worker=%u\nslots=%u\ndata=%s\nmodel=%s\nbatch=%u\nlr=%.9g\nwd=%.9g\n"
                       "seed=%llu\nparams=%zu\nbatch_mode=%s\ntoken=%llu\nchecksum=%s\n%s%s%s%s%s",
                       w, s->slots, p->data, sw_task_spec(s->task), p->batch, (double)p->lr,
                       (double)p->weight_decay, (unsigned long long)p->seed, s->n, p->batch_mode,
                       (unsigned long long)s->conns[w].token, s->unchecked ? "off" : "on",
                       s->data_crc, p->job ? "job=" : "", p->job ? p->job : "",
                       p->job ? "\n" : "", s->shards.n ? s->shards.welcome : "");
    size_t size = len < 0 ? 0 : (size_t)len < sizeof text ? (size_t)len : sizeof text - 1;
    sw__server_send(s, to, SW_MSG_WELCOME, w, 0, text, size);
}

/* With --wait-workers N the engine learns of no worker until N have joined, then of all of them
 * at once: a run compared across policies starts with its whole cluster, not with whichever
 * worker came first training alone. */
static void start_when_all_in(server *s)
{
    uint32_t in = s->n_live_conns;
    if (in < s->p->wait_workers) {
        sw_log(SW_LOG_INFO, "%u of %u workers in: waiting for the rest", in, s->p->wait_workers);
        return;
    }
    s->started = true;
    s->r->started_s = sw__server_now(s);
    sw_log(SW_LOG_INFO, "%u workers in: starting", in);
    for (uint32_t i = 0, w; i < s->n_live_conns; i += s->conns[w].live) {
        w = s->live_conns[i]; /* were one dropped, the next would come to place i */
        sw_engine_result res;
        if (sw__server_engine_ok(s, sw_engine_join(s->engine, w, sw__server_now(s), &res), "join",
                                 w))
            sw__server_follow(s, &res);
    }
}

/* A slot for a new worker: one never used, so that a newcomer is not taken for a worker that
 * left (its statistics, its shard); when every slot was used, the first free one; s->slots when
 * the server is full. */
static uint32_t free_slot(const server *s)
{
    const sw_engine_view *v = sw_engine_get_view(s->engine);
    uint32_t first_free = s->slots;
    for (uint32_t w = 0; w < s->slots; w++) {
        if (s->conns[w].live || v->workers[w].state != SW_WORKER_ABSENT)
            continue;
        if (!s->conns[w].used)
            return w;
        first_free = first_free < s->slots ? first_free : w;
    }
    return first_free;
}

/* A JOIN's job line (a worker launched as a job's): NULL when it names none, else why this
 * server refuses it ("": it is this server's job). Refused before it takes a slot or counts
 * toward --wait-workers: another job's server on a shared port must not start short. */
static const char *other_job(const server *s, const sw_msg *m, char *why, size_t cap)
{
    const char *text = (const char *)m->payload, *end = text + m->payload_len;
    const char *at = memchr(text, '\n', m->payload_len);
    if (!at || (size_t)(end - at) < 5 || memcmp(at, "\njob=", 5) != 0)
        return NULL;
    int len = (int)(end - at - 5);
    const char *ours = s->p->job ? s->p->job : "";
    if ((size_t)len == strlen(ours) && !memcmp(at + 5, ours, (size_t)len) && len > 0)
        return "";
    char theirs[SW_JOB_MAX + 1];
    sw_printable(theirs, sizeof theirs, at + 5, (size_t)len);
    snprintf(why, cap, "this server serves %s%s, not job %s: another job's server on this "
             "port? (give each job its own --port)", ours[0] ? "job " : "no job", ours, theirs);
    return why;
}

static void on_join(server *s, const peer *from, const sw_msg *m)
{
    /* A worker repeats JOIN until it hears WELCOME: a repeat gets the same id again. */
    uint32_t again = sw__server_worker_at(s, from->route, from->route_len);
    if (again < s->slots) {
        welcome(s, from, again);
        return;
    }
    char why[200];
    const char *job = other_job(s, m, why, sizeof why);
    if (job && job[0]) {
        sw__server_refuse(s, from, m->worker, 0, job);
        return;
    }
    uint32_t w = free_slot(s);
    if (w == s->slots || from->route_len > sizeof s->conns[w].route) {
        sw__server_refuse(s, from, m->worker, 0, SW_REFUSED_FULL);
        return;
    }
    uint64_t token; /* a stranger must not guess it */
    char err[SW_ERR_LEN];
    if (sw_rng_secret(&token, err)) {
        sw__server_refuse(s, from, m->worker, 0, err);
        return;
    }
    conn *c = &s->conns[w];
    *c = (conn){.route_len = from->route_len,
                .last_seen = sw__server_now(s),
                .heard_on_route = sw__server_now(s),
                .used = true,
                .wants_model = true,
                .token = token};
    memcpy(c->route, from->route, from->route_len);
    sw__server_conn_live(s, w, true);
    const char *nl = memchr(m->payload, '\n', m->payload_len); /* the name, not the job line */
    sw_printable(c->name, sizeof c->name, m->payload,
                 nl ? (size_t)(nl - (const char *)m->payload) : m->payload_len);
    snprintf(c->address, sizeof c->address, "%s",
             from->address && from->address[0] ? from->address : "-");
    s->r->joins++;
    if (s->shards.n) /* before the worker can reach a shard with its token */
        sw__shards_member(s, w, c->token);
    welcome(s, from, w);
    if (s->started) {
        if (s->r->joins == 1)
            s->r->started_s = sw__server_now(s);
        sw_engine_result res;
        if (sw__server_engine_ok(s, sw_engine_join(s->engine, w, sw__server_now(s), &res), "join",
                                 w))
            sw__server_follow(s, &res);
    } else {
        start_when_all_in(s);
    }
}

/* A push must come from a released worker, of a version the server had. */
bool sw__server_push_allowed(server *s, const peer *from, const sw_msg *m)
{
    if (!is_worker(s, from, m)) {
        refuse_unknown(s, from, m);
        return false;
    }
    if (sw_engine_get_view(s->engine)->workers[m->worker].state != SW_WORKER_RUNNING) {
        sw__server_refuse(s, from, m->worker, 0, "push from a worker that was not released");
        return false;
    }
    if (m->version > sw_engine_version(s->engine)) {
        sw__server_refuse(s, from, m->worker, 0, "gradient of a version the server never had");
        return false;
    }
    uint64_t newest = s->conns[m->worker].pushed_version;
    if (m->version < newest) {
        char why[128];
        snprintf(why, sizeof why, "gradient of version %llu after one of version %llu: a "
                 "worker's parameters never go back", (unsigned long long)m->version,
                 (unsigned long long)newest);
        sw__server_refuse(s, from, m->worker, 0, why);
        return false;
    }
    return true;
}

/* A decoded gradient (dense, or nnz pairs in s->sidx/s->sval; neither when sharded) into the
 * engine, and the answer: WAIT unless the policy released the pusher at once. */
void sw__server_accept_push(server *s, const peer *from, const sw_msg *m, const float *dense,
                            size_t nnz)
{
    conn *c = &s->conns[m->worker];
    c->wants_model = (m->flags & SW_FLAG_WANT_MODEL) != 0;
    c->pushed_version = m->version;
    s->r->pushes++;
    sw_engine_result res;
    double now = sw__server_now(s);
    int rc = s->shards.n ? sw_engine_push_facts(s->engine, m->worker, m->version, now, &res)
             : dense     ? sw_engine_push(s->engine, m->worker, dense, m->version, now, &res)
                         : sw_engine_push_sparse(s->engine, m->worker, s->sidx, s->sval, nnz,
                                                 m->version, now, &res);
    if (!sw__server_engine_ok(s, rc, "push", m->worker))
        return;
    if (res.has_job) /* a concurrent engine: one of the threads applies the checked frame */
        sw__pool_run(&s->pool, s->body, &res.job);
    c->dropped = res.dropped;
    if (res.dropped)
        c->wants_model =
            !sw_task_is_sparse(s->task); /* it recomputes the batch at the current parameters */
    bool released = false;
    for (uint32_t i = 0; i < res.n_released; i++)
        released |= res.released[i] == m->worker;
    if (!released)
        sw__server_send(s, from, SW_MSG_WAIT, m->worker, res.dropped ? SW_FLAG_DROPPED : 0, "", 0);
    sw__server_follow(s, &res);
}

static void on_push(server *s, const peer *from, const sw_msg *m)
{
    if (!sw__server_push_allowed(s, from, m))
        return;
    char why[SW_ERR_LEN] = "";
    const float *grad = sw_msg_floats_in_place(m, s->n, why);
    if (!grad && !why[0] && sw_msg_get_floats(m, s->grad, s->n, why) == 0)
        grad = s->grad;
    if (!grad) {
        sw__server_refuse(s, from, m->worker, 0, why);
        return;
    }
    sw__server_accept_push(s, from, m, grad, 0);
}

/* A sparse gradient: (index, value) pairs, indices ascending below the model's size. */
static void on_push_sparse(server *s, const peer *from, const sw_msg *m)
{
    if (!sw__server_push_allowed(s, from, m))
        return;
    char why[SW_ERR_LEN];
    size_t nnz;
    if (sw_msg_get_pairs(m, (uint32_t)s->n, s->sidx, s->sval, s->n, &nnz, why) != 0) {
        sw__server_refuse(s, from, m->worker, 0, why);
        return;
    }
    sw__server_accept_push(s, from, m, NULL, nnz);
}

/* The weights at the indices asked, in that order: what a sparse worker's next batch reads. */
static void on_pull_sparse(server *s, const peer *from, const sw_msg *m)
{
    if (!is_worker(s, from, m)) {
        refuse_unknown(s, from, m);
        return;
    }
    char why[SW_ERR_LEN];
    size_t k;
    if (sw_msg_get_indices(m, (uint32_t)s->n, s->sidx, s->n, &k, why) != 0) {
        sw__server_refuse(s, from, m->worker, 0, why);
        return;
    }
    sw_engine_gather(s->engine, s->sidx, k, s->sval);
    sw_msg_put_floats((uint8_t *)s->grad, s->sval, k);
    sw__server_send(s, from, SW_MSG_MODEL_SPARSE, m->worker, 0, s->grad, 4 * k);
}

static void on_pull(server *s, const peer *from, const sw_msg *m)
{
    if (!is_worker(s, from, m)) {
        refuse_unknown(s, from, m);
        return;
    }
    sw__server_send(s, from, SW_MSG_MODEL, m->worker, 0, NULL, 4 * s->n);
}

/* Heartbeats come from a worker's second socket, whose route is not the one it joined from:
 * they carry the membership's token instead, so that a worker of a server that restarted is
 * told to join again even when its old id now belongs to another worker. The echo tells a
 * worker that hears nothing else for long (at a barrier, or until --wait-workers are in) that
 * the server lives. */
static void on_heartbeat(server *s, const peer *from, const sw_msg *m)
{
    bool known = m->worker < s->slots && s->conns[m->worker].live &&
                 s->conns[m->worker].token == m->version;
    /* A worker that said goodbye beats on until it exits (a large model's, for seconds): it
     * is answered, and not counted as refused. */
    if (!known && s->done) {
        static const char why[] = "the run is over";
        sw__server_send_at(s, from, SW_MSG_ERROR, m->worker, SW_FLAG_UNKNOWN, m->version, why,
                           sizeof why - 1);
        return;
    }
    if (!known) {
        refuse_unknown(s, from, m);
        return;
    }
    conn *c = &s->conns[m->worker];
    double now = sw__server_now(s);
    c->last_seen = now; /* its token: a sign of life */
    sw__server_send_at(s, from, SW_MSG_HEARTBEAT, m->worker, 0, m->version, "", 0);
    /* Its own connection quiet meanwhile (a long step, a barrier, or a push lost on a
     * connection gone at our end): a probe on it, which the worker ignores, finds out. */
    if (now - c->heard_on_route > PROBE_S && now - c->probed > PROBE_S) {
        c->probed = now;
        peer own = {.route = c->route, .route_len = c->route_len, .sock = s->sock};
        sw__server_send_at(s, &own, SW_MSG_HEARTBEAT, m->worker, 0, m->version, "", 0);
    }
}

static void on_leave(server *s, const peer *from, const sw_msg *m)
{
    if (!is_worker(s, from, m)) {
        refuse_unknown(s, from, m);
        return;
    }
    sw__server_drop_worker(s, m->worker, false);
}

/* One line per live worker: name, address, state, steps, age of its last push, mean
 * staleness of its applied gradients. A running worker is blocked while a shard it needs is
 * out (its pushes and pulls wait for it). */
static int worker_lines(server *s, char *text, size_t cap, int len)
{
    const sw_engine_view *v = sw_engine_get_view(s->engine);
    double now = sw__server_now(s);
    const char *running = s->shards.n && sw__shards_any_out(s) ? "blocked" : "running";
    len = sw__text_append(text, cap, len, "%6s  %-16s %-22s %-8s %8s %10s %9s\n", "worker", "name",
                 "address", "state", "steps", "last push", "staleness");
    for (uint32_t w = 0; w < v->n_slots; w++) {
        if (v->workers[w].state == SW_WORKER_ABSENT && !s->conns[w].live)
            continue;
        const conn *c = &s->conns[w];
        const char *state = v->workers[w].state == SW_WORKER_RUNNING   ? running
                            : v->workers[w].state == SW_WORKER_WAITING ? "waiting"
                                                                       : "joined";
        char age[24] = "-";
        if (s->stats.last_push_t[w] >= 0)
            snprintf(age, sizeof age, "%.1f s ago", now - s->stats.last_push_t[w]);
        len = sw__text_append(text, cap, len, "%6u  %-16s %-22s %-8s %8llu %10s %9.2f\n", w, c->name,
                     c->address, state, (unsigned long long)s->stats.steps[w], age,
                     sw_run_stats_worker_staleness(&s->stats, w));
    }
    return len;
}

static void status(server *s, char *text, size_t cap)
{
    const sw_engine_view *v = sw_engine_get_view(s->engine);
    double now = sw__server_now(s);
    uint64_t done = v->version - s->r->start_version;
    int len = sw__text_append(text, cap, 0, "policy %s\nversion %llu (started at %llu)\n",
                     sw_engine_policy_spec(s->engine), (unsigned long long)v->version,
                     (unsigned long long)s->r->start_version);
    len = sw__text_append(text, cap, len,
                 "applies %llu in %.1f s: %.1f per second overall, %.1f over the last 5 s\n",
                 (unsigned long long)done, now, now > 0 ? (double)done / now : 0,
                 sw_rate_get(&s->recent, now, v->version));
    len = sw__text_append(text, cap, len,
                 "workers live %u (%s %u, waiting %u) of %u slots\n"
                 "pushes %llu, joins %llu, crashed %llu\nrefused messages %llu\n"
                 "mean staleness %.2f\nuptime %.1f s\n",
                 v->n_live, s->shards.n && sw__shards_any_out(s) ? "blocked" : "running",
                 v->n_live - v->n_waiting, v->n_waiting, s->slots,
                 (unsigned long long)s->r->pushes, (unsigned long long)s->r->joins,
                 (unsigned long long)s->r->crashes, (unsigned long long)s->r->refused,
                 sw_run_stats_mean_staleness(&s->stats), now);
    if (!s->started)
        len = sw__text_append(text, cap, len, "not started: %u of %u workers in\n", s->n_live_conns,
                     s->p->wait_workers);
    if (s->done) /* a sharded run ends once its last gather (and checkpoint) is in */
        len = sw__text_append(text, cap, len, "run over (%s): ending%s\n",
                     s->rc ? "failed" : sw__server_end_reason(s),
                     s->concluded ? ", once the workers told have said goodbye"
                     : s->shards.n ? ", once the shards' last gather and checkpoint are in" : "");
    if (s->p->curve_key)
        len = sw__text_append(text, cap, len, "refused connections (CURVE: unknown keys, failed handshakes) %llu\n",
                     (unsigned long long)sw_net_refused(s->net));
    len = sw__text_append(text, cap, len, "promise: %s%s\n",
                 s->r->broken[0] ? "BROKEN: " : "kept so far (docs/promises.md)", s->r->broken);
    if (s->shards.n)
        len = sw__shards_status(s, text, cap, len);
    if (s->threaded)
        len = sw__text_append(text, cap, len,
                     "concurrent applies: %u threads (%s), %llu applied of %llu decided\n",
                     s->p->apply_threads, s->p->apply_mode,
                     (unsigned long long)atomic_load(&s->pool.applied), (unsigned long long)done);
    worker_lines(s, text, cap, len);
}

static void on_ctl(server *s, const peer *from, const sw_msg *m)
{
    char cmd[512], reply[8192];
    size_t len = m->payload_len < sizeof cmd - 1 ? m->payload_len : sizeof cmd - 1;
    memcpy(cmd, m->payload, len);
    cmd[len] = '\0';
    if (strcmp(cmd, "status") == 0) {
        status(s, reply, sizeof reply);
    } else if (strncmp(cmd, "policy ", 7) == 0 && !from->operator) {
        char why[1024];
        const char *remote = s->p->curve_key ? "; from afar, with an operator's CURVE key "
                                               "(--curve-operators)"
                                             : "";
        if (!s->ops) /* --ctl-bind none */
            snprintf(why, sizeof why, "operator commands are taken on no operator socket "
                     "(--ctl-bind none)%s", remote);
        else if (!strncmp(s->ops_ep, "ipc://", 6)) /* the default: ctl dials it by itself */
            snprintf(why, sizeof why, "operator commands are taken on the operator socket %s "
                     "(ctl finds it by itself on the server's host)%s", s->ops_ep, remote);
        else
            snprintf(why, sizeof why, "operator commands are taken on the operator socket %s: "
                     "ctl --connect %s%s", s->ops_ep, s->ops_ep, remote);
        sw__server_refuse(s, from, SW_NO_WORKER, 0, why);
        return;
    } else if (strncmp(cmd, "policy ", 7) == 0 && s->done) { /* a sharded run's last gather */
        snprintf(reply, sizeof reply, "error: the run is over (version %llu): no policy switches\n",
                 (unsigned long long)sw_engine_version(s->engine));
    } else if (strncmp(cmd, "policy ", 7) == 0) {
        char err[SW_ERR_LEN];
        sw_engine_result res;
        int rc = s->shards.n ? sw__shards_policy_ok(cmd + 7, err) : 0;
        if (!rc)
            rc = sw_engine_switch_policy(s->engine, cmd + 7, sw__server_now(s), &res, err);
        if (rc == SW_EBUG)
            sw__server_engine_ok(s, rc, "policy switch", SW_NO_WORKER);
        if (rc) {
            snprintf(reply, sizeof reply, "error: %s\n", err);
        } else {
            snprintf(reply, sizeof reply, "policy switched to %s at version %llu\n", cmd + 7,
                     (unsigned long long)sw_engine_version(s->engine));
            sw_log(SW_LOG_INFO, "policy switched to %s", cmd + 7);
            sw__server_follow(s, &res);
            /* The switch is the run's: a checkpoint now keeps it, should the server crash
             * before the next one on the schedule. */
            s->as_resumed = false;
            if (sw__server_checkpoint(s, err))
                sw__server_fail(s, SW_EIO, err);
        }
    } else {
        snprintf(reply, sizeof reply, "error: unknown command '%s' (known: status, policy SPEC)\n",
                 cmd);
    }
    sw__server_send(s, from, SW_MSG_CTL_REPLY, SW_NO_WORKER, 0, reply, strlen(reply));
}

static const handler handlers[SW_MSG_TYPE_MAX + 1] = {
    [SW_MSG_JOIN] = on_join,
    [SW_MSG_PULL] = on_pull,
    [SW_MSG_PUSH] = on_push,
    [SW_MSG_HEARTBEAT] = on_heartbeat,
    [SW_MSG_LEAVE] = on_leave,
    [SW_MSG_CTL] = on_ctl,
    [SW_MSG_PUSH_SPARSE] = on_push_sparse,
    [SW_MSG_PULL_SPARSE] = on_pull_sparse,
};

/* The data plane's messages, which a sharded run's workers send to the shards. */
static bool to_the_shards(sw_msg_type type)
{
    return type == SW_MSG_PUSH || type == SW_MSG_PULL || type == SW_MSG_PUSH_SPARSE ||
           type == SW_MSG_PULL_SPARSE;
}

void sw__server_handle(server *s, const peer *from, const sw_msg *m)
{
    if (from->sock == s->ops && m->type != SW_MSG_CTL) {
        sw__server_refuse(s, from, m->worker, 0, "the operator socket takes ctl commands only");
        return;
    }
    /* Done (a sharded run ends once its last gather is in): a member waits for the RELEASE
     * with DONE that ends the run and says whether it failed, its heartbeats echoed meanwhile,
     * and anything else it sends but its goodbye is moot; one joining now is told at once. */
    if (s->done && m->type == SW_MSG_JOIN) {
        const char *why = s->rc ? s->msg : "";
        sw__server_send(s, from, SW_MSG_RELEASE, m->worker, SW_FLAG_DONE, why, strlen(why));
        return;
    }
    if (s->done && m->type == SW_MSG_LEAVE) { /* a goodbye, before DONE or in answer to it */
        if (is_worker(s, from, m))
            sw__server_conn_live(s, m->worker, false);
        return;
    }
    if (s->done && m->type != SW_MSG_CTL && m->type != SW_MSG_HEARTBEAT)
        return;
    if (s->shards.n && to_the_shards(m->type)) {
        sw__server_refuse(s, from, m->worker, 0,
                          "this run is sharded: gradients and parameters go to the shards "
                          "(WELCOME's shards=)");
        return;
    }
    if (!handlers[m->type]) {
        char why[160];
        snprintf(why, sizeof why, "a server does not accept '%s' messages%s",
                 sw_msg_type_name(m->type),
                 m->type == SW_MSG_SHARD_INIT ? ": this is a server, and --shards names the "
                                                "`syncwise shard` processes"
                                              : "");
        sw__server_refuse(s, from, m->worker, 0, why);
        return;
    }
    handlers[m->type](s, from, m);
}
