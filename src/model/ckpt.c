/* Checkpoint encoding, atomic writing and validated reading (format in syncwise/ckpt.h). */
#define _POSIX_C_SOURCE 200809L
#include "syncwise/ckpt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model_internal.h"
#include "syncwise/bytes.h"
#include "syncwise/err.h"
#include "syncwise/file.h"
#include "syncwise/sparse.h"

static const uint8_t MAGIC[4] = {'S', 'W', 'C', 'K'};
#define FIXED_BYTES 52

static int encode(const sw_ckpt *c, uint8_t **out, size_t *len, char *err)
{
    size_t s = strlen(c->desc.spec), d = strlen(c->data_spec), t = strlen(c->note);
    if (s == 0 || s >= SW_MODEL_SPEC_LEN || d >= SW_CKPT_DATA_SPEC_LEN || t >= SW_CKPT_NOTE_LEN)
        return sw_fail(err, SW_EINVAL, "checkpoint: text lengths %zu, %zu, %zu out of range", s, d,
                       t);
    size_t o = strlen(c->optimizer);
    if (o >= SW_OPTIM_SPEC_LEN || c->optim_arrays > 2 || (c->optim_arrays && !c->optim_state))
        return sw_fail(err, SW_EINVAL, "checkpoint: optimizer '%s' with %u state arrays",
                       c->optimizer, c->optim_arrays);
    size_t state = (size_t)c->optim_arrays * c->n_params;
    size_t n =
        FIXED_BYTES + 4 + s + 4 + d + 4 + t + 4 * c->n_params + 4 + o + 8 + 4 + 4 * state + 4;
    uint8_t *b = malloc(n), *p = b;
    if (!b)
        return sw_fail(err, SW_ENOMEM, "out of memory for a %zu-byte checkpoint", n);
    memcpy(p, MAGIC, 4);
    sw_put_u32(p + 4, SW_CKPT_VERSION);
    sw_put_u32(p + 8, (uint32_t)c->desc.objective);
    sw_put_u32(p + 12, c->desc.n_classes);
    for (int i = 0; i < 3; i++)
        sw_put_u32(p + 16 + 4 * i, c->desc.in_shape[i]);
    sw_put_u64(p + 28, c->model_version);
    sw_put_u64(p + 36, c->seed);
    sw_put_u64(p + 44, c->n_params);
    p += FIXED_BYTES;
    sw_put_u32(p, (uint32_t)s);
    memcpy(p + 4, c->desc.spec, s);
    p += 4 + s;
    sw_put_u32(p, (uint32_t)d);
    memcpy(p + 4, c->data_spec, d);
    p += 4 + d;
    sw_put_u32(p, (uint32_t)t);
    memcpy(p + 4, c->note, t);
    p += 4 + t;
    for (size_t i = 0; i < c->n_params; i++, p += 4)
        sw_put_f32(p, c->params[i]);
    sw_put_u32(p, (uint32_t)o);
    memcpy(p + 4, c->optimizer, o);
    p += 4 + o;
    sw_put_u64(p, c->optim_steps);
    sw_put_u32(p + 8, c->optim_arrays);
    p += 12;
    for (size_t i = 0; i < state; i++, p += 4)
        sw_put_f32(p, c->optim_state[i]);
    sw_put_u32(p, sw_crc32(0, b, (size_t)(p - b)));
    *out = b;
    *len = n;
    return 0;
}

int sw_ckpt_save(const char *path, const sw_ckpt *c, char *err)
{
    /* A file the loader refuses must not replace a good one: a run whose parameters overflowed
     * keeps its last finite save. */
    for (size_t i = 0; i < c->n_params; i++)
        if (!isfinite(c->params[i]))
            return sw_fail(err, SW_ERANGE,
                           "%s: not saved: parameter %zu is not finite (the run diverged: a lower "
                           "learning rate?); the file keeps what it held",
                           path, i);
    uint8_t *buf = NULL;
    size_t len = 0;
    int rc = encode(c, &buf, &len, err);
    if (rc)
        return rc;
    rc = sw_file_write_atomic(path, buf, len, "checkpoint", err);
    free(buf);
    return rc;
}

/* A sharded server's record (server --shards --checkpoint's text) is no model: the message
 * names the model its run's end wrote, FILE.model, and says when that end was an earlier one
 * (the run resumed and went on: its newer slices are in the shards' files alone). */
#define RECORD_IS                                                                               \
    "is a sharded server's record of the version its shards saved, not a model (a slice in "   \
    "each shard's file)"
static int refuse_record(const uint8_t *b, size_t len, const char *path, char *err)
{
    char model[4096], text[1024];
    snprintf(model, sizeof model, "%s.model", path);
    snprintf(text, sizeof text, "%.*s", (int)(len < sizeof text ? len : sizeof text - 1),
             (const char *)b);
    const char *at = strstr(text, "\nversion=");
    bool numbered = at && at[9] >= '0' && at[9] <= '9'; /* else the run's start: none saved */
    unsigned long long saved = numbered ? strtoull(at + 9, NULL, 10) : 0;
    if (access(model, F_OK) != 0)
        return sw_fail(err, SW_EFORMAT, "%s " RECORD_IS ": there is no %s (the server writes it "
                       "at the end of a run whose shards it reached: this run was killed, or is "
                       "still going)", path, model);
    sw_ckpt m;
    char why[SW_ERR_LEN];
    if (sw_ckpt_load(model, &m, why))
        return sw_fail(err, SW_EFORMAT, "%s " RECORD_IS "; its run's model: %s", path, why);
    unsigned long long held = m.model_version;
    sw_ckpt_free(&m);
    if (!numbered || held == saved)
        return sw_fail(err, SW_EFORMAT, "%s " RECORD_IS ": the model at the run's end is %s",
                       path, model);
    return sw_fail(err, SW_EFORMAT, "%s " RECORD_IS ": %s holds version %llu, an earlier end's; "
                   "the run went on to version %llu, which only the shards' files hold (resume "
                   "the run and stop it, and its end writes that model)", path, model, held, saved);
}

static int decode_header(const uint8_t *b, size_t len, sw_ckpt *c, size_t *off, uint32_t *version,
                         const char *path, char *err)
{
    if (len >= 4 && !memcmp(b, "run=", 4))
        return refuse_record(b, len, path, err);
    if (len < FIXED_BYTES + 4 || memcmp(b, MAGIC, 4) != 0)
        return sw_fail(err, SW_EFORMAT, "%s: not a syncwise checkpoint (bad magic or too short)",
                       path);
    *version = sw_get_u32(b + 4);
    if (*version != 1 && *version != SW_CKPT_VERSION)
        return sw_fail(err, SW_EVERSION,
                       "%s: checkpoint format version %u (this build reads 1 "
                       "to %d)",
                       path, *version, SW_CKPT_VERSION);
    uint32_t stored = sw_get_u32(b + len - 4), actual = sw_crc32(0, b, len - 4);
    if (stored != actual)
        return sw_fail(err, SW_ECHECKSUM,
                       "%s: checksum mismatch (stored %08x, computed %08x): the file is corrupt",
                       path, stored, actual);
    uint32_t task = sw_get_u32(b + 8);
    if (task > SW_REGRESS)
        return sw_fail(err, SW_EFORMAT, "%s: byte 8: unknown task %u", path, task);
    c->desc.objective = (sw_objective)task;
    c->desc.n_classes = sw_get_u32(b + 12);
    for (int i = 0; i < 3; i++)
        c->desc.in_shape[i] = sw_get_u32(b + 16 + 4 * i);
    c->model_version = sw_get_u64(b + 28);
    if (c->model_version > SW_CKPT_MAX_VERSION)
        return sw_fail(err, SW_EFORMAT, "%s: byte 28: model version %llu, over 2^53, which no "
                       "run reaches: the file is corrupt", path,
                       (unsigned long long)c->model_version);
    c->seed = sw_get_u64(b + 36);
    uint64_t p = sw_get_u64(b + 44);
    *off = FIXED_BYTES;
    int rc =
        sw_get_text(b, len, off, c->desc.spec, sizeof c->desc.spec, 1, "model spec", path, err);
    if (!rc)
        rc = sw_get_text(b, len, off, c->data_spec, sizeof c->data_spec, 0, "data spec", path, err);
    if (!rc)
        rc = sw_get_text(b, len, off, c->note, sizeof c->note, 0, "note", path, err);
    /* version 1 ends with the parameters; version 2 has at least an empty optimizer after */
    size_t after = *version == 1 ? 4 : 4 + 8 + 4 + 4;
    if (!rc && (len - *off < after || p > (len - *off - after) / 4 ||
                (*version == 1 && *off + 4 * p + 4 != len)))
        rc = sw_fail(err, SW_EFORMAT, "%s: %llu parameters do not match the file size %zu", path,
                     (unsigned long long)p, len);
    c->n_params = (size_t)p;
    return rc;
}

/* Version 2's optimizer section, after the parameters: its spec, steps and state arrays, which
 * must end the file exactly. */
static int decode_optimizer(const uint8_t *b, size_t len, sw_ckpt *c, size_t off, const char *path,
                            char *err)
{
    int rc = sw_get_text(b, len, &off, c->optimizer, sizeof c->optimizer, 0, "optimizer spec", path,
                         err);
    if (rc)
        return rc;
    sw_optim_params op;
    char why[SW_ERR_LEN];
    if (c->optimizer[0] && sw_optim_parse(&op, c->optimizer, why))
        return sw_fail(err, SW_EFORMAT, "%s: the optimizer '%s' is not valid: %s", path,
                       c->optimizer, why);
    if (len - off < 16)
        return sw_fail(err, SW_EFORMAT, "%s: the optimizer section is cut short", path);
    c->optim_steps = sw_get_u64(b + off);
    c->optim_arrays = sw_get_u32(b + off + 8);
    off += 12;
    unsigned want = c->optimizer[0] ? sw_optim_arrays(&op) : 0;
    if (c->optim_arrays != want)
        return sw_fail(err, SW_EFORMAT, "%s: %u optimizer state arrays for '%s', which keeps %u",
                       path, c->optim_arrays, c->optimizer[0] ? c->optimizer : "sgd", want);
    size_t cells = (size_t)c->optim_arrays * c->n_params;
    if ((len - off - 4) / 4 != cells || (len - off - 4) % 4)
        return sw_fail(err, SW_EFORMAT,
                       "%s: %zu optimizer state values do not match the file "
                       "size %zu",
                       path, cells, len);
    if (!cells)
        return 0;
    if (!(c->optim_state = malloc(cells * sizeof *c->optim_state)))
        return sw_fail(err, SW_ENOMEM, "%s: out of memory for the optimizer's state", path);
    for (size_t i = 0; i < cells; i++) {
        c->optim_state[i] = sw_get_f32(b + off + 4 * i);
        if (!isfinite(c->optim_state[i]))
            return sw_fail(err, SW_EFORMAT, "%s: optimizer state value %zu is not finite", path, i);
    }
    return 0;
}

/* A sparse linear model is described as a binary classifier of dim x 1 x 1 inputs; it has a
 * weight per feature and a bias. */
static int check_sparse(const sw_ckpt *c, const char *path, char *err)
{
    const sw_model_desc *d = &c->desc;
    if (d->objective != SW_CLASSIFY || d->n_classes != 2 || d->in_shape[1] != 1 ||
        d->in_shape[2] != 1 || d->in_shape[0] == 0)
        return sw_fail(err, SW_EMISMATCH,
                       "%s: '%s' is a binary classifier of 1-row inputs, "
                       "not %u classes of %ux%ux%u",
                       path, d->spec, d->n_classes, d->in_shape[0], d->in_shape[1], d->in_shape[2]);
    sw_sparse_model *m = NULL;
    char why[SW_ERR_LEN];
    int rc = sw_sparse_model_new(&m, d->spec, d->in_shape[0], why);
    if (rc)
        rc = sw_fail(err, SW_EMISMATCH, "%s: the stored model is not valid: %s", path, why);
    else if (sw_sparse_model_n_params(m) != c->n_params)
        rc = sw_fail(err, SW_EMISMATCH,
                     "%s: %zu parameters stored for '%s' on %u features, "
                     "which has %zu",
                     path, c->n_params, d->spec, d->in_shape[0], sw_sparse_model_n_params(m));
    sw_sparse_model_free(m);
    return rc;
}

/* The parameters must fit the architecture they claim, or they would be read as another model. */
static int check_arch(const sw_ckpt *c, const char *path, char *err)
{
    if (!strcmp(c->desc.spec, SW_CKPT_SLICE))
        return 0;
    if (sw_sparse_is_model(c->desc.spec))
        return check_sparse(c, path, err);
    sw__arch *a = malloc(sizeof *a);
    if (!a)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    char why[SW_ERR_LEN];
    int rc =
        sw__arch_build(a, c->desc.spec, c->desc.in_shape, sw_model_desc_outputs(&c->desc), why);
    if (rc)
        rc = sw_fail(err, SW_EMISMATCH, "%s: the stored model is not valid: %s", path, why);
    else if (a->n_params != c->n_params)
        rc = sw_fail(err, SW_EMISMATCH, "%s: %zu parameters stored for '%s', which has %zu", path,
                     c->n_params, c->desc.spec, a->n_params);
    free(a);
    return rc;
}

int sw_ckpt_load(const char *path, sw_ckpt *out, char *err)
{
    memset(out, 0, sizeof *out);
    uint8_t *b = NULL;
    size_t len = 0, off = 0;
    uint32_t version = 0;
    int rc = sw_file_read_all(path, (size_t)1 << 40, &b, &len, err);
    if (rc)
        return rc;
    if (!(rc = decode_header(b, len, out, &off, &version, path, err)))
        rc = check_arch(out, path, err);
    if (!rc && version >= 2)
        rc = decode_optimizer(b, len, out, off + 4 * out->n_params, path, err);
    if (!rc && !(out->params = malloc((out->n_params ? out->n_params : 1) * sizeof(float))))
        rc = sw_fail(err, SW_ENOMEM, "%s: out of memory for parameters", path);
    for (size_t i = 0; !rc && i < out->n_params; i++) {
        out->params[i] = sw_get_f32(b + off + 4 * i);
        if (!isfinite(out->params[i]))
            rc = sw_fail(err, SW_EFORMAT, "%s: parameter %zu is not finite", path, i);
    }
    free(b);
    if (rc)
        sw_ckpt_free(out);
    return rc;
}

/* The state arrays lie one after the other, n_params floats each: m, then u. */
int sw_ckpt_put_optim(sw_ckpt *c, const sw_optim *o, char *err)
{
    sw_optim_format(&o->p, c->optimizer);
    c->optim_steps = o->steps;
    c->optim_arrays = o->m ? sw_optim_arrays(&o->p) : 0;
    c->optim_state = NULL;
    if (!c->optim_arrays)
        return 0;
    size_t n = c->n_params;
    if (!(c->optim_state = malloc(c->optim_arrays * (n ? n : 1) * sizeof *c->optim_state)))
        return sw_fail(err, SW_ENOMEM, "out of memory for a checkpoint of the optimizer");
    memcpy(c->optim_state, o->m, n * sizeof *o->m);
    if (o->u)
        memcpy(c->optim_state + n, o->u, n * sizeof *o->u);
    return 0;
}

int sw_ckpt_take_optim(const sw_ckpt *c, const sw_optim_params *p, sw_optim *o, char *err)
{
    char want[SW_OPTIM_SPEC_LEN];
    sw_optim_format(p, want);
    if (strcmp(c->optimizer[0] ? c->optimizer : "sgd", want) != 0 ||
        c->optim_arrays != sw_optim_arrays(p))
        return 1;
    int rc = sw_optim_init(o, p, c->n_params, err);
    if (rc || !o->m)
        return rc;
    memcpy(o->m, c->optim_state, c->n_params * sizeof *o->m);
    if (o->u)
        memcpy(o->u, c->optim_state + c->n_params, c->n_params * sizeof *o->u);
    o->steps = c->optim_steps;
    return 0;
}

void sw_ckpt_free(sw_ckpt *c)
{
    free(c->params);
    free(c->optim_state);
    c->params = NULL;
    c->optim_state = NULL;
    c->n_params = 0;
    c->optim_arrays = 0;
}
