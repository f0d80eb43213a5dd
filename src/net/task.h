/* What a server trains: a dense model on dense data, or a sparse linear model (svm, logistic)
 * on sparse rows. The server makes the same few calls on either. */
#ifndef SW_NET_TASK_H
#define SW_NET_TASK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "syncwise/data.h"
#include "syncwise/model.h"
#include "syncwise/sparse.h"

typedef struct sw__task {
    bool sparse;
    size_t n; /* parameters */
    /* dense */
    sw_model *model;
    sw_data data;
    sw_batch probe;
    /* sparse */
    sw_sparse_model *smodel;
    sw_sparse_set sdata;
    sw_sparse_data *sprobe; /* the first held-out rows */
} sw__task;

int sw__task_open(sw__task *t, const char *model, const char *data, uint64_t seed, char *err);
void sw__task_close(sw__task *t);
const char *sw__task_spec(const sw__task *t);
/* The model's description as a checkpoint records it (syncwise/ckpt.h). */
sw_model_desc sw__task_desc(const sw__task *t);
/* Seeded initial parameters (zeros for the linear models). */
void sw__task_init(const sw__task *t, float *params, uint64_t seed);
/* Loss and accuracy on the validation set (the test set when there is none). */
void sw__task_evaluate(sw__task *t, const float *params, sw_eval *e);
/* The loss probe: the first 32 held-out examples. */
double sw__task_probe(sw__task *t, const float *params);

#endif
