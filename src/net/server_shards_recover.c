/* A sharded run's recovery, the server's side (server_shards.h): it pings every shard, so that
 * a silent one ends the run and a resumed one is noticed; it orders checkpoints of one version
 * on every shard (their record: server_shards_record.c); and when a shard comes back from its
 * checkpoint (or its link breaks), it rolls every shard back to the newest checkpoint all of
 * them hold (RESTORE) and counts the pushes whose slices the dead shard held. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server_internal.h"
#include "syncwise/bytes.h"
#include "syncwise/log.h"

/* ---- Pings and silence ------------------------------------------------------------------ */

#define SW_SHARDS_FIRST_WARN_S 5.0 /* a shard that never answered is named after this */

/* How long shard j may be silent: --shard-wait; once the run is over, no longer than the last
 * gather may take, and not at all when it never answered (there is nothing to gather). What
 * bounds it goes into `why`. */
static double wait_limit(const server *s, uint32_t j, const char **why)
{
    double limit = s->p->shard_wait_s;
    *why = "--shard-wait";
    if (!s->done)
        return limit;
    *why = "the run is over, and its last gather waits no longer";
    if (!s->shards.seen[j].answered)
        return 0;
    return limit > SW_SHARDS_LAST_GATHER_S ? SW_SHARDS_LAST_GATHER_S : limit;
}

bool sw__shards_out(const server *s, uint32_t j)
{
    const sw__shard_seen *v = &s->shards.seen[j];
    return v->awaiting || sw__server_now(s) - v->heard > SW_SHARDS_OUT_S;
}

bool sw__shards_any_out(const server *s)
{
    for (uint32_t j = 0; j < s->shards.n; j++)
        if (sw__shards_out(s, j))
            return true;
    return false;
}

/* How long a link that broke before the run's first push may take to bring the shard's
 * reason: a shard that refuses its run at INIT (a --max-frame too small for its slice) has
 * ZeroMQ drop the SET that follows, which breaks the link, and says why to the server's next
 * ping, on the new connection. The run ends either way; failing at the break named a network
 * fault instead. */
#define EARLY_BREAK_GRACE_S 1.0

static void link_broke(server *s, uint32_t j);

void sw__shards_notice_break(server *s, uint32_t j)
{
    unsigned breaks = sw_sock_reconnects(s->shards.socks[j]);
    if (breaks != s->shards.seen[j].reconnects) {
        s->shards.seen[j].reconnects = breaks;
        link_broke(s, j);
    }
}

void sw__shards_notice_breaks(server *s)
{
    for (uint32_t j = 0; j < s->shards.n && !s->rc; j++)
        sw__shards_notice_break(s, j);
}

void sw__shards_keep_alive(server *s, double now)
{
    sw__shards *h = &s->shards;
    for (uint32_t j = 0; j < h->n && !s->rc; j++) {
        const char *bound;
        sw__shard_seen *v = &h->seen[j];
        double silent = now - v->heard, limit = wait_limit(s, j, &bound);
        if (!v->answered && !v->warned && silent > SW_SHARDS_FIRST_WARN_S && silent <= limit) {
            v->warned = true; /* a run that would otherwise say nothing for --shard-wait */
            sw_log(SW_LOG_WARN, "shard %u (%s) has not answered in %.0f s: is a shard running "
                   "there? (the run waits for it, --shard-wait %g s)", j, h->eps[j], silent,
                   s->p->shard_wait_s);
        }
        if (!(silent > limit))
            continue;
        const char *hint = !v->answered ? "is a shard running there?"
                           : !s->p->checkpoint  ? "killed or cut off? (a run without --checkpoint "
                                                  "cannot take a shard back)"
                           : h->saved == SW_SHARD_NONE
                               ? "killed, cut off by the network, or started again with other "
                                 "CURVE keys? the run "
                                 "ends, before any checkpoint was complete: it starts over"
                               : "killed, cut off by the network, or started again with other "
                                 "CURVE keys? the run "
                                 "ends; to go on from the last checkpoint, start every "
                                 "shard and the server again with --resume";
        char why[320];
        snprintf(why, sizeof why, "%.0f s (%s): %s", silent, bound, hint);
        sw__shards_failed(s, j, "has been silent for ", (int)strlen(why), why);
        return;
    }
    if (now < h->next_ping)
        return;
    uint8_t run[8];
    sw_put_u64(run, h->run);
    sw_msg m = {.type = SW_MSG_SHARD_PING, .worker = SW_NO_WORKER, .payload = run,
                .payload_len = sizeof run};
    sw__shards_send_all(s, &m);
    h->next_ping = now + SW_SHARDS_PING_S;
}

/* ---- Checkpoints ---------------------------------------------------------------------------- */

void sw__shards_save(server *s)
{
    sw__shards *h = &s->shards;
    uint64_t V = sw_engine_version(s->engine);
    if (h->saving != SW_SHARD_NONE || h->saved == V || !sw_shard_set_empty(&h->restoring))
        return;
    h->saving = V;
    h->saving_kept = V - h->lost_applies;
    h->saved_by = (sw_shard_set){{0}};
    sw_msg m = {.type = SW_MSG_SHARD_SAVE, .worker = SW_NO_WORKER, .version = V};
    sw__shards_send_all(s, &m);
}

static void record_saved(server *s);

static void note_kept(sw__shards *h, uint64_t version, uint64_t kept)
{
    h->kept_at[h->next_kept].version = version;
    h->kept_at[h->next_kept].kept = kept;
    h->next_kept = (h->next_kept + 1) % (sizeof h->kept_at / sizeof *h->kept_at);
}

/* The applies in θ at the save of `version`, or SW_SHARD_NONE when this server did not see it
 * (a restarted server knows only its record's). */
static uint64_t kept_at(const sw__shards *h, uint64_t version)
{
    for (size_t i = 0; i < sizeof h->kept_at / sizeof *h->kept_at; i++)
        if (version != SW_SHARD_NONE && h->kept_at[i].version == version)
            return h->kept_at[i].kept;
    return SW_SHARD_NONE;
}

/* Every shard has checkpointed `saving`: the server's record says so (what a restarted server
 * would restore from). */
static void saved(server *s)
{
    sw__shards *h = &s->shards;
    h->saved = h->saving;
    h->saving = SW_SHARD_NONE;
    note_kept(h, h->saved, h->saving_kept);
    record_saved(s);
}

/* The record says every shard holds h->saved. */
static void record_saved(server *s)
{
    char err[SW_ERR_LEN];
    if (s->p->checkpoint && sw__shards_write_record(s, err))
        sw__server_fail(s, SW_EIO, err);
}

/* ---- Restores -------------------------------------------------------------------------------- */

/* The RESTORE payload: run, from, number, the slots' tokens, and the pushes that may have lost a
 * slice: those in the next apply's order, those waiting for an apply's norms and those not
 * every shard has reported. */
static uint8_t *restore_payload(server *s, uint64_t from, size_t *len)
{
    sw__shards *h = &s->shards;
    uint32_t open = 0;
    for (uint32_t w = 0; w < s->slots; w++)
        open += h->reporting[w].open;
    uint32_t n = h->n_order + h->n_held + open;
    size_t fixed = SW_SHARD_RESTORE_HEAD + 8 * (size_t)s->slots;
    uint8_t *b = malloc(fixed + 4 + h->entry * n);
    if (!b)
        return NULL;
    sw_put_u64(b, h->run);
    sw_put_u64(b + 8, from);
    sw_put_u64(b + 16, h->restore_no);
    sw_put_u32(b + 24, s->slots);
    for (uint32_t w = 0; w < s->slots; w++)
        sw_put_u64(b + SW_SHARD_RESTORE_HEAD + 8 * (size_t)w, s->conns[w].live ? s->conns[w].token : 0);
    sw_put_u32(b + fixed, n);
    uint8_t *e = b + fixed + 4;
    memcpy(e, h->order + 8, h->entry * h->n_order);
    e += h->entry * h->n_order;
    for (uint32_t k = 0; k < h->n_held; k++) {
        const sw__held *x = &h->held[(h->held_first + k) % h->cap_held];
        sw_shard_entry_put(e, x->worker, x->push.token, x->push.seq, &x->push.to, h->n);
        e += h->entry;
    }
    for (uint32_t w = 0; w < s->slots; w++) {
        const sw__reporting *r = &h->reporting[w];
        if (r->open) {
            sw_shard_entry_put(e, w, r->token, r->seq, &r->to, h->n);
            e += h->entry;
        }
    }
    *len = (size_t)(e - b);
    return b;
}

void sw__shards_restart(server *s, uint64_t version)
{
    sw__shards *h = &s->shards;
    h->restore_no++; /* unlike any number a shard took before (setup drew the first) */
    h->restores++;
    h->restoring = sw_shard_set_all(h->n);
    h->restore_sent = sw__server_now(s);
    h->saved = h->restore_from = version;
    note_kept(h, version, version); /* all a restarted server knows of it */
    size_t len;
    uint8_t *pay = restore_payload(s, version, &len); /* no member and no push yet */
    if (!pay) {
        sw__server_fail(s, SW_ENOMEM, "out of memory for a restore");
        return;
    }
    sw_msg m = {.type = SW_MSG_SHARD_RESTORE, .worker = SW_NO_WORKER, .flags = SW_FLAG_DROPPED,
                .version = version, .payload = pay, .payload_len = len};
    sw__shards_send_all(s, &m);
    free(pay);
    sw_log(SW_LOG_INFO, "the shards go back to their checkpoint of version %llu",
           (unsigned long long)version);
}

/* The half-reported pushes, counted now: their missing slices count as zero (as they do for
 * the pushes that waited for norms, decided by then). */
static void count_open(server *s)
{
    sw__shards *h = &s->shards;
    for (uint32_t w = 0; w < s->slots && !s->rc; w++) {
        sw__reporting *r = &h->reporting[w];
        if (r->open) {
            r->open = false;
            sw__shards_counted(s, w, r);
        }
    }
}

/* Whether every shard but j has said it saved the version being checkpointed. */
static bool saved_by_all_but(const sw__shards *h, uint32_t j)
{
    for (uint32_t k = 0; k < h->n; k++)
        if (k != j && !sw_shard_set_has(&h->saved_by, k))
            return false;
    return true;
}

/* The checkpoint every shard holds, to go back to for shard j, whose newest is `newest`
 * (SW_SHARD_NONE: none). One save is under way at a time, so each shard keeps the last one all
 * shards saved in FILE, or in FILE.prev under the save under way (or one the run abandoned).
 * The save under way counts only when shard j holds it and every other shard said it saved it:
 * a shard stopped before it read the order (SIGSTOP, a stalled link) and started again never
 * will. SW_SHARD_NONE when shard j's newest is older than the last common one. */
static uint64_t common_checkpoint(const sw__shards *h, uint32_t j, uint64_t newest)
{
    if (h->saving != SW_SHARD_NONE && newest == h->saving && saved_by_all_but(h, j))
        return h->saving;
    if (h->saved == SW_SHARD_NONE || newest == SW_SHARD_NONE || newest < h->saved)
        return SW_SHARD_NONE;
    return h->saved;
}

static void go_back(server *s, uint32_t j, uint64_t from, const char *cause, const char *which);

/* Every shard goes back to the newest checkpoint all of them hold, for shard j's sake: it came
 * back from its checkpoint of version `newest`, or its link broke (`cause` says which, for the
 * log). */
static void restore(server *s, uint32_t j, uint64_t newest, const char *cause)
{
    sw__shards *h = &s->shards;
    uint64_t from = common_checkpoint(h, j, newest);
    if (from == SW_SHARD_NONE && h->saved == SW_SHARD_NONE) {
        const char *why = "before every shard had saved the run's start: the run ends; start "
                          "the server again with --resume, every shard with --resume, and the "
                          "workers: the run starts again";
        sw__shards_failed(s, j, "came back from its checkpoint ", (int)strlen(why), why);
        return;
    }
    /* Its newest older than the common one (its newer file damaged, or an old file): every
     * shard goes back to the common one all the same, as when its link is seen made again
     * first; a shard that holds it in neither file says so (go_back_further). */
    go_back(s, j, from == SW_SHARD_NONE ? h->saved : from, cause,
            "the newest checkpoint all hold");
}

/* Every shard goes back to the checkpoint of version `from`, for shard j's sake (`cause`);
 * `which` says what that checkpoint is, for the log. */
static void go_back(server *s, uint32_t j, uint64_t from, const char *cause, const char *which)
{
    sw__shards *h = &s->shards;
    if (from == h->saving)
        saved(s); /* every shard holds it: the record says so */
    h->saving = SW_SHARD_NONE; /* any other save under way is abandoned */
    /* The newer one was lost: the record says `from` at once. Every shard holds it, or one
     * will say it does not and the run goes further back (or ends); a shard that took it from
     * FILE.prev made it FILE, so a record still naming the newer version could never be
     * resumed (it would find that FILE older than the version asked: an old file). */
    if (h->saved != SW_SHARD_NONE && from < h->saved) {
        h->saved = from;
        record_saved(s);
    }
    if (s->rc)
        return;
    h->restore_no++;
    h->restores++;
    h->restoring = sw_shard_set_all(h->n);
    h->restore_sent = sw__server_now(s);
    h->gathering = h->have_theta = false; /* what was or is being gathered predates it */
    for (uint32_t w = 0; w < s->slots; w++) {
        s->conns[w].routed = false; /* the resumed shard knows no worker's connection */
        if (s->conns[w].pushed_version > from) /* its pulls may now bring that version */
            s->conns[w].pushed_version = from;
    }
    uint64_t V = sw_engine_version(s->engine);
    /* a second restore to the same checkpoint undoes only the applies since the first; one to
     * an older checkpoint, those between the two as well */
    uint64_t lost = V - (h->restored_at > from ? h->restored_at : from);
    if (h->restored_at > from && h->restore_from != SW_SHARD_NONE && h->restore_from > from)
        lost += h->restore_from - from;
    uint64_t kept = kept_at(h, from);
    if (kept != SW_SHARD_NONE && V - h->lost_applies >= kept)
        lost = V - h->lost_applies - kept; /* exact: the applies in θ now, less those then */
    h->lost_applies += lost;
    h->restored_at = V;
    h->restore_from = from;
    sw__server_note(s, &(sw_event){.kind = SW_EV_RESTORE, .t = sw__server_now(s), .V = V,
                                   .ver = from, .n = (uint32_t)lost});
    size_t len;
    uint8_t *pay = restore_payload(s, from, &len);
    if (!pay) {
        sw__server_fail(s, SW_ENOMEM, "out of memory for a restore");
        return;
    }
    sw_msg m = {.type = SW_MSG_SHARD_RESTORE, .worker = SW_NO_WORKER, .version = V,
                .payload = pay, .payload_len = len};
    sw__shards_send_all(s, &m);
    free(pay);
    sw_log(SW_LOG_WARN, "shard %u (%s) %s: every shard goes back to version %llu, %s, and the "
           "run goes on as version %llu (%llu applies lost)", j, h->eps[j], cause,
           (unsigned long long)from, which, (unsigned long long)V, (unsigned long long)lost);
    sw__shards_stop_waiting_for_norms(s);
    count_open(s);
}

/* Shard j, which the last RESTORE has not reached, still awaits one long after it was sent:
 * the process it went to died before taking it, and the one started again never had it (a
 * shard stopped, then killed, while another came back). Every shard goes back again, as when
 * a second shard dies after a restore. */
static bool lost_restore(server *s, uint32_t j)
{
    sw__shards *h = &s->shards;
    if (!(sw__server_now(s) - h->restore_sent > SW_SHARDS_RESTORE_LOST_S))
        return false;
    sw_log(SW_LOG_WARN, "shard %u (%s) still awaits a restore %.0f s after one was sent: started "
           "again before it took it? every shard goes back again", j, h->eps[j],
           sw__server_now(s) - h->restore_sent);
    return true;
}

/* Who connects again: the server cannot tell. */
#define SW__SHARDS_AGAIN "(started again, or a network fault broke its link)"

/* A break before every shard saved the run's start: nothing to go back to, the run ends. */
static void fail_unsaved(server *s, uint32_t j)
{
    const char *why =
        s->p->checkpoint
            ? SW__SHARDS_AGAIN " before every shard had saved the run's start, and what was "
                               "on its way may be lost: start the server again with --resume, "
                               "every shard with --resume, and the workers: the run starts "
                               "again"
            : SW__SHARDS_AGAIN ", and what was on its way may be lost: a run without "
                               "--checkpoint cannot go back to a checkpoint, and ends";
    sw__shards_failed(s, j, "connected again ", (int)strlen(why), why);
}

/* The connection to shard j broke and ZeroMQ made it again: what was on its way, either way,
 * may be lost, and nothing says what (an apply the shard would wait for for ever, a push's
 * report, a slice ordered sent). Every shard goes back to the last checkpoint all of them
 * hold, at once, before the new connection's first message is handled, whoever is behind it:
 * the same process (stopped, or behind a stalled link), which missed what was on its way, or
 * one started again, which awaits that restore (its STATE saying so then asks for no other).
 * Waiting for the shard's next STATE left a gap in which a SAVE or an apply it could not take
 * was sent on the new connection, and ended the run. A run without a checkpoint ends, saying
 * why. So does a run that is over, whose last gather or save the break may have lost (it
 * waited for them for ever, the shard answering its pings): restored, it gathers again. A
 * break before the first push and before the start was saved ends the run a little later
 * (EARLY_BREAK_GRACE_S), so that the shard's reason may come first. */
static void link_broke(server *s, uint32_t j)
{
    sw__shards *h = &s->shards;
    if (h->saved == SW_SHARD_NONE && s->r->pushes == 0) {
        if (!h->early_break) { /* the first to break is named if no reason comes */
            h->early_break = true;
            h->early_broken = j;
            h->early_break_at = sw__server_now(s);
        }
        return; /* sw__shards_settle_early_break ends the run */
    }
    if (h->saved == SW_SHARD_NONE) {
        fail_unsaved(s, j);
        return;
    }
    sw__shards_flush_but(s, j); /* the same process would refuse what follows an order it missed */
    restore(s, j, h->saved, "connected again " SW__SHARDS_AGAIN ", and what was on its way may be "
            "lost");
}

void sw__shards_settle_early_break(server *s, double now)
{
    sw__shards *h = &s->shards;
    if (!h->early_break || s->rc || (now - h->early_break_at < EARLY_BREAK_GRACE_S &&
                                     !s->concluded && s->r->pushes == 0))
        return;
    h->early_break = false;
    fail_unsaved(s, h->early_broken); /* no reason came first: the break's own message */
}

/* Shard j cannot take the last RESTORE: neither of its files holds that version (FILE
 * damaged, or rotated by a save the others did not make; its log says which). Every shard goes
 * back to the newer of the two j holds below it, which each may still hold in FILE.prev; one
 * that does not says so in turn, and the run goes further back, until every shard takes one
 * or no older checkpoint is left to try. */
static void go_back_further(server *s, uint32_t j)
{
    sw__shards *h = &s->shards;
    const sw__shard_seen *v = &h->seen[j];
    uint64_t to = SW_SHARD_NONE;
    const uint64_t held[] = {v->saved, v->saved_before};
    for (int k = 0; k < 2; k++)
        if (held[k] != SW_SHARD_NONE && held[k] < h->restore_from &&
            (to == SW_SHARD_NONE || held[k] > to))
            to = held[k];
    char why[200];
    if (to == SW_SHARD_NONE) {
        snprintf(why, sizeof why, "%llu (its log says why: a damaged file?) nor to "
                 "an older one: no checkpoint every shard holds is left, and the run ends",
                 (unsigned long long)h->restore_from);
        sw__shards_failed(s, j, "cannot go back to version ", (int)strlen(why), why);
        return;
    }
    snprintf(why, sizeof why, "cannot go back to version %llu (its log says why: a damaged file?)",
             (unsigned long long)h->restore_from);
    go_back(s, j, to, why, "the newest that shard holds below it, if every shard does");
}

/* Whether the parameters shard j holds (STATE's last two fields: where its slice starts, how
 * long it is) are those this server's chunk table gives it; else the run ends, saying so: a
 * shard resumed from a run cut otherwise (its record edited, or written when chunks were cut by
 * another rule) would apply gradients at the wrong places. */
static bool holds_its_slice(server *s, uint32_t j, const sw_msg *m)
{
    const sw_chunk_table *t = &s->shards.table;
    uint64_t at = sw_get_u64(m->payload + 88), len = sw_get_u64(m->payload + 96);
    if (at == sw_chunk_slice_at(t, j) && len == sw_chunk_slice_len(t, j))
        return true;
    char why[240];
    snprintf(why, sizeof why, "[%llu, %llu), where this server's chunk table (chunks of %zu) "
             "gives it [%zu, %zu): the shard was configured by a run cut otherwise",
             (unsigned long long)at, (unsigned long long)(at + len), t->chunk,
             sw_chunk_slice_at(t, j), sw_chunk_slice_at(t, j) + sw_chunk_slice_len(t, j));
    sw__shards_failed(s, j, "holds the parameters ", (int)strlen(why), why);
    return false;
}

void sw__shards_state(server *s, uint32_t j, const sw_msg *m)
{
    sw__shards *h = &s->shards;
    if (m->payload_len != SW_SHARD_STATE_BYTES) {
        char why[96];
        snprintf(why, sizeof why, "%u bytes, not %d: a shard of another syncwise version?",
                 (unsigned)m->payload_len, SW_SHARD_STATE_BYTES);
        sw__shards_failed(s, j, "said what it holds in ", (int)strlen(why), why);
        return;
    }
    if (sw_get_u64(m->payload) != h->run) {
        sw__shards_failed(s, j, "says it serves another run", 0, "");
        return;
    }
    uint64_t index = sw_get_u64(m->payload + 56);
    if (index != j) { /* resumed from another shard's file: restoring it would scramble θ */
        char why[224];
        snprintf(why, sizeof why, "%llu: its --checkpoint file is that shard's, not its own, "
                 "--shards lists the shards in another order than the run's, or names that "
                 "shard twice, spelt two ways", (unsigned long long)index);
        sw__shards_failed(s, j, "holds the slice of shard ", (int)strlen(why), why);
        return;
    }
    if (!holds_its_slice(s, j, m))
        return;
    sw__shard_seen *v = &h->seen[j];
    uint64_t *fields[] = {&v->saved, &v->bytes_in, &v->bytes_out, &v->refused, &v->restores};
    for (size_t i = 0; i < sizeof fields / sizeof *fields; i++)
        *fields[i] = sw_get_u64(m->payload + 8 + 8 * i);
    v->awaiting = sw_get_u64(m->payload + 48) != 0;
    v->restore_no = sw_get_u64(m->payload + 64);
    v->saved_before = sw_get_u64(m->payload + 72);
    v->unable_no = sw_get_u64(m->payload + 80);
    v->version = m->version;
    if (v->awaiting && v->unable_no == h->restore_no && sw_shard_set_has(&h->restoring, j)) {
        go_back_further(s, j);
        return;
    }
    if (v->awaiting && (!sw_shard_set_has(&h->restoring, j) || lost_restore(s, j))) {
        char cause[80];
        snprintf(cause, sizeof cause, "came back from its checkpoint of version %llu",
                 (unsigned long long)v->saved);
        restore(s, j, v->saved, cause);
    } else if (!v->awaiting && v->restore_no == h->restore_no) {
        sw_shard_set_remove(&h->restoring, j);
    }
    if (h->saving != SW_SHARD_NONE && v->saved == h->saving && !v->awaiting) {
        sw_shard_set_add(&h->saved_by, j);
        if (sw_shard_set_full(&h->saved_by, h->n))
            saved(s);
    }
}
