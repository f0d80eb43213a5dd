/* Sparse data, sparse linear models and sparse gradients (paper 003: a linear SVM on sparse,
 * text-like data, whose workers exchange only the weights a mini-batch touches).
 *
 * A sparse data set is compressed rows (CSR): row i's nonzeros are col/val[row[i] .. row[i+1]),
 * columns 0-based and ascending. A sparse gradient is a list of (index, value) pairs with
 * ascending, distinct indices. The linear models keep their dim weights and then a bias in one
 * flat array of dim + 1 floats, like every other model.
 */
#ifndef SYNCWISE_SPARSE_H
#define SYNCWISE_SPARSE_H

#include <stddef.h>
#include <stdint.h>

#include "syncwise/data.h"
#include "syncwise/model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sw_sparse_data {
    size_t n, dim, nnz;
    size_t *row;    /* n + 1 offsets */
    uint32_t *col;  /* nnz */
    float *val;     /* nnz */
    int32_t *label; /* class index; the binary models read 0 as -1 and 1 as +1 */
    uint32_t n_classes;
} sw_sparse_data;

/* An empty data set with room for n rows and nnz nonzeros (row offsets all zero). */
int sw_sparse_new(sw_sparse_data **out, size_t n, size_t dim, size_t nnz, char *err);
void sw_sparse_free(sw_sparse_data *d);

/* LIBSVM text, kept sparse: labels -1/+1 become classes 0/1, integers stay as they are; dim 0
 * takes the largest index. */
int sw_sparse_read_libsvm(sw_sparse_data **out, const char *path, size_t dim, char *err);
/* Writes LIBSVM text atomically; two-class labels as -1/+1, others as class indices. */
int sw_sparse_write_libsvm(const sw_sparse_data *d, const char *path, char *err);
/* The nonzeros of a dense classification data set (Fashion-MNIST to LIBSVM). */
int sw_sparse_from_dense(sw_sparse_data **out, const sw_dataset *ds, char *err);

/* Synthetic two-class data like bag-of-words text: feature j appears with probability
 * proportional to 1 / (j + 1)^zipf, scaled so that a row has density * dim nonzeros on average
 * (at least one); values are positive and each row has unit L2 norm; the label says whether
 * a hidden dense linear model scores the row above its median (balanced classes); its weights
 * shrink with their feature's frequency like (j + 1)^(-zipf / 2) (frequent words carry the signal),
 * flipped with probability noise. */
typedef struct sw_sparse_gen {
    size_t n, dim;
    double density, zipf, noise;
    uint64_t seed;
} sw_sparse_gen;

int sw_sparse_generate(sw_sparse_data **out, const sw_sparse_gen *g, char *err);

/* A copy of rows [first, first + count). */
int sw_sparse_slice(sw_sparse_data **out, const sw_sparse_data *d, size_t first, size_t count,
                    char *err);

/* The training and test sets of a sparse run, named by a spec:
 *   libsvm:train=PATH,test=PATH,dim=D   LIBSVM files (without test=, the last 10% of train)
 *   sparse:n=20000,test=2000,dim=10000,density=0.005,zipf=1.1,noise=0.02
 *                                       generated (sw_sparse_generate; test rows come from the
 *                                       same hidden model)
 */
typedef struct sw_sparse_set {
    sw_sparse_data *train, *test;
} sw_sparse_set;

int sw_sparse_load(sw_sparse_set *out, const char *spec, uint64_t seed, char *err);
void sw_sparse_set_free(sw_sparse_set *s);

/* Whether a model spec names a sparse linear model (svm, logistic). */
int sw_sparse_is_model(const char *model_spec);

/* ---- Linear models on sparse rows --------------------------------------------------------- */

typedef struct sw_sparse_model sw_sparse_model;

/* spec: "svm:lambda=1e-4" (hinge loss) or "logistic:lambda=0" (log loss), both with
 * lambda / 2 ||w||^2 (the bias is not regularised). */
int sw_sparse_model_new(sw_sparse_model **out, const char *spec, size_t dim, char *err);
void sw_sparse_model_free(sw_sparse_model *m);
size_t sw_sparse_model_n_params(const sw_sparse_model *m);  /* dim + 1 */
const char *sw_sparse_model_spec(const sw_sparse_model *m); /* canonical */

/* The coordinates rows touch, ascending, the bias (index dim) last: what a worker pulls before
 * computing their gradient. idx needs room for the rows' nonzeros + 1. Returns their count. */
size_t sw_sparse_touched(sw_sparse_model *m, const sw_sparse_data *d, const uint32_t *rows,
                         size_t n_rows, uint32_t *idx);

/* The mean loss of rows at w and its gradient on the touched coordinates (sw_sparse_touched's
 * order) into val; the regulariser adds lambda w_j on touched coordinates only, as Hogwild!
 * does, so that the gradient stays sparse. w is read only at touched coordinates. Returns the
 * number of pairs (idx as sw_sparse_touched fills it). */
size_t sw_sparse_model_grad(sw_sparse_model *m, const float *w, const sw_sparse_data *d,
                            const uint32_t *rows, size_t n_rows, uint32_t *idx, float *val,
                            double *loss);

/* Mean loss (with the full regulariser) and accuracy of w on d. */
void sw_sparse_model_evaluate(sw_sparse_model *m, const float *w, const sw_sparse_data *d,
                              sw_eval *out);

#ifdef __cplusplus
}
#endif

#endif
