/* A worker's joining: JOIN, sent again while unanswered; WELCOME's configuration; the data,
 * model and learner it names, loaded (again only when they changed). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kv_text.h"
#include "syncwise/log.h"
#include "worker_internal.h"

/* JOIN: our name, and our job when launched as one's worker (the server refuses another's). */
static void send_join(worker *k, double now)
{
    const char *name = k->p->name ? k->p->name : "worker";
    char text[64 + 6 + SW_JOB_MAX + 1];
    int len = snprintf(text, sizeof text, "%.64s%s%s", name, k->p->job ? "\njob=" : "",
                       k->p->job ? k->p->job : "");
    sw__worker_send(k, SW_MSG_JOIN, 0, 0, text, len < 0 ? 0 : (size_t)len, NULL);
    k->sent_at = now;
}

void sw__worker_join(worker *k, double now)
{
    atomic_store(&k->id, SW_NO_WORKER);
    atomic_store(&k->rejoin, false);
    sw__worker_shards_forget_early(k); /* the old membership's */
    k->state = JOINING;
    k->since = now;
    k->said_waiting = false;
    send_join(k, now);
}

static void say_still_waiting(worker *k, double now)
{
    double t = k->p->server_timeout_s,
           say_at = t / 2 < SW_JOIN_WAIT_SAY_S ? t / 2 : SW_JOIN_WAIT_SAY_S;
    if (k->said_waiting || k->full_at >= 0 || now - k->since < say_at)
        return;
    k->said_waiting = true;
    sw_log(SW_LOG_INFO, "no answer yet from a server at %s: joining again every %.0f s, for up to "
           "%.0f s in all (--server-timeout)",
           k->p->connect, SW_JOIN_RETRY_S, k->p->server_timeout_s);
}

/* No WELCOME yet: JOIN again, or give up after server_timeout_s. */
void sw__worker_rejoin_due(worker *k, double now)
{
    if (now - k->sent_at < SW_JOIN_RETRY_S)
        return;
    if (now - k->since < k->p->server_timeout_s) {
        say_still_waiting(k, now);
        send_join(k, now);
        return;
    }
    /* Full until the last JOIN or two, or full and then silent: the run over, most likely. */
    bool said_full = k->full_at >= 0, still_full = now - k->full_at <= 2.5 * SW_JOIN_RETRY_S;
    if (said_full && still_full)
        sw__worker_fail(k, SW_EIO,
                        "the server at %s was full for %.0f s: no slot freed (its "
                        "--max-workers; --server-timeout waits longer)",
                        k->p->connect, k->p->server_timeout_s);
    else if (said_full)
        sw__worker_fail(k, SW_EIO,
                        "the server at %s was full, then silent for the last %.0f s (the run "
                        "over?)",
                        k->p->connect, now - k->full_at);
    else
        sw__worker_fail(k, SW_EIO,
                        "no server answered at %s within %.0f s (not started yet? the run "
                        "over?%s --server-timeout waits longer)",
                        k->p->connect, k->p->server_timeout_s,
                        k->p->curve_key ? " our CURVE key refused?" : "");
    k->server_gone = true;
}

/* A sharded run's lines: the shards' endpoints and the chunk table, checked. */
static int parse_shards(const char *text, config *c, char *err)
{
    const char *list = sw__text_value(text, "shards");
    if (!list)
        return 0; /* not sharded */
    int rc = sw_shard_list_parse(list, c->shards, &c->n_shards, err);
    if (!rc)
        rc = sw_chunk_table_parse(&c->table, text, c->params, c->n_shards, err);
    return rc ? sw_fail(err, SW_EFORMAT, "the server's welcome names its shards badly: %s", err)
              : 0;
}

static int parse_config(const sw_msg *m, config *c, char *err)
{
    char text[SW_WELCOME_MAX];
    size_t len = m->payload_len < sizeof text - 1 ? m->payload_len : sizeof text - 1;
    memcpy(text, m->payload, len);
    text[len] = '\0';
    memset(c, 0, sizeof *c);
    char whole[SW_WELCOME_MAX]; /* strtok_r cuts `text` into lines */
    memcpy(whole, text, len + 1);
    unsigned long long seed = 0, token = 0;
    char checksum[8] = "on";
    double lr = 0, wd = 0;
    int found = 0;
    for (char *save, *line = strtok_r(text, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        sscanf(line, "checksum=%7s", checksum); /* absent (an older server): on */
        sscanf(line, "job=%64s", c->job);
        c->has_data_crc |= sscanf(line, "data_crc=%8x", &c->data_crc) == 1;
        found += sscanf(line, "worker=%u", &c->worker) + sscanf(line, "slots=%u", &c->slots) +
                 sscanf(line, "batch=%u", &c->batch) + sscanf(line, "params=%zu", &c->params) +
                 sscanf(line, "lr=%lf", &lr) + sscanf(line, "wd=%lf", &wd) +
                 sscanf(line, "seed=%llu", &seed) + sscanf(line, "data=%511s", c->data) +
                 sscanf(line, "model=%127s", c->model) +
                 sscanf(line, "batch_mode=%15s", c->batch_mode) +
                 sscanf(line, "token=%llu", &token);
    }
    c->unchecked = !strcmp(checksum, "off");
    c->lr = (float)lr;
    c->wd = (float)wd;
    c->seed = seed;
    c->token = token;
    if (found < 11 || c->worker >= c->slots || !c->batch || !c->params)
        return sw_fail(err, SW_EFORMAT, "the server's welcome is incomplete");
    return parse_shards(whole, c, err);
}

/* Launched as one job's worker, we train that job's run only: another job's server may hold
 * the port (two jobs on one node, each launched on the same --port). */
static int same_job(const worker *k, const config *c, char *err)
{
    if (!k->p->job || !strcmp(k->p->job, c->job))
        return 0;
    return sw_fail(err, SW_EMISMATCH,
                   "the server at %s serves %s%s, not this worker's job %s: another job's "
                   "server on this port? (give each job its own --port)",
                   k->p->connect, c->job[0] ? "job " : "no job", c->job, k->p->job);
}

static void let_go_of_model(worker *k)
{
    sw_frame_unref(k->model_frame);
    k->model_frame = NULL;
    k->theta = k->params;
}

void sw__worker_unload(worker *k)
{
    let_go_of_model(k);
    sw_learner_free(k->learner);
    if (k->task && sw_task_is_sparse(k->task))
        sw_grad_free(&k->grad); /* a dense one is the lender's */
    sw_task_free(k->task);
    sw_task_data_free(&k->data);
    free(k->params);
    free(k->pulled);
    sw__lender_free(&k->lender);
    k->learner = NULL;
    k->task = NULL;
    k->grad = (sw_grad){0};
    k->params = k->pulled = NULL;
    k->theta = NULL;
    k->loaded = false;
}

/* The data, model and buffers a configuration names. */
static int load_task(worker *k, const config *c, char *err)
{
    int rc = sw_task_data_load(&k->data, c->model, c->data, SW_DATA_SEED, err);
    uint32_t ours = !rc && c->has_data_crc ? sw_task_data_fingerprint(&k->data) : c->data_crc;
    if (ours != c->data_crc)
        rc = sw_fail(err, SW_EMISMATCH, "the data set %s loaded here differs from the server's "
                     "(fingerprint %08x, the server's %08x): every worker must read the same "
                     "files as the server", c->data, ours, c->data_crc);
    if (!rc)
        rc = sw_task_new(&k->task, c->model, &k->data, c->batch, 0, err);
    if (rc)
        return rc;
    size_t n = sw_task_n_params(k->task);
    if (n != c->params)
        return sw_fail(err, SW_EMISMATCH, "the server's model has %zu parameters, ours %zu",
                       c->params, n);
    bool sparse = sw_task_is_sparse(k->task);
    if (sparse && k->p->get_model_frequency > 1)
        return sw_fail(err, SW_EINVAL, "a sparse model pulls the weights of each batch: "
                                       "--get-model-frequency must be 1");
    k->theta = k->params = calloc(n, sizeof *k->params);
    sw__lender_init(&k->lender, n);
    if (sparse)
        k->pulled = malloc(n * sizeof *k->pulled);
    else
        k->grad.dense = sw__lender_writable(&k->lender, NULL, false);
    if (!k->params || (sparse ? !k->pulled : !k->grad.dense))
        return sw_fail(err, SW_ENOMEM, "out of memory for %zu parameters", n);
    k->loaded = true;
    return 0;
}

/* Loads the data, model and learner a configuration names (the data again only when it
 * changed; the learner when our id or the slots did). */
static int load(worker *k, const config *c, char *err)
{
    bool same = k->loaded && !strcmp(c->data, k->cfg.data) && !strcmp(c->model, k->cfg.model) &&
                c->params == k->cfg.params && c->batch == k->cfg.batch && c->seed == k->cfg.seed &&
                c->data_crc == k->cfg.data_crc;
    uint32_t old_id = k->cfg.worker, old_slots = k->cfg.slots;
    bool same_mode = !strcmp(c->batch_mode, k->cfg.batch_mode);
    int rc_shards = sw__worker_shards_connect(k, c, err);
    if (rc_shards)
        return rc_shards;
    k->cfg = *c;
    if (same && old_id == c->worker && old_slots == c->slots && same_mode)
        return 0;
    int rc = 0;
    if (!same) {
        sw__worker_unload(k);
        rc = load_task(k, c, err);
    }
    sw_learner_free(k->learner);
    k->learner = NULL;
    sw_learner_params lp = {.batch = c->batch, .rank = c->worker, .ranks = c->slots,
                            .seed = c->seed,
                            .mode = strcmp(c->batch_mode, "sample") ? SW_BATCH_SHARD
                                                                    : SW_BATCH_SAMPLE};
    if (!rc)
        rc = sw_learner_new(&k->learner, k->task, &lp, err);
    if (!rc && sw_task_is_sparse(k->task) && !k->grad.idx)
        rc = sw_grad_alloc(&k->grad, k->learner, err);
    return rc;
}

void sw__worker_welcome(worker *k, const sw_msg *m, double now)
{
    config c;
    char err[SW_ERR_LEN];
    int rc = parse_config(m, &c, err);
    if (!rc) { /* a member from now: our heartbeats say so while the data loads (seconds) */
        atomic_store(&k->token, c.token);
        atomic_store(&k->id, c.worker);
        if ((rc = same_job(k, &c, err)) || (rc = load(k, &c, err))) { /* say goodbye */
            sw__worker_send(k, SW_MSG_LEAVE, 0, 0, "", 0, NULL);
            atomic_store(&k->id, SW_NO_WORKER);
            /* A read the signal cut short fails as an I/O error: that is the stop. Any other
             * failure (other data than the server's, a model that does not fit) stays one. */
            if (rc == SW_EIO && sw_stop_requested(k->p->stop)) {
                sw_log(SW_LOG_INFO, "stopped by a signal as it loaded its data (%s): left before "
                       "its %s push", err, k->r->steps ? "next" : "first");
                k->state = OVER;
                return;
            }
        }
    }
    if (rc) {
        sw__worker_fail(k, rc, "%s", err);
        return;
    }
    k->since_pull = UINT32_MAX; /* the first release carries the parameters */
    k->redo = false;
    k->r->joins++;
    k->state = HELD;
    k->since = now;
    sw_log(SW_LOG_INFO, "joined %s as worker %u", k->p->connect, c.worker);
}
