/* The server: its setup and the end of its run.
 *
 * One thread, one listener, one agent of the loop (syncwise/transport.h): a turn handles what
 * arrived and what is due (server_turn.c). Gradients are read where they landed; what the
 * server sends is in outbox.c; its message handlers are in handlers.c; its sockets are bound
 * in server_sockets.c.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server_internal.h"
#include "syncwise/check.h"
#include "syncwise/ckpt.h"
#include "syncwise/err.h"
#include "syncwise/file.h"
#include "syncwise/log.h"
#include "syncwise/roster.h"

sw_server_params sw_server_default_params(void)
{
    return (sw_server_params){
        .bind = "tcp://127.0.0.1:5555",
        .policy = "asp",
        .model = "mlp:h=1,u=256",
        .data = "fashion-mnist",
        .batch = 16,
        .max_workers = 64,
        .lr = 0.01f,
        .optim = sw_optim_default(),
        .seed = 1,
        .batch_mode = "sample",
        .heartbeat_timeout_s = 5,
        .dead_link_s = SW_PROTO_DEAD_LINK_S,
        .shard_wait_s = 60,
        .eval_every_s = 5,
        .checkpoint_applies = 1000,
        .checkpoint_s = 30,
        .apply_threads = 1,
        .apply_mode = "locked",
    };
}

double sw__server_now(const server *s)
{
    return sw_net_now(s->net) - s->t0;
}

const float *sw__server_params_at(server *s, uint64_t *version)
{
    *version = sw_engine_version(s->engine);
    if (s->shards.n) {
        *version = s->shards.theta_version;
        return s->shards.have_theta ? s->shards.theta : NULL;
    }
    if (!s->threaded)
        return sw_engine_params_ptr(s->engine);
    sw_engine_read_params(s->engine, s->snapshot);
    return s->snapshot;
}

const float *sw__server_params(server *s)
{
    uint64_t version;
    return sw__server_params_at(s, &version);
}

void sw__server_fail(server *s, int rc, const char *why)
{
    if (!s->rc) {
        snprintf(s->msg, sizeof s->msg, "%s", why); /* sw_server_end hands it on */
        s->rc = rc;
    }
    s->done = true;
}

bool sw__server_engine_ok(server *s, int rc, const char *what, uint32_t w)
{
    if (rc == 0)
        return true;
    const char *why = sw_engine_error(s->engine);
    char msg[SW_ERR_LEN];
    snprintf(msg, sizeof msg, "the engine refused the %s of worker %u: %s", what, w,
             why ? why : sw_strerror(rc));
    sw__server_fail(s, rc, msg);
    return false;
}

void sw__server_drop_worker(server *s, uint32_t w, bool crashed)
{
    sw_log(SW_LOG_INFO, "worker %u %s", w, crashed ? "stopped answering: dropped" : "left");
    sw__server_remove_worker(s, w, crashed);
}

void sw__server_conn_live(server *s, uint32_t w, bool live)
{
    if (live == s->conns[w].live)
        return;
    s->conns[w].live = live;
    (live ? sw_roster_add : sw_roster_remove)(s->live_conns, &s->n_live_conns, w);
}

uint32_t sw__server_worker_at(const server *s, const uint8_t *route, size_t len)
{
    for (uint32_t i = 0; i < s->n_live_conns; i++) {
        const conn *c = &s->conns[s->live_conns[i]];
        if (c->route_len == len && !memcmp(c->route, route, len))
            return s->live_conns[i];
    }
    return s->slots;
}

void sw__server_remove_worker(server *s, uint32_t w, bool crashed)
{
    sw__server_conn_live(s, w, false);
    s->r->crashes += crashed;
    if (s->shards.n)
        sw__shards_member(s, w, 0);
    if (!s->started) /* the engine learns of workers once --wait-workers are in: not of this one */
        return;
    sw_engine_result res;
    int rc = sw_engine_leave(s->engine, w, sw__server_now(s), crashed, &res);
    if (sw__server_engine_ok(s, rc, crashed ? "crash" : "leave", w))
        sw__server_follow(s, &res);
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
    if (s->shards.n)
        sw__shards_event(s, ev); /* the shards' orders first: the rest only reports */
    if (ev->kind == SW_EV_APPLY)
        sw_rate_add(&s->recent, ev->t, ev->V);
    if (sw_run_stats_event(&s->stats, ev))
        sw_log(SW_LOG_WARN, "out of memory for the statistics");
    sw__server_note(s, ev);
}

void sw__server_note(server *s, const sw_event *ev)
{
    if (s->p->log)
        sw_event_write_jsonl(s->p->log, ev);
    char why[SW_ERR_LEN];
    if (s->check && !s->r->broken[0] && sw_check_event(s->check, ev, why))
        promise_broken(s, why);
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
    sw_optim resumed = {0};
    int rc = 0;
    bool sharded = p->shards != NULL;
    if (s->resuming && sharded) /* the shards hold θ: the server's record says which version */
        rc = sw__shards_read_record(s, &version, err);
    else if (s->resuming)
        rc = sw__server_load_resume(s, init, &version, &resumed, err);
    if (!s->resuming) /* afresh, or a sharded run's start record: the run's start again */
        sw_task_init_params(s->task, init, p->seed);
    sw_engine_params ep = sw_engine_default_params();
    ep.n_params = sharded ? 0 : s->n; /* sharded: the engine decides, the shards apply */
    ep.concurrent = s->threaded; /* the engine decides, the pool's threads apply */
    ep.concurrent_mode = (sw_apply_mode)sw_apply_mode_parse(p->apply_mode ? p->apply_mode : "");
    ep.init = init;
    ep.init_version = version;
    ep.lr = p->lr;
    ep.weight_decay = p->weight_decay;
    ep.optim = s->optim; /* sharded, the shards step it; the policy sees it all the same */
    ep.optim_init = resumed.m ? &resumed : NULL;
    ep.max_workers = s->slots;
    ep.policy = s->policy;
    ep.seed = p->seed;
    ep.sink = sink;
    ep.sink_ctx = s;
    /* The loss probe of policies that want losses: the same held-out examples as the
     * simulator's (syncwise/task.h). */
    if (sw_task_has_probe(s->task) && !sharded) {
        ep.loss_probe = probe_loss;
        ep.loss_probe_ctx = s;
    }
    s->lending = !s->threaded && !sw_task_is_sparse(s->task) && !sharded;
    sw__lender_init(&s->lender, s->n);
    if (s->lending) {
        ep.writable = sw__lender_engine_hook;
        ep.writable_ctx = &s->lender;
    }
    if (!rc)
        rc = sw_check_new(&s->check, s->policy, s->slots, version, err);
    if (!rc)
        rc = sw_engine_new(&s->engine, &ep, err);
    if (!rc && s->lending)
        sw_engine_params_mut(s->engine); /* θ moves into a buffer that can be lent */
    if (!rc && sharded) /* the shards start once the server has its port (open_shards) */
        s->shards_init = init;
    else
        free(init);
    sw_optim_free(&resumed);
    s->r->start_version = version;
    return rc;
}

/* A sharded run's shards, given their slices of the starting θ: only once the server holds its
 * port, since one that cannot have it must leave them waiting for another server. */
static int open_shards(server *s, char *err)
{
    if (!s->p->shards)
        return 0;
    int rc = sw__shards_open(s, s->shards_init, s->r->start_version, err);
    free(s->shards_init);
    s->shards_init = NULL;
    return rc;
}

/* Under --batch-mode shard slot i reads every --max-workers-th example: a slot beyond the
 * examples would read none (its worker failed as it joined), as the simulator refuses. */
static int check_shares(const server *s, char *err)
{
    size_t rows = sw_task_data_train_size(&s->data);
    if (strcmp(s->p->batch_mode, "shard") || rows >= s->p->max_workers)
        return 0;
    return sw_fail(err, SW_EINVAL,
                   "--batch-mode shard cuts the %zu training examples into --max-workers %u "
                   "shares, some of them empty: give at most %zu slots (the worker count)",
                   rows, s->p->max_workers, rows);
}

static int setup(server *s, char *err)
{
    const sw_server_params *p = s->p;
    if (p->max_workers == 0 || p->batch == 0 || !(p->heartbeat_timeout_s > 0))
        return sw_fail(err, SW_EINVAL, "workers, batch and heartbeat timeout must be positive");
    if (p->checkpoint && sw_file_remove_stale(p->checkpoint) > 0)
        sw_log(SW_LOG_INFO, "removed what a killed server left half-written beside %s",
               p->checkpoint);
    s->resuming = p->resume;
    int rc = p->checkpoint ? sw_file_claim_checkpoint(p->checkpoint, "run", &s->resuming,
                                                      &s->ckpt_lock, &s->lock_made, err)
                           : 0;
    if (!rc && p->endpoint_file)
        rc = sw_file_claim(p->endpoint_file, "--endpoint-file", &s->ep_lock, err);
    if (rc)
        return rc;
    if (p->checkpoint && !s->resuming &&
        (rc = sw_file_refuse_fresh_start(p->checkpoint, false, "an earlier run's checkpoint",
                                         "run", err)))
        return p->shards ? sw__shards_explain_start_record(p->checkpoint, rc, err) : rc;
    if (p->wait_workers > p->max_workers)
        return sw_fail(err, SW_EINVAL, "cannot wait for %u workers with %u slots", p->wait_workers,
                       p->max_workers);
    s->started = p->wait_workers <= 1;
    s->unchecked =
        p->checksum == SW_CHECKSUM_OFF || (p->checksum == SW_CHECKSUM_AUTO && p->curve_key);
    rc = sw_task_data_load(&s->data, p->model, p->data, SW_DATA_SEED, err);
    if (!rc)
        rc = sw_task_new(&s->task, p->model, &s->data, 256, SW_TASK_PROBE_EXAMPLES, err);
    if (rc)
        return rc;
    if ((rc = check_shares(s, err)))
        return rc;
    if (!sw_task_data_is_generated(p->data)) /* else no file to differ: spec and seed make it */
        snprintf(s->data_crc, sizeof s->data_crc, "data_crc=%08x\n",
                 sw_task_data_fingerprint(&s->data));
    s->threaded = p->apply_threads > 1;
    if (s->threaded && sw_apply_mode_parse(p->apply_mode ? p->apply_mode : "") < 0)
        return sw_fail(err, SW_EINVAL, "apply mode '%s' is not locked, hogwild or atomic",
                       p->apply_mode ? p->apply_mode : "");
    s->n = sw_task_n_params(s->task);
    s->slots = p->max_workers;
    size_t room = p->shards ? 1 : s->n; /* sharded: gradients go to the shards */
    s->grad = malloc(room * sizeof *s->grad);
    s->sidx = malloc(room * sizeof *s->sidx);
    s->sval = malloc(room * sizeof *s->sval);
    s->conns = calloc(s->slots, sizeof *s->conns);
    s->live_conns = calloc(s->slots, sizeof *s->live_conns);
    int rc_stats = sw_run_stats_init(&s->stats, s->slots, err);
    if (rc_stats)
        return rc_stats;
    sw_stopper_init(&s->stopper, &(sw_stop_rules){.target_acc = p->target_acc,
                                                  .max_time = p->max_time_s,
                                                  .max_applies = p->max_applies});
    s->r->classify = sw_task_classifies(s->task);
    s->r->held_out = sw_task_held_out(s->task);
    if ((rc = sw_stop_rules_check(&s->stopper.rules, s->r->classify, err)))
        return rc;
    if (p->shards && (rc = sw__shards_check(s, err)))
        return rc;
    if (!p->shards && sw__server_run_payload(s) > SW_PROTO_MAX_PAYLOAD)
        return sw_fail(err, SW_EINVAL,
                       "a model of %zu parameters is over the protocol's 2 GiB frames: hold it "
                       "on shards (--shards), each a slice under that", s->n);
    s->snapshot = s->threaded ? malloc(s->n * sizeof *s->snapshot) : NULL;
    if (!s->grad || !s->sidx || !s->sval || !s->conns || !s->live_conns ||
        (s->threaded && !s->snapshot))
        return sw_fail(err, SW_ENOMEM, "out of memory for %zu parameters", s->n);
    return 0;
}

/* Tells every live worker the run is over, so that none waits for a reply that never comes;
 * `failed` (NULL: it did not) says why it failed, so that the workers fail with it. */
static void finish(server *s, const char *failed)
{
    const char *why = failed ? failed : "";
    for (uint32_t i = 0; i < s->n_live_conns; i++) { /* a send drops nobody */
        const conn *c = &s->conns[s->live_conns[i]];
        peer to = {.route = c->route, .route_len = c->route_len};
        sw__server_send(s, &to, SW_MSG_RELEASE, s->live_conns[i], SW_FLAG_DONE, why, strlen(why));
    }
    sw__server_answer_late(s);
}

static void teardown(server *s, const char *failed)
{
    sw__pool_stop(&s->pool); /* its jobs are done before the engine goes */
    free(s->snapshot);
    free(s->shards_init);
    sw__shards_close(s, failed); /* the run is over for them too, and failed if it did */
    sw_sock_close(s->sock);
    if (s->ops && !strncmp(s->ops_ep, "ipc://", 6))
        unlink(s->ops_ep + 6); /* ZeroMQ leaves the socket's file behind */
    sw_sock_close(s->ops);
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
    free(s->live_conns);
    sw_file_release_claim(s->p->checkpoint, s->ckpt_lock, s->lock_made);
    sw_file_release_removing(s->p->endpoint_file, s->ep_lock);
    free(s);
}

/* The log's first line, the same "start" line the simulator writes. A new run empties the
 * log (opened for appending, so that a refused start left it as it was); under --resume one
 * cuts a line its crash left half-written, so that its segment begins on a line of its own,
 * and keeps the rest, even when the run starts again (a sharded run whose shards never all
 * saved its start: the failed attempt stays in its history). A log that is not a file (a
 * pipe) is written as it is. */
static void log_start(const server *s)
{
    const sw_server_params *p = s->p;
    int fd = fileno(p->log);
    if (fd >= 0 && fflush(p->log) == 0) {
        if (p->resume && sw_file_drop_torn_line(fd) > 0)
            sw_log(SW_LOG_INFO, "the log ended in a half-written line, which was cut");
        else if (!p->resume && ftruncate(fd, 0) != 0 && errno != EINVAL)
            sw_log(SW_LOG_WARN, "cannot empty the log: %s", strerror(errno));
    }
    sw_run_info info = {.driver = "server",
                        .workers = p->wait_workers,
                        .slots = s->slots,
                        .seed = p->seed,
                        .version = s->r->start_version,
                        .params = s->n,
                        .batch = p->batch,
                        .lr = p->lr,
                        .cluster = "real",
                        .target_acc = p->target_acc,
                        .regress = !sw_task_classifies(s->task)};
    snprintf(info.policy, sizeof info.policy, "%s", s->policy);
    snprintf(info.model, sizeof info.model, "%s", sw_task_spec(s->task));
    sw_optim_format(&s->optim, info.optimizer);
    sw_run_write_start(p->log, &info);
}

/* The run is over: the last engine call is judged (unless the run failed, which may have cut
 * it), and the log closed with its end line, which says why (failed: what went wrong). */
const char *sw__server_end_reason(const server *s)
{
    return s->r->reached ? "target accuracy" : s->limit ? sw_stop_reason_name(s->limit) : "stopped";
}

static void log_end(server *s, const char *failed)
{
    char broke[SW_ERR_LEN], why[sizeof SW_END_FAILED + SW_ERR_LEN]; /* a whole message */
    if (!failed && !s->r->broken[0] && sw_check_end(s->check, broke))
        promise_broken(s, broke);
    if (failed)
        snprintf(why, sizeof why, "%s%s", SW_END_FAILED, failed);
    else if (s->r->broken[0]) /* it ran on to its stop, but its status says it failed */
        snprintf(why, sizeof why, "%sthe policy broke its promise: %.*s (stopped by %s)",
                 SW_END_FAILED, SW_ERR_LEN - 64, s->r->broken, sw__server_end_reason(s));
    if (s->p->log)
        sw_run_write_end(s->p->log, sw__server_now(s), sw_engine_version(s->engine),
                         failed || s->r->broken[0] ? why : sw__server_end_reason(s));
}

int sw_server_new(sw_server **out, sw_net *net, const sw_server_params *p, sw_server_result *r,
                  char *err)
{
    *out = NULL;
    memset(r, 0, sizeof *r);
    r->started_s = -1;
    server *s = calloc(1, sizeof *s);
    if (!s)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    *s = (server){.p = p, .r = r, .net = net, .wake_at = -1, .ckpt_lock = -1,
                 .ep_lock = -1};
    snprintf(s->policy, sizeof s->policy, "%s", p->policy);
    s->optim = p->optim;
    int rc = setup(s, err);
    if (!rc)
        rc = setup_engine(s, err);
    rc = sw_run_stopped_early(p->stop, rc, err);
    r->configured = !rc; /* else nothing of the run was begun: the CLI undoes its log */
    if (!rc)
        rc = sw__server_bind(s, err);
    if (!rc)
        rc = open_shards(s, err);
    if (!rc)
        rc = sw__server_announce(s, err);
    if (!rc && s->threaded)
        rc = sw__pool_start(&s->pool, s->engine, s->n, p->apply_threads, err);
    if (rc) {
        teardown(s, err);
        return rc;
    }
    s->t0 = sw_net_now(net);
    s->shards.restore_sent = 0; /* a resumed run's RESTORE went before the clock started */
    s->next_eval = 0;
    s->last_ckpt_applies = r->start_version;
    s->as_resumed = s->resuming && !s->shards.n;
    s->eval_version = r->start_version;
    sw_rate_init(&s->recent, 5);
    sw_rate_add(&s->recent, 0, r->start_version);
    s->next_ckpt = p->checkpoint_s > 0 ? p->checkpoint_s : INFINITY;
    /* The run's start is its first checkpoint, as a sharded run's is (sw__shards_open): a
     * server killed before the schedule's first is started again with --resume. */
    if (p->checkpoint && !s->resuming && !s->shards.n && (rc = sw__server_checkpoint(s, err))) {
        teardown(s, err);
        return rc;
    }
    s->agent = (sw_agent){.turn = sw__server_turn, .ctx = s, .socks = {s->sock}, .n_socks = 1};
    if (s->ops)
        s->agent.socks[s->agent.n_socks++] = s->ops;
    for (uint32_t j = 0; j < s->shards.n; j++)
        s->agent.socks[s->agent.n_socks++] = s->shards.socks[j];
    if (p->log)
        log_start(s);
    *out = s;
    return 0;
}

sw_agent *sw_server_agent(sw_server *s)
{
    return &s->agent;
}

const char *sw_server_endpoint(const sw_server *s)
{
    return sw_sock_endpoint(s->sock);
}

/* The longest the end waits for goodbyes, whatever --heartbeat-timeout (a bench's is 1e6 s). */
#define FAREWELL_MAX_S 10.0
/* A run that failed before it trained (a shard refused it at the start) answers JOINs a while
 * at least with its reason, whether or not a worker joined before: a worker started with its
 * server (a launcher's ranks) would otherwise wait out its --server-timeout to learn nothing.
 * Over a worker's JOIN repeat (1 s). Not after a signal: the user wants out. */
#define FAILED_START_GRACE_S 1.5

static bool failed_start(const server *s)
{
    return s->rc && s->r->pushes == 0 && !s->signalled_by_end;
}

void sw__server_conclude(server *s)
{
    if (s->concluded)
        return;
    s->concluded = true;
    char err[SW_ERR_LEN] = "";
    int rc = s->rc;
    /* The final evaluation, unless the last one already saw this version (a run that never
     * started would print the same line twice). A sharded run evaluated its last gather. */
    bool evaluated = (s->next_eval > 0 && s->eval_version == sw_engine_version(s->engine)) ||
                     s->shards.n;
    if (!rc && !evaluated)
        sw__server_evaluate(s);
    if (!rc)
        rc = sw__server_checkpoint(s, err);
    if (!rc)
        rc = sw__server_save_gathered(s, err);
    if (rc)
        sw__server_fail(s, rc, err);
    finish(s, s->rc ? s->msg : NULL);
    log_end(s, s->rc ? s->msg : NULL);
    if (s->shards.n) /* now, not after the goodbyes: a shard waits for them no longer */
        sw__shards_end(s, s->rc ? s->msg : NULL);
    s->r->elapsed_s = sw__server_now(s);
    s->signalled_by_end = sw_stop_requested(s->p->stop);
    double wait = s->p->heartbeat_timeout_s < FAREWELL_MAX_S ? s->p->heartbeat_timeout_s
                                                             : FAREWELL_MAX_S;
    if (failed_start(s) && wait < FAILED_START_GRACE_S) /* joiners to tell, besides goodbyes */
        wait = FAILED_START_GRACE_S;
    if (s->shards.n && wait < SW_SHARDS_BYE_S) /* the shards' goodbyes */
        wait = SW_SHARDS_BYE_S;
    s->farewell_by = s->r->elapsed_s + wait;
}

bool sw__server_farewells_due(const server *s)
{
    double now = sw__server_now(s);
    if (now >= s->farewell_by || (sw_stop_requested(s->p->stop) && !s->signalled_by_end))
        return false; /* waited enough, or a signal came during the wait: the user wants out */
    if (failed_start(s) && now < s->r->elapsed_s + FAILED_START_GRACE_S)
        return true; /* answering late JOINs with the reason */
    if (sw__shards_byes_due(s))
        return true; /* a shard's end may have been lost with its link */
    for (uint32_t i = 0; i < s->n_live_conns; i++) {
        const conn *c = &s->conns[s->live_conns[i]];
        /* Not one DONE never reached, nor one silent too long (dead before the end, or an old
         * membership of a worker that joined again). */
        if (!c->unreachable && now - c->last_seen <= s->p->heartbeat_timeout_s)
            return true;
    }
    return false;
}

int sw_server_end(sw_server *s, char *err)
{
    sw_server_result *out = s->r;
    sw__server_conclude(s); /* unless its turns did, the caller's loop having ended first */
    int rc = s->rc ? sw_fail(err, s->rc, "%s", s->msg) : 0;
    bool failed = rc != 0; /* a broken promise fails the server, not its workers and shards */
    if (!rc && out->broken[0])
        rc = sw_fail(err, SW_EPROMISE, "the policy broke its promise: %s", out->broken);
    out->version = sw_engine_version(s->engine);
    out->applies = out->version - out->start_version;
    teardown(s, failed ? err : NULL);
    return rc;
}

int sw_server_run(const sw_server_params *p, sw_server_result *out, char *err)
{
    sw_net *net;
    sw_server *s = NULL;
    sw_loop *loop = NULL;
    int rc = sw_net_zmq_new(&net, err);
    if (rc) {
        memset(out, 0, sizeof *out);
        return rc;
    }
    if (!(rc = sw_server_new(&s, net, p, out, err)) && !(rc = sw_loop_new(&loop, net, err)) &&
        !(rc = sw_loop_add(loop, sw_server_agent(s), err)))
        rc = sw_loop_run(loop, p->stop, INFINITY, err);
    /* Stopped: a sharded run still gathers θ for its last evaluation, and every run waits for
     * its workers' goodbyes (the turn sees *stop). */
    if (s && !rc)
        rc = sw_loop_run(loop, NULL,
                         sw_net_now(net) + (p->shards ? SW_SHARDS_LAST_GATHER_S : 0) +
                             FAREWELL_MAX_S,
                         err);
    if (s && rc)
        sw__server_fail(s, rc, err);
    if (s)
        rc = sw_server_end(s, err);
    sw_loop_free(loop);
    sw_net_free(net);
    return rc;
}
