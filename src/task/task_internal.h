/* The task's two implementations (dense models, sparse linear models) behind one table of
 * operations, which task.c and learner.c dispatch to. */
#ifndef SW_TASK_INTERNAL_H
#define SW_TASK_INTERNAL_H

#include "syncwise/task.h"

#define SW_TASK_TRAIN_SAMPLE 2000 /* examples of the training-loss sample */

typedef struct sw__task_ops {
    /* Builds the model for t->data and its probe of at most probe_examples held-out examples;
     * sets t->impl, t->n_params, t->probe_n (0: no probe) and t->held_out. */
    int (*open)(sw_task *t, const char *model, uint32_t probe_examples, char *err);
    void (*close)(sw_task *t);
    const char *(*spec)(const sw_task *t);
    sw_model_desc (*desc)(const sw_task *t);
    bool (*classifies)(const sw_task *t);
    void (*init_params)(const sw_task *t, float *params, uint64_t seed);
    /* On the held-out set, or on the training sample. */
    void (*evaluate)(sw_task *t, const float *params, bool train_sample, sw_eval *out);
    double (*probe_loss)(sw_task *t, const float *params); /* called when probe_n > 0 */
    /* A learner's own state (l->impl), its batches, and its gradients. */
    int (*learner_open)(sw_learner *l, char *err);
    void (*learner_close)(sw_learner *l);
    void (*next)(sw_learner *l);
    const uint32_t *(*touched)(sw_learner *l, size_t *n);
    size_t (*max_pairs)(const sw_learner *l); /* of a gradient; 0: dense */
    double (*grad)(sw_learner *l, const float *params, sw_grad *g);
} sw__task_ops;

struct sw_task {
    const sw__task_ops *ops;
    const sw_task_data *data;
    size_t n_params, max_batch;
    uint32_t probe_n; /* examples of the loss probe */
    const char *held_out; /* the set evaluations use: "validation", "test" or "training" */
    void *impl;
};

struct sw_learner {
    sw_task *t;
    sw_learner_params p;
    void *impl;
};

extern const sw__task_ops sw__task_dense, sw__task_sparse;

#endif
