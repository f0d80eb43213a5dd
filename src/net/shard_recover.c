/* A shard's recovery (shard_internal.h): the checkpoints the server orders at one version for
 * every shard, the pings that tell the server the shard lives (and what it moved), a resume
 * from the checkpoint, and the RESTORE that rolls every shard back to one they all hold. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shard_internal.h"
#include "syncwise/bytes.h"
#include "syncwise/ckpt.h"
#include "syncwise/err.h"
#include "syncwise/file.h"
#include "syncwise/log.h"

typedef struct sw_shard shard;
typedef sw__from from;


void sw__shard_free_recovery(shard *h)
{
    for (size_t i = 0; i < h->n_stash; i++)
        sw_frame_unref(h->stash[i].frame);
    free(h->stash);
    free(h->lost);
    h->stash = NULL;
    h->lost = NULL;
    h->n_stash = h->n_lost = 0;
}

bool sw__shard_is_lost(const shard *h, uint32_t worker, uint64_t token, uint64_t seq)
{
    for (uint32_t k = 0; k < h->n_lost; k++) {
        const uint8_t *e = h->lost + sw_shard_entry_bytes(h->table.n_shards) * k;
        if (sw_get_u32(e) == worker && sw_get_u64(e + 4) == token && sw_get_u64(e + 12) == seq)
            return true;
    }
    return false;
}

static void send_state_flagged(shard *h, const from *to, uint32_t flags)
{
    uint8_t b[SW_SHARD_STATE_BYTES];
    const uint64_t fields[] = {h->run,        h->saved,      h->r->bytes_in, h->r->bytes_out,
                               h->r->refused, h->r->restores, h->awaiting,   h->index,
                               h->restore_no, h->saved_before, h->unable_no,
                               sw_chunk_slice_at(&h->table, h->index), h->len};
    for (size_t i = 0; i < sizeof fields / sizeof *fields; i++)
        sw_put_u64(b + 8 * i, fields[i]);
    sw__shard_send(h, to, SW_MSG_SHARD_STATE, SW_NO_WORKER, flags, h->version, b, sizeof b);
}

static void send_state(shard *h, const from *to)
{
    send_state_flagged(h, to, 0);
}

void sw__shard_say_bye(shard *h, const from *to)
{
    send_state_flagged(h, to, SW_FLAG_DONE);
}

/* A ping of the run's: a resumed shard learns the server's route from it (only the run's
 * server and its shards' files know the run's id), so that the server's word that the run is
 * over reaches it even when the run ends before its RESTORE (the server found its file
 * wrong). */
static void pinged(shard *h, const from *f)
{
    if (h->awaiting && !sw__shard_is_server(h, f)) {
        memcpy(h->server, f->route, f->route_len);
        h->server_len = f->route_len;
    }
    send_state(h, f);
}

void sw__shard_on_ping(shard *h, const from *f, const sw_msg *m)
{
    if (!h->configured) /* after a refused INIT, its reason again (sw__shard_refuse_flagged) */
        sw__shard_refuse_run(h, f, m, SW__SHARD_NO_RUN);
    else if ((m->payload_len != 8 || sw_get_u64(m->payload) != h->run) && h->awaiting)
        sw__shard_refuse_run(h, f, m, SW__SHARD_RESUMED);
    else if (m->payload_len != 8 || sw_get_u64(m->payload) != h->run)
        sw__shard_refuse(h, f, m, "a ping from another run");
    else
        pinged(h, f);
}

/* ---- Files: FILE holds the newest checkpoint, FILE.prev the one before ------------------- */

const char *sw__shard_ckpt_file(shard *h)
{
    if (!h->ckpt[0] && (!h->p->checkpoint || !sw_file_final_name(h->p->checkpoint, h->ckpt)))
        snprintf(h->ckpt, sizeof h->ckpt, "%s", h->p->checkpoint ? h->p->checkpoint : "");
    return h->ckpt;
}

void sw__shard_prev_path(shard *h, char out[4096])
{
    snprintf(out, 4096, "%.*s.prev", 4090, sw__shard_ckpt_file(h)); /* a longer name: no save */
}

static int save(shard *h, char *err)
{
    sw_ckpt c = {.desc = {.spec = SW_CKPT_SLICE, .in_shape = {(uint32_t)h->len, 1, 1}},
                 .model_version = h->version, .seed = h->run, .n_params = h->len,
                 .params = h->theta};
    snprintf(c.note, sizeof c.note, "%s", h->config);
    int rc = 0;
    if (h->opt.m)
        rc = sw_ckpt_put_optim(&c, &h->opt, err);
    else
        snprintf(c.optimizer, sizeof c.optimizer, "sgd");
    char prev[PATH_MAX];
    sw__shard_prev_path(h, prev);
    if (!rc && !sw_file_replaceable(prev))
        rc = sw_fail(err, SW_EIO, "%s is not a regular file (a device, FIFO or socket), which "
                     "keeping the checkpoint before would replace", prev);
    /* FILE stays while FILE.prev takes its content: a save that fails (a full disk) or a kill
     * as it saves leaves both whole. */
    int keep = rc ? 0 : sw_file_keep_as(sw__shard_ckpt_file(h), prev);
    bool kept = keep > 0;
    if (keep < 0)
        rc = sw_fail(err, SW_EIO, "%s: cannot keep it as %s: %s", sw__shard_ckpt_file(h), prev,
                     strerror(errno));
    if (kept) /* FILE.prev holds what FILE held */
        h->saved_before = h->saved;
    if (!rc && !(rc = sw_ckpt_save(sw__shard_ckpt_file(h), &c, err)))
        sw_file_note_saved(h->ckpt_lock);
    free(c.optim_state);
    return rc;
}

/* A checkpoint of this run's slice, from path; version: the one wanted, or SW_SHARD_NONE for
 * any. *held (may be NULL): the version the file holds when it is this run's slice of another,
 * else SW_SHARD_NONE. */
static int load_one(const shard *h, const char *path, uint64_t version, sw_ckpt *ck,
                    uint64_t *held, char *err)
{
    if (held)
        *held = SW_SHARD_NONE;
    int rc = sw_ckpt_load(path, ck, err);
    if (rc)
        return rc;
    if (held && !strcmp(ck->desc.spec, SW_CKPT_SLICE))
        *held = ck->model_version;
    if (strcmp(ck->desc.spec, SW_CKPT_SLICE))
        rc = sw_fail(err, SW_EMISMATCH, "%s holds a model, not a shard's slice", path);
    else if (h->configured && (ck->seed != h->run || ck->n_params != h->len))
        rc = sw_fail(err, SW_EMISMATCH, "%s holds another run's slice", path);
    else if (version != SW_SHARD_NONE && ck->model_version != version)
        rc = sw_fail(err, SW_EMISMATCH, "%s holds version %llu", path,
                     (unsigned long long)ck->model_version);
    if (rc)
        sw_ckpt_free(ck);
    return rc;
}

/* Whether FILE's failure to give `version` (rc, it holding `held`) says the shard does not hold
 * it, so that the run may go back further: FILE damaged, or holding a newer save the others
 * did not make. Not so for a FILE missing or unreadable (an operator may put it right) or one
 * that holds an older version (an old file put back: going back to it would undo work). */
static bool file_lacks(int rc, uint64_t held, uint64_t version)
{
    if (rc == SW_EMISMATCH)
        return held != SW_SHARD_NONE && held > version;
    return rc == SW_EFORMAT || rc == SW_ECHECKSUM || rc == SW_EVERSION;
}

/* The same for FILE.prev, which may be missing (none kept yet, or made FILE by a restore). */
static bool prev_lacks(int rc, const char *prev)
{
    return rc == SW_EMISMATCH || rc == SW_EFORMAT || rc == SW_ECHECKSUM || rc == SW_EVERSION ||
           (rc == SW_EIO && access(prev, F_OK) != 0 && errno == ENOENT);
}

/* The checkpoint of `version` (SW_SHARD_NONE: the newest), from FILE or else FILE.prev
 * (*from_prev says which). Of a version neither holds: SW_EMISMATCH when the shard knows it
 * does not hold it (the run may go back further, on_restore), SW_EIO otherwise (the run ends,
 * every file as it was). */
static int load(shard *h, uint64_t version, sw_ckpt *ck, bool *from_prev, char *err)
{
    char prev[PATH_MAX], why[SW_ERR_LEN];
    sw__shard_prev_path(h, prev);
    *from_prev = false;
    uint64_t held;
    int first_rc = load_one(h, sw__shard_ckpt_file(h), version, ck, &held, err);
    if (!first_rc)
        return 0;
    if (version == SW_SHARD_NONE && access(prev, F_OK) != 0)
        return first_rc; /* no FILE.prev to fall back on: FILE's own error says it all */
    *from_prev = true;
    int rc = load_one(h, prev, version, ck, NULL, why);
    if (rc && version != SW_SHARD_NONE &&
        !(file_lacks(first_rc, held, version) && prev_lacks(rc, prev))) {
        char first[SW_ERR_LEN];
        snprintf(first, sizeof first, "%s", err);
        return sw_fail(err, SW_EIO, "%.200s; %.200s: this shard will not say it lacks version "
                       "%llu (an old, missing or unreadable file?)", first, why,
                       (unsigned long long)version);
    }
    if (rc && version != SW_SHARD_NONE)
        return sw_fail(err, SW_EMISMATCH, "neither %s nor %s holds this run's version %llu",
                       sw__shard_ckpt_file(h), prev, (unsigned long long)version);
    if (rc) { /* both unreadable: say what is wrong with each */
        char first[SW_ERR_LEN];
        snprintf(first, sizeof first, "%s", err);
        return sw_fail(err, rc, "%.120s; and %.120s", first, why);
    }
    sw_log(SW_LOG_WARN, "%s; reading %s instead", err, prev);
    return 0;
}

/* The run went back to FILE.prev's version: FILE held a newer save the run abandoned (or is
 * damaged). FILE.prev becomes FILE, so that the next save keeps the restored version as its
 * FILE.prev: should another shard come back from it during that save, every shard still holds
 * it. A failure leaves the files as they were (the run goes on; that second restore would be
 * the one to fail). */
static void keep_restored(shard *h)
{
    char prev[PATH_MAX];
    sw__shard_prev_path(h, prev);
    if (rename(prev, sw__shard_ckpt_file(h)))
        sw_log(SW_LOG_WARN, "%s: cannot keep it as %s: %s", prev, sw__shard_ckpt_file(h),
               strerror(errno));
    else
        h->saved_before = SW_SHARD_NONE;
}

/* θ and the optimizer's state from ck, which holds this run's slice. */
static int take(shard *h, const sw_ckpt *ck, char *err)
{
    if (ck->n_params != h->len)
        return sw_fail(err, SW_EMISMATCH, "a checkpoint of %zu floats for a slice of %zu",
                       ck->n_params, h->len);
    if (sw_optim_stateful(&h->optim)) {
        sw_optim o = {0};
        int rc = sw_ckpt_take_optim(ck, &h->optim, &o, err);
        if (rc == 1)
            return sw_fail(err, SW_EMISMATCH, "the checkpoint was made by the optimizer %s",
                           ck->optimizer);
        if (rc)
            return rc;
        sw_optim_free(&h->opt);
        h->opt = o;
    }
    memcpy(sw__shard_theta_writable(h, false), ck->params, 4 * h->len);
    h->version = h->saved = ck->model_version;
    return 0;
}

void sw__shard_on_save(shard *h, const from *f, const sw_msg *m)
{
    char err[SW_ERR_LEN];
    if (!sw__shard_is_server(h, f) || !h->ready)
        sw__shard_refuse_order(h, f, m, "only the server orders checkpoints");
    else if (!h->p->checkpoint)
        sw__shard_refuse(h, f, m, "this shard keeps no checkpoint: start it with --checkpoint FILE");
    else if (m->version != h->version)
        sw__shard_refuse_flagged(h, f, m, SW_FLAG_DROPPED,
                                 "a checkpoint of a version this shard does not hold");
    else if (save(h, err))
        sw__shard_refuse(h, f, m, err);
    else {
        h->saved = h->version;
        h->r->saves++;
        send_state(h, f);
    }
}

/* ---- Resuming ------------------------------------------------------------------------------ */

/* The older checkpoint of this run FILE.prev holds, if it reads whole: should the newest not
 * be one every shard holds (another shard's FILE damaged), the run may go back to it. */
static void note_older(shard *h)
{
    char prev[PATH_MAX], why[SW_ERR_LEN];
    sw__shard_prev_path(h, prev);
    sw_ckpt ck;
    if (access(prev, F_OK) != 0)
        return;
    if (load_one(h, prev, SW_SHARD_NONE, &ck, NULL, why)) {
        sw_log(SW_LOG_WARN, "%s: the run cannot go back to it", why);
        return;
    }
    if (ck.model_version < h->saved)
        h->saved_before = ck.model_version;
    sw_ckpt_free(&ck);
}

int sw__shard_resume(shard *h, char *err)
{
    if (!h->p->checkpoint)
        return sw_fail(err, SW_EINVAL, "--resume needs --checkpoint FILE");
    sw_ckpt ck;
    bool from_prev;
    int rc = load(h, SW_SHARD_NONE, &ck, &from_prev, err);
    if (rc)
        return rc;
    if (!(rc = sw__shard_configure(h, ck.note, err)))
        rc = take(h, &ck, err);
    sw_ckpt_free(&ck);
    if (rc)
        return rc;
    if (!from_prev)
        note_older(h);
    h->awaiting = true;
    sw_log(SW_LOG_INFO, "shard %u of %u resumed run %llu at version %llu: waiting for its "
           "server to restore the run", h->index, h->table.n_shards, (unsigned long long)h->run,
           (unsigned long long)h->version);
    return 0;
}

bool sw__shard_awaits(shard *h, const sw_delivery *d, const sw_msg *m)
{
    if (m->type == SW_MSG_SHARD_PING || m->type == SW_MSG_SHARD_RESTORE ||
        m->type == SW_MSG_SHARD_INIT || /* its run's start again, or refused (shard.c) */
        m->type == SW_MSG_BATCH) /* a batch's orders are judged one by one (shard.c) */
        return false;
    if (m->type == SW_MSG_SHARD_MEMBER && m->worker == SW_NO_WORKER && (m->flags & SW_FLAG_DONE))
        return false; /* the run is over, restored or not */
    if (m->worker == SW_NO_WORKER)
        return true; /* an order sent before the server knew: the RESTORE makes it moot */
    size_t cap = 4 * (size_t)h->slots + 64; /* a member has a pull and a push in flight */
    if (h->n_stash == 0 && !h->stash && !(h->stash = malloc(cap * sizeof *h->stash)))
        return true; /* no memory: lost, as on a network */
    if (h->n_stash < cap) {
        h->stash[h->n_stash] = *d;
        h->stash[h->n_stash++].frame = sw_frame_ref(d->frame);
    }
    return true;
}

/* The workers' messages that waited for the RESTORE, in the order they came. */
static void replay(shard *h)
{
    size_t n = h->n_stash;
    h->n_stash = 0;
    for (size_t i = 0; i < n; i++) {
        sw__shard_take(h, &h->stash[i]);
        sw_frame_unref(h->stash[i].frame);
    }
}

static void forget_held(shard *h)
{
    for (size_t i = 0; i < h->n_held; i++)
        if (h->held[i].g)
            sw__shard_let_go(&h->held[i]);
}

/* Keeps the RESTORE's tokens and lost entries; false when its payload is malformed. */
static bool take_restore(shard *h, const sw_msg *m)
{
    const uint8_t *p = m->payload;
    if (m->payload_len < SW_SHARD_RESTORE_HEAD || sw_get_u32(p + 24) != h->slots)
        return false;
    size_t at = SW_SHARD_RESTORE_HEAD + 8 * (size_t)h->slots;
    if (m->payload_len < at + 4)
        return false;
    uint32_t n = sw_get_u32(p + at);
    size_t entry = sw_shard_entry_bytes(h->table.n_shards);
    if (m->payload_len != at + 4 + (uint64_t)entry * n || !sw__shard_entries_ok(h, p + at + 4, n))
        return false;
    uint8_t *lost = n ? malloc(entry * n) : NULL;
    if (n && !lost)
        return false;
    if (n)
        memcpy(lost, p + at + 4, entry * n);
    free(h->lost);
    h->lost = lost;
    h->n_lost = n;
    for (uint32_t w = 0; w < h->slots; w++)
        sw__shard_set_token(h, w, sw_get_u64(p + SW_SHARD_RESTORE_HEAD + 8 * (size_t)w));
    return true;
}

/* A RESTORE of a version neither file holds (FILE damaged, or holding a save the others did not
 * make): the shard serves no one until a RESTORE it can take, and tells the server which
 * versions it holds; the server sends every shard back to an older one, or ends the run. (A
 * file missing, unreadable or old is refused instead, load(): the run ends, files as they were.) */
static void unable(shard *h, const from *f, const sw_msg *m, const char *why)
{
    sw_log(SW_LOG_WARN, "shard %u cannot go back to version %llu: %s", h->index,
           (unsigned long long)sw_get_u64(m->payload + 8), why);
    h->unable_no = sw_get_u64(m->payload + 16);
    h->awaiting = true;
    if ((m->flags & SW_FLAG_DROPPED) || !sw__shard_is_server(h, f))
        forget_held(h); /* a restarted server's: none counts, as on_restore says */
    send_state(h, f);
}

void sw__shard_on_restore(shard *h, const from *f, const sw_msg *m)
{
    char err[SW_ERR_LEN];
    sw_ckpt ck;
    if (!h->configured) {
        sw__shard_refuse_run(h, f, m, SW__SHARD_NO_RUN); /* a resumed server, a shard afresh */
        return;
    }
    if (m->payload_len < SW_SHARD_RESTORE_HEAD) {
        sw__shard_refuse(h, f, m, "a malformed restore");
        return;
    }
    if (!h->p->checkpoint) {
        sw__shard_refuse(h, f, m, "this shard keeps no checkpoint to restore (--checkpoint)");
        return;
    }
    if (sw_get_u64(m->payload) != h->run) {
        /* Not this shard's run id: only its run's server and its shards' files know it, and a
         * stranger who learnt it could restore and overwrite the slice. Its log names it. */
        snprintf(err, sizeof err, "a restore of another run: the server's record names run "
                 "%llu, this shard's --checkpoint file holds another (the shard's log names "
                 "it); give each shard the checkpoint file its run saved",
                 (unsigned long long)sw_get_u64(m->payload));
        sw__shard_refuse_run(h, f, m, err);
        return;
    }
    uint64_t from_version = sw_get_u64(m->payload + 8);
    bool from_prev;
    int lrc = load(h, from_version, &ck, &from_prev, err);
    if (lrc == SW_EMISMATCH) {
        unable(h, f, m, err);
        return;
    }
    if (lrc) {
        sw__shard_refuse(h, f, m, err);
        return;
    }
    int rc = take(h, &ck, err);
    sw_ckpt_free(&ck);
    if (rc || !take_restore(h, m)) {
        sw__shard_refuse(h, f, m, rc ? err : "a malformed restore");
        return;
    }
    if (from_prev)
        keep_restored(h);
    /* A restore from a server we did not take orders from before comes from a restarted
     * server, to which no gradient held here counts: forgotten, though its DROPPED restore may
     * have been lost with a broken link and this one, sent in its place, not say so. */
    if ((m->flags & SW_FLAG_DROPPED) || !sw__shard_is_server(h, f))
        forget_held(h);
    sw__batch_flush(&h->to_server); /* what was said to the server before */
    memcpy(h->server, f->route, f->route_len); /* a restarted server has a new route */
    h->server_len = f->route_len;
    h->version = m->version;
    h->restore_no = sw_get_u64(m->payload + 16);
    h->restored_at = h->restore_no; /* two restores may go on as one version (go_back_further) */
    h->r->restores++;
    h->awaiting = false;
    h->ready = true;
    sw_log(SW_LOG_INFO, "shard %u restored its checkpoint of version %llu, going on as %llu",
           h->index, (unsigned long long)from_version, (unsigned long long)h->version);
    send_state(h, f);
    replay(h);
    sw__shard_answer_waiting(h);
}
