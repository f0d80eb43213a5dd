/* Checkpoints: a model's description and parameters in one self-checking file.
 *
 * Format (version 2), all integers little-endian:
 *
 *   offset  size  field
 *   0       4     magic "SWCK"
 *   4       4     format version (2; 1 is still read)
 *   8       4     task (0 classify, 1 regress)
 *   12      4     classes (0 for regression)
 *   16      12    input shape: height, width, channels (u32 each)
 *   28      8     model version: applies made to these parameters
 *   36      8     seed of the run
 *   44      8     parameter count P
 *   52      4     model spec length S (1..127), then S bytes of canonical spec, e.g. "mlp:h=1,u=256"
 *   56+S    4     data spec length D (0..1023), then D bytes: the data the model was trained on
 *   ...     4     note length N (0..4095), then N bytes of text: "key=value" lines, such as the
 *                 server's policy ("policy=ssp:s=3") or a shard's configuration
 *   ...     4P    parameters, IEEE-754 binary32
 *   ...     4     optimizer spec length O (0..95), then O bytes (syncwise/optim.h: "sgd",
 *                 "sgd:momentum=0.9", "adam:beta1=...")
 *   ...     8     optimizer steps taken
 *   ...     4     optimizer state arrays A (0: plain SGD, 1: momentum, 2: Adam's moments)
 *   ...     4AP   the state, array after array, binary32
 *   end-4   4     CRC-32 of every byte before it
 *
 * Version 1 ended after the parameters; it is still read, as a checkpoint of plain SGD's.
 *
 * The parameters go layer by layer, input to output; each layer's weights row-major
 * [outputs x inputs], then its biases (src/model/layer.h). Activations are channels-last, so a
 * convolution's weights are [filters x (row, column, channel) of its k x k window], and the
 * dense layer after a CNN's last pooling reads its input flattened as (row, column, channel).
 * Convolutions are 5x5, stride 1, no padding; pooling 2x2, rounding down; leaky ReLU slopes
 * 0.01 below zero; IDX pixels are scaled to [0, 1]. Loading a checkpoint elsewhere (PyTorch: permute a conv's weights to
 * [filters, channel, row, column]) reproduces `syncwise eval` to float rounding.
 *
 * A sparse linear model (svm, logistic: syncwise/sparse.h) is stored as a binary classifier
 * (task 0, 2 classes) of D x 1 x 1 inputs for D features, with D + 1 parameters (the bias last).
 *
 * Files are written atomically: to a temporary file in the same directory, flushed with fsync,
 * renamed over the target, and the directory synced; a crash leaves the old file or the new one,
 * never a torn one. Reading refuses a wrong magic, an unknown version, a bad checksum, a truncated
 * or padded file, and parameters that do not fit the described architecture.
 */
#ifndef SYNCWISE_CKPT_H
#define SYNCWISE_CKPT_H

#include <stddef.h>
#include <stdint.h>

#include "syncwise/model.h"
#include "syncwise/optim.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SW_CKPT_VERSION 2

/* The model spec of a server shard's checkpoint (syncwise/shard.h): its slice of θ, which has
 * no architecture to check; the note holds the shard's configuration, the seed the run's id. */
#define SW_CKPT_SLICE "slice"
#define SW_CKPT_DATA_SPEC_LEN 1024
/* A shard keeps its run's configuration there, chunk table included (up to SW_SHARDS_MAX). */
#define SW_CKPT_NOTE_LEN 4096

/* The largest version a checkpoint may hold: a run's log writes versions as JSON numbers, whole
 * to a double only up to 2^53, and no run makes more applies. A larger one is damage. */
#define SW_CKPT_MAX_VERSION ((uint64_t)1 << 53)

typedef struct sw_ckpt {
    sw_model_desc desc;
    uint64_t model_version; /* at most SW_CKPT_MAX_VERSION */
    uint64_t seed;
    char data_spec[SW_CKPT_DATA_SPEC_LEN]; /* may be empty */
    char note[SW_CKPT_NOTE_LEN];           /* may be empty */
    size_t n_params;
    float *params; /* owned; freed by sw_ckpt_free */
    /* The optimizer that made these parameters and its state, so that a resumed run goes on
     * with the same momentum. optimizer "" or "sgd" with no arrays: plain SGD. */
    char optimizer[SW_OPTIM_SPEC_LEN];
    uint64_t optim_steps;
    unsigned optim_arrays; /* 0..2 */
    float *optim_state;    /* optim_arrays x n_params floats, owned; NULL when none */
} sw_ckpt;

/* Writes c (with c->params holding c->n_params floats, and optim_state its arrays) to path
 * atomically. */
int sw_ckpt_save(const char *path, const sw_ckpt *c, char *err);

/* Reads and validates path into out; the caller frees it with sw_ckpt_free. */
int sw_ckpt_load(const char *path, sw_ckpt *out, char *err);
void sw_ckpt_free(sw_ckpt *c);

/* The optimizer o (spec, steps, state) into c, for saving: c->optim_state is allocated, its
 * caller's to free (sw_ckpt_free frees it with the rest). */
int sw_ckpt_put_optim(sw_ckpt *c, const sw_optim *o, char *err);

/* The state c holds, into o initialised for p over c->n_params: 0 when taken, 1 when c was made
 * by another optimizer than p (o left empty: a fresh start), < 0 on failure. */
int sw_ckpt_take_optim(const sw_ckpt *c, const sw_optim_params *p, sw_optim *o, char *err);

#ifdef __cplusplus
}
#endif

#endif
