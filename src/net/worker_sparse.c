/* The worker's sparse path, the key-value model of classic parameter servers: after a release
 * it picks its next mini-batch of rows (syncwise/task.h), pulls only the weights those rows
 * touch (PULL_SPARSE -> MODEL_SPARSE), computes the linear model's sparse gradient and pushes
 * its (index, value) pairs (PUSH_SPARSE). */
#include "syncwise/err.h"
#include "worker_internal.h"

/* Pulls the weights at idx[0..n) into k->params; the version they are of into k->version. */
static int pull(worker *k, const uint32_t *idx, size_t n, char *err)
{
    sw_msg_put_indices(k->scratch, idx, n);
    sw__worker_send(k, k->sock, SW_MSG_PULL_SPARSE, 0, k->version, k->scratch, 4 * n, NULL);
    for (;;) {
        zmq_msg_t frame;
        zmq_msg_init(&frame);
        sw_msg m;
        int rc = sw__worker_receive(k, &frame, &m, err);
        if (!rc && m.type == SW_MSG_MODEL_SPARSE) {
            if (!(rc = sw_msg_get_floats(&m, k->pulled, n, err))) {
                for (size_t i = 0; i < n; i++)
                    k->params[idx[i]] = k->pulled[i];
                k->version = m.version;
            }
        } else if (!rc && m.type == SW_MSG_ERROR) {
            rc = (m.flags & SW_FLAG_UNKNOWN) ? SW_ENOTFOUND
                                             : sw_fail(err, SW_ESTATE,
                                                       "the server refused our "
                                                       "pull: %.*s",
                                                       (int)m.payload_len, (const char *)m.payload);
        } else if (!rc && (m.flags & SW_FLAG_DONE)) {
            k->r->done = true; /* the run is over: the caller stops */
        } else if (!rc) {
            zmq_msg_close(&frame);
            continue; /* nothing else is meant for a running worker; ignore it */
        }
        zmq_msg_close(&frame);
        return rc;
    }
}

int sw__worker_sparse_step(worker *k, const sw_msg *rel, char *err)
{
    bool dropped = (rel->flags & SW_FLAG_DROPPED) != 0;
    if (!k->redo && !dropped) /* a refused gradient: the same batch again */
        sw_learner_next(k->learner);
    k->r->drops += dropped;
    k->redo = false;
    size_t n;
    const uint32_t *idx = sw_learner_touched(k->learner, &n);
    int rc = pull(k, idx, n, err);
    if (rc || k->r->done)
        return rc;
    sw_learner_grad(k->learner, k->params, &k->grad);
    sw__worker_straggle(k);
    sw_msg_put_pairs(k->scratch, k->grad.idx, k->grad.val, k->grad.nnz);
    sw__worker_send(k, k->sock, SW_MSG_PUSH_SPARSE, 0, k->version, k->scratch,
                    8 * k->grad.nnz, NULL);
    k->r->steps++;
    return 0;
}
