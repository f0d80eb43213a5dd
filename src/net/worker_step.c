/* A worker's step. RELEASE starts it: a dense step takes the parameters it carries (read where
 * they landed) or applies its own last gradient between pulls, and computes its gradient at
 * once; a sparse step, the key-value model of classic parameter servers, first pulls only the
 * weights its batch touches (PULL_SPARSE -> MODEL_SPARSE). The gradient is pushed when the step
 * is over: at once, or after the injected or scripted step time. */
#include <string.h>

#include "syncwise/optim.h"
#include "worker_internal.h"

/* The parameters a release carries: read where they arrived when they can be (the frame is
 * kept), else copied into k->params. Values that are not finite mean the server's run diverged
 * (its checksum held): the worker says so, as the server will at its next evaluation. */
static int take_model(worker *k, const sw_msg *rel, sw_frame *frame, char *err)
{
    char why[SW_ERR_LEN] = "";
    const float *in_place = sw_msg_floats_in_place(rel, k->cfg.params, why);
    if (!why[0] && !in_place) /* fills why only when it fails */
        sw_msg_get_floats(rel, k->params, k->cfg.params, why);
    if (why[0])
        return sw_fail(err, SW_EFORMAT, "%s%s", why, sw__worker_divergence_hint(why));
    sw_frame_unref(k->model_frame);
    k->model_frame = NULL;
    if (in_place) {
        k->model_frame = sw_frame_ref(frame);
        k->theta = in_place;
        return 0;
    }
    k->theta = k->params; /* copied above */
    return 0;
}

/* k->params, holding the current parameters, for writing. */
static float *own_params(worker *k)
{
    if (k->theta != k->params)
        memcpy(k->params, k->theta, k->cfg.params * sizeof *k->params);
    sw_frame_unref(k->model_frame);
    k->model_frame = NULL;
    k->theta = k->params;
    return k->params;
}

/* The gradient is ready: it goes when the step's time is over. */
static void computed(worker *k, double now)
{
    const sw_worker_params *p = k->p;
    double step = p->step_s ? p->step_s(p->step_ctx, atomic_load(&k->id)) : p->delay_s;
    k->state = COMPUTED;
    k->since = now;
    k->push_at = now + (step > 0 ? step : 0);
}

void sw__worker_compute(worker *k, double now)
{
    /* the last push may be in flight */
    k->grad.dense = sw__lender_writable(&k->lender, k->grad.dense, false);
    sw_learner_grad(k->learner, k->theta, &k->grad);
    k->since_pull++;
    computed(k, now);
}

static void dense_step(worker *k, const sw_msg *rel, sw_frame *frame, double now)
{
    if ((rel->flags & SW_FLAG_MODEL) && k->cfg.n_shards) { /* the slices come from the shards */
        sw_frame_unref(k->model_frame);
        k->model_frame = NULL;
        k->theta = k->params;
        sw__worker_shards_pull(k, rel->version, rel->flags & SW_FLAG_SENT, now);
        return;
    }
    if (rel->flags & SW_FLAG_MODEL) {
        char err[SW_ERR_LEN];
        int rc = take_model(k, rel, frame, err);
        if (rc) {
            sw__worker_fail(k, rc, "%s", err);
            return;
        }
        k->version = rel->version;
        k->since_pull = 0;
    } else if (!k->redo) {
        sw_sgd_step(own_params(k), k->grad.dense, k->cfg.params, k->cfg.lr, k->cfg.wd);
    }
    sw__worker_compute(k, now);
}

/* A sparse step asks for the weights its batch touches (at the shards holding them, in a
 * sharded run). */
static void sparse_step(worker *k, uint64_t version, double now)
{
    if (k->cfg.n_shards) {
        sw__worker_shards_pull(k, version, false, now);
        return;
    }
    size_t n;
    const uint32_t *idx = sw_learner_touched(k->learner, &n);
    sw_frame *f = sw_frame_new(sw_msg_size(4 * n));
    if (f) {
        sw_msg m = {.type = SW_MSG_PULL_SPARSE, .worker = atomic_load(&k->id),
                    .flags = sw__worker_link_flags(k), .version = k->version,
                    .payload_len = 4 * n};
        sw_msg_put_indices(sw_frame_data(f) + SW_PROTO_HEADER, idx, n);
        sw_msg_encode(&m, sw_frame_data(f)); /* the payload is in place */
        sw_send(k->sock, NULL, 0, f);
    }
    k->state = PULLING;
    k->since = now;
}

void sw__worker_release(worker *k, const sw_msg *m, sw_frame *frame, double now)
{
    bool dropped = (m->flags & SW_FLAG_DROPPED) != 0;
    if (!k->redo && !dropped) /* a refused gradient: the same batch again */
        sw_learner_next(k->learner);
    k->r->drops += dropped;
    if (sw_task_is_sparse(k->task)) {
        k->redo = false;
        sparse_step(k, m->version, now);
    } else {
        dense_step(k, m, frame, now);
        k->redo = false;
    }
}

void sw__worker_sparse_ready(worker *k, uint64_t version, double now)
{
    size_t n;
    const uint32_t *idx = sw_learner_touched(k->learner, &n);
    for (size_t i = 0; i < n; i++)
        k->params[idx[i]] = k->pulled[i];
    k->version = version;
    sw_learner_grad(k->learner, k->params, &k->grad);
    computed(k, now);
}

void sw__worker_pulled(worker *k, const sw_msg *m, double now)
{
    size_t n;
    sw_learner_touched(k->learner, &n);
    char err[SW_ERR_LEN];
    if (sw_msg_get_floats(m, k->pulled, n, err))
        sw__worker_fail(k, SW_EFORMAT, "%s", err);
    else
        sw__worker_sparse_ready(k, m->version, now);
}

static void push_sparse(worker *k)
{
    size_t nnz = k->grad.nnz;
    sw_frame *f = sw_frame_new(sw_msg_size(8 * nnz));
    if (!f)
        return; /* lost, as on a network: the server's silence decides */
    sw_msg m = {.type = SW_MSG_PUSH_SPARSE, .worker = atomic_load(&k->id),
                .flags = sw__worker_link_flags(k), .version = k->version,
                .payload_len = 8 * nnz};
    sw_msg_put_pairs(sw_frame_data(f) + SW_PROTO_HEADER, k->grad.idx, k->grad.val, nnz);
    sw_msg_encode(&m, sw_frame_data(f)); /* the payload is in place */
    sw_send(k->sock, NULL, 0, f);
}

void sw__worker_push(worker *k, double now)
{
    bool want = k->since_pull >= k->p->get_model_frequency && !sw_task_is_sparse(k->task);
    if (k->cfg.n_shards)
        sw__worker_shards_push(k, want ? SW_FLAG_WANT_MODEL : 0, now);
    else if (sw_task_is_sparse(k->task))
        push_sparse(k);
    else
        sw__worker_send(k, SW_MSG_PUSH, want ? SW_FLAG_WANT_MODEL : 0, k->version, NULL,
                        4 * k->cfg.params, k->grad.dense);
    k->r->steps++;
    k->state = ANSWER;
    k->since = now;
    if (k->p->max_steps && k->r->steps >= k->p->max_steps)
        sw__worker_leave_when_answered(k, now);
}
