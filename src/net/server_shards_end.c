/* The run's end, as the shards hear it (server_shards.h): told to every shard once the run
 * concludes, and told again until each shard that was there answers it. A link that breaks at
 * the very end loses what was written to it; without the answer, a shard whose end was lost so
 * waited out its --server-timeout, then failed a run that had ended well. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>

#include "server_internal.h"

/* Shard j was there at the end: it answered a ping in the second before this turn began (the
 * server pings every SW_SHARDS_PING_S), judged at the turn's start, not after the work the end
 * does in it (the last evaluation, writing the model), which may take longer than that. One
 * killed or cut off owes no goodbye: the server would only wait. */
static bool there(const server *s, uint32_t j)
{
    const sw__shard_seen *v = &s->shards.seen[j];
    return s->shards.socks[j] && v->answered && s->last_turn - v->heard <= SW_SHARDS_OUT_S;
}

static void tell_end(server *s, uint32_t j)
{
    const char *why = s->shards.end_why;
    sw_msg over = {.type = SW_MSG_SHARD_MEMBER, .worker = SW_NO_WORKER, .flags = SW_FLAG_DONE,
                   .payload = (const uint8_t *)why, .payload_len = strlen(why)};
    sw__shards_send_to(s, j, &over, NULL);
}

void sw__shards_end(server *s, const char *failed)
{
    sw__shards *h = &s->shards;
    if (h->ended)
        return;
    h->ended = true;
    snprintf(h->end_why, sizeof h->end_why, "%s", failed ? failed : "");
    double now = sw__server_now(s);
    h->owe_bye = (sw_shard_set){{0}};
    for (uint32_t j = 0; j < h->n; j++) {
        if (!h->socks[j])
            continue;
        tell_end(s, j);
        if (there(s, j))
            sw_shard_set_add(&h->owe_bye, j);
    }
    h->bye_by = now + SW_SHARDS_BYE_S;
    h->next_ping = now + SW_SHARDS_PING_S;
}

static bool is_bye(const sw_msg *m)
{
    return m->type == SW_MSG_SHARD_STATE && (m->flags & SW_FLAG_DONE);
}

void sw__shards_take_bye(server *s, uint32_t j, const sw_delivery *d)
{
    sw__shards *h = &s->shards;
    sw_msg m, one;
    char why[SW_ERR_LEN];
    uint64_t limit = 4 * (uint64_t)sw_chunk_slice_len(&h->table, j) + SW_BATCH_BYTES;
    if (d->gone || !d->frame || d->multipart ||
        sw_msg_decode(sw_frame_data(d->frame), sw_frame_size(d->frame), limit, &m, why))
        return;
    bool bye = is_bye(&m);
    if (m.type == SW_MSG_BATCH && !sw__batch_check(&m, limit, false, why))
        for (size_t at = 0; !bye && sw__batch_next(&m, &at, &one);)
            bye = is_bye(&one);
    if (bye)
        sw_shard_set_remove(&h->owe_bye, j);
}

void sw__shards_end_again(server *s)
{
    sw__shards *h = &s->shards;
    double now = sw__server_now(s);
    if (!h->ended || now < h->next_ping || !sw__shards_byes_due(s))
        return;
    for (uint32_t j = 0; j < h->n; j++)
        if (sw_shard_set_has(&h->owe_bye, j))
            tell_end(s, j);
    h->next_ping = now + SW_SHARDS_PING_S;
}

bool sw__shards_byes_due(const server *s)
{
    const sw__shards *h = &s->shards;
    return h->ended && !sw_shard_set_empty(&h->owe_bye) && sw__server_now(s) < h->bye_by;
}
