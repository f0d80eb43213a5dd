/* A sharded run's checkpoint record, the server's side (server_shards.h): the few lines the
 * server's --checkpoint FILE holds once every shard has saved one version (the shards hold the
 * parameters), and their reading by a server started again with --resume. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kv_text.h"
#include "server_internal.h"
#include "syncwise/bytes.h"
#include "syncwise/ckpt.h"
#include "syncwise/file.h"
#include "syncwise/log.h"

int sw__shards_write_record(server *s, char *err)
{
    const sw__shards *h = &s->shards;
    /* At most about 520 bytes: a policy spec of 255, an optimizer's of 95, numbers. */
    char text[1024], version[24] = SW_SHARDS_START_RECORD;
    if (h->saved != SW_SHARD_NONE)
        snprintf(version, sizeof version, "%llu", (unsigned long long)h->saved);
    int len = snprintf(text, sizeof text, "run=%llu\nversion=%s\nshards=%u\n",
                       (unsigned long long)h->run, version, h->n);
    len += sw__server_resume_facts(s, text + len, sizeof text - (size_t)len);
    len += snprintf(text + len, sizeof text - (size_t)len, "params=%zu\nchunk=%zu\n", s->n,
                    h->table.chunk);
    /* A damaged or edited record would restore every shard to a version none holds. */
    len += snprintf(text + len, sizeof text - (size_t)len, "crc=%08x\n",
                    sw_crc32(0, text, (size_t)len));
    int rc = sw_file_write_atomic(s->p->checkpoint, (const uint8_t *)text, (size_t)len,
                                  "shards' checkpoint record", err);
    if (!rc)
        sw_file_note_saved(s->ckpt_lock);
    return rc;
}

int sw__shards_explain_start_record(const char *checkpoint, int rc, char *err)
{
    uint8_t *b;
    size_t len;
    if (sw_file_read_all(checkpoint, 4096, &b, &len, NULL))
        return rc;
    char text[4097];
    snprintf(text, sizeof text, "%.*s", (int)len, (const char *)b);
    free(b);
    bool is_start = !strncmp(text, "run=", 4) &&
                    strstr(text, "\nversion=" SW_SHARDS_START_RECORD "\n") != NULL;
    if (is_start) /* a shard may have saved the start before another stopped it */
        sw_fail(err, rc, "%s records the start of a sharded run that stopped before every shard "
                "saved it: give the server --resume to start that run again (and each shard "
                "--resume if its --checkpoint holds a save, else start it afresh), or to start "
                "another, remove it and the shards' checkpoint files", checkpoint);
    return rc;
}

/* The chunk table the shards' slices were cut by: the record's chunk size (a record without
 * one was written when chunks were 1 MiB, or one a shard for a smaller model; the rule cuts a
 * model of over 1 MiB a shard finer now, into other slices than such shards saved). */
static int recorded_table(server *s, const char *text, char *err)
{
    unsigned long long chunk = SW_CHUNK_FLOATS;
    bool said = sw__text_value(text, "chunk") != NULL;
    if (said && (sw__text_number(text, "chunk", &chunk) || chunk == 0 || chunk > s->n))
        return sw_fail(err, SW_EFORMAT, "%s records a chunk size of none of this run's sizes: "
                       "the record is damaged or edited", s->p->checkpoint);
    sw__shards *h = &s->shards;
    int rc = sw_chunk_table_init(&h->table, s->n, (size_t)chunk, h->n, err);
    if (!rc && said && h->table.chunk != chunk)
        rc = sw_fail(err, SW_EFORMAT, "%s records chunks of %llu floats, more than %u shards "
                     "of %zu parameters allow: the record is damaged or edited",
                     s->p->checkpoint, chunk, h->n, s->n);
    size_t asked = sw_chunk_floats(s->n, s->p->chunk_bytes / 4, h->n);
    if (!rc && s->p->chunk_bytes && asked != h->table.chunk) /* the shards' slices are cut */
        rc = sw_fail(err, SW_EMISMATCH, "%s records a run cut into chunks of %zu bytes; --chunk "
                     "%zu would cut its slices otherwise: resume with --chunk %zu or without",
                     s->p->checkpoint, 4 * h->table.chunk, s->p->chunk_bytes,
                     4 * h->table.chunk);
    return rc;
}

int sw__shards_read_record(server *s, uint64_t *version, char *err)
{
    uint8_t *b;
    size_t len;
    int rc = sw_file_read_all(s->p->checkpoint, 4096, &b, &len, err);
    if (rc == SW_EFORMAT) /* too large for a record: a model's or a shard's checkpoint? */
        return sw_fail(err, rc, "%s is not the record of a sharded run's checkpoint, which is a "
                       "few lines of text (a model's or a shard's checkpoint? --checkpoint names "
                       "the server's record, and each shard's own --checkpoint its slice)",
                       s->p->checkpoint);
    if (rc)
        return rc;
    char text[4096];
    snprintf(text, sizeof text, "%.*s", (int)len, (const char *)b);
    free(b);
    unsigned long long run, v = 0, n;
    uint32_t listed = s->shards.n; /* sw__shards_check read --shards */
    const char *at = sw__text_value(text, "version");
    bool start = at && !strncmp(at, SW_SHARDS_START_RECORD "\n",
                                strlen(SW_SHARDS_START_RECORD) + 1);
    if (sw__text_number(text, "run", &run) || (!start && sw__text_number(text, "version", &v)) ||
        sw__text_number(text, "shards", &n))
        return sw_fail(err, SW_EFORMAT, "%s is not the record of a sharded run's checkpoint "
                       "(run=, version=, shards=)", s->p->checkpoint);
    const char *crc = strstr(text, "\ncrc=");
    char *end = NULL;
    unsigned long stored = crc ? strtoul(crc + 5, &end, 16) : 0;
    if (!crc || strcmp(end, "\n") || stored != sw_crc32(0, text, (size_t)(crc + 1 - text)))
        return sw_fail(err, SW_ECHECKSUM, "%s: the record of the shards' checkpoints %s",
                       s->p->checkpoint,
                       crc ? "fails its checksum (damaged or edited)" : "has no checksum line");
    if (v > SW_CKPT_MAX_VERSION)
        return sw_fail(err, SW_EFORMAT, "%s records version %llu, over 2^53, which no run "
                       "reaches: the record is damaged", s->p->checkpoint, v);
    if ((rc = sw__server_resume_record_ok(s, text, err)))
        return rc;
    if (n != listed)
        return sw_fail(err, SW_EMISMATCH, "%s records a run on %llu shards; --shards lists %u",
                       s->p->checkpoint, n, listed);
    unsigned long long params; /* older records do not say */
    if (!sw__text_number(text, "params", &params) && params != s->n)
        return sw_fail(err, SW_EMISMATCH, "%s records a run of %llu parameters; --model %s on "
                       "this data has %zu: resume with the run's --model and --data (the "
                       "shards' slices would not fit)", s->p->checkpoint, params, s->p->model,
                       s->n);
    if ((rc = recorded_table(s, text, err)))
        return rc;
    s->shards.run = run;
    *version = v;
    if (start) { /* killed before every shard saved the start: the start again, as this run */
        s->resuming = false;
        sw_log(SW_LOG_INFO, "%s records the start of a run that ended before every shard had "
               "saved it: the run starts again, its shards taking its start again",
               s->p->checkpoint);
    }
    rc = sw__server_resume_policy(s, text, err);
    rc = rc ? rc : sw__server_resume_optim(s, text, NULL, err);
    if (!rc)
        rc = sw__server_resume_slots(s, text, err);
    return rc ? rc : sw__server_resume_wd(s, text, true, err);
}
