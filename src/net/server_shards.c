/* The server as the control plane of a sharded run (server_shards.h): its shards' connections,
 * what it sends them and what they say, and the gathers that evaluations read. What the engine
 * decides on their reports is in server_shards_decide.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server_internal.h"
#include "syncwise/ckpt.h"
#include "syncwise/log.h"
#include "syncwise/policy.h"

#define ORDERS_QUEUED 100000 /* frames a shard's connection queues before one is lost */

/* ---- Sending ---------------------------------------------------------------------------- */

/* Sends f (the caller's reference) to shard j. A lost order would leave the shards at
 * different versions: the run ends (unless it is over). */
static void send_frame(server *s, uint32_t j, sw_frame *f)
{
    size_t size = f ? sw_frame_size(f) : 0;
    sw_msg head = {.type = 0};
    if (f)
        sw_msg_view(sw_frame_data(f), size, &head);
    const char *what = f ? sw_msg_type_name(head.type) : "message";
    if (sw_send(s->shards.socks[j], NULL, 0, f)) {
        s->r->bytes_out += size;
        if (head.type == SW_MSG_SHARD_SET)
            s->r->model_bytes += size;
        return;
    }
    if (s->concluded) { /* the run is over: nothing is left to part ways over */
        sw_log(SW_LOG_WARN, "a %s to shard %u (%s) was lost after the run's end (%s): the end "
               "is told again for %g s until the shard answers", what, j, s->shards.eps[j],
               strerror(errno), SW_SHARDS_BYE_S);
        return;
    }
    char why[2 * SW_ERR_LEN]; /* cut to SW_ERR_LEN where it is kept */
    snprintf(why, sizeof why, "a %s order to shard %u (%s) was lost (%s: no memory, its queue "
             "full, or its connection broken: by a frame over the size limit, or a shard started "
             "again without the run's CURVE options): the shards would part ways",
             what, j, s->shards.eps[j], strerror(errno));
    sw__server_fail(s, SW_EIO, why);
}

/* m as it travels: with the run's link flags, but INIT, which tells the shard whether the run
 * checks them. */
static sw_msg on_link(const server *s, const sw_msg *m)
{
    sw_msg out = *m;
    if (m->type != SW_MSG_SHARD_INIT)
        out.flags |= sw__server_link_flags(s);
    return out;
}

void sw__shards_send_to(server *s, uint32_t j, const sw_msg *m, const float *floats)
{
    sw__shards_flush(s); /* what was said to every shard before */
    sw_msg out = on_link(s, m);
    send_frame(s, j, sw__msg_frame(&out, floats));
}

/* The batch's way out: one frame, referenced by each shard's send. */
static void send_to_all(void *ctx, sw_frame *f)
{
    server *s = ctx;
    for (uint32_t j = 0; j < s->shards.n; j++)
        if (j != s->shards.skip)
            send_frame(s, j, f ? sw_frame_ref(f) : NULL);
    sw_frame_unref(f);
}

/* The same message to every shard: an order of no worker waits in the turn's batch, a member's
 * goes at once (a resumed shard keeps those for after its RESTORE, which it cannot do with a
 * batch's part). */
void sw__shards_send_all(server *s, const sw_msg *m)
{
    sw__shards *h = &s->shards;
    sw_msg out = on_link(s, m);
    h->to_all.flags = sw__server_link_flags(s);
    if (m->worker == SW_NO_WORKER)
        sw__batch_post(&h->to_all, &out);
    else
        sw__batch_send_alone(&h->to_all, sw__msg_frame(&out, NULL));
}

void sw__shards_flush(server *s)
{
    sw__batch_flush(&s->shards.to_all);
}

void sw__shards_flush_but(server *s, uint32_t j)
{
    s->shards.skip = j;
    sw__batch_flush(&s->shards.to_all);
    s->shards.skip = s->shards.n;
}

/* ---- Opening ----------------------------------------------------------------------------- */

int sw__shards_policy_ok(const char *spec, char *err)
{
    char name[64];
    snprintf(name, sizeof name, "%.*s", (int)strcspn(spec, ":"), spec);
    if (sw_policy_spec_wants(spec) & SW_WANT_LOSS)
        return sw_fail(err, SW_EINVAL,
                       "policy '%.64s' decides on the model's loss after every apply, which a "
                       "sharded run would have to gather from every shard each time: run it "
                       "without --shards%s",
                       spec, strcmp(name, "dbw") ? ""
                                 : " (or give dbw's gain=eta its smoothness, L=X, which it "
                                   "then does not estimate from the loss)");
    return 0;
}

/* What a sharded run cannot do yet, said before anything starts. */
static int supported(const server *s, char *err)
{
    const sw_server_params *p = s->p;
    if (p->apply_threads > 1)
        return sw_fail(err, SW_EINVAL,
                       "a server with --shards holds no parameters, so --apply-threads would "
                       "have nothing to apply: give it to the shards (syncwise shard "
                       "--apply-threads N, launch --shard-apply-threads N)");
    return sw__shards_policy_ok(p->policy, err);
}

/* INIT: the run and shard j's place in it. */
static void send_init(server *s, uint32_t j, uint64_t version)
{
    const sw__shards *h = &s->shards;
    char table[SW_CKPT_NOTE_LEN - 1024], optim[SW_OPTIM_SPEC_LEN], text[SW_CKPT_NOTE_LEN];
    sw_chunk_table_format(&h->table, table, sizeof table);
    sw_optim_format(&s->optim, optim);
    int len = snprintf(text, sizeof text,
                       "run=%llu\nshard=%u\nshards=%u\nparams=%zu\nslots=%u\n%soptimizer=%s\n"
                       "wd=%.9g\nchecksum=%s\n%s",
                       (unsigned long long)h->run, j, h->n, s->n, s->slots, table, optim,
                       (double)s->p->weight_decay, s->unchecked ? "off" : "on",
                       s->p->checkpoint ? "checkpoints=on\n" : "");
    sw_msg m = {.type = SW_MSG_SHARD_INIT, .worker = SW_NO_WORKER, .version = version,
                .payload = (const uint8_t *)text,
                .payload_len = len < 0 ? 0 : (size_t)len < sizeof text ? (size_t)len : sizeof text - 1};
    sw__shards_send_to(s, j, &m, NULL);
}

static int dial(server *s, uint32_t j, char *err)
{
    sw__shards *h = &s->shards;
    size_t slice = sw_chunk_slice_len(&h->table, j);
    /* Under CURVE every shard holds the server's own key pair (syncwise/shard.h). */
    /* A route of this process's own for each link: after a network fault ZeroMQ connects
     * again under it, and the shard still knows its server (a made-up route would be a
     * stranger's, whose orders it refuses). A server started again has another. One route
     * for every link would make one shard named twice (spelt two ways that no resolver here
     * tells apart: two addresses of one machine) hear both links as one: the newer takes the
     * route over, and answers to one link's orders go out on the other. */
    char route[sizeof h->route + 12];
    snprintf(route, sizeof route, "%s-%u", h->route, j);
    sw_dial_params dp = {.endpoint = h->eps[j], .identity = route, .linger_s = 1,
                         .queue = ORDERS_QUEUED, .max_frame = sw_msg_size(4 * slice + 8192),
                         .curve_key = s->p->curve_key, .curve_server = s->p->curve_key};
    return sw_dial(s->net, &h->socks[j], &dp, err);
}

/* The lines WELCOME adds: the shards' endpoints and the chunk table. */
static void welcome_lines(sw__shards *h)
{
    size_t len = (size_t)snprintf(h->welcome, sizeof h->welcome, "shards=");
    for (uint32_t j = 0; j < h->n; j++)
        len += (size_t)snprintf(h->welcome + len, sizeof h->welcome - len, j ? ",%s" : "%s",
                                h->eps[j]);
    len += (size_t)snprintf(h->welcome + len, sizeof h->welcome - len, "\n");
    sw_chunk_table_format(&h->table, h->welcome + len, sizeof h->welcome - len);
}

/* Two endpoints of one shard spelt two ways (a host name and its address), found before any
 * is dialled: TCP host names are resolved as a bind resolves them. Spellings no resolver tells
 * apart (two addresses of one machine) the shard finds itself: it hears the second link's INIT
 * for another place of its run (shard_init.c). */
static int named_once(const sw__shards *h, char *err)
{
    char at[SW_SHARDS_MAX][SW_SHARD_EP_LEN], why[SW_ERR_LEN];
    for (uint32_t j = 0; j < h->n; j++) {
        if (strncmp(h->eps[j], "tcp://", 6) ||
            sw_endpoint_check(h->eps[j], true, at[j], sizeof at[j], why))
            snprintf(at[j], sizeof at[j], "%s", h->eps[j]);
        for (uint32_t k = 0; k < j; k++)
            if (!strcmp(at[k], at[j]))
                return sw_fail(err, SW_EINVAL, "--shards names one shard twice: %s and %s are "
                               "both %s (shards %u and %u)", h->eps[k], h->eps[j], at[j], k, j);
    }
    return 0;
}

int sw__shards_check(server *s, char *err)
{
    sw__shards *h = &s->shards;
    int rc = sw_shard_list_parse(s->p->shards, h->eps, &h->n, err);
    if (!rc)
        rc = named_once(h, err);
    if (!rc) /* the model over the shards, as the command line gives them: a usage error */
        rc = sw_chunk_table_init(&h->table, s->n, s->p->chunk_bytes / 4, h->n, err);
    return rc ? rc : supported(s, err);
}

int sw__shards_open(server *s, const float *theta0, uint64_t version, char *err)
{
    sw__shards *h = &s->shards; /* its list and table: sw__shards_check, at setup */
    int rc;
    h->entry = sw_shard_entry_bytes(h->n);
    h->to_all = (sw__batch){.send = send_to_all, .ctx = s};
    h->skip = h->n;
    h->reporting = calloc(s->slots, sizeof *h->reporting);
    h->cap_held = 2 * s->slots; /* a slot's old membership's push and its new one's */
    h->held = calloc(h->cap_held, sizeof *h->held);
    h->theta = malloc(s->n * sizeof *h->theta);
    if (!h->reporting || !h->held || !h->theta)
        return sw_fail(err, SW_ENOMEM, "out of memory for %zu parameters", s->n);
    welcome_lines(h);
    /* Secrets, as the route: orders need both. A restore's number has to be unlike any a shard
     * took from an earlier server: drawn here, counted up from (in 62 bits, so that counting
     * never wraps: it marks the slices, which a worker orders by it). */
    uint64_t run, route;
    if ((rc = sw_rng_secret(&run, err)) || (rc = sw_rng_secret(&route, err)) ||
        (rc = sw_rng_secret(&h->restore_no, err)))
        return rc;
    h->restore_no = (h->restore_no >> 2) | 1; /* never 0: a slice's mark before any restore */
    if (!h->run) /* a restarted server read it from its record */
        h->run = run | 1; /* never 0 */
    snprintf(h->route, sizeof h->route, "sw-server-%016llx", (unsigned long long)route);
    h->saved = h->saving = h->restore_from = SW_SHARD_NONE;
    for (size_t i = 0; i < sizeof h->kept_at / sizeof *h->kept_at; i++)
        h->kept_at[i].version = SW_SHARD_NONE; /* no save seen yet */
    for (uint32_t j = 0; j < h->n; j++) /* heard at 0, the start */
        h->seen[j] = (sw__shard_seen){.saved = SW_SHARD_NONE, .saved_before = SW_SHARD_NONE};
    for (uint32_t j = 0; j < h->n && !rc; j++)
        rc = dial(s, j, err);
    if (!rc) /* resumed too: the record's cut */
        sw_log(SW_LOG_INFO, "the parameters cut into %u chunk%s of %zu over %u shard%s",
               h->table.n_chunks, h->table.n_chunks == 1 ? "" : "s", h->table.chunk, h->n,
               h->n == 1 ? "" : "s");
    if (!rc && s->resuming) {
        sw__shards_restart(s, version);
        return 0;
    }
    /* The run's id is on disk before any shard is configured for it: a server killed before
     * every shard saved the start takes it up again (--resume) with the same id. */
    if (!rc && s->p->checkpoint)
        rc = sw__shards_write_record(s, err);
    for (uint32_t j = 0; j < h->n && !rc; j++) {
        send_init(s, j, version);
        sw_msg set = {.type = SW_MSG_SHARD_SET, .worker = SW_NO_WORKER, .version = version,
                      .payload_len = 4 * sw_chunk_slice_len(&h->table, j)};
        sw__shards_send_to(s, j, &set, theta0 + sw_chunk_slice_at(&h->table, j));
    }
    /* A first checkpoint of the run as it starts: a shard or server killed before the first
     * one on the schedule is started again with --resume, where the run had to start over. */
    if (!rc && s->p->checkpoint)
        sw__server_checkpoint(s, err);
    return rc;
}

void sw__shards_close(server *s, const char *failed)
{
    sw__shards *h = &s->shards;
    sw__shards_end(s, failed);
    for (uint32_t j = 0; j < h->n; j++)
        sw_sock_close(h->socks[j]);
    if (h->waited)
        sw_log(SW_LOG_INFO, "%llu pushes waited for the last apply's norms (the policy reads "
               "them)", (unsigned long long)h->waited);
    if (h->waited_gather)
        sw_log(SW_LOG_INFO, "%llu pushes waited for an evaluation's gather of the slices",
               (unsigned long long)h->waited_gather);
    free(h->reporting);
    free(h->held);
    free(h->order);
    free(h->theta);
}

/* ---- Members -------------------------------------------------------------------------------- */

void sw__shards_member(server *s, uint32_t w, uint64_t token)
{
    sw__reporting *r = &s->shards.reporting[w];
    if (!token && r->open) { /* half reported: it will never be counted */
        sw__shards_drop_everywhere(s, w, r->token, r->seq);
        r->open = false;
    }
    sw_msg m = {.type = SW_MSG_SHARD_MEMBER, .worker = w, .flags = token ? 0 : SW_FLAG_DONE,
                .version = token};
    sw__shards_send_all(s, &m);
}

/* ---- What the shards say ---------------------------------------------------------------------- */

void sw__shards_failed(server *s, uint32_t j, const char *what, int len, const char *detail)
{
    char why[2 * SW_ERR_LEN]; /* cut to SW_ERR_LEN where it is kept */
    snprintf(why, sizeof why, "shard %u (%s) %s%.*s", j, s->shards.eps[j], what, len, detail);
    sw__server_fail(s, SW_EIO, why);
}

static void sliced(server *s, uint32_t j, const sw_msg *m)
{
    sw__shards *h = &s->shards;
    if (!h->gathering || sw_shard_set_has(&h->gathered, j) || sw_shard_set_has(&h->restoring, j))
        return; /* an answer to a gather given up (a restore abandons it) */
    char why[SW_ERR_LEN];
    sw_msg floats;
    uint64_t mark; /* the restoring set keeps out slices from before a restore */
    if (sw_msg_get_slice(m, &mark, &floats, why) ||
        sw_msg_get_floats(&floats, h->theta + sw_chunk_slice_at(&h->table, j),
                          sw_chunk_slice_len(&h->table, j), why)) {
        sw__shards_failed(s, j, "sent a bad slice: ", (int)strlen(why), why);
        return;
    }
    if (m->version > sw_engine_version(s->engine)) { /* it applies only what the run ordered */
        snprintf(why, sizeof why, "version %llu, past the run's %llu",
                 (unsigned long long)m->version, (unsigned long long)sw_engine_version(s->engine));
        sw__shards_failed(s, j, "sent a slice ahead of the run: ", (int)strlen(why), why);
        return;
    }
    bool first = sw_shard_set_empty(&h->gathered);
    h->gather_min = !first && h->gather_min < m->version ? h->gather_min : m->version;
    h->gather_max = !first && h->gather_max > m->version ? h->gather_max : m->version;
    sw_shard_set_add(&h->gathered, j);
    if (!sw_shard_set_full(&h->gathered, h->n))
        return;
    h->gathering = false;
    if (h->gather_min != h->gather_max) {
        /* Slices of two versions (a crash applied while they were on their way) form a model
         * the run never held: not one to evaluate, log or save. Asked again at the run's
         * version, every shard answers at that one, as decisions wait for the gather. */
        sw__shards_gather(s);
        return;
    }
    h->have_theta = true;
    h->theta_version = h->gather_min;
    sw__server_gathered(s);
    sw__shards_decide_held(s); /* the decisions the gather held back */
}

/* One message from shard j, alone or out of a batch. */
static void take_msg(server *s, uint32_t j, const sw_msg *m)
{
    if (m->type == SW_MSG_SHARD_PUSHED) {
        sw__shards_reported(s, j, m);
    } else if (m->type == SW_MSG_SHARD_SLICE) {
        sliced(s, j, m);
    } else if (m->type == SW_MSG_SHARD_APPLIED) {
        sw__shards_measured(s, j, m);
    } else if (m->type == SW_MSG_SHARD_STATE) {
        sw__shards_state(s, j, m);
    } else if (m->type == SW_MSG_ERROR && s->p->checkpoint && s->shards.saved == SW_SHARD_NONE &&
               m->payload_len >= strlen(SW_SHARD_NO_RUN_HEAD) &&
               !memcmp(m->payload, SW_SHARD_NO_RUN_HEAD, strlen(SW_SHARD_NO_RUN_HEAD))) {
        /* started again before the run's start was saved everywhere: the start again */
        const char *how = "(started again before the run's start was saved on every shard): "
                          "start the server again with --resume, every shard that ends with "
                          "--checkpoint FILE --resume, and the workers: the run starts again";
        sw__shards_failed(s, j, "holds no run ", (int)strlen(how), how);
    } else if (m->type == SW_MSG_ERROR && (m->flags & SW_FLAG_DROPPED) &&
               sw_shard_set_has(&s->shards.restoring, j)) {
        /* out of step with orders the network let through after a break, before the restore
         * that break brought: moot once the shard takes it */
        sw_log(SW_LOG_DEBUG, "shard %u refused an order before its restore: %.*s", j,
               (int)m->payload_len, (const char *)m->payload);
    } else if (m->type == SW_MSG_ERROR) {
        sw__shards_failed(s, j, "refused the server's order: ", (int)m->payload_len,
                          (const char *)m->payload);
    } else {
        const char *type = sw_msg_type_name(m->type);
        sw__shards_failed(s, j, "sent a message meant for someone else: ", (int)strlen(type),
                          type);
    }
}

/* A message is checked as the link agreed (a batch's messages, as the batch is). */
static bool link_ok(const server *s, const sw_msg *m)
{
    return !(m->flags & SW_FLAG_UNCHECKED) || s->unchecked;
}

/* A shard's batch, checked whole, then its messages one by one as if each had come alone. */
static void take_batch(server *s, uint32_t j, const sw_msg *batch, uint64_t limit)
{
    char why[SW_ERR_LEN];
    if (sw__batch_check(batch, limit, false, why)) {
        sw__shards_failed(s, j, "sent a malformed batch: ", (int)strlen(why), why);
        return;
    }
    sw_msg m;
    for (size_t at = 0; !s->finished && sw__batch_next(batch, &at, &m);) {
        s->r->shard_messages++;
        take_msg(s, j, &m);
    }
}

void sw__shards_take(server *s, uint32_t j, const sw_delivery *d)
{
    sw__shards_notice_break(s, j); /* a new connection's first message comes after its mend */
    if (s->rc)
        return;
    if (d->gone) {
        sw__shards_failed(s, j, "closed its connection", 0, "");
        return;
    }
    size_t len = sw_frame_size(d->frame);
    s->r->bytes_in += len;
    sw_msg m;
    char why[SW_ERR_LEN];
    uint64_t limit = 4 * (uint64_t)sw_chunk_slice_len(&s->shards.table, j) + SW_BATCH_BYTES;
    if (d->multipart || sw_msg_decode(sw_frame_data(d->frame), len, limit, &m, why) ||
        !link_ok(s, &m)) {
        sw__shards_failed(s, j, "sent a message the server cannot read", 0, "");
        return;
    }
    s->shards.seen[j].heard = sw__server_now(s);
    s->shards.seen[j].answered = true;
    s->r->shard_frames++;
    if (m.type == SW_MSG_SHARD_SLICE)
        s->r->model_bytes += len;
    if (m.type == SW_MSG_BATCH) {
        take_batch(s, j, &m, limit);
    } else {
        s->r->shard_messages++;
        take_msg(s, j, &m);
    }
}

/* ---- Gathers ------------------------------------------------------------------------------- */

void sw__shards_gather(server *s)
{
    sw__shards *h = &s->shards;
    if (h->gathering)
        return;
    h->gathering = true;
    h->have_theta = false; /* its buffer is being written */
    h->gathered = (sw_shard_set){{0}};
    sw_msg m = {.type = SW_MSG_SHARD_PULL, .worker = SW_NO_WORKER,
                .version = sw_engine_version(s->engine)};
    sw__shards_send_all(s, &m);
}
