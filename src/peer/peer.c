/* The decentralized peer (syncwise/peer.h): one loop alternating a training step with whatever
 * the other members sent; every round_steps steps a broadcast of our slice's changes, a check
 * for silent members and, on the first member, the loss and the stopping rules. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "peer_internal.h"
#include "syncwise/bytes.h"
#include "syncwise/clock.h"
#include "syncwise/err.h"
#include "syncwise/file.h"
#include "syncwise/log.h"
#include "syncwise/run.h"
#include "syncwise/net.h"

sw_peer_params sw_peer_default_params(void)
{
    return (sw_peer_params){.bind = "tcp://127.0.0.1:*",
                            .model = "svm",
                            .data = "sparse:n=20000,test=2000,dim=10000",
                            .batch = 16,
                            .lr = 0.35f,
                            .seed = 1,
                            .round_steps = 50,
                            .timeout_s = 2};
}

/* One SGD step on our own batch: apply it to our replica, send each owner its slice's part
 * (the pairs of a sparse gradient, or of a dense one every weight). */
static void step(sw__peer *pe)
{
    sw_learner_next(pe->learner);
    sw_learner_grad(pe->learner, pe->theta, &pe->grad);
    size_t nnz = pe->grad.nnz;
    const uint32_t *idx = pe->grad.dense ? pe->all : pe->grad.idx;
    const float *g = pe->grad.dense ? pe->grad.dense : pe->grad.val;
    int me = sw__peer_my_rank(pe);
    for (size_t k = 0; k < nnz; k++) {
        pe->idx[k] = idx[k];
        pe->val[k] = -pe->p->lr * g[k];
        pe->theta[idx[k]] += pe->val[k];
    }
    for (size_t a = 0, b; a < nnz; a = b) { /* indices ascend, slices are ranges: runs */
        int owner = sw__peer_owner(pe, pe->idx[a]);
        for (b = a; b < nnz && sw__peer_owner(pe, pe->idx[b]) == owner; b++)
            if (owner == me)
                sw__peer_mark_changed(pe, pe->idx[b]);
        if (owner != me) {
            sw_msg_put_pairs(pe->pay, pe->idx + a, pe->val + a, b - a);
            sw__peer_send(pe, owner, SW_MSG_PEER_DELTA, pe->pay, 8 * (b - a));
            pe->r->deltas_sent++;
        }
    }
    pe->r->steps++;
    if (pe->p->delay_s > 0) {
        struct timespec ts = {.tv_sec = (time_t)pe->p->delay_s,
                              .tv_nsec = (long)((pe->p->delay_s - (time_t)pe->p->delay_s) * 1e9)};
        nanosleep(&ts, NULL);
    }
}

/* The first member's part of a round: the loss, the best weights, the stopping rules. */
static void judge(sw__peer *pe, uint32_t *since_best)
{
    sw_eval e;
    sw_task_evaluate(pe->task, pe->theta, &e);
    pe->r->loss_peer = true;
    if (e.loss < pe->r->best_loss) {
        pe->r->best_loss = e.loss;
        memcpy(pe->best, pe->theta, pe->n * sizeof *pe->best);
        *since_best = 0;
    } else {
        ++*since_best;
    }
    sw_log(SW_LOG_DEBUG, "round %llu: loss %.4f (best %.4f), %d members",
           (unsigned long long)pe->r->rounds, e.loss, pe->r->best_loss, pe->n_members);
    bool reached = pe->p->target_loss > 0 && e.loss <= pe->p->target_loss;
    if (reached || (pe->p->patience && *since_best >= pe->p->patience)) {
        pe->r->reached = reached;
        pe->done = true;
        sw__peer_broadcast(pe, SW_MSG_PEER_STOP, reached ? "reached" : "patience", reached ? 7 : 8);
    }
}

static int by_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Every round: our slice's changes to everyone (also our heartbeat), silent members out. */
static void round_end(sw__peer *pe, uint32_t *since_best)
{
    qsort(pe->changed_list, pe->n_changed, sizeof *pe->changed_list, by_u32);
    for (size_t k = 0; k < pe->n_changed; k++) {
        uint32_t j = pe->changed_list[k];
        pe->idx[k] = j;
        pe->val[k] = pe->theta[j];
        pe->changed[j] = 0;
    }
    sw_msg_put_pairs(pe->pay, pe->idx, pe->val, pe->n_changed);
    sw__peer_broadcast(pe, SW_MSG_PEER_SLICE, pe->pay, 8 * pe->n_changed);
    pe->n_changed = 0;
    sw__peer_drop_silent(pe);
    pe->r->rounds++;
    if (sw__peer_my_rank(pe) == 0)
        judge(pe, since_best);
}

/* The model and its data, before we listen: the model's size bounds what we read. */
static int setup_model(sw__peer *pe, char *err)
{
    const sw_peer_params *p = pe->p;
    int rc = sw_task_data_load(&pe->data, p->model, p->data, SW_DATA_SEED, err);
    if (!rc)
        rc = sw_task_new(&pe->task, p->model, &pe->data, p->batch > 256 ? p->batch : 256, 0, err);
    if (!rc)
        pe->n = sw_task_n_params(pe->task);
    if (!rc && 8 * (uint64_t)pe->n + SW_PEER_MEMBERS_LEN > SW_PROTO_MAX_PAYLOAD)
        return sw_fail(err, SW_EINVAL,
                       "a model of %zu parameters is over the protocol's 2 GiB frames, which "
                       "carry a member's changes (8 bytes a parameter): a peer group cannot "
                       "hold it; a server's shards can (syncwise server --shards)", pe->n);
    return rc;
}

/* Our batches: in an order of our own (the hash of our endpoint seeds it), over the whole
 * training set; and the run our HELLO says. */
static int setup_task(sw__peer *pe, char *err)
{
    const sw_peer_params *p = pe->p;
    int rc = 0;
    uint64_t h = 1469598103934665603ULL;
    for (const char *c = pe->me; *c; c++)
        h = (h ^ (uint8_t)*c) * 1099511628211ULL;
    sw_learner_params lp = {
        .batch = p->batch, .mode = SW_BATCH_SAMPLE, .ranks = 1, .seed = p->seed ^ h};
    if (!rc)
        rc = sw_learner_new(&pe->learner, pe->task, &lp, err);
    if (!rc)
        rc = sw_grad_alloc(&pe->grad, pe->learner, err);
    if (!rc)
        snprintf(pe->run, sizeof pe->run, "model=%.160s params=%zu data=%08x seed=%llu",
                 sw_task_spec(pe->task), pe->n, sw_task_data_fingerprint(&pe->data),
                 (unsigned long long)p->seed);
    return rc;
}

static int setup(sw__peer *pe, char *err)
{
    const sw_peer_params *p = pe->p;
    char join[300];
    int rc = p->join ? sw_endpoint_check(p->join, false, join, sizeof join, err) : 0;
    if (!rc && p->endpoint_file)
        rc = sw_file_claim(p->endpoint_file, "--endpoint-file", &pe->ep_lock, err);
    if (!rc)
        rc = sw_net_zmq_new(&pe->net, err);
    if (!rc)
        rc = setup_model(pe, err);
    rc = sw_run_stopped_early(p->stop, rc, err);
    /* no member sends more than every weight's pair or a member list (take_frame's limit): a
     * larger frame is dropped as it comes, not read whole and then refused */
    if (!rc)
        rc = sw_listen(pe->net, &pe->in,
                       &(sw_listen_params){.endpoint = p->bind,
                                           .curve_key = p->curve_key,
                                           .curve_group = true,
                                           .max_frame = sw_msg_size(8 * pe->n +
                                                                    SW_PEER_MEMBERS_LEN)},
                       err);
    if (rc)
        return rc;
    snprintf(pe->me, sizeof pe->me, "%s", sw_sock_endpoint(pe->in));
    pe->t0 = sw_net_now(pe->net);
    if ((rc = setup_task(pe, err)))
        return rc;
    size_t n = pe->n;
    pe->theta = calloc(n, sizeof *pe->theta);
    pe->best = calloc(n, sizeof *pe->best);
    pe->changed = calloc(n, 1);
    pe->changed_list = malloc(n * sizeof *pe->changed_list);
    pe->all = malloc(n * sizeof *pe->all);
    pe->idx = malloc(n * sizeof *pe->idx);
    pe->val = malloc(n * sizeof *pe->val);
    pe->pay = malloc(8 * n);
    if (!pe->theta || !pe->best || !pe->changed || !pe->changed_list || !pe->all || !pe->idx ||
        !pe->val || !pe->pay)
        return sw_fail(err, SW_ENOMEM, "out of memory for %zu weights", n);
    for (size_t j = 0; j < n; j++)
        pe->all[j] = (uint32_t)j;
    if (!p->join) /* the group's first member starts the weights; joiners take its replica */
        sw_task_init_params(pe->task, pe->theta, p->seed);
    sw__peer_add(pe, pe->me);
    if (p->endpoint_file)
        return sw_file_write_line(p->endpoint_file, pe->me, "endpoint file", err);
    return 0;
}

/* Says hello to a member and waits for its replica. */
/* What came back on our dialer to the contact: a peer answers on its own dialer, never there,
 * so anything is from no peer (a server's ERROR, say). Read, or it would keep the wait ready
 * and spin; said, as the join's refusal. */
static void read_contact(sw__peer *pe, sw_sock *out)
{
    sw_delivery d;
    while (sw_recv(out, &d) == 0) {
        sw_msg m;
        char why[SW_ERR_LEN];
        if (d.frame && !pe->refused[0]) {
            bool read = !sw_msg_decode(sw_frame_data(d.frame), sw_frame_size(d.frame), 1 << 16,
                                       &m, why);
            snprintf(pe->refused, sizeof pe->refused, "it is no peer: it answered %s%s%.*s",
                     read ? sw_msg_type_name(m.type) : "a frame of no protocol",
                     read && m.payload_len ? ": " : "",
                     read && m.type == SW_MSG_ERROR ? (int)m.payload_len : 0,
                     read ? (const char *)m.payload : "");
        }
        sw_frame_unref(d.frame);
    }
}

static int join(sw__peer *pe, char *err)
{
    if (sw__peer_add(pe, pe->p->join) < 0)
        return sw_fail(err, SW_EINVAL, "cannot connect to %s", pe->p->join);
    char hello[SW_PEER_EP_LEN + SW_PEER_RUN_LEN + 1];
    size_t len = sw__peer_hello(pe, hello, sizeof hello);
    sw__peer_send(pe, sw__peer_rank(pe, pe->p->join), SW_MSG_PEER_HELLO, hello, len);
    /* Five silences' worth for a busy contact, and never past --max-time. */
    double deadline = sw__peer_now(pe) + pe->p->timeout_s * 5;
    if (pe->p->max_time_s > 0 && pe->p->max_time_s < deadline)
        deadline = pe->p->max_time_s;
    while (!pe->have_replica && !pe->refused[0] && sw__peer_now(pe) < deadline &&
           !sw_stop_requested(pe->p->stop)) {
        /* our dialer to the contact too: a CURVE handshake it refuses fails the join, saying why */
        int contact = sw__peer_rank(pe, pe->p->join);
        sw_sock *socks[2] = {pe->in, contact >= 0 ? pe->m[contact].out : NULL};
        bool ready[2];
        /* on the network's clock: ours (sw__peer_now) counts from t0, a deadline long past */
        int rc = sw_net_wait(pe->net, socks, socks[1] ? 2 : 1, sw_net_now(pe->net) + 0.1, ready,
                             err);
        if (rc)
            return rc;
        if (socks[1] && ready[1])
            read_contact(pe, socks[1]);
        sw__peer_receive_all(pe, 0);
    }
    if (pe->refused[0])
        return sw_fail(err, SW_EMISMATCH, "%s turned us away: %s", pe->p->join, pe->refused);
    if (!pe->have_replica)
        return sw_fail(err, SW_EIO, "%s did not answer our hello within %.1f s (5 x --timeout, "
                       "and no longer than --max-time)", pe->p->join, sw__peer_now(pe));
    sw_eval e;
    sw_task_evaluate(pe->task, pe->theta, &e);
    pe->r->join_loss = e.loss;
    sw_log(SW_LOG_INFO, "joined through %s: %d members, weights at loss %.4f", pe->p->join,
           pe->n_members, e.loss);
    return 0;
}

/* The judge's best weights, one per line, written atomically. */
static int write_best(const sw__peer *pe, char *err)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    for (size_t j = 0; j < pe->n; j++)
        fprintf(f, "%.9g\n", pe->best[j]);
    int bad = ferror(f);
    fclose(f);
    int rc = bad ? sw_fail(err, SW_ENOMEM, "out of memory")
                 : sw_file_write_atomic(pe->p->out, (const uint8_t *)text, len, "weights", err);
    free(text);
    return rc;
}

static void cleanup(sw__peer *pe)
{
    sw__peer_refuse_all_held(pe);
    for (int k = 0; k < pe->n_members; k++)
        sw_sock_close(pe->m[k].out);
    sw_sock_close(pe->in);
    sw_net_free(pe->net);
    sw_grad_free(&pe->grad);
    sw_learner_free(pe->learner);
    sw_task_free(pe->task);
    sw_task_data_free(&pe->data);
    free(pe->theta);
    free(pe->best);
    free(pe->changed);
    free(pe->changed_list);
    free(pe->all);
    free(pe->idx);
    free(pe->val);
    free(pe->pay);
    sw_file_release_removing(pe->p->endpoint_file, pe->ep_lock);
}

static bool timed_out(const sw__peer *pe)
{
    return pe->p->max_time_s > 0 && sw__peer_now(pe) >= pe->p->max_time_s;
}

static bool should_stop(const sw__peer *pe)
{
    return pe->done || sw_stop_requested(pe->p->stop) || timed_out(pe);
}

/* Nobody trains before the group is whole: --wait-peers live members, or one of them trains
 * already. A wait that the time limit ends has trained nothing, and says so. */
static int wait_group(sw__peer *pe, char *err)
{
    uint32_t want = sw__peer_wait_for(pe);
    pe->last_tick = sw__peer_now(pe); /* a stop from here on is seen as a gap */
    if (sw__peer_live(pe) < (int)want)
        sw_log(SW_LOG_INFO, "the group waits for %u members before it trains: %d in", want,
               sw__peer_live(pe));
    while (!pe->started && sw__peer_live(pe) < (int)(want = sw__peer_wait_for(pe)) &&
           !should_stop(pe))
        sw__peer_wait_turn(pe);
    if (!pe->started && sw__peer_live(pe) < (int)want && timed_out(pe))
        return sw_fail(err, SW_EIO, "the group never had the %u live members it waited for "
                       "(--wait-peers; %d at the end) within --max-time %g s: nobody trained",
                       want, sw__peer_live(pe), pe->p->max_time_s);
    return 0;
}

int sw_peer_run(const sw_peer_params *p, sw_peer_result *out, char *err)
{
    memset(out, 0, sizeof *out);
    out->best_loss = 1e300;
    if (p->batch == 0 || p->round_steps == 0 || !(p->timeout_s > 0) || !(p->lr > 0))
        return sw_fail(err, SW_EINVAL, "batch, round steps, timeout and lr must be positive");
    sw__peer *pe = calloc(1, sizeof *pe);
    if (!pe)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    pe->p = p;
    pe->r = out;
    pe->ep_lock = -1;
    int rc = setup(pe, err);
    if (!rc && p->join)
        rc = join(pe, err);
    if (!rc && !(rc = wait_group(pe, err)))
        pe->training = true;
    uint32_t since_best = 0;
    while (!rc && !should_stop(pe)) {
        double now = sw__peer_now(pe); /* a turn sends: a long gap was our own silence */
        pe->was_silent |= pe->last_tick > 0 && now - pe->last_tick > p->timeout_s;
        pe->last_tick = now;
        step(pe);
        sw__peer_receive_all(pe, 0);
        if (out->steps % p->round_steps == 0)
            round_end(pe, &since_best);
    }
    if (!rc && pe->alone)
        rc = sw_fail(err, SW_EIO, "every other member has been silent for --timeout %g s: this "
                     "peer was cut off from the group (stopped?), or the group is gone; it ends "
                     "rather than train on alone as a second run", p->timeout_s);
    if (!rc && pe->cut_off[0])
        rc = sw_fail(err, SW_EIO, "%s: this peer (a step or a stop longer than --timeout %g s?) "
                     "ends rather than train on as a second run", pe->cut_off, p->timeout_s);
    /* The judge's --max-time ends the group's run, as its other stopping rules do; any other
     * member's ends its own part. */
    if (!rc && !pe->done && timed_out(pe) && sw__peer_my_rank(pe) == 0)
        sw__peer_broadcast(pe, SW_MSG_PEER_STOP, "time", 4);
    else if (!rc && !pe->done)
        sw__peer_broadcast(pe, SW_MSG_PEER_BYE, pe->me, strlen(pe->me));
    /* Who judges changes when a member with a smaller endpoint joins: the last judge reports,
     * judging once now if it never did. */
    if (!rc && sw__peer_my_rank(pe) == 0 && !out->loss_peer) {
        bool done = pe->done;
        judge(pe, &since_best);
        pe->done = done;
    }
    out->loss_peer = out->loss_peer && sw__peer_my_rank(pe) == 0;
    if (!rc && p->out && out->loss_peer)
        rc = write_best(pe, err);
    out->elapsed_s = pe->net ? sw__peer_now(pe) : 0;
    out->members = (uint32_t)pe->n_members;
    out->refused_keys = pe->net ? sw_net_refused(pe->net) : 0;
    /* A failed part has nothing to deliver (a STOP is a judge's, at a run's good end): what is
     * queued for members that may be dead must not hold our exit for --timeout. */
    for (int k = 0; rc && k < pe->n_members; k++)
        sw_sock_discard(pe->m[k].out);
    cleanup(pe);
    free(pe);
    return rc;
}
