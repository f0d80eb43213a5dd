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

static void mark_changed(sw__peer *pe, uint32_t j)
{
    if (!pe->changed[j]) {
        pe->changed[j] = 1;
        pe->changed_list[pe->n_changed++] = j;
    }
}

/* Pairs of a payload (added to our weights for DELTA, set for SLICE). */
static void take_pairs(sw__peer *pe, const sw_msg *m, bool add)
{
    size_t nnz;
    char why[SW_ERR_LEN];
    if (sw_msg_get_pairs(m, (uint32_t)pe->n, pe->idx, pe->val, pe->n, &nnz, why)) {
        sw_log(SW_LOG_WARN, "ignoring a bad %s: %s", sw_msg_type_name(m->type), why);
        return;
    }
    int me = sw__peer_my_rank(pe);
    for (size_t k = 0; k < nnz; k++) {
        uint32_t j = pe->idx[k];
        pe->theta[j] = add ? pe->theta[j] + pe->val[k] : pe->val[k];
        if (add && sw__peer_owner(pe, j) == me)
            mark_changed(pe, j);
    }
}

/* Our whole replica as SLICE pairs, for a member that just said hello. */
static void send_replica(sw__peer *pe, int rank)
{
    size_t k = 0;
    for (uint32_t j = 0; j < pe->n; j++)
        if (pe->theta[j] != 0.0f) {
            pe->idx[k] = j;
            pe->val[k++] = pe->theta[j];
        }
    sw_msg_put_pairs(pe->pay, pe->idx, pe->val, k);
    sw__peer_send(pe, rank, SW_MSG_PEER_SLICE, pe->pay, 8 * k);
}

/* A message refused: counted, and said for the first few only (a stranger's flood would
 * drown the log), with the sender's name made safe to print. */
static void refuse(sw__peer *pe, const char *from, const char *why)
{
    char name[SW_PEER_EP_LEN];
    sw_printable(name, sizeof name, from, strlen(from));
    sw_log_counted(SW_LOG_WARN, &pe->r->refused, "ignoring a message from %s: %s", name, why);
}

/* A HELLO's payload: the endpoint, a newline, the run (both cut to fit). */
static void read_hello(const sw_msg *m, char *ep, size_t ep_cap, char *run, size_t run_cap)
{
    const char *text = (const char *)m->payload, *nl = memchr(text, '\n', m->payload_len);
    size_t ep_len = nl ? (size_t)(nl - text) : m->payload_len;
    size_t run_len = nl ? m->payload_len - ep_len - 1 : 0;
    snprintf(ep, ep_cap, "%.*s", (int)(ep_len < ep_cap ? ep_len : ep_cap - 1), text);
    snprintf(run, run_cap, "%.*s", (int)(run_len < run_cap ? run_len : run_cap - 1),
             nl ? nl + 1 : "");
}

/* The value of `key` in a run ("model=... params=... data=... seed=..."), into out. */
static void run_field(const char *run, const char *key, char *out, size_t cap)
{
    size_t klen = strlen(key);
    const char *at = run;
    while (*at && !(strncmp(at, key, klen) == 0 && at[klen] == '='))
        at += strcspn(at, " ") + (at[strcspn(at, " ")] == ' ');
    size_t len = *at ? strcspn(at + klen + 1, " ") : 0;
    snprintf(out, cap, "%.*s", (int)len, *at ? at + klen + 1 : "");
}

/* A peer whose run is not ours would train another model on our weights: it is told how it
 * differs (each field that does), and not admitted. */
static bool same_run(sw__peer *pe, const char *from, const char *ep, const char *run)
{
    if (!strcmp(run, pe->run))
        return true;
    static const char *const keys[] = {"model", "params", "data", "seed"};
    char why[SW_PEER_RUN_LEN + 64] = "its run is not the group's:";
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
        char theirs[SW_PEER_RUN_LEN], ours[SW_PEER_RUN_LEN];
        run_field(run, keys[k], theirs, sizeof theirs);
        run_field(pe->run, keys[k], ours, sizeof ours);
        size_t len = strlen(why);
        if (strcmp(theirs, ours))
            snprintf(why + len, sizeof why - len, " %s %.60s, the group's %.60s;", keys[k],
                     *theirs ? theirs : "(none)", ours);
    }
    why[strlen(why) - 1] = '\0'; /* the last separator */
    refuse(pe, from, why);
    sw__peer_tell(pe, ep, SW_MSG_ERROR, why, strlen(why));
    return false;
}

static void on_hello(sw__peer *pe, const char *from, const sw_msg *m)
{
    char ep[SW_PEER_EP_LEN], run[SW_PEER_RUN_LEN];
    read_hello(m, ep, sizeof ep, run, sizeof run);
    if (sw__peer_rank(pe, ep) < 0 && !same_run(pe, from, ep, run))
        return;
    int rank = sw__peer_add(pe, ep);
    if (rank < 0) {
        char why[SW_PEER_EP_LEN + 64];
        sw_printable(why, sizeof why, ep, strlen(ep));
        snprintf(why + strlen(why), sizeof why - strlen(why), ": not admitted (full, or not an "
                 "endpoint)");
        refuse(pe, from, why);
        return;
    }
    pe->m[rank].heard = sw__peer_now(pe);
    char text[SW_PEER_MEMBERS_LEN];
    size_t n = sw__peer_members_text(pe, text, sizeof text);
    sw__peer_broadcast(pe, SW_MSG_PEER_MEMBERS, text, n);
    send_replica(pe, sw__peer_rank(pe, ep));
}

/* A member's message (or anyone's HELLO: take and replay_held decide which). */
static void handle(sw__peer *pe, const char *from, const sw_msg *m)
{
    int rank = sw__peer_rank(pe, from);
    if (rank >= 0)
        pe->m[rank].last_seen = pe->m[rank].heard = sw__peer_now(pe);
    switch (m->type) {
    case SW_MSG_PEER_HELLO: on_hello(pe, from, m); break;
    case SW_MSG_PEER_MEMBERS: sw__peer_merge_members(pe, m); break;
    case SW_MSG_PEER_DELTA:
        take_pairs(pe, m, true);
        pe->started |= !pe->training; /* a member trains: the group was whole for it */
        break;
    case SW_MSG_PEER_SLICE:
        take_pairs(pe, m, false);
        pe->have_replica = true;
        break;
    case SW_MSG_PEER_STOP:
        pe->done = true;
        pe->r->reached = m->payload_len == 7 && !memcmp(m->payload, "reached", 7);
        break;
    case SW_MSG_PEER_BYE: sw__peer_remove(pe, rank, "left"); break;
    case SW_MSG_ERROR: /* our contact turned us away while we join; or a member dropped us */
        if (pe->training && rank >= 0 && !pe->cut_off[0]) {
            char said[121]; /* the wire's bytes, printable */
            sw_printable_text(said, sizeof said, m->payload, m->payload_len);
            snprintf(pe->cut_off, sizeof pe->cut_off, "member %s says: %s", from, said);
            pe->done = true;
        } else if (!pe->have_replica && pe->p->join && !strcmp(from, pe->p->join))
            sw_printable_text(pe->refused, sizeof pe->refused, m->payload, m->payload_len);
        break;
    default: sw_log(SW_LOG_WARN, "ignoring a '%s' message", sw_msg_type_name(m->type));
    }
}

/* A member we dropped as silent speaks on, and no member list names it again: it was slow, not
 * dead, and would train on as a second group (and judge). Told once (ERROR), it ends. */
static void tell_if_dropped(sw__peer *pe, const char *from)
{
    static const char why[] = "dropped from the group as silent for longer than --timeout";
    if (sw__peer_forget_dropped(pe, from))
        sw__peer_tell(pe, from, SW_MSG_ERROR, why, sizeof why - 1);
}

/* A held message given up: pushed out by newer ones, or held --timeout unclaimed (expired:
 * only then is its sender, if we dropped it, told so; one that was pushed out may be a
 * member again whose list has not come yet). */
static void refuse_held(sw__peer *pe, const sw__held *h, bool expired)
{
    char why[64];
    snprintf(why, sizeof why, "a '%s' from a non-member", sw_msg_type_name(h->type));
    refuse(pe, h->from, why);
    if (expired)
        tell_if_dropped(pe, h->from);
    sw_frame_unref(h->frame);
}

/* Only members speak for the group: a stranger may say HELLO to join, and nothing else counts
 * (a non-member's STOP would end the run, its MEMBERS add fake peers). But a member's DELTA can
 * outrun the MEMBERS that names its sender (they come on different connections): it is held,
 * SW_PEER_HELD at most, until a member list names the sender (replay_held) or --timeout passes,
 * and only then refused. The oldest makes room, so that a stranger's flood holds little. */
static void hold(sw__peer *pe, const char *from, sw_frame *frame, sw_msg_type type)
{
    if (pe->n_held == SW_PEER_HELD) {
        refuse_held(pe, &pe->held[0], false);
        memmove(pe->held, pe->held + 1, (size_t)--pe->n_held * sizeof *pe->held);
    }
    sw__held *h = &pe->held[pe->n_held++];
    snprintf(h->from, sizeof h->from, "%s", from);
    h->frame = sw_frame_ref(frame);
    h->type = type;
    h->at = sw__peer_now(pe);
}

/* A frame read whole: handled, held or refused. */
static void take_frame(sw__peer *pe, const char *from, sw_frame *frame)
{
    sw_msg m;
    char why[SW_ERR_LEN];
    if (sw_msg_decode(sw_frame_data(frame), sw_frame_size(frame),
                      8 * (uint64_t)pe->n + SW_PEER_MEMBERS_LEN, &m, why) != 0)
        refuse(pe, from, why);
    else if (sw__peer_rank(pe, from) < 0 && m.type != SW_MSG_PEER_HELLO)
        hold(pe, from, frame, m.type);
    else
        handle(pe, from, &m);
}

/* Handles the held messages whose senders are members now, in the order they came (one may
 * be the MEMBERS that names the next one's sender), and refuses those held past --timeout. */
static void replay_held(sw__peer *pe)
{
    for (bool more = true; more;) {
        more = false;
        int kept = 0;
        for (int i = 0; i < pe->n_held; i++) {
            sw__held h = pe->held[i];
            if (sw__peer_rank(pe, h.from) >= 0) {
                take_frame(pe, h.from, h.frame);
                sw_frame_unref(h.frame);
                more = true;
            } else if (sw__peer_now(pe) - h.at > pe->p->timeout_s) {
                refuse_held(pe, &h, true);
            } else {
                pe->held[kept++] = h;
            }
        }
        pe->n_held = kept;
    }
}

/* One delivery: a single frame, named by its route. */
static void take(sw__peer *pe, const sw_delivery *d)
{
    char from[SW_PEER_EP_LEN];
    size_t len = d->route_len < sizeof from - 1 ? d->route_len : sizeof from - 1;
    memcpy(from, d->route, len);
    from[len] = '\0';
    if (d->multipart)
        refuse(pe, from, "a message must be a single frame");
    else if (!d->gone)
        take_frame(pe, from, d->frame);
}

void sw__peer_receive_all(sw__peer *pe, double wait_s)
{
    bool ready;
    if (wait_s > 0 && sw_net_wait(pe->net, &pe->in, 1, sw_net_now(pe->net) + wait_s, &ready, NULL))
        return;
    sw_delivery d;
    while (sw_recv(pe->in, &d) == 0) {
        take(pe, &d);
        sw_frame_unref(d.frame);
    }
    replay_held(pe);
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
                mark_changed(pe, pe->idx[b]);
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
    if (!rc)
        rc = sw_net_zmq_new(&pe->net, err);
    if (!rc)
        rc = setup_model(pe, err);
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
static int join(sw__peer *pe, char *err)
{
    if (sw__peer_add(pe, pe->p->join) < 0)
        return sw_fail(err, SW_EINVAL, "cannot connect to %s", pe->p->join);
    char hello[SW_PEER_EP_LEN + SW_PEER_RUN_LEN + 1];
    size_t len = sw__peer_hello(pe, hello, sizeof hello);
    sw__peer_send(pe, sw__peer_rank(pe, pe->p->join), SW_MSG_PEER_HELLO, hello, len);
    double deadline = sw__peer_now(pe) + pe->p->timeout_s * 5;
    while (!pe->have_replica && !pe->refused[0] && sw__peer_now(pe) < deadline &&
           !(pe->p->stop && *pe->p->stop)) {
        /* our dialer to the contact too: a CURVE handshake it refuses fails the join, saying why */
        int contact = sw__peer_rank(pe, pe->p->join);
        sw_sock *socks[2] = {pe->in, contact >= 0 ? pe->m[contact].out : NULL};
        bool ready[2];
        /* on the network's clock: ours (sw__peer_now) counts from t0, a deadline long past */
        int rc = sw_net_wait(pe->net, socks, socks[1] ? 2 : 1, sw_net_now(pe->net) + 0.1, ready,
                             err);
        if (rc)
            return rc;
        sw__peer_receive_all(pe, 0);
    }
    if (pe->refused[0])
        return sw_fail(err, SW_EMISMATCH, "%s turned us away: %s", pe->p->join, pe->refused);
    if (!pe->have_replica)
        return sw_fail(err, SW_EIO, "%s did not answer our hello", pe->p->join);
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
    for (int i = 0; i < pe->n_held; i++) /* their senders never became members */
        refuse_held(pe, &pe->held[i], false);
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
}

static bool timed_out(const sw__peer *pe)
{
    return pe->p->max_time_s > 0 && sw__peer_now(pe) >= pe->p->max_time_s;
}

static bool should_stop(const sw__peer *pe)
{
    return pe->done || (pe->p->stop && *pe->p->stop) || timed_out(pe);
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
