/* A shard's gradients (shard_internal.h): the slices workers push, kept by (worker, token,
 * sequence number) until the server's APPLY sums them in the engine's order and steps the
 * optimizer, or a DROPPED order forgets them. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "shard_internal.h"
#include "syncwise/bytes.h"
#include "syncwise/err.h"
#include "syncwise/optim.h"
#include "syncwise/team.h"

typedef struct sw_shard shard;
typedef sw__held held;
typedef sw__from from;

void sw__shard_let_go(held *e)
{
    sw_frame_unref(e->frame);
    free(e->copy);
    *e = (held){.g = NULL};
}

static held *free_entry(shard *h)
{
    for (size_t i = 0; i < h->n_held; i++)
        if (!h->held[i].g)
            return &h->held[i];
    held *more = realloc(h->held, (h->n_held + 1) * sizeof *more);
    if (!more)
        return NULL;
    h->held = more;
    h->held[h->n_held] = (held){.g = NULL};
    return &h->held[h->n_held++];
}

static held *find(shard *h, uint32_t worker, uint64_t token, uint64_t seq)
{
    for (size_t i = 0; i < h->n_held; i++) {
        held *e = &h->held[i];
        if (e->g && e->worker == worker && e->token == token && e->seq == seq)
            return e;
    }
    return NULL;
}

/* An APPLY's k-th entry (its width follows the run's shards), the push it names as held here,
 * and whether this shard holds a slice of that push (a sparse one touches some shards only). */
static const uint8_t *entry_at(const shard *h, const uint8_t *entries, uint32_t k)
{
    return entries + sw_shard_entry_bytes(h->table.n_shards) * k;
}

static held *find_entry(shard *h, const uint8_t *entries, uint32_t k)
{
    const uint8_t *e = entry_at(h, entries, k);
    return find(h, sw_get_u32(e), sw_get_u64(e + 4), sw_get_u64(e + 12));
}

static bool entry_touches(const shard *h, const uint8_t *entries, uint32_t k)
{
    return sw_shard_set_wire_has(entry_at(h, entries, k) + 20, h->index);
}

bool sw__shard_entries_ok(const shard *h, const uint8_t *entries, uint32_t n)
{
    sw_shard_set to;
    for (uint32_t k = 0; k < n; k++)
        if (!sw_shard_set_get(entry_at(h, entries, k) + 20, h->table.n_shards, &to))
            return false;
    return true;
}

/* SHARD_PUSHED: the server hears that this shard holds push e of m's worker, and the shards it
 * went to. */
static void report(shard *h, const sw_msg *m, const held *e)
{
    uint8_t facts[16 + 8 * SW_SHARD_SET_WORDS];
    sw_put_u64(facts, e->token);
    sw_put_u64(facts + 8, e->seq);
    sw_shard_set_put(facts + 16, &e->shards, h->table.n_shards);
    sw__shard_send(h, &(from){h->server, h->server_len}, SW_MSG_SHARD_PUSHED, m->worker,
                   m->flags & SW_FLAG_WANT_MODEL, m->version, facts,
                   16 + sw_shard_set_bytes(h->table.n_shards));
}

/* A push's head (token, sequence number; a sparse one's shards) checked: a member's, not
 * counted already, new, not of a version to come; where to keep it, or NULL (refused). */
static held *admit_push(shard *h, const from *f, const sw_msg *m, size_t head)
{
    if (sw__shard_too_early(h, f, m))
        return NULL;
    if (!sw__shard_is_member(h, m) || m->payload_len < head) {
        sw__shard_refuse_flagged(h, f, m, SW_FLAG_UNKNOWN, "a push from no member of the run (id and token)");
        return NULL;
    }
    sw__shard_note_route(h, m->worker, f);
    uint64_t token = sw_get_u64(m->payload), seq = sw_get_u64(m->payload + 8);
    if (sw__shard_is_lost(h, m->worker, token, seq))
        return NULL; /* counted already, without this slice, when its shard was restored */
    if (seq + 1 == h->next_seq[m->worker]) { /* the last push again: its worker heard no */
        const held *e = find(h, m->worker, token, seq); /* answer: held, it is reported again */
        if (e) /* (our report may be what was lost; the server counts a push once) */
            report(h, m, e);
        return NULL;
    }
    if (seq < h->next_seq[m->worker] || seq == UINT64_MAX) { /* MAX: next would wrap */
        sw__shard_refuse(h, f, m, seq == UINT64_MAX ? "a push's sequence number at its limit"
                                                    : "a push's sequence number gone back");
        return NULL;
    }
    held *e = find(h, m->worker, token, seq) ? NULL : free_entry(h);
    if (!e || m->version > h->version) {
        sw__shard_refuse(h, f, m, "a push repeated, of a version to come, or no memory");
        return NULL;
    }
    return e;
}

/* Kept: the server hears of it at once. Its squared norm, which only DBW reads, is measured
 * after that report, while the server decides, when the last apply asked for norms; at the
 * apply otherwise (shard_step.c). Measured before, it held every policy's report back by a
 * pass over the slice. */
static void kept(shard *h, held *e, const held *k, const sw_msg *m, const sw_shard_set *shards)
{
    *e = *k;
    e->shards = *shards;
    h->r->pushes++;
    h->next_seq[k->worker] = k->seq + 1;
    report(h, m, e);
    if (h->norms_wanted) {
        e->sq = sw_sq_norm(e->g, e->idx ? e->nnz : h->len);
        e->measured = true;
    }
}

void sw__shard_on_push(shard *h, const from *f, const sw_msg *m)
{
    held *e = admit_push(h, f, m, 16);
    if (!e)
        return;
    char why[SW_ERR_LEN] = "";
    sw_msg g = *m;
    g.payload += 16;
    g.payload_len -= 16;
    held k = {.worker = m->worker, .token = sw_get_u64(m->payload),
              .seq = sw_get_u64(m->payload + 8), .g = sw_msg_floats_in_place(&g, h->len, why)};
    if (!k.g && !why[0] && (k.copy = malloc(4 * h->len)) &&
        sw_msg_get_floats(&g, k.copy, h->len, why) == 0)
        k.g = k.copy;
    if (!k.g) {
        free(k.copy);
        sw__shard_refuse(h, f, m, why[0] ? why : "no memory for a push");
        return;
    }
    if (!k.copy)
        k.frame = sw_frame_ref(h->body);
    sw_shard_set all = sw_shard_set_all(h->table.n_shards);
    kept(h, e, &k, m, &all);
}

/* Whether k ascending global indices below the slice's end start in it. */
bool sw__shard_in_slice(const shard *h, const uint32_t *idx, size_t k)
{
    return k == 0 || idx[0] >= sw_chunk_slice_at(&h->table, h->index);
}

/* A sparse push: its pairs in this shard's slice, and which shards its other pairs went to. */
void sw__shard_on_push_sparse(shard *h, const from *f, const sw_msg *m)
{
    size_t head = 16 + sw_shard_set_bytes(h->table.n_shards);
    held *e = admit_push(h, f, m, head);
    if (!e)
        return;
    size_t at = sw_chunk_slice_at(&h->table, h->index), cap = (m->payload_len - head) / 8;
    sw_shard_set shards;
    bool ours = sw_shard_set_get(m->payload + 16, h->table.n_shards, &shards) &&
                sw_shard_set_has(&shards, h->index);
    held k = {.worker = m->worker, .token = sw_get_u64(m->payload),
              .seq = sw_get_u64(m->payload + 8), .copy = malloc(8 * cap + 8)};
    char why[SW_ERR_LEN] = "";
    sw_msg g = *m;
    g.payload += head;
    g.payload_len -= head;
    uint32_t *idx = k.copy ? (uint32_t *)(k.copy + cap + 1) : NULL;
    if (!k.copy || sw_msg_get_pairs(&g, (uint32_t)(at + h->len), idx, k.copy, cap, &k.nnz, why) ||
        !sw__shard_in_slice(h, idx, k.nnz) || !ours) {
        free(k.copy);
        sw__shard_refuse(h, f, m, !k.copy ? "no memory for a push"
                                  : why[0] ? why
                                           : "pairs outside this shard's slice, or shards that "
                                             "are not the run's");
        return;
    }
    for (size_t i = 0; i < k.nnz; i++)
        idx[i] -= (uint32_t)at;
    k.g = k.copy;
    k.idx = idx;
    kept(h, e, &k, m, &shards);
}

/* The plan of an apply of the n named gradients (shard_step.c): those held here in order (a
 * slice lost with a shard that died, or that a sparse push did not send here, counts as zero);
 * NULL, or why not: one neither held nor lost (the server ordered what it was never told of: a
 * broken server), or no memory. */
static const char *plan_apply(shard *h, const uint8_t *entries, uint32_t n, float lr,
                              bool want_sq, sw__apply_plan *plan)
{
    if (n > h->cap_applying) {
        const sw__held **more = realloc(h->applying, n * sizeof *more);
        if (!more)
            return "no memory for an apply";
        h->applying = more;
        h->cap_applying = n;
    }
    uint32_t n_g = 0;
    for (uint32_t k = 0; k < n; k++) {
        const uint8_t *at = entry_at(h, entries, k);
        held *e = entry_touches(h, entries, k) ? find_entry(h, entries, k) : NULL;
        if (!e && entry_touches(h, entries, k) &&
            !sw__shard_is_lost(h, sw_get_u32(at), sw_get_u64(at + 4), sw_get_u64(at + 12)))
            return SW__SHARD_NOT_HELD;
        if (e)
            h->applying[n_g++] = e;
    }
    *plan = (sw__apply_plan){.g = h->applying, .n_g = n_g,
                             .theta = sw__shard_theta_writable(h, true), .sum = h->sum,
                             .len = h->len, .opt = h->opt.m ? &h->opt : NULL,
                             .step = h->opt.steps + 1, .lr = lr, .wd = h->wd, .n = n,
                             .want_sq = want_sq};
    if (n == 1 && n_g == 1 && !h->applying[0]->idx) { /* a lone dense gradient: its own sum, */
        plan->lone = h->applying[0]->g;                 /* its norm perhaps measured already */
        plan->want_sq &= !h->applying[0]->measured;
    }
    return NULL;
}

/* Runs the plan, on the team when the slice is worth cutting; the norms (read when the order
 * asked): the sum's squared norm in norms[0], the sum of the gradients' squared norms in
 * norms[1] (those measured as they came, and the parts' shares of the others'). */
static void run_plan(shard *h, sw__apply_plan *plan, double norms[2])
{
    uint32_t threads = h->team ? sw_team_size(h->team) : 1;
    size_t most = h->len / SW_SHARD_PART_MIN;
    uint32_t parts = most < threads ? (most ? (uint32_t)most : 1) : threads;
    if (parts > 1)
        sw_team_run(h->team, parts, sw__shard_apply_part, plan);
    else
        sw__shard_apply_part(plan, 0, 1);
    if (plan->opt)
        h->opt.steps = plan->step;
    norms[0] = norms[1] = 0; /* the parts' shares are 0 where they measured nothing */
    for (uint32_t i = 0; i < parts; i++) {
        norms[0] += plan->sq[i];
        norms[1] += plan->each[i];
    }
    for (uint32_t k = 0; k < plan->n_g; k++)
        norms[1] += plan->g[k]->measured ? plan->g[k]->sq : 0;
    if (plan->lone) /* its own sum */
        norms[0] = norms[1];
}

/* Lets go of the named gradients; a name it does not hold is passed over (a drop may name a
 * push that reached this shard after the worker was gone, and was refused). */
static void forget_entries(shard *h, const uint8_t *entries, uint32_t n)
{
    for (uint32_t k = 0; k < n; k++) {
        held *e = find_entry(h, entries, k);
        if (e)
            sw__shard_let_go(e);
    }
}

/* The apply that makes `version` is done; when the order asked (a policy that decides on
 * gradient statistics: DBW), the server hears the norms of its slice: norms[0] of the sum of
 * the gradients, norms[1] the sum of theirs. */
static void stepped(shard *h, const from *f, const sw_msg *order, const double norms[2])
{
    h->version = order->version;
    h->r->applies++;
    if (!(order->flags & SW_FLAG_WANT_NORMS))
        return;
    uint8_t b[16];
    sw_put_f64(b, norms[0]);
    sw_put_f64(b + 8, norms[1]);
    sw__shard_send(h, f, SW_MSG_SHARD_APPLIED, SW_NO_WORKER, 0, order->version, b, sizeof b);
}

/* θ <- one step on the mean of the named gradients, with the engine's arithmetic (apply.c): a
 * lone sparse gradient under plain SGD in O(nnz), anything else summed into a dense slice, by
 * the --apply-threads in parts (shard_step.c). */
void sw__shard_on_apply(shard *h, const from *f, const sw_msg *m)
{
    if (!sw__shard_is_server(h, f) || !h->ready) {
        sw__shard_refuse_order(h, f, m, "only the server orders applies");
        return;
    }
    if (m->payload_len < 8) {
        sw__shard_refuse_order(h, f, m, "an apply order too short for its learning rate and count");
        return;
    }
    float lr = sw_get_f32(m->payload);
    uint32_t n = sw_get_u32(m->payload + 4);
    const uint8_t *entries = m->payload + 8;
    bool dropped = (m->flags & SW_FLAG_DROPPED) != 0;
    if (m->payload_len != 8 + sw_shard_entry_bytes(h->table.n_shards) * (uint64_t)n ||
        (!dropped && (n == 0 || !isfinite(lr)))) {
        sw__shard_refuse(h, f, m, "a malformed apply");
        return;
    }
    if (!dropped && m->version != h->version + 1) {
        sw__shard_refuse_flagged(h, f, m, SW_FLAG_DROPPED, SW__SHARD_OUT_OF_STEP);
        return;
    }
    if (!sw__shard_entries_ok(h, entries, n)) {
        sw__shard_refuse(h, f, m, "an apply naming shards that are not the run's");
        return;
    }
    if (!dropped) /* the policy in force reads norms: measure the pushes to come */
        h->norms_wanted = (m->flags & SW_FLAG_WANT_NORMS) != 0;
    held *lone = !dropped && n == 1 && entry_touches(h, entries, 0) ? find_entry(h, entries, 0)
                                                                    : NULL;
    if (lone && lone->idx && !h->opt.m) {
        sw_sgd_step_sparse(sw__shard_theta_writable(h, true), h->len, lone->idx, lone->g,
                           lone->nnz, lr, h->wd);
        double sq = !(m->flags & SW_FLAG_WANT_NORMS) ? 0
                    : lone->measured                ? lone->sq
                                                    : sw_sq_norm(lone->g, lone->nnz);
        stepped(h, f, m, (double[2]){sq, sq});
    } else if (!dropped) {
        sw__apply_plan plan;
        const char *why = plan_apply(h, entries, n, lr, (m->flags & SW_FLAG_WANT_NORMS) != 0,
                                     &plan);
        if (why) { /* a gradient it does not hold: an order it missed named it */
            sw__shard_refuse_flagged(h, f, m, strcmp(why, SW__SHARD_NOT_HELD) ? 0 : SW_FLAG_DROPPED,
                                     why);
            return;
        }
        double norms[2];
        run_plan(h, &plan, norms);
        stepped(h, f, m, norms);
    }
    forget_entries(h, entries, n);
    sw__shard_answer_waiting(h);
}
