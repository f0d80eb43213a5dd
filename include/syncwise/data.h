/* Data sets: reading, preparing and batching examples.
 *
 * A data set holds n examples of `dim` float features in one row-major array, with an integer
 * class label per example (classification) or a float target (regression). Readers exist for IDX
 * (optionally gzip-compressed, as Fashion-MNIST ships), LIBSVM (sparse text, densified) and CSV.
 * sw_data_load builds the train / validation / test triple from a spec string such as
 * "fashion-mnist" or "synthetic:task=lsq,d=100". A batcher hands out mini-batches in a seeded
 * order, either from a worker's own shard or from the whole set.
 *
 * Readers never trust their input: a truncated file, a wrong magic number, a label out of range
 * or a dimension mismatch returns an error whose message names the file and the place.
 */
#ifndef SYNCWISE_DATA_H
#define SYNCWISE_DATA_H

#include <stddef.h>
#include <stdint.h>

#include "syncwise/rng.h"

typedef enum sw_task {
    SW_TASK_CLASSIFY = 0, /* label[i] in [0, n_classes) */
    SW_TASK_REGRESS = 1,  /* target[i], any finite float */
} sw_task;

typedef struct sw_dataset {
    size_t n;           /* examples */
    size_t dim;         /* features per example = shape[0] * shape[1] * shape[2] */
    uint32_t shape[3];  /* height, width, channels, which is also the order of x within an
                         * example (channels last); flat data is 1 x 1 x dim */
    sw_task task;
    uint32_t n_classes; /* classification only */
    float *x;           /* n * dim, owned */
    int32_t *label;     /* n, owned; NULL for regression */
    float *target;      /* n, owned; NULL for classification */
} sw_dataset;

/* Allocates an all-zero data set of n examples shaped h x w x c. The caller frees it. */
int sw_dataset_new(sw_dataset **out, size_t n, const uint32_t shape[3], sw_task task,
                   uint32_t n_classes, char *err);
void sw_dataset_free(sw_dataset *ds);

/* A new data set holding copies of examples idx[0..n) of ds, in that order. */
int sw_dataset_subset(sw_dataset **out, const sw_dataset *ds, const uint32_t *idx, size_t n,
                      char *err);

/* Reads an IDX image file and its IDX label file (each gzip-compressed or plain). Unsigned-byte
 * pixels are scaled to [0, 1]. Labels must lie in [0, n_classes). */
int sw_idx_read(sw_dataset **out, const char *images_path, const char *labels_path,
                uint32_t n_classes, char *err);

/* Reads a LIBSVM file ("label index:value ..." per line, indices from 1). dim = 0 takes the
 * largest index seen. For classification, labels -1/+1 become 0/1 and other labels must be
 * integers in [0, 1000); n_classes becomes the largest label plus one. */
int sw_libsvm_read(sw_dataset **out, const char *path, size_t dim, sw_task task, char *err);

/* Reads a CSV file of numbers, one example per row, the label in column label_col (0-based;
 * -1 for the last). A first row that is not numeric is taken as a header and skipped. */
int sw_csv_read(sw_dataset **out, const char *path, int label_col, sw_task task, char *err);

/* Per-feature standardisation: mean and standard deviation measured on `fit`, then applied to
 * every non-NULL data set in `apply` (count of them: n_apply), `fit` included if listed.
 * Constant features are centred and left unscaled. */
int sw_dataset_standardize(const sw_dataset *fit, sw_dataset **apply, int n_apply, char *err);

/* The train / validation / test triple that a run uses. Any member may be NULL except train. */
typedef struct sw_data {
    sw_dataset *train;
    sw_dataset *val;
    sw_dataset *test;
} sw_data;

/* Loads the data named by spec (see `syncwise help data` / docs for the list), splitting a
 * validation set off the training set with a stream of seed. Fills out; on failure out holds
 * nothing and needs no freeing. */
int sw_data_load(sw_data *out, const char *spec, uint64_t seed, char *err);
void sw_data_free(sw_data *d);

/* The spec names sw_data_load knows, with one line of help each, NULL-terminated. */
typedef struct sw_data_source_info {
    const char *name;
    const char *help;
} sw_data_source_info;
extern const sw_data_source_info sw_data_sources[];

/* How a worker sees the training set. */
typedef enum sw_batch_mode {
    SW_BATCH_SHARD = 0,  /* a fixed disjoint shard by rank, reshuffled each epoch */
    SW_BATCH_SAMPLE = 1, /* the whole set in a worker-own order: workers may come and go */
} sw_batch_mode;

typedef struct sw_batcher sw_batcher;

/* A batcher of `batch` examples for worker `rank` of `n_ranks`. Batches always have exactly
 * `batch` examples: an epoch's tail continues into the next epoch's fresh order. The data set
 * must outlive the batcher. All memory is allocated here; sw_batcher_next allocates nothing. */
int sw_batcher_new(sw_batcher **out, const sw_dataset *ds, size_t batch, sw_batch_mode mode,
                   uint32_t rank, uint32_t n_ranks, uint64_t seed, char *err);
void sw_batcher_free(sw_batcher *b);

/* A mini-batch: views into the batcher's own buffers, valid until the next call. */
typedef struct sw_batch {
    const float *x;       /* batch * dim */
    const int32_t *label; /* batch, or NULL */
    const float *target;  /* batch, or NULL */
    size_t n;
} sw_batch;

void sw_batcher_next(sw_batcher *b, sw_batch *out);

/* The batch sw_batcher_next returned last, again (to recompute a refused gradient). */
void sw_batcher_current(const sw_batcher *b, sw_batch *out);

/* Completed passes over this batcher's examples, and examples in one pass (its shard size). */
uint64_t sw_batcher_epoch(const sw_batcher *b);
size_t sw_batcher_epoch_size(const sw_batcher *b);

#endif
