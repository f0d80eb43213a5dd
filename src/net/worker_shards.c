/* A worker of a sharded run (syncwise/shard.h): it joins the server as always, and WELCOME
 * names the shards and the chunk table. A release with SW_FLAG_MODEL reads every shard's slice
 * at the version it names or later (the step's version is the lowest the slices have, so its
 * staleness is never understated): the shards send them unasked when the release says
 * SW_FLAG_SENT (one may come before the release), else the worker pulls them. A push sends
 * each shard its slice of the gradient, with the membership's token and a number of its own,
 * and the server answers it (WAIT or RELEASE) once every shard has reported it. A sparse step
 * pulls and pushes at the shards its batch touches only, the push naming them. */
#include <math.h>
#include <string.h>

#include "syncwise/bytes.h"
#include "syncwise/log.h"
#include "worker_internal.h"

/* Pulls sent again at once in one step when a shard does not know us yet: the server tells
 * each shard of a member before it welcomes it, but a first pull may overtake that on another
 * link. After these, the pull is asked again as AGAIN_S and the rest below say: a restarted
 * server's shards know no one until we join it again, which our heartbeats will tell us to do. */
#define MAX_RETRIES 10
/* Slices unanswered this long are asked for again, and a push with no answer is sent again:
 * its shards may have died with it before any of them told the server (a shard ignores a push
 * it has had, and the server one it has counted). Plus the time the model's bytes take at
 * AGAIN_RATE, and twice as long at each time again, up to AGAIN_MAX times the first wait: a
 * large model's push is answered after its transfer, the shards' applies and their checkpoints,
 * and sending it again every second carried its 300 MB slices three times over (a large-sizes
 * trial); a small model's is asked again within 4 s while a shard is being started again. */
#define AGAIN_S 1.0
#define AGAIN_RATE 100e6 /* bytes a second */
#define AGAIN_MAX 4

static double first_wait(const worker *k)
{
    return AGAIN_S + 4.0 * (double)k->cfg.params / AGAIN_RATE;
}

static bool same_shards(const worker *k, const config *c)
{
    if (k->n_shard_socks != c->n_shards)
        return false;
    for (uint32_t j = 0; j < c->n_shards; j++)
        if (strcmp(k->cfg.shards[j], c->shards[j]))
            return false;
    return true;
}

void sw__worker_shards_forget_early(worker *k)
{
    for (uint32_t j = 0; j < k->n_shard_socks; j++) { /* kept only from a connected shard */
        sw_frame_unref(k->early[j]);
        k->early[j] = NULL;
    }
}

void sw__worker_shards_close(worker *k)
{
    sw__worker_shards_forget_early(k);
    for (uint32_t j = 0; j < k->n_shard_socks; j++)
        sw_sock_close(k->shard_socks[j]);
    k->n_shard_socks = 0;
    k->agent.n_socks = 1; /* the server's connection alone */
}

/* Called before k->cfg takes c: the connections of c's shards. */
int sw__worker_shards_connect(worker *k, const config *c, char *err)
{
    if (k->loaded && same_shards(k, c))
        return 0;
    sw__worker_shards_close(k);
    for (uint32_t j = 0; j < c->n_shards; j++) {
        size_t slice = sw_chunk_slice_len(&c->table, j);
        /* Under CURVE the shards hold the server's key pair (syncwise/shard.h). */
        sw_dial_params dp = {.endpoint = c->shards[j], .linger_s = 2,
                             .max_frame = sw_msg_size(4 * slice + 8192),
                             .curve_key = k->p->curve_key, .curve_server = k->p->curve_server,
                             .dead_link_s = k->p->dead_link_s};
        int rc = sw_dial(k->net, &k->shard_socks[j], &dp, err);
        if (rc)
            return rc;
        k->n_shard_socks++;
        k->agent.socks[k->agent.n_socks++] = k->shard_socks[j];
    }
    return 0;
}

/* Ascending indices cut at the slices' ends: shard j's are [part[j], part[j + 1]); the
 * shards that have any. */
static sw_shard_set cut(const sw_chunk_table *t, const uint32_t *idx, size_t n, size_t *part)
{
    sw_shard_set touched = {{0}};
    size_t i = 0;
    for (uint32_t j = 0; j < t->n_shards; j++) {
        part[j] = i;
        size_t end = sw_chunk_slice_at(t, j) + sw_chunk_slice_len(t, j);
        while (i < n && idx[i] < end)
            i++;
        if (i > part[j])
            sw_shard_set_add(&touched, j);
    }
    part[t->n_shards] = n;
    return touched;
}

/* A message to shard j, built in place: a frame of `len` payload bytes opened with the
 * membership's token (the payload's start, or NULL when memory ran out: the message is lost,
 * as on a network, and the silence decides), then sent with its header. */
static uint8_t *open_message(worker *k, sw_frame **f, size_t len)
{
    *f = sw_frame_new(sw_msg_size(len));
    if (!*f)
        return NULL;
    uint8_t *pay = sw_frame_data(*f) + SW_PROTO_HEADER;
    sw_put_u64(pay, k->cfg.token);
    return pay;
}

static void send_message(worker *k, uint32_t j, sw_frame *f, sw_msg_type type, uint32_t flags,
                         uint64_t version, size_t len)
{
    sw_msg m = {.type = type, .worker = atomic_load(&k->id),
                .flags = flags | sw__worker_link_flags(k), .version = version,
                .payload_len = len};
    sw_msg_encode(&m, sw_frame_data(f)); /* the payload is in place */
    sw_send(k->shard_socks[j], NULL, 0, f);
}

/* Shard j's part of the pull: its slice, or the touched weights it holds. */
static void pull_one(worker *k, uint32_t j)
{
    size_t n = 0;
    const uint32_t *idx = sw_task_is_sparse(k->task) ? sw_learner_touched(k->learner, &n) : NULL;
    size_t k_j = idx ? k->part[j + 1] - k->part[j] : 0, len = 8 + 4 * k_j;
    sw_frame *f;
    uint8_t *pay = open_message(k, &f, len);
    if (!pay)
        return;
    if (idx)
        sw_msg_put_indices(pay + 8, idx + k->part[j], k_j);
    send_message(k, j, f, SW_MSG_SHARD_PULL, 0, k->pull_min, len);
}

static void take_early(worker *k, double now);

void sw__worker_shards_pull(worker *k, uint64_t version, bool sent, double now)
{
    k->pull_min = version;
    k->slice_min = UINT64_MAX;
    k->pull_mark = 0;
    k->awaited = sw_shard_set_all(k->cfg.n_shards);
    if (sw_task_is_sparse(k->task)) {
        size_t n;
        const uint32_t *idx = sw_learner_touched(k->learner, &n);
        k->awaited = cut(&k->cfg.table, idx, n, k->part);
        if (sw_shard_set_empty(&k->awaited)) { /* a batch that reads no weight */
            sw__worker_sparse_ready(k, version, now);
            return;
        }
    }
    k->retries = 0;
    k->asked = k->awaited;
    k->sent_step = sent;
    if (!sent) /* no slice was ordered for this release: what was kept is older */
        sw__worker_shards_forget_early(k);
    for (uint32_t j = 0; !sent && j < k->cfg.n_shards; j++)
        if (sw_shard_set_has(&k->awaited, j))
            pull_one(k, j);
    k->state = PULLING;
    k->since = k->asked_at = now;
    k->again_s = first_wait(k);
    if (sent)
        take_early(k, now);
}

/* A slice from after a restore came: the slices in so far are from before it, and go back to
 * the state they were restored from; they are asked again, so that no step reads both. */
static void restored_meanwhile(worker *k, uint64_t mark)
{
    k->pull_mark = mark;
    k->slice_min = UINT64_MAX;
    for (uint32_t j = 0; j < k->cfg.n_shards; j++)
        if (sw_shard_set_has(&k->asked, j) && !sw_shard_set_has(&k->awaited, j)) {
            sw_shard_set_add(&k->awaited, j);
            pull_one(k, j);
        }
}

/* Shard j's floats into the step's parameters. The one shard of a dense run holds the whole
 * model: its slice is read where it landed when it can be (the frame is kept, as a release's
 * parameters are, worker_step.c), not copied. */
static int read_slice(worker *k, uint32_t j, const sw_msg *floats, sw_frame *frame, char *err)
{
    const sw_chunk_table *t = &k->cfg.table;
    bool sparse = sw_task_is_sparse(k->task);
    size_t n = sparse ? k->part[j + 1] - k->part[j] : sw_chunk_slice_len(t, j);
    if (!sparse && k->cfg.n_shards == 1) {
        const float *in_place = sw_msg_floats_in_place(floats, n, err);
        if (in_place) {
            sw_frame_unref(k->model_frame);
            k->model_frame = sw_frame_ref(frame);
            k->theta = in_place;
            return 0;
        }
        if (err[0])
            return SW_EFORMAT;
    }
    float *into = sparse ? k->pulled + k->part[j] : k->params + sw_chunk_slice_at(t, j);
    return sw_msg_get_floats(floats, into, n, err);
}

static void sliced(worker *k, uint32_t j, const sw_msg *m, sw_frame *frame, double now)
{
    if (!sw_shard_set_has(&k->awaited, j) || m->version < k->pull_min)
        return; /* an answer to a pull sent again */
    char err[SW_ERR_LEN];
    uint64_t mark;
    sw_msg floats;
    if (sw_msg_get_slice(m, &mark, &floats, err)) {
        sw__worker_fail(k, SW_EFORMAT, "shard %u sent a bad slice: %s", j, err);
        return;
    }
    if (mark < k->pull_mark)
        return; /* from before a restore another slice is from after: asked again later */
    if (mark > k->pull_mark)
        restored_meanwhile(k, mark);
    bool sparse = sw_task_is_sparse(k->task);
    err[0] = '\0';
    if (read_slice(k, j, &floats, frame, err)) {
        sw__worker_fail(k, SW_EFORMAT, "shard %u sent a bad slice: %s%s", j, err,
                        sw__worker_divergence_hint(err));
        return;
    }
    k->slice_min = m->version < k->slice_min ? m->version : k->slice_min;
    sw_shard_set_remove(&k->awaited, j);
    if (!sw_shard_set_empty(&k->awaited))
        return;
    if (sparse) {
        sw__worker_sparse_ready(k, k->slice_min, now);
        return;
    }
    k->version = k->slice_min;
    k->since_pull = 0;
    sw__worker_compute(k, now);
}

static void refused(worker *k, uint32_t j, const sw_msg *m)
{
    if (m->flags & SW_FLAG_UNKNOWN) { /* the server decides whether we are still members */
        if (k->state == PULLING && sw_shard_set_has(&k->awaited, j) && k->retries++ < MAX_RETRIES)
            pull_one(k, j);
        return;
    }
    sw__worker_fail(k, SW_ESTATE, "shard %u (%s) refused our message: %.*s", j, k->cfg.shards[j],
                    (int)m->payload_len, (const char *)m->payload);
}

/* The slices that came before the release that ordered them sent (older ones are passed
 * over as answers to a pull sent again are); none is kept past it. */
static void take_early(worker *k, double now)
{
    for (uint32_t j = 0; j < k->cfg.n_shards && k->state == PULLING; j++) {
        sw_frame *f = k->early[j];
        k->early[j] = NULL;
        if (f)
            sw__worker_shards_take(k, j, f, now);
        sw_frame_unref(f);
    }
    sw__worker_shards_forget_early(k);
}

void sw__worker_shards_take(worker *k, uint32_t j, sw_frame *frame, double now)
{
    sw_msg m;
    char why[SW_ERR_LEN];
    uint64_t limit = 4 * (uint64_t)sw_chunk_slice_len(&k->cfg.table, j) + 8192;
    if (sw_msg_decode(sw_frame_data(frame), sw_frame_size(frame), limit, &m, why) ||
        ((m.flags & SW_FLAG_UNCHECKED) && !k->cfg.unchecked)) {
        sw_log(SW_LOG_WARN, "ignoring a message shard %u sent: %s", j,
               why[0] ? why : "no checksum");
        return;
    }
    if (m.type == SW_MSG_SHARD_SLICE && k->state == PULLING) {
        sliced(k, j, &m, frame, now);
    } else if (m.type == SW_MSG_SHARD_SLICE && (k->state == ANSWER || k->state == HELD)) {
        sw_frame_unref(k->early[j]); /* one ordered sent may overtake the release it is for */
        k->early[j] = sw_frame_ref(frame);
    } else if (m.type == SW_MSG_ERROR)
        refused(k, j, &m);
}

/* A sparse gradient's pairs to the shards holding them, each told which shards the push
 * went to (the server waits for those); a gradient of no pair goes to shard 0, so that the
 * server hears of the push. */
static void push_sparse(worker *k, uint64_t seq)
{
    size_t part[SW_SHARDS_MAX + 1];
    const sw_grad *g = &k->grad;
    uint32_t n = k->cfg.n_shards;
    sw_shard_set to = cut(&k->cfg.table, g->idx, g->nnz, part);
    if (sw_shard_set_empty(&to))
        sw_shard_set_add(&to, 0);
    size_t head = 16 + sw_shard_set_bytes(n);
    for (uint32_t j = 0; j < n; j++) {
        if (!sw_shard_set_has(&to, j))
            continue;
        size_t nnz = part[j + 1] - part[j];
        sw_frame *f;
        uint8_t *pay = open_message(k, &f, head + 8 * nnz);
        if (!pay)
            continue;
        sw_put_u64(pay + 8, seq);
        sw_shard_set_put(pay + 16, &to, n);
        sw_msg_put_pairs(pay + head, g->idx + part[j], g->val + part[j], nnz);
        send_message(k, j, f, SW_MSG_SHARD_PUSH_SPARSE, 0, k->version, head + 8 * nnz);
    }
}

/* Push number seq: each shard its slice of the gradient (dense), or the pairs it holds. */
static void send_push(worker *k, uint64_t seq)
{
    const sw_chunk_table *t = &k->cfg.table;
    if (sw_task_is_sparse(k->task)) {
        push_sparse(k, seq);
        return;
    }
    uint8_t head[16];
    sw_put_u64(head, k->cfg.token);
    sw_put_u64(head + 8, seq);
    for (uint32_t j = 0; j < k->cfg.n_shards; j++) {
        sw_msg m = {.type = SW_MSG_SHARD_PUSH, .worker = atomic_load(&k->id),
                    .flags = k->push_flags | sw__worker_link_flags(k), .version = k->version,
                    .payload = head, .payload_len = sizeof head + 4 * sw_chunk_slice_len(t, j)};
        /* A slice that is the whole gradient (one shard) is lent as it lies; any other is
         * copied and checksummed in one pass, block by block. NULL (no memory): lost, as on a
         * network, and the silence decides. */
        sw_frame *f = sw__frame_build_head(&k->lender, &m, sizeof head,
                                           k->grad.dense + sw_chunk_slice_at(t, j));
        if (f)
            sw_send(k->shard_socks[j], NULL, 0, f);
    }
}

void sw__worker_shards_push(worker *k, uint32_t flags, double now)
{
    k->push_flags = flags;
    k->asked_at = now;
    k->again_s = first_wait(k);
    send_push(k, k->seq++);
}

double sw__worker_shards_again_at(const worker *k)
{
    bool waits = k->state == PULLING || k->state == ANSWER;
    return waits && k->cfg.n_shards ? k->asked_at + k->again_s : INFINITY;
}

void sw__worker_shards_again_due(worker *k, double now)
{
    if (now < sw__worker_shards_again_at(k))
        return;
    if (k->state == ANSWER) {
        send_push(k, k->seq - 1);
    } else {
        if (k->sent_step) /* once a step: what was ordered did not come */
            sw_log(SW_LOG_INFO, "the slices the server ordered sent at version %llu did not all "
                   "come within %.0f s (a shard restarted, or lost our connection): pulling them",
                   (unsigned long long)k->pull_min, k->again_s);
        k->sent_step = false;
        for (uint32_t j = 0; j < k->cfg.n_shards; j++)
            if (sw_shard_set_has(&k->awaited, j))
                pull_one(k, j);
    }
    k->asked_at = now;
    k->again_s = fmin(2 * k->again_s, AGAIN_MAX * first_wait(k));
}
