/* The server's turns: silent workers and shards judged, what arrived on its sockets, then what
 * is due (the policy's wake-up, an evaluation, the stopping rules, a checkpoint). The loop of
 * syncwise/transport.h gives them, on the real clock or a fake one. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server_internal.h"
#include "syncwise/check.h"
#include "syncwise/ckpt.h"
#include "syncwise/file.h"
#include "syncwise/log.h"

#define HEARTBEAT_CHECK_S 0.2
#define STALL_S 0.25 /* a turn this much later than due: the server itself stalled (a shard's
                       * silence is judged on a ping every SW_SHARDS_PING_S) */
#define BURST 64 /* messages handled from one socket before the deadlines get a look */

/* One delivery: exactly one well-formed frame, handled; a worker's closed connection (in
 * process) is its crash. A sender may switch the policy when it came on the operator socket or
 * holds an operator's CURVE key. */
static void take(server *s, sw_sock *sock, sw_delivery *d)
{
    peer from = {.route = d->route,
                 .route_len = d->route_len,
                 .sock = sock,
                 .operator= sock == s->ops || d->by_operator,
                 .address = d->address };
    if (d->gone) { /* once the run is done, its engine decides nothing more */
        uint32_t w = sock == s->sock && !s->done ? sw__server_worker_at(s, d->route, d->route_len) : s->slots;
        if (w < s->slots)
            sw__server_drop_worker(s, w, true);
        return;
    }
    const uint8_t *bytes = sw_frame_data(d->frame);
    size_t len = sw_frame_size(d->frame);
    s->r->bytes_in += len;
    /* A sparse push may name every weight: 8 bytes each. */
    uint64_t limit = (sw_task_is_sparse(s->task) ? 8 : 4) * (uint64_t)s->n + 8192;
    sw_msg m;
    char why[SW_ERR_LEN];
    if (d->multipart) {
        sw__server_refuse(s, &from, SW_NO_WORKER, 0, "a message must be a single frame");
    } else if (sw_msg_decode(bytes, len, limit, &m, why) != 0) {
        sw__server_refuse(s, &from, SW_NO_WORKER, 0, why);
    } else if ((m.flags & SW_FLAG_UNCHECKED) && !s->unchecked) {
        sw__server_refuse(s, &from, SW_NO_WORKER, 0,
                          "a message without a checksum: this server checks them (checksum=on)");
    } else {
        s->body = d->frame;
        sw__server_handle(s, &from, &m);
        s->body = NULL;
    }
}

/* The run's limits (--max-time, --max-applies): checked after every message, since a burst
 * can hold a worker's next push (its answer came back before the burst ended), and before
 * every sharded push is decided, since a shard's batch reports many: an apply past the limit
 * must not happen. */
void sw__server_check_limits(server *s)
{
    uint64_t V = sw_engine_version(s->engine);
    sw_stop_reason limit =
        sw_stopper_limits(&s->stopper, sw__server_now(s), V - s->r->start_version, 0);
    if (limit && !s->done) {
        s->limit = limit;
        s->done = true;
    }
}

/* A checkpoint when --checkpoint-applies or --checkpoint-every calls for one: looked for after
 * every message too, since a burst may make many applies, and a crash loses those since the
 * last checkpoint (up to 6 at --checkpoint-applies 1 when looked for once a turn). */
static void checkpoint_if_due(server *s)
{
    const sw_server_params *p = s->p;
    if (!p->checkpoint || s->done) /* on every message: nothing more to look at */
        return;
    uint64_t V = sw_engine_version(s->engine);
    bool due = (p->checkpoint_applies && V - s->last_ckpt_applies >= p->checkpoint_applies) ||
               sw__server_now(s) >= s->next_ckpt;
    char err[SW_ERR_LEN];
    if (due && sw__server_checkpoint(s, err))
        sw__server_fail(s, SW_EIO, err);
}

/* Handles a burst from one socket, then returns to the deadlines. Also once the run is done,
 * while a sharded one ends: its workers are told so (sw__server_handle) and ctl is answered,
 * and what waits is read, where it would keep the loop from ever sleeping. */
static void drain(server *s, sw_sock *sock)
{
    sw_delivery d;
    for (int k = 0; k < BURST && sw_recv(sock, &d) == 0; k++) {
        take(s, sock, &d);
        sw_frame_unref(d.frame);
        sw__server_check_limits(s);
        checkpoint_if_due(s);
    }
}

void sw__server_answer_late(server *s)
{
    s->done = true; /* a JOIN is answered with DONE, and nothing else is decided */
    drain(s, s->sock);
}

/* What the shards said: also once the run is done, for its last gather. */
static void drain_shards(server *s)
{
    sw_delivery d;
    for (uint32_t j = 0; j < s->shards.n; j++)
        for (int k = 0; k < BURST && !s->finished && sw_recv(s->shards.socks[j], &d) == 0; k++) {
            sw__shards_take(s, j, &d);
            sw_frame_unref(d.frame);
            sw__server_check_limits(s); /* a report completes a push, which may apply */
            checkpoint_if_due(s);
        }
}

/* Once the run is concluded the shards' part is over but for their goodbyes: what else they
 * still say (answers to the last pings, reports of pushes made before DONE) is read and
 * dropped, where left unread it would wake the loop at once for ever (in process: hold its
 * clock). The end goes again to those that owe one. */
static void read_byes(server *s)
{
    sw_delivery d;
    for (uint32_t j = 0; j < s->shards.n; j++)
        for (int k = 0; k < BURST && sw_recv(s->shards.socks[j], &d) == 0; k++) {
            sw__shards_take_bye(s, j, &d);
            sw_frame_unref(d.frame);
        }
    sw__shards_end_again(s);
}

/* Silence counts only while the server listened: a turn long after the last (the process
 * stopped, its machine froze, a long evaluation) counts every worker and every shard as heard
 * from now, so that the heartbeats that waited in the sockets meanwhile are read (ZeroMQ's own
 * thread, stopped too, has them still to move), and the shards pinged again, before anyone is
 * judged, not taken for a crash of every worker or the loss of a shard. Turns come at least
 * every HEARTBEAT_CHECK_S. */
static void forgive_stall(server *s, double now)
{
    double stalled = now - s->last_turn - HEARTBEAT_CHECK_S;
    s->last_turn = now;
    if (!(stalled > STALL_S))
        return;
    s->steps_timed_from = now;
    for (uint32_t i = 0; i < s->n_live_conns; i++)
        s->conns[s->live_conns[i]].last_seen = now;
    for (uint32_t j = 0; j < s->shards.n; j++)
        s->shards.seen[j].heard = now;
    s->shards.restore_sent = now; /* the shards' answers from before it are read first */
}

/* A running worker that has pushed nothing for --step-timeout: its step is stuck (its
 * heartbeats, another thread's, say only that its process lives). Dropped as a crash, it hears
 * UNKNOWN and joins again should its step ever end. A joiner's first step may take
 * FIRST_STEP_ALLOWANCE times as long: a worker loads the data once a member, for as long as the
 * data take (a rejoiner keeps its data, but the server cannot tell it from a newcomer). */
#define FIRST_STEP_ALLOWANCE 10
static bool hung(server *s, uint32_t w, double now)
{
    if (!(s->p->step_timeout_s > 0) || !s->started)
        return false;
    const sw_worker_info *i = &sw_engine_get_view(s->engine)->workers[w];
    double from = fmax(fmax(i->released_t, i->push_t[0]), s->steps_timed_from);
    bool first = !(i->push_t[0] >= i->joined_t);
    double limit = s->p->step_timeout_s * (first ? FIRST_STEP_ALLOWANCE : 1);
    if (i->state != SW_WORKER_RUNNING || !(now - from > limit))
        return false;
    char why[96] = "";
    if (first)
        snprintf(why, sizeof why, " (its first since it joined, which loads the data: %d times "
                 "the limit)", FIRST_STEP_ALLOWANCE);
    sw_log(SW_LOG_WARN, "worker %u (%s) pushed nothing for %.3g s after its release%s "
           "(--step-timeout %.3g), though its heartbeats come: dropped as hung", w,
           s->conns[w].name, now - from, why, s->p->step_timeout_s);
    return true;
}

static void check_heartbeats(server *s, double now)
{
    if (s->shards.n && sw__shards_any_out(s)) /* no worker can push: none is timed */
        s->steps_timed_from = now;
    for (uint32_t i = 0, w; i < s->n_live_conns && !s->done; i += s->conns[w].live) {
        w = s->live_conns[i]; /* a drop takes it out of place i: the next comes there */
        conn *c = &s->conns[w];
        if (c->unreachable)
            sw_log(SW_LOG_WARN, "worker %u's connection is gone (a network fault?): it must "
                   "join again", w);
        if (c->unreachable || now - c->last_seen > s->p->heartbeat_timeout_s)
            sw__server_drop_worker(s, w, true);
        else if (hung(s, w, now))
            sw__server_remove_worker(s, w, true);
    }
}

/* Who has been silent too long, judged first in the turn on the clock the stall was measured
 * on: judged after the reads, a process stopped as it read (SIGSTOP, a frozen machine) took
 * every worker, or a shard, for dead when it went on. A shard's link made again is mended
 * before anything: a dropped worker's leave may order an apply. */
static void judge_silence(server *s)
{
    double now = sw__server_now(s);
    forgive_stall(s, now);
    if (s->shards.n && !s->concluded)
        sw__shards_notice_breaks(s);
    if (s->shards.n)
        sw__shards_settle_early_break(s, now);
    if (!s->done)
        check_heartbeats(s, now);
    if (s->shards.n && !s->concluded) /* also once done: the last gather waits on live shards */
        sw__shards_keep_alive(s, now);
}

/* A checkpoint of this run's model at `params`, version V (no optimizer state, no note). */
static sw_ckpt model_ckpt(const server *s, float *params, uint64_t V)
{
    sw_ckpt c = {.desc = sw_task_desc(s->task),
                 .model_version = V,
                 .seed = s->p->seed,
                 .n_params = s->n,
                 .params = params};
    snprintf(c.data_spec, sizeof c.data_spec, "%s", s->p->data);
    return c;
}

int sw__server_checkpoint(server *s, char *err)
{
    if (!s->p->checkpoint)
        return 0;
    if (s->shards.n) { /* the shards hold θ: each checkpoints its slice */
        s->last_ckpt_applies = sw_engine_version(s->engine);
        s->next_ckpt = sw__server_now(s) + (s->p->checkpoint_s > 0 ? s->p->checkpoint_s : INFINITY);
        sw__shards_save(s);
        return 0;
    }
    if (s->threaded) /* the jobs of applies decided still running: θ is not yet version V's */
        sw__pool_drain(&s->pool);
    s->as_resumed = s->as_resumed && sw_engine_version(s->engine) == s->last_ckpt_applies;
    if (s->as_resumed) {
        s->next_ckpt = sw__server_now(s) + (s->p->checkpoint_s > 0 ? s->p->checkpoint_s : INFINITY);
        return 0;
    }
    sw_ckpt c = model_ckpt(s, (float *)sw__server_params(s), sw_engine_version(s->engine));
    sw__server_resume_facts(s, c.note, sizeof c.note);
    int rc = sw_ckpt_put_optim(&c, sw_engine_optim(s->engine), err);
    s->last_ckpt_applies = sw_engine_version(s->engine);
    s->next_ckpt = sw__server_now(s) + (s->p->checkpoint_s > 0 ? s->p->checkpoint_s : INFINITY);
    if (!rc && !(rc = sw_ckpt_save(s->p->checkpoint, &c, err)))
        sw_file_note_saved(s->ckpt_lock);
    free(c.optim_state);
    return rc;
}

int sw__server_save_gathered(server *s, char *err)
{
    const sw__shards *h = &s->shards;
    if (!s->p->checkpoint || !h->n)
        return 0;
    char path[4096];
    snprintf(path, sizeof path, "%s.model", s->p->checkpoint);
    uint64_t V = sw_engine_version(s->engine);
    if (!h->have_theta || h->theta_version != V) {
        /* No model of this run's end: an earlier run's file would pass for one. */
        char also[160] = "";
        if (unlink(path) == 0)
            snprintf(also, sizeof also, ", and an earlier one removed");
        else if (errno != ENOENT)
            snprintf(also, sizeof also, ", and an earlier one could not be removed (%s)",
                     strerror(errno));
        sw_log(SW_LOG_WARN, "%s: not written%s: the shards' last gathered parameters are not of "
               "the run's end (version %llu)", path, also, (unsigned long long)V);
        return 0;
    }
    sw_ckpt c = model_ckpt(s, h->theta, h->theta_version);
    return sw_ckpt_save(path, &c, err);
}

bool sw__server_evaluate(server *s)
{
    uint64_t V;
    const float *theta = sw__server_params_at(s, &V);
    if (!theta)
        return false;
    sw_eval e;
    sw_task_evaluate(s->task, theta, &e);
    double now = sw__server_now(s);
    s->eval_version = V;
    s->r->final_acc = e.accuracy;
    s->r->final_loss = e.loss;
    sw__server_note(s, &(sw_event){.kind = SW_EV_EVAL, .t = now, .V = V, .loss = e.loss,
                                   .accuracy = e.accuracy});
    if (s->p->on_eval)
        s->p->on_eval(s->p->on_eval_ctx, now, V, e.loss, s->r->classify ? e.accuracy : NAN,
                      sw_engine_get_view(s->engine)->n_live);
    s->next_eval = now + s->p->eval_every_s;
    if (!isfinite(e.loss)) { /* every worker's next step would fail on these parameters */
        char why[SW_ERR_LEN];
        snprintf(why, sizeof why, "the parameters diverged: %s loss %g at version %llu "
                 "(a lower --lr?)%s", s->r->held_out, e.loss, (unsigned long long)V,
                 s->p->checkpoint ? "; the checkpoint keeps the last finite save" : "");
        sw__server_fail(s, SW_ERANGE, why);
        return false;
    }
    bool improved;
    return sw_stopper_eval(&s->stopper,
                           &(sw_stop_eval){.accuracy = e.accuracy,
                                           .loss = e.loss,
                                           .train_loss = NAN,
                                           .classify = s->r->classify},
                           &improved) == SW_STOP_TARGET_ACC;
}

void sw__server_gathered(server *s)
{
    /* The target counts on a model the run can end with: the version the run is at (the
     * slices are of one version: sliced()). Decisions wait for a gather, but a crash or a
     * departure may apply meanwhile; then the shards are asked again at once. (Counted on an
     * older version, the run ended on a model that missed the target it claimed.) */
    bool whole = s->shards.theta_version == sw_engine_version(s->engine);
    if (!sw__server_evaluate(s))
        return;
    if (whole)
        s->r->reached = s->done = true;
    else
        sw__shards_gather(s);
}

/* An evaluation is due: now, or in a sharded run once the shards' slices are in. */
static void evaluation_due(server *s)
{
    if (!s->shards.n) {
        if (sw__server_evaluate(s))
            s->r->reached = s->done = true;
        return;
    }
    s->next_eval = sw__server_now(s) + s->p->eval_every_s;
    sw__shards_gather(s);
}

/* The next evaluation; once before the start (the initial model), then none until it. */
static double eval_due_at(const server *s)
{
    return s->started || s->next_eval == 0 ? s->next_eval : INFINITY;
}

/* What is due now: the policy's wake-up, an evaluation, a stopping rule, a checkpoint. */
static void deadlines(server *s)
{
    double now = sw__server_now(s);
    /* A wake-up waits with the pushes for the last apply's norms (server_shards.c). */
    if (s->wake_at >= 0 && now >= s->wake_at && !sw__shards_paused(s)) {
        sw_engine_result res;
        if (sw__server_engine_ok(s, sw_engine_tick(s->engine, now, &res), "wake-up", SW_NO_WORKER))
            sw__server_follow(s, &res);
    }
    if (now >= eval_due_at(s))
        evaluation_due(s);
    sw__server_check_limits(s);
    const sw_server_params *p = s->p;
    if (p->log && !s->log_failed && ferror(p->log)) { /* said now; the run fails at its end */
        s->log_failed = true;
        sw_log(SW_LOG_WARN, "the event log (--log) could not be written (a full disk?): it is "
               "incomplete from t=%.1f s on, and the run will end as failed", now);
    }
    checkpoint_if_due(s);
}

/* Goodbyes come in milliseconds; a wait longer than a second (a worker stopped or cut off) is
 * said once, or the server would seem hung. */
static void say_waiting(server *s)
{
    if (s->finished || s->said_waiting || sw__server_now(s) - s->r->elapsed_s < 1 ||
        !s->n_live_conns) /* a failed start's wait for joiners says nothing */
        return;
    s->said_waiting = true;
    sw_log(SW_LOG_INFO, "the run is over: waiting up to %.0f s more for the workers' goodbyes "
           "(a signal ends the wait)", s->farewell_by - sw__server_now(s));
}

/* A done run is over at once; a sharded one once a gather at its last version is evaluated
 * and, with --checkpoint, every shard has checkpointed it (or a failure ends it). Then it is
 * concluded, and finished once its workers have said goodbye. */
static void finish_when_over(server *s)
{
    sw__shards *h = &s->shards;
    uint64_t V = sw_engine_version(s->engine);
    bool evaluated = h->have_theta && h->theta_version == V && s->eval_version == V;
    bool saved = !s->p->checkpoint || h->saved == V;
    if (!h->n || s->rc || (evaluated && saved) || s->concluded) {
        sw__server_conclude(s);
        s->finished = !sw__server_farewells_due(s);
        say_waiting(s);
        return;
    }
    if (!sw_shard_set_empty(&h->restoring))
        return; /* the shards are going back to their checkpoint */
    if (!evaluated && !h->gathering)
        sw__shards_gather(s);
    if (!saved)
        sw__shards_save(s);
}

/* The next deadline, on the network's clock. */
static double next_due(const server *s)
{
    double now = sw__server_now(s), next = now + HEARTBEAT_CHECK_S;
    if (s->shards.n && (!s->concluded || sw__shards_byes_due(s)) && s->shards.next_ping < next)
        next = s->shards.next_ping; /* a ping, or the end told again */
    if (s->concluded && s->farewell_by < next)
        next = s->farewell_by;
    if (s->done) /* no evaluation or wake-up is taken once done: one due would spin the loop */
        return s->t0 + next;
    next = eval_due_at(s) < next ? eval_due_at(s) : next;
    /* a wake-up waits while decisions do (sw__shards_paused): due meanwhile, it would spin */
    bool paused = sw__shards_paused(s); /* never in an unsharded run */
    next = !paused && s->wake_at >= 0 && s->wake_at < next ? s->wake_at : next;
    return s->t0 + next;
}

double sw__server_turn(void *ctx, double now)
{
    (void)now;
    server *s = ctx;
    const sw_server_params *p = s->p;
    judge_silence(s);
    if (s->ops)
        drain(s, s->ops);
    if (s->concluded)
        read_byes(s);
    else
        drain_shards(s);
    drain(s, s->sock);
    if (!s->done)
        deadlines(s);
    if (sw_stop_requested(p->stop))
        s->done = true;
    if (s->done)
        finish_when_over(s);
    if (s->shards.n)
        sw__shards_flush(s); /* the turn's orders, one frame per shard */
    return s->finished ? SW_AGENT_DONE : next_due(s);
}
