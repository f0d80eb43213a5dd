/* What a run trains, whoever drives it (the simulator, the server and its workers, the peers):
 * a model, the data it learns from, and for each worker its mini-batches and their gradients.
 *
 * Two implementations behind one set of calls:
 *   dense   a model of syncwise/model.h (softmax, MLP, CNN) on dense examples; a gradient is a
 *           vector of every parameter, computed at parameters the worker pulled whole;
 *   sparse  a linear model of syncwise/sparse.h (svm, logistic) on sparse rows; a gradient is
 *           (index, value) pairs on the weights its batch touches, computed at parameters read
 *           only there (what a worker pulls).
 * The model spec chooses: svm and logistic are sparse, every other architecture dense.
 *
 * A task holds scratch memory for its model and is used from one thread, with its learners;
 * the data it reads (sw_task_data) is read-only and may be shared by any number of tasks.
 */
#ifndef SYNCWISE_TASK_H
#define SYNCWISE_TASK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "syncwise/data.h"
#include "syncwise/model.h"
#include "syncwise/sparse.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The examples of a task: dense (dense.train set) or sparse (sparse.train set), never both. */
typedef struct sw_task_data {
    sw_data dense;
    sw_sparse_set sparse;
} sw_task_data;

/* The seed of a run's data set (its held-out split, its share, generated examples): one data
 * spec is one data set in sim, compare, the server, its workers and peers, whatever their
 * --seed, which varies the cluster, the initial parameters and the batch order. So a compare
 * run is the sim run of its seed, and the server of any seed the simulator's twin. */
#define SW_DATA_SEED 1

/* Loads the data named by spec in the form the model needs: sparse rows for svm and logistic
 * (syncwise/sparse.h: libsvm:, sparse:), dense examples otherwise (syncwise/data.h). On failure
 * out holds nothing. */
int sw_task_data_load(sw_task_data *out, const char *model, const char *spec, uint64_t seed,
                      char *err);
/* SW_ENOTFOUND (said) when the model spec names no model, SW_EINVAL when a key of it is unknown
 * or out of its range (sw_model_spec_check): the check sw_task_data_load makes first, for a
 * command that would rather refuse a typo before anything else (the data take seconds). */
int sw_task_model_known(const char *model, char *err);
void sw_task_data_free(sw_task_data *d);
bool sw_task_data_is_sparse(const sw_task_data *d);
/* The training examples it holds. */
size_t sw_task_data_train_size(const sw_task_data *d);
/* A CRC-32C of the training set as loaded (features, labels or targets, and their shapes), so
 * that processes which each load "the same" data set can tell that they did (a server and its
 * workers: WELCOME's data_crc=). */
uint32_t sw_task_data_fingerprint(const sw_task_data *d);
/* Whether a data spec names a generated set (synthetic, sparse): its spec and seed make it, so
 * there is no file to differ, and a fingerprint would only compare the machines' libm. */
bool sw_task_data_is_generated(const char *spec);

typedef struct sw_task sw_task;

/* Examples of the loss probe when a caller has no reason to choose. */
#define SW_TASK_PROBE_EXAMPLES 32

/* Builds the model named by spec for the data (borrowed: it must outlive the task). max_batch
 * bounds the batches its learners take; the loss probe holds the first probe_examples held-out
 * examples (capped by max_batch; 0: no probe). Fails with a message on an unknown model, data
 * that does not fit it, or the wrong kind of data (sparse rows for a dense model). */
int sw_task_new(sw_task **out, const char *model, const sw_task_data *data, size_t max_batch,
                uint32_t probe_examples, char *err);
void sw_task_free(sw_task *t);

bool sw_task_is_sparse(const sw_task *t);
size_t sw_task_n_params(const sw_task *t);
/* The model's canonical spec (every parameter written out). */
const char *sw_task_spec(const sw_task *t);
/* The model's description as a checkpoint records it (syncwise/ckpt.h). */
sw_model_desc sw_task_desc(const sw_task *t);
/* Whether accuracy means anything (classification) or not (regression). */
bool sw_task_classifies(const sw_task *t);
/* The set sw_task_evaluate reads, for what a run prints: "validation", "test" or "training". */
const char *sw_task_held_out(const sw_task *t);

/* Seeded initial parameters (zeros for the linear models, whose loss is convex). */
void sw_task_init_params(const sw_task *t, float *params, uint64_t seed);
/* Loss and accuracy of params on the held-out set: the validation set, else the test set, else
 * the training set (sparse data has no validation split; val=0 asks for none). */
void sw_task_evaluate(sw_task *t, const float *params, sw_eval *out);
/* The mean loss of params on the loss probe (policies that want losses: syncwise/policy.h);
 * NAN when the task has no probe. The same examples on every call, so the losses compare. */
double sw_task_probe_loss(sw_task *t, const float *params);
bool sw_task_has_probe(const sw_task *t);
/* The mean loss of params on a fixed sample of the training set (its first 2000 examples, in
 * the data's order, which the loaders shuffle): the training loss of a target loss. */
double sw_task_train_loss(sw_task *t, const float *params);

/* ---- A worker's side: its mini-batches and their gradients --------------------------------- */

typedef struct sw_learner sw_learner;

typedef struct sw_learner_params {
    uint32_t batch;       /* examples per step, at most the task's max_batch */
    sw_batch_mode mode;   /* the worker's shard, or the whole set in its own order */
    uint32_t rank, ranks; /* this worker's id among `ranks` slots (the shard it reads) */
    uint64_t seed;
    /* SW_BATCH_SHARD: the run's deal of the training set by `seed` (syncwise/data.h), lent
     * while the learner is made, so that a process of many learners shuffles the set once;
     * NULL: the learner makes its own. */
    const sw_deal *deal;
} sw_learner_params;

/* A learner of the task (borrowed; one thread uses both). Its first batch is chosen by the first
 * sw_learner_next. */
int sw_learner_new(sw_learner **out, sw_task *t, const sw_learner_params *p, char *err);
void sw_learner_free(sw_learner *l);

/* Moves to the next mini-batch. Without a call the current one stays: a worker whose gradient
 * was refused computes the same batch again. */
void sw_learner_next(sw_learner *l);

/* The coordinates the current batch's gradient reads and writes: ascending indices, *n of them,
 * for a sparse task (what a worker pulls before computing); NULL for a dense one, which reads
 * them all (*n = the number of parameters). */
const uint32_t *sw_learner_touched(sw_learner *l, size_t *n);

/* A gradient: the dense vector (dense tasks) or nnz (index, value) pairs with ascending indices
 * (sparse tasks). The buffers are the caller's: sw_grad_alloc sizes them for a learner, or a
 * caller points `dense` at its own n_params floats (a network buffer). */
typedef struct sw_grad {
    float *dense;
    uint32_t *idx;
    float *val;
    size_t nnz;
} sw_grad;

/* Buffers for the learner's gradients; sw_grad_free frees what sw_grad_alloc allocated (not a
 * caller's own `dense`). */
int sw_grad_alloc(sw_grad *g, const sw_learner *l, char *err);
void sw_grad_free(sw_grad *g);

/* The gradient of the current batch at params into g, and its mean loss. A sparse task reads
 * params only at the touched coordinates. */
double sw_learner_grad(sw_learner *l, const float *params, sw_grad *g);

#ifdef __cplusplus
}
#endif

#endif
