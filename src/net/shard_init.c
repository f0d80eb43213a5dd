/* A shard's run (shard_internal.h): the configuration INIT gives (or a checkpoint kept), a
 * restarted server's INIT of the same run taken again, and SET, the run's first θ. */
#define _POSIX_C_SOURCE 200809L
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kv_text.h"
#include "shard_internal.h"
#include "syncwise/bytes.h"
#include "syncwise/err.h"
#include "syncwise/log.h"

typedef struct sw_shard shard;
typedef sw__from from;

/* The largest a run's message may be: a pushed slice (at most a pair per place), an apply
 * naming every slot, or a batch (h->table, h->len and h->slots set). */
uint64_t sw__shard_run_payload(const shard *h)
{
    uint64_t push = 16 + sw_shard_set_bytes(h->table.n_shards) + 8 * (uint64_t)h->len;
    uint64_t apply = 8 + sw_shard_entry_bytes(h->table.n_shards) * (uint64_t)h->slots;
    return (push > apply ? push : apply) + SW_BATCH_BYTES;
}

/* Lines that may be absent: wd a finite number at least 0 (into *wd), checksum "on" or "off",
 * checkpoints "on"; a value of a later protocol is refused, not read as another. */
static bool known_values(const char *text, double *wd)
{
    bool checksum = sw__text_is(text, "checksum", "on") || sw__text_is(text, "checksum", "off");
    return (!sw__text_value(text, "wd") ||
            (!sw__text_real(text, "wd", wd) && *wd >= 0 && *wd <= FLT_MAX)) && /* -0 is 0 */
           (!sw__text_value(text, "checksum") || checksum) &&
           (!sw__text_value(text, "checkpoints") || sw__text_is(text, "checkpoints", "on"));
}

/* The run INIT describes (or a checkpoint kept): the table, the optimizer, the slice's room. */
int sw__shard_configure(shard *h, const char *text, char *err)
{
    /* The link's choice first: a shard that refuses this run still reads the orders that follow
     * (the run's end) as the run sends them. */
    h->unchecked = sw__text_is(text, "checksum", "off");
    unsigned long long index, shards, params, slots, run;
    if (sw__text_number(text, "shard", &index) || sw__text_number(text, "shards", &shards) ||
        sw__text_number(text, "params", &params) || sw__text_number(text, "slots", &slots) ||
        sw__text_number(text, "run", &run) || index >= shards || !slots || slots > (1u << 16) ||
        shards > SW_SHARDS_MAX)
        return sw_fail(err, SW_EFORMAT, "an incomplete or impossible shard configuration");
    double wd = 0;
    if (!known_values(text, &wd))
        return sw_fail(err, SW_EFORMAT, "a shard configuration whose wd, checksum or checkpoints "
                       "is none the protocol knows");
    if (strlen(text) >= sizeof h->config)
        return sw_fail(err, SW_EFORMAT, "a shard configuration of over %zu bytes",
                       sizeof h->config - 1);
    int rc = sw_chunk_table_parse(&h->table, text, (size_t)params, (uint32_t)shards, err);
    if (rc)
        return rc;
    const char *opt = sw__text_value(text, "optimizer");
    h->checkpointed = sw__text_is(text, "checkpoints", "on");
    if (h->checkpointed && !h->p->checkpoint)
        return sw_fail(err, SW_EINVAL,
                       "the server checkpoints this run (--checkpoint), and so must every "
                       "shard: start this shard with --checkpoint FILE");
    char spec[SW_OPTIM_SPEC_LEN] = "sgd";
    if (opt)
        snprintf(spec, sizeof spec, "%.*s", (int)strcspn(opt, "\n"), opt);
    h->optim = sw_optim_default();
    if ((rc = sw_optim_parse(&h->optim, spec, err)))
        return rc;
    snprintf(h->config, sizeof h->config, "%s", text);
    h->run = run;
    h->wd = (float)wd;
    h->index = (uint32_t)index;
    h->slots = (uint32_t)slots;
    h->len = sw_chunk_slice_len(&h->table, h->index);
    /* Before any allocation (an INIT is the first message anyone may send a fresh shard), and
     * before any arithmetic on the length: a slice whose dense push cannot travel. */
    if (h->len > (SW_PROTO_MAX_PAYLOAD - SW_BATCH_BYTES) / 4)
        return sw_fail(err, SW_EINVAL,
                       "this shard's slice of %zu floats is over the protocol's 2 GiB frames: "
                       "cut the parameters over more shards", h->len);
    uint64_t need = sw_msg_size(sw__shard_run_payload(h));
    if (h->p->max_frame && need > h->p->max_frame)
        return sw_fail(err, SW_EINVAL,
                       "this shard reads frames of at most %llu bytes (--max-frame), and its "
                       "slice of %zu floats needs %llu: start it with at least that",
                       (unsigned long long)h->p->max_frame, h->len, (unsigned long long)need);
    sw__lender_init(&h->lender, h->len);
    h->theta = sw__lender_writable(&h->lender, NULL, false);
    if (h->theta)
        memset(h->theta, 0, 4 * h->len);
    h->sum = calloc(h->len, sizeof *h->sum);
    h->tokens = calloc(slots, sizeof *h->tokens);
    h->next_seq = calloc(slots, sizeof *h->next_seq);
    h->routes = calloc(slots, sizeof *h->routes);
    if (!h->theta || !h->sum || !h->tokens || !h->next_seq || !h->routes)
        return sw_fail(err, SW_ENOMEM, "no memory for a slice of %zu floats", h->len);
    if (sw_optim_stateful(&h->optim) && (rc = sw_optim_init(&h->opt, &h->optim, h->len, err)))
        return rc;
    h->configured = true;
    return 0;
}

/* INIT of the run this shard holds, at its start (version 0), with the text it was configured
 * by: its server was started again (--resume) before every shard had saved the start, from the
 * record that named the run (server_shards.h). No worker was served: SET writes θ again. */
static bool start_again(shard *h, const from *f, const sw_msg *m)
{
    unsigned long long run;
    char text[sizeof h->config];
    snprintf(text, sizeof text, "%.*s", (int)m->payload_len, (const char *)m->payload);
    if (!h->configured || h->version != 0 || sw__text_number(text, "run", &run) ||
        run != h->run || strcmp(text, h->config))
        return false;
    sw__shard_free_recovery(h); /* what a resumed shard kept for a RESTORE that will not come */
    h->awaiting = h->ready = false;
    memcpy(h->server, f->route, f->route_len);
    h->server_len = f->route_len;
    sw_log(SW_LOG_INFO, "shard %u of %u: its run's server started again before the run's start "
           "was saved everywhere: it takes the start again", h->index, h->table.n_shards);
    return true;
}

/* The length of a route but for its link's number, after its last '-' (the server dials each
 * shard as sw-server-SECRET-J: server_shards.c); 0 without one. */
static size_t process_part(const uint8_t *route, size_t len)
{
    while (len > 0 && route[len - 1] != '-')
        len--;
    return len;
}

/* Whether the INIT comes from another link of this shard's server process. */
static bool same_process(const shard *h, const from *f)
{
    size_t len = process_part(h->server, h->server_len);
    return len > 0 && len == process_part(f->route, f->route_len) &&
           !memcmp(h->server, f->route, len);
}

/* Why a configured shard refuses an INIT: one run per shard process (a restarted server needs
 * a new shard). An INIT of its own run for another of its places comes from a server that
 * reached this shard by two of the endpoints --shards names (the same process, on two links),
 * or from the run's server started again with --shards in another order. */
static void refusal(const shard *h, const from *f, const sw_msg *m, char *why, size_t cap)
{
    unsigned long long run, index;
    char text[sizeof h->config];
    snprintf(text, sizeof text, "%.*s", (int)m->payload_len, (const char *)m->payload);
    bool elsewhere = !sw__text_number(text, "run", &run) && run == h->run &&
                     !sw__text_number(text, "shard", &index) && index != h->index;
    if (elsewhere && same_process(h, f))
        snprintf(why, cap, "this shard is shard %u of this run already (the server's --shards "
                 "names it twice, spelt two ways)", h->index);
    else if (elsewhere)
        snprintf(why, cap, "this shard is shard %u of this run (does the server's --shards list "
                 "the shards in another order than the run's?)", h->index);
    else if (sw__shard_is_server(h, f))
        snprintf(why, cap, "this shard is configured already (does the server's --shards name "
                 "it twice, spelt two ways?)");
    else
        snprintf(why, cap, "this shard serves another server's run (or this server's --shards "
                 "names it twice): a shard serves one run, and holds it --server-timeout after "
                 "its server falls silent");
}

void sw__shard_on_init(shard *h, const from *f, const sw_msg *m)
{
    if (start_again(h, f, m))
        return;
    if (h->configured && h->awaiting) {
        sw__shard_refuse_run(h, f, m, SW__SHARD_RESUMED);
        return;
    }
    if (h->configured) {
        char why[224];
        refusal(h, f, m, why, sizeof why);
        sw__shard_refuse(h, f, m, why);
        return;
    }
    char text[8192], err[SW_ERR_LEN];
    snprintf(text, sizeof text, "%.*s", (int)m->payload_len, (const char *)m->payload);
    bool unchecked = h->unchecked;
    int rc = sw__shard_configure(h, text, err);
    if (rc == SW_EFORMAT) { /* no server's (a stranger's, or a later protocol's): refused, and
                             * nothing kept, as if it never came */
        h->unchecked = unchecked;
        sw__shard_refuse(h, f, m, err);
        return;
    }
    if (rc) { /* a run this shard cannot serve: it ends with that run, or its server's silence */
        snprintf(h->refused_run, sizeof h->refused_run, "%s", err);
        memcpy(h->refused_server, f->route, f->route_len);
        h->refused_server_len = f->route_len;
        h->heard = h->now;
        sw_log(SW_LOG_WARN, "this shard refused its run: %s", h->refused_run);
        sw__shard_refuse(h, f, m, h->refused_run);
        return;
    }
    h->refused_run[0] = '\0';
    if (h->p->checkpoint && !h->checkpointed)
        sw_log(SW_LOG_WARN, "this shard's --checkpoint %s goes unused: its server keeps no "
               "checkpoints (give the server --checkpoint FILE too), so a shard that dies ends "
               "the run", h->p->checkpoint);
    memcpy(h->server, f->route, f->route_len);
    h->server_len = f->route_len;
    h->version = m->version;
    sw_log(SW_LOG_INFO, "shard %u of %u: parameters [%zu, %zu) of %zu", h->index,
           h->table.n_shards, sw_chunk_slice_at(&h->table, h->index),
           sw_chunk_slice_at(&h->table, h->index) + h->len, h->table.n_params);
}

void sw__shard_on_set(shard *h, const from *f, const sw_msg *m)
{
    char why[SW_ERR_LEN] = "";
    if (!sw__shard_is_server(h, f))
        sw__shard_refuse_order(h, f, m, "only the server sets the parameters");
    /* checked where they lie before θ is touched: a refused SET leaves θ as it was */
    else if (!sw_msg_floats_in_place(m, h->len, why) && why[0])
        sw__shard_refuse(h, f, m, why);
    else if (sw_msg_get_floats(m, sw__shard_theta_writable(h, false), h->len, why))
        sw__shard_refuse(h, f, m, why);
    else {
        h->version = m->version;
        h->ready = true;
        sw__shard_answer_waiting(h);
    }
}
