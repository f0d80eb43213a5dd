/* RL policy files: encoding, atomic writing and validated reading. The layout (little-endian):
 *
 *   0   "SWRL"                 magic
 *   4   u32 format version     SW_RL_FILE_VERSION
 *   8   u32 feature layout, f32 steps unit, f32 loss-change scale, f32 loss-change clip
 *   24  u32 history, u32 tuple size, u32 actions
 *   36  u32 replay, u32 mini-batch, u32 copy interval
 *   48  f32 gamma, f32 epsilon, f32 learning rate
 *   60  u64 weights
 *   68  u64 pre-training runs done, u64 episodes done (format 2; format 1 goes on at 68)
 *   84  u32 length + Q-network spec, u32 length + note, weights as f32
 *   end u32 CRC-32 (zlib) of every byte before it
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "syncwise/bytes.h"
#include "syncwise/err.h"
#include "syncwise/file.h"
#include "syncwise/rl.h"

#define SW_RL_FILE_VERSION 2
#define FIXED_V1 68 /* format 1 had no progress: the shipped rlp.swrl is of it, still read */
#define FIXED 84
#define MAX_FILE ((size_t)1 << 30)

static const uint8_t MAGIC[4] = {'S', 'W', 'R', 'L'};

static uint8_t *put_text(uint8_t *p, const char *s)
{
    size_t n = strlen(s);
    sw_put_u32(p, (uint32_t)n);
    memcpy(p + 4, s, n);
    return p + 4 + n;
}

int sw_rl_policy_save(const char *path, const sw_rl_policy *pol, char *err)
{
    const sw_rl_hparams *hp = &pol->hp;
    size_t n = FIXED + 4 + strlen(hp->qnet) + 4 + strlen(pol->note) + 4 * pol->n_weights + 4;
    uint8_t *b = malloc(n), *p = b;
    if (!b)
        return sw_fail(err, SW_ENOMEM, "out of memory for a %zu-byte policy file", n);
    memcpy(p, MAGIC, 4);
    sw_put_u32(p + 4, SW_RL_FILE_VERSION);
    sw_put_u32(p + 8, hp->layout);
    sw_put_f32(p + 12, (float)SW_RL_STEPS_UNIT);
    sw_put_f32(p + 16, (float)SW_RL_DLOSS_SCALE);
    sw_put_f32(p + 20, (float)SW_RL_DLOSS_CLIP);
    const uint32_t u[] = {hp->history, sw_rl_tuple(hp->layout), SW_RL_ACTIONS,
                          hp->replay,  hp->minibatch, hp->copy_every};
    for (int i = 0; i < 6; i++)
        sw_put_u32(p + 24 + 4 * i, u[i]);
    sw_put_f32(p + 48, hp->gamma);
    sw_put_f32(p + 52, hp->epsilon);
    sw_put_f32(p + 56, hp->lr);
    sw_put_u64(p + 60, pol->n_weights);
    sw_put_u64(p + 68, pol->pre_runs);
    sw_put_u64(p + 76, pol->episodes);
    p = put_text(p + FIXED, hp->qnet);
    p = put_text(p, pol->note);
    for (size_t i = 0; i < pol->n_weights; i++, p += 4)
        sw_put_f32(p, pol->weights[i]);
    sw_put_u32(p, sw_crc32(0, b, (size_t)(p - b)));
    int rc = sw_file_write_atomic(path, b, n, "policy", err);
    free(b);
    return rc;
}

/* Magic, version, checksum and the feature layout: what makes a file readable by this build. */
static int check_envelope(const uint8_t *b, size_t len, const char *path, char *err)
{
    if (len < FIXED_V1 + 12 || memcmp(b, MAGIC, 4) != 0)
        return sw_fail(err, SW_EFORMAT, "%s: not a syncwise RL policy (bad magic or too short)",
                       path);
    uint32_t version = sw_get_u32(b + 4);
    if (version != 1 && (version != SW_RL_FILE_VERSION || len < FIXED + 12))
        return sw_fail(err, SW_EVERSION, "%s: policy format version %u (this build reads 1 to %d)",
                       path, version, SW_RL_FILE_VERSION);
    uint32_t stored = sw_get_u32(b + len - 4), actual = sw_crc32(0, b, len - 4);
    if (stored != actual)
        return sw_fail(err, SW_ECHECKSUM,
                       "%s: checksum mismatch (stored %08x, computed %08x): the file is corrupt",
                       path, stored, actual);
    uint32_t tuple = sw_rl_tuple(sw_get_u32(b + 8));
    if (!tuple || sw_get_f32(b + 12) != (float)SW_RL_STEPS_UNIT ||
        sw_get_f32(b + 16) != (float)SW_RL_DLOSS_SCALE ||
        sw_get_f32(b + 20) != (float)SW_RL_DLOSS_CLIP || sw_get_u32(b + 28) != tuple ||
        sw_get_u32(b + 32) != SW_RL_ACTIONS)
        return sw_fail(err, SW_EFORMAT,
                       "%s: the policy was trained on other state features "
                       "or actions than this build computes",
                       path);
    return 0;
}

static int decode(const uint8_t *b, size_t len, sw_rl_policy *out, const char *path, char *err)
{
    int rc = check_envelope(b, len, path, err);
    if (rc)
        return rc;
    sw_rl_hparams *hp = &out->hp;
    hp->layout = sw_get_u32(b + 8);
    hp->history = sw_get_u32(b + 24);
    hp->replay = sw_get_u32(b + 36);
    hp->minibatch = sw_get_u32(b + 40);
    hp->copy_every = sw_get_u32(b + 44);
    hp->gamma = sw_get_f32(b + 48);
    hp->epsilon = sw_get_f32(b + 52);
    hp->lr = sw_get_f32(b + 56);
    uint64_t n = sw_get_u64(b + 60);
    size_t off = FIXED_V1;
    if ((out->has_progress = sw_get_u32(b + 4) >= 2)) {
        out->pre_runs = sw_get_u64(b + 68);
        out->episodes = sw_get_u64(b + 76);
        off = FIXED;
    }
    if ((rc = sw_get_text(b, len - 4, &off, hp->qnet, sizeof hp->qnet, 1, "Q-network spec", path,
                          err)) ||
        (rc = sw_get_text(b, len - 4, &off, out->note, sizeof out->note, 0, "note", path, err)))
        return rc;
    char why[SW_ERR_LEN];
    if (sw_rl_check_hparams(hp, why))
        return sw_fail(err, SW_EFORMAT, "%s: %s", path, why);
    if (n > (len - 4 - off) / 4 || off + 4 * n != len - 4)
        return sw_fail(err, SW_EFORMAT, "%s: %llu weights do not fill the %zu bytes left", path,
                       (unsigned long long)n, len - 4 - off);
    if (!(out->weights = malloc((n ? n : 1) * sizeof(float))))
        return sw_fail(err, SW_ENOMEM, "%s: out of memory", path);
    out->n_weights = (size_t)n;
    for (size_t i = 0; i < n; i++) {
        out->weights[i] = sw_get_f32(b + off + 4 * i);
        if (!isfinite(out->weights[i]))
            return sw_fail(err, SW_EFORMAT, "%s: weight %zu is not finite", path, i);
    }
    return 0;
}

/* The weights must fit the network the file names, or they would be read as another one. */
static int check_fit(const sw_rl_policy *p, const char *path, char *err)
{
    sw_rl_agent *a;
    char why[SW_ERR_LEN];
    if (sw_rl_agent_new(&a, &p->hp, p->weights, p->n_weights, 1, why))
        return sw_fail(err, SW_EFORMAT, "%s: %s", path, why);
    sw_rl_agent_free(a);
    return 0;
}

int sw_rl_policy_load(const char *path, sw_rl_policy *out, char *err)
{
    memset(out, 0, sizeof *out);
    uint8_t *b = NULL;
    size_t len = 0;
    int rc = sw_file_read_all(path, MAX_FILE, &b, &len, err);
    if (rc)
        return rc;
    rc = decode(b, len, out, path, err);
    free(b);
    if (!rc)
        rc = check_fit(out, path, err);
    if (rc)
        sw_rl_policy_free(out);
    return rc;
}

void sw_rl_policy_free(sw_rl_policy *p)
{
    free(p->weights);
    p->weights = NULL;
    p->n_weights = 0;
}

static bool readable(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f)
        fclose(f);
    return f != NULL;
}

#ifdef SW_RLP_FROM_BIN
static char beside_program[4096];

/* The installed copy relative to the running program (bin/../share/syncwise/rlp.swrl), so that
 * an install under any prefix finds its own copy; empty when there is none. */
static void find_beside_program(void)
{
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return;
    *slash = '\0';
    char path[sizeof beside_program];
    if (snprintf(path, sizeof path, "%s/%s", exe, SW_RLP_FROM_BIN) < (int)sizeof path &&
        readable(path))
        memcpy(beside_program, path, sizeof path);
}
#endif

const char *sw_rl_default_policy_path(void)
{
#ifdef SW_RLP_FROM_BIN
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, find_beside_program);
    if (beside_program[0])
        return beside_program;
#endif
#ifdef SW_RLP_INSTALLED
    if (readable(SW_RLP_INSTALLED))
        return SW_RLP_INSTALLED;
#endif
#ifdef SW_RLP_SOURCE
    return SW_RLP_SOURCE;
#else
    return "policies/rlp.swrl";
#endif
}

void sw_rl_shipped_path(const char *name, char *out, size_t cap)
{
    const char *rlp = sw_rl_default_policy_path(), *slash = strrchr(rlp, '/');
    int dir = slash ? (int)(slash - rlp + 1) : 0;
    snprintf(out, cap, "%.*s%s", dir, rlp, name);
}
