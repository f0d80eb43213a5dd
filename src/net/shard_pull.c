/* A shard's pulls (shard_internal.h): a whole slice sent from where θ lies and shared by every
 * puller of its version, a sparse step's values at its places, the pulls that wait for a
 * version the shard does not hold yet, and the slices the server orders sent unasked. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "shard_internal.h"
#include "syncwise/bytes.h"
#include "syncwise/err.h"

typedef struct sw_shard shard;
typedef sw__waiting waiting;
typedef sw__from from;

float *sw__shard_theta_writable(shard *h, bool keep)
{
    sw_frame_unref(h->slice); /* θ moves on: so that its buffer is idle when ZeroMQ is done */
    h->slice = NULL;
    return h->theta = sw__lender_writable(&h->lender, h->theta, keep);
}

/* The whole slice as a SLICE frame: the one sent last while θ has not moved since (a barrier's
 * pullers all ask for one version), else θ lent from where it lies (lend.h) unless a frame
 * still reads it. */
static sw_frame *whole_slice(shard *h, const sw_msg *m)
{
    if (h->slice && h->slice_version == h->version && h->slice_mark == h->restored_at)
        return sw_frame_ref(h->slice);
    sw_frame_unref(h->slice);
    h->slice = sw__frame_build_head(&h->lender, m, 8, h->theta);
    h->slice_version = h->version;
    h->slice_mark = h->restored_at;
    return h->slice ? sw_frame_ref(h->slice) : NULL;
}

/* n floats as a SLICE, opened with the number of the last restore (its mark: a puller tells
 * a slice from before a restore from one after it); to the server after its batch. The whole
 * slice names no worker, so that one frame serves every puller (docs/protocol.md). */
static void send_floats(shard *h, const from *to, uint32_t worker, const float *v, size_t n)
{
    uint8_t mark[8];
    sw_put_u64(mark, h->restored_at);
    bool whole = v == h->theta;
    sw_msg m = {.type = SW_MSG_SHARD_SLICE, .worker = whole ? SW_NO_WORKER : worker,
                .flags = sw__shard_link_flags(h), .version = h->version, .payload = mark,
                .payload_len = 8 + 4 * n};
    sw_frame *f = whole ? whole_slice(h, &m) : sw__frame_build_head(NULL, &m, sizeof mark, v);
    sw__shard_send_frame(h, to, f);
}

/* The slice, or its values at the k places idx (a sparse step's). */
static void send_slice(shard *h, const from *to, uint32_t worker, const uint32_t *idx, size_t k)
{
    h->r->pulls++;
    if (!idx) {
        send_floats(h, to, worker, h->theta, h->len);
        return;
    }
    float *at = malloc(k ? 4 * k : 1);
    if (!at)
        return; /* no memory: the puller asks again */
    for (size_t i = 0; i < k; i++)
        at[i] = h->theta[idx[i]];
    send_floats(h, to, worker, at, k);
    free(at);
}

/* Answers the pulls waiting for the version the shard now holds. */
void sw__shard_answer_waiting(shard *h)
{
    size_t kept = 0;
    for (size_t i = 0; i < h->n_pulls; i++) {
        waiting *w = &h->pulls[i];
        if (w->min <= h->version) {
            send_slice(h, &(from){w->route, w->route_len}, w->worker, w->idx, w->k);
            free(w->idx);
        } else {
            h->pulls[kept++] = *w;
        }
    }
    h->n_pulls = kept;
}

/* Forgets worker w's waiting pull (SW_NO_WORKER: the server's), if any. */
void sw__shard_forget_pull(shard *h, uint32_t w)
{
    for (size_t i = 0; i < h->n_pulls; i++)
        if (h->pulls[i].worker == w) {
            free(h->pulls[i].idx);
            h->pulls[i] = h->pulls[--h->n_pulls];
            return;
        }
}

/* A sparse pull's places in the slice (the indices after the token): true with *idx NULL
 * for a pull of the whole slice, false (refused) when they are not the slice's. */
static bool places(shard *h, const from *f, const sw_msg *m, uint32_t **idx, size_t *k)
{
    *idx = NULL;
    *k = 0;
    if (m->payload_len <= 8)
        return true;
    size_t at = sw_chunk_slice_at(&h->table, h->index), cap = (m->payload_len - 8) / 4;
    char why[SW_ERR_LEN] = "";
    sw_msg g = *m;
    g.payload += 8;
    g.payload_len -= 8;
    uint32_t *p = malloc(4 * cap + 4);
    if (p && !sw_msg_get_indices(&g, (uint32_t)(at + h->len), p, cap, k, why) &&
        sw__shard_in_slice(h, p, *k)) {
        for (size_t i = 0; i < *k; i++)
            p[i] -= (uint32_t)at;
        *idx = p;
        return true;
    }
    free(p);
    sw__shard_refuse(h, f, m, !p ? "no memory for a pull"
                              : why[0] ? why : "indices outside this shard's slice");
    return false;
}

/* Worker w's pull (SW_NO_WORKER: the server's) of version min or later, answered by way of
 * `to` now when the shard holds it, else kept until it does. Takes idx. */
static void answer_or_wait(shard *h, const from *to, uint32_t w, uint64_t min, uint32_t *idx,
                           size_t k)
{
    if (h->ready && min <= h->version) {
        send_slice(h, to, w, idx, k);
        free(idx);
        return;
    }
    /* A puller waits for one answer: a pull asked again replaces the one before, so that the
     * waiting pulls stay one per slot (a member pulling in a loop for a version far ahead
     * grew them without bound, and every new version scanned them all). */
    sw__shard_forget_pull(h, w);
    waiting *more = realloc(h->pulls, (h->n_pulls + 1) * sizeof *more);
    if (!more || to->route_len > SW_ROUTE_MAX) {
        free(idx);
        return; /* no memory: the puller's timeout decides */
    }
    h->pulls = more;
    waiting *p = &h->pulls[h->n_pulls++];
    *p = (waiting){.route_len = to->route_len, .worker = w, .min = min, .idx = idx, .k = k};
    memcpy(p->route, to->route, to->route_len);
}

void sw__shard_on_pull(shard *h, const from *f, const sw_msg *m)
{
    bool server = sw__shard_is_server(h, f);
    if (!h->configured && m->worker == SW_NO_WORKER) { /* a gather of a run it refused */
        sw__shard_refuse(h, f, m, SW__SHARD_NO_RUN);
        return;
    }
    if (!server && sw__shard_too_early(h, f, m))
        return;
    if (!server && !sw__shard_is_member(h, m)) {
        sw__shard_refuse_flagged(h, f, m, SW_FLAG_UNKNOWN,
                                 "a pull from no member of the run (id and token)");
        return;
    }
    if (!server)
        sw__shard_note_route(h, m->worker, f);
    uint32_t *idx;
    size_t k;
    if (places(h, f, m, &idx, &k))
        answer_or_wait(h, f, m->worker, m->version, idx, k);
}

/* The server released these members with SW_FLAG_SENT: each gets the whole slice as the answer
 * to a pull, by way of the connection its last push or pull came by. One no longer a member
 * (it left meanwhile), or whose messages came by no connection yet, is passed over: a
 * released worker pulls what has not come within a second. */
void sw__shard_on_send(shard *h, const from *f, const sw_msg *m)
{
    if (!sw__shard_is_server(h, f)) {
        sw__shard_refuse_order(h, f, m, "only the server orders slices sent");
        return;
    }
    uint32_t n = m->payload_len >= 4 ? sw_get_u32(m->payload) : 0;
    if (m->payload_len < 4 || m->payload_len != 4 + 12 * (uint64_t)n) {
        sw__shard_refuse(h, f, m, "a send order of the wrong length");
        return;
    }
    for (uint32_t i = 0; i < n; i++) {
        const uint8_t *at = m->payload + 4 + 12 * (size_t)i;
        uint32_t w = sw_get_u32(at);
        uint64_t token = sw_get_u64(at + 4);
        if (w >= h->slots || token == 0 || h->tokens[w] != token || !h->routes[w].len)
            continue;
        const sw__route *r = &h->routes[w];
        answer_or_wait(h, &(from){r->bytes, r->len}, w, m->version, NULL, 0);
    }
}
