/* Server shards: the parameters cut into chunks held by several processes (the data plane),
 * under the one engine of the server (the control plane).
 *
 * The chunk table. The n parameters are cut into chunks of `chunk` floats (by the rule of
 * syncwise/placement.h: 1 MiB at most; the last chunk may be shorter), and shard j holds the
 * run of chunks [first[j], first[j + 1]): contiguous, so that a shard's slice of a gradient or
 * of θ is one range of the vector, sent without gathering, and balanced to within one chunk.
 * The table is published as text ("chunk=C\nfirst=0,3,6\n") in the server's WELCOME and in a
 * shard's INIT, and read back with every rule checked: every parameter in exactly one chunk,
 * every chunk on exactly one shard, every shard holding at least one chunk.
 */
#ifndef SYNCWISE_SHARD_H
#define SYNCWISE_SHARD_H

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "syncwise/err.h"
#include "syncwise/placement.h"
#include "syncwise/stop.h"
#include "syncwise/transport.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most shards a run may have: it bounds the tables and the WELCOME text (every shard's
 * endpoint), not the protocol, whose sets of shards are as wide as the run needs. */
#define SW_SHARDS_MAX 256
static_assert(SW_AGENT_SOCKS >= SW_SHARDS_MAX + 2,
               "a sharded server's agent waits on every shard, its listener and its operators");

typedef struct sw_chunk_table {
    size_t n_params, chunk;   /* floats in all, and per chunk */
    uint32_t n_chunks, n_shards;
    uint32_t first[SW_SHARDS_MAX + 1]; /* shard j: chunks [first[j], first[j + 1]) */
} sw_chunk_table;

/* The table of n_params floats over n_shards shards with chunks of at most chunk_floats (0: the
 * default). A model too small for n_shards chunks of that size gets smaller chunks, so that
 * every shard holds one. Fails (SW_EINVAL) on no parameters, no shards, more shards than
 * SW_SHARDS_MAX, or more shards than parameters. */
int sw_chunk_table_init(sw_chunk_table *t, size_t n_params, size_t chunk_floats,
                        uint32_t n_shards, char *err);

/* Shard j's slice: its first float and how many it holds. */
size_t sw_chunk_slice_at(const sw_chunk_table *t, uint32_t shard);
size_t sw_chunk_slice_len(const sw_chunk_table *t, uint32_t shard);
/* The shard holding parameter i (< n_params). */
uint32_t sw_chunk_shard_of(const sw_chunk_table *t, size_t i);

/* The table as text lines "chunk=C\nfirst=F0,F1,...\n" into out (cap bytes); the length, or
 * -1 when it does not fit. */
int sw_chunk_table_format(const sw_chunk_table *t, char *out, size_t cap);
/* Reads the lines chunk= and first= from text (other lines are ignored) into the table of
 * n_params floats over n_shards: fails (SW_EFORMAT) saying which rule a table breaks. */
int sw_chunk_table_parse(sw_chunk_table *t, const char *text, size_t n_params, uint32_t n_shards,
                         char *err);

/* The shards' endpoints, a comma-separated list ending at the string's end or a newline (as
 * `--shards` and WELCOME's shards= line give it), into eps: fails (SW_EINVAL) on an empty item,
 * one longer than SW_SHARD_EP_LEN - 1, or more than SW_SHARDS_MAX. */
#define SW_SHARD_EP_LEN 256
int sw_shard_list_parse(const char *list, char (*eps)[SW_SHARD_EP_LEN], uint32_t *n, char *err);

/* ---- A shard ---------------------------------------------------------------------------
 *
 * A shard holds one slice of θ and applies to it what the server's engine decided, so that
 * every shard holds the same version. It learns the run from the first server that sends it
 * SHARD_INIT (whose connection alone may then send server messages), then its slice (SET), the
 * members and their tokens (MEMBER). A worker pushes its slice of each gradient (PUSH, with its
 * token and a sequence number; a sparse gradient's pairs in the slice with PUSH_SPARSE, to the
 * shards it touches only); the shard keeps it and tells the server it has it (PUSHED, with the
 * slice's squared norm), and after each apply the squared norm of its slice of the sum
 * (APPLIED). The server's APPLY names which kept gradients form the next
 * version, in the order the engine added them, so every shard sums the same gradients in the
 * same order and steps the same optimizer; DROPPED orders forget gradients the policy refused.
 * A PULL is answered with the slice (or a sparse step's values at the indices it names) as soon
 * as the shard holds the version it asks for. Every
 * frame is checked as the server checks its own; a refused one is counted and answered with
 * ERROR, and the shard serves everyone else.
 *
 * Recovery. The server pings every shard (PING, answered by STATE: version, newest
 * checkpoint, byte counts), and orders them all to checkpoint at one version (SAVE), in the
 * stream of its orders, so that every shard saves the same version. A shard killed and started
 * again with --resume loads its checkpoint and answers the pings saying so; the server then
 * rolls every shard back to the newest checkpoint all of them hold, that one or the one before
 * it (RESTORE: the version counter goes on, the applies since the checkpoint are lost) and names the pushes whose slices the dead shard held, which
 * count as zero there. Workers' messages that reach a resumed shard before its RESTORE wait and
 * are handled after it. */
typedef struct sw_shard_params {
    const char *bind;          /* e.g. "tcp://127.0.0.1:5600"; port "*" picks a free one */
    const char *endpoint_file; /* when set, the bound endpoint is written there */
    /* Where the slice is checkpointed when the server says (SHARD_SAVE; the one before is kept
     * as FILE.prev), or NULL: the shard then refuses to save, and cannot be resumed. */
    const char *checkpoint;
    /* Start from the checkpoint (FILE, or FILE.prev when FILE is missing): the shard rejoins
     * its run when the server, which pings it, answers with RESTORE. */
    bool resume;
    /* CURVE (ZeroMQ): the server's key pair file, which the shards share so that workers and
     * the server know every shard by the server's public key, and the public keys of the
     * workers admitted (the server's --curve-clients). The server, dialling with that same
     * key pair, is the only connection whose orders a shard takes. NULL: no CURVE. */
    const char *curve_key, *curve_clients;
    /* The largest frame a shard reads, in bytes (0: the protocol's 2 GiB, or for a resumed
     * shard its run's largest message, known from its checkpoint). ZeroMQ drops a larger one as
     * it arrives, before reading it whole, and closes that connection; a shard started afresh
     * binds before it knows its slice, and cannot set that limit itself. A run whose messages to
     * this shard could be larger is refused at INIT (or at --resume) with the size it needs. */
    uint64_t max_frame;
    /* Threads that share each apply of the slice (1 or 0: the shard's own only), each on its
     * part of at least SW_SHARD_PART_MIN floats: an apply is memory-bound, and a slice of four
     * million floats applied 1.6-2.0x as fast on two idle cores. θ gets the same bits; the
     * squared norm a WANT_NORMS apply reports is summed part by part, and may round otherwise. */
    uint32_t apply_threads;
    /* How long the shard's run may go without a word from its server (which pings every
     * 0.25 s) before the shard gives the run up and ends, saying whether a resume can go on
     * from its checkpoint; 0: for ever. A resumed shard's wait counts from its start: a
     * server that never comes (its --resume refused, say) would otherwise leave it, and a
     * launcher's job, waiting for ever; its checkpoint stays. A shard started afresh holds no
     * run before its INIT, and waits for one for ever. A shard that refused a well-formed
     * INIT (a run it cannot serve: --max-frame, --checkpoint) ends once that INIT's sender has
     * been silent 2 s (this, if shorter; never for 0): the run's end may be lost with a link
     * ZeroMQ closed. A malformed INIT is no server's and arms nothing; under plain TCP a
     * stranger's well-formed one so ends a shard whose server comes later than that (under
     * CURVE only the server's key may send one). */
    double server_timeout_s;
    const sw_stop_flag *stop;
} sw_shard_params;

/* The least floats a part of an apply takes: below it a thread's wake-up (tens of us) costs
 * more than it saves (bench/shard_apply_bench.c: 256k floats in two parts, 0.7-0.8x). */
#define SW_SHARD_PART_MIN 262144
#define SW_SHARD_PART_MIN_TEXT "262144" /* for --help; shard_test.c checks they agree */
/* The most threads a shard's apply is cut for. */
#define SW_SHARD_THREADS_MAX 64

typedef struct sw_shard_result {
    uint64_t version, applies, pushes, pulls, refused, saves, restores;
    uint64_t early; /* workers' pushes and pulls before the run's slice came: asked again */
    uint64_t bytes_in, bytes_out;
    bool done; /* the server ended the run */
    bool in_run; /* a server had configured it, and the run was not over */
    bool server_heard; /* its run's server spoke to it (false: a resumed shard's, not yet) */
    uint64_t saved; /* its newest checkpoint's version, SW_SHARD_NONE before one */
    char failed[SW_ERR_LEN + 64]; /* why the run failed, as the server said when it ended it; "": it did not */
} sw_shard_result;

/* No checkpoint yet (SHARD_STATE's newest checkpoint). */
#define SW_SHARD_NONE UINT64_MAX

typedef struct sw_shard sw_shard;

/* A shard as an agent of the caller's loop on `net` (p, r and net borrowed until sw_shard_end),
 * bound to p->bind. Fails with a message when it cannot bind. */
int sw_shard_new(sw_shard **out, sw_net *net, const sw_shard_params *p, sw_shard_result *r,
                 char *err);
sw_agent *sw_shard_agent(sw_shard *h);
const char *sw_shard_endpoint(const sw_shard *h);
void sw_shard_end(sw_shard *h); /* closes and frees it */
/* Runs a shard on ZeroMQ until the server ends the run or *stop. */
int sw_shard_run(const sw_shard_params *p, sw_shard_result *r, char *err);

#ifdef __cplusplus
}
#endif

#endif
