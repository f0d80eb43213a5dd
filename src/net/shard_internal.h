/* A server shard's state and the helpers its parts share: shard.c serves the run (its
 * messages, members and turns), shard_apply.c its pushes and applies, shard_pull.c its pulls,
 * shard_recover.c keeps it recoverable (checkpoints, pings, a resume from the checkpoint and the
 * server's RESTORE). */
#ifndef SW_NET_SHARD_INTERNAL_H
#define SW_NET_SHARD_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "syncwise/ckpt.h"
#include "syncwise/err.h"
#include "syncwise/optim.h"
#include "syncwise/proto.h"
#include "syncwise/shard.h"
#include "batch.h"
#include "lend.h"
#include "shard_set.h"

/* A shard that refused its run ends once that run's server has been silent this long (it pings
 * 4 times a second), or --server-timeout if shorter: its end of the run may be lost. */
#define SW_SHARD_REFUSED_SILENCE_S 2.0

/* A gradient slice a worker pushed, kept until an APPLY uses it or a DROPPED order forgets it.
 * Dense: read where it landed, in the frame that brought it (held by reference), or copied out
 * when the host cannot read it in place. Sparse: its values and their places in the slice,
 * copied out (one allocation). */
typedef struct sw__held {
    uint32_t worker;
    uint64_t token, seq; /* the membership it came from, and its number there */
    const float *g;      /* the slice, or a sparse push's values; NULL: a free entry */
    const uint32_t *idx; /* sparse: the values' places in the slice, ascending; NULL: dense */
    size_t nnz;
    sw_shard_set shards; /* the shards the push went to, as its report said */
    double sq;           /* its squared norm, when measured (DBW's), */
    bool measured;       /* which it is once reported under a policy that reads norms */
    sw_frame *frame;
    float *copy;
} sw__held;

/* Where a member's messages come from: the connection of its last push or pull, to which a
 * slice the server orders sent (SHARD_SEND) goes. len 0: none yet in this membership. */
typedef struct sw__route {
    uint8_t bytes[SW_ROUTE_MAX];
    size_t len;
} sw__route;

/* A PULL of a version the shard does not hold yet: of the whole slice, or of the k places in it
 * a sparse step reads. */
typedef struct sw__waiting {
    uint8_t route[SW_ROUTE_MAX];
    size_t route_len;
    uint32_t worker;
    uint64_t min;
    uint32_t *idx;
    size_t k;
} sw__waiting;

struct sw_shard {
    const sw_shard_params *p;
    int ckpt_lock; /* the lock that claims --checkpoint (sw_file_claim), or -1 */
    bool lock_made; /* this process made --checkpoint's lock file (sw_file_release_claim) */
    int ep_lock;    /* the lock that claims --endpoint-file, or -1: one file, one process */
    sw_shard_result *r;
    sw_net *net;
    sw_sock *sock;
    sw_agent agent;
    /* The server: the route of the first SHARD_INIT (or of the RESTORE a resume awaited). */
    uint8_t server[SW_ROUTE_MAX];
    size_t server_len;
    bool configured, ready; /* INIT came (or a checkpoint said it); θ holds the run's values */
    bool awaiting;          /* resumed from its checkpoint: nothing is served until RESTORE */
    bool unchecked;         /* payloads without checksums, as the run agreed */
    bool norms_wanted;      /* the last apply asked for norms (WANT_NORMS): the policy reads
                             * them, and a push's is measured once it is reported */
    bool checkpointed;      /* the run keeps checkpoints (INIT's checkpoints=on) */
    double now, heard;      /* the loop's time this turn, and of the server's last word
                             * (-INFINITY: none yet) */
    /* Why this shard refused the INIT it got ("": none refused): what it answers the server's
     * next orders with, since the refusal itself may be lost with a connection ZeroMQ closed
     * (a SET over --max-frame), and what it fails with when that run ends. */
    char refused_run[SW_ERR_LEN + 64];
    /* The route of the first server whose run's orders this shard refused while it served no
     * run (sw__shard_refuse_run; 0 long: none): a shard holding none ends when that run does;
     * a resumed one says so, once. */
    uint8_t refused_server[SW_ROUTE_MAX];
    size_t refused_server_len;
    char config[SW_CKPT_NOTE_LEN]; /* INIT's text, kept in checkpoints */
    /* --checkpoint as the file it names in the end (sw_file_final_name): FILE.prev goes beside
     * it, not beside a link to it, which a rotation would rename away. */
    char ckpt[4096];
    uint64_t run;           /* the run's id, from INIT */
    uint32_t index, slots;
    sw_chunk_table table;
    size_t len;             /* floats in the slice */
    /* θ lives in the lender's buffers and a full pull is sent from where it lies (lend.h):
     * whoever writes θ first asks sw__shard_theta_writable. */
    float *theta, *sum;
    sw__lender lender;
    /* The last whole slice sent, at slice_version and restore mark slice_mark: every puller of
     * that version gets this one frame (its worker id SW_NO_WORKER), checksummed once; let go
     * before θ is next written. NULL: none. */
    sw_frame *slice;
    uint64_t slice_version, slice_mark;
    sw_optim_params optim;
    sw_optim opt;           /* momentum or Adam on the slice; opt.m NULL for plain SGD */
    float wd;
    uint64_t version;
    uint64_t saved;         /* the newest checkpoint's version, SW_SHARD_NONE before one */
    uint64_t saved_before;  /* the version FILE.prev holds, SW_SHARD_NONE when none */
    uint64_t unable_no;     /* the number of the last RESTORE it could not take (0: none) */
    uint64_t restore_no;    /* the number of the last RESTORE taken (0: none) */
    uint64_t restored_at;   /* the number of the last RESTORE taken (0: none), which marks every
                             * SLICE: a server numbers its restores upwards, and two of them may
                             * go on as one version (one a shard could not take, then an older
                             * one), so the version could not tell their slices apart */
    uint64_t *tokens;       /* per worker slot: its membership's token, 0 when not a member */
    uint64_t *next_seq;     /* per slot: the least sequence number the member may push next
                             * (a worker numbers its pushes upwards: a replay is refused) */
    sw__route *routes;      /* per slot: where its member's messages come from */
    sw__held *held;
    size_t n_held;
    struct sw_team *team;   /* --apply-threads beyond the shard's own, or NULL */
    const sw__held **applying; /* an apply's gradients held here, in its order */
    uint32_t cap_applying;
    uint8_t *lost;          /* the last RESTORE's entries: slices that may be gone */
    uint32_t n_lost;
    sw__waiting *pulls;
    size_t n_pulls;
    sw_delivery *stash;     /* workers' messages that came before a resumed shard's RESTORE */
    size_t n_stash;
    sw_frame *body; /* the frame being handled */
    sw__batch to_server; /* what the server is told in a turn, sent at its end (batch.h) */
};

/* One apply's arithmetic (shard_step.c), cut into parts a team of threads may take: each part
 * sums the gradients over its range of the slice in the order named, takes that range's share
 * of the norms the order may ask for, and steps θ there, each coordinate as one thread would. */
typedef struct sw__apply_plan {
    const sw__held *const *g; /* the named gradients held here, in order (lost ones left out) */
    uint32_t n_g;
    const float *lone;        /* a lone dense gradient: its own sum, uncopied; or NULL */
    float *theta, *sum;
    size_t len;
    const sw_optim *opt;      /* momentum or Adam; NULL: plain SGD */
    uint64_t step;            /* the optimizer's step number (sw_optim_step_range) */
    float lr, wd;
    uint32_t n;               /* gradients the order named: the mean's divisor */
    bool want_sq;             /* the order asked for norms (WANT_NORMS) */
    double sq[SW_SHARD_THREADS_MAX];   /* each part's share of the sum's squared norm, */
    double each[SW_SHARD_THREADS_MAX]; /* and of the sum of the gradients' squared norms */
} sw__apply_plan;

/* Part `part` of `parts` of the plan (a sw_team_fn). */
void sw__shard_apply_part(void *plan, uint32_t part, uint32_t parts);

typedef struct sw__from {
    const uint8_t *route;
    size_t route_len;
} sw__from;

/* Why a shard started again without --resume refuses the orders of the run it was in. */
#define SW__SHARD_NO_RUN                                                                         \
    SW_SHARD_NO_RUN_HEAD " (it started afresh): to rejoin a run that keeps checkpoints, start "  \
    "it with --checkpoint FILE --resume; a run without them lost this shard's slice, and must "  \
    "start over"

/* Orders a shard refuses for being out of step with them: it missed one before (lost with a
 * connection the network broke, ZeroMQ having kept the ones after). Its ERROR says so with
 * SW_FLAG_DROPPED, and the server, which restores every shard at such a break, takes it as
 * moot until the shard has taken that restore. */
#define SW__SHARD_OUT_OF_STEP "an apply of a version that is not the next one"
#define SW__SHARD_NOT_HELD "an apply of a gradient this shard does not hold"

/* Why a shard resumed from its checkpoint refuses another run's orders. */
#define SW__SHARD_RESUMED                                                                        \
    "this shard resumed its run from its checkpoint and waits for that run's server, started "  \
    "again with --checkpoint FILE --resume: to serve a new run, start it without --resume; to "  \
    "rejoin this server's run, give it the checkpoint this run saved (its --checkpoint FILE is " \
    "of another run)"

/* The flags every payload on this run's links carries. */
static inline uint32_t sw__shard_link_flags(const struct sw_shard *h)
{
    return h->unchecked ? SW_FLAG_UNCHECKED : 0;
}

/* shard.c: sending (to the server by way of the turn's batch), refusing (SW_FLAG_UNKNOWN in
 * flags: not a member, yet), who may say what, the run's configuration. */
void sw__shard_send(struct sw_shard *h, const sw__from *to, sw_msg_type type, uint32_t worker,
                    uint32_t flags, uint64_t version, const void *payload, size_t len);
void sw__shard_send_frame(struct sw_shard *h, const sw__from *to, sw_frame *f);
void sw__shard_refuse(struct sw_shard *h, const sw__from *to, const sw_msg *m, const char *why);
void sw__shard_refuse_flagged(struct sw_shard *h, const sw__from *to, const sw_msg *m,
                              uint32_t flags, const char *why);
/* A worker's push or pull before the shard holds its slice, told UNKNOWN and counted as early:
 * true; false when the shard holds it. */
bool sw__shard_too_early(struct sw_shard *h, const sw__from *to, const sw_msg *m);
/* An order only the server gives, refused: flagged DROPPED when it came from a route other than
 * our server's (a restarted server's, its RESTORE yet to come, takes that as moot). */
void sw__shard_refuse_order(struct sw_shard *h, const sw__from *to, const sw_msg *m,
                            const char *why);
/* A server's order of a run this shard cannot serve (it holds no run, or waits for its own
 * run's server), refused, its sender remembered (refused_server). */
void sw__shard_refuse_run(struct sw_shard *h, const sw__from *to, const sw_msg *m,
                          const char *why);
bool sw__shard_is_server(const struct sw_shard *h, const sw__from *f);
/* A worker's message: a member's id and its token, read from the payload's first 8 bytes. */
bool sw__shard_is_member(const struct sw_shard *h, const sw_msg *m);
/* A member's message came by f: where the slices the server orders sent to it go. */
void sw__shard_note_route(struct sw_shard *h, uint32_t w, const sw__from *f);
/* Slot w's membership token (0: none); a new one may number its pushes from 0. */
void sw__shard_set_token(struct sw_shard *h, uint32_t w, uint64_t token);
void sw__shard_take(struct sw_shard *h, const sw_delivery *d);

/* shard_init.c: the run INIT describes (or a checkpoint kept) taken on; the INIT and SET
 * handlers; the largest payload of the run's messages (its table, slice and slots known). */
int sw__shard_configure(struct sw_shard *h, const char *text, char *err);
void sw__shard_on_init(struct sw_shard *h, const sw__from *f, const sw_msg *m);
void sw__shard_on_set(struct sw_shard *h, const sw__from *f, const sw_msg *m);
uint64_t sw__shard_run_payload(const struct sw_shard *h);

/* shard_pull.c: the PULL and SEND handlers; the pulls waiting for the version the shard now holds,
 * answered; worker w's waiting pull forgotten (SW_NO_WORKER: the server's). */
void sw__shard_on_pull(struct sw_shard *h, const sw__from *f, const sw_msg *m);
void sw__shard_on_send(struct sw_shard *h, const sw__from *f, const sw_msg *m);
void sw__shard_answer_waiting(struct sw_shard *h);
void sw__shard_forget_pull(struct sw_shard *h, uint32_t w);
/* θ, writable: where it lies unless a frame still reads it, else a copy of it (lend.h); `keep`
 * false when every value is about to be overwritten. Drops the slice frame kept for pullers. */
float *sw__shard_theta_writable(struct sw_shard *h, bool keep);

/* shard_apply.c: the handlers of PUSH, PUSH_SPARSE and APPLY; a kept gradient let go; entries
 * checked; whether k ascending global indices below the slice's end start in it. */
void sw__shard_on_push(struct sw_shard *h, const sw__from *f, const sw_msg *m);
void sw__shard_on_push_sparse(struct sw_shard *h, const sw__from *f, const sw_msg *m);
void sw__shard_on_apply(struct sw_shard *h, const sw__from *f, const sw_msg *m);
void sw__shard_let_go(sw__held *e);
/* Whether n APPLY or RESTORE entries name only the run's shards. */
bool sw__shard_entries_ok(const struct sw_shard *h, const uint8_t *entries, uint32_t n);
bool sw__shard_in_slice(const struct sw_shard *h, const uint32_t *idx, size_t k);

/* shard_recover.c: the handlers of PING, SAVE and RESTORE; a resume at start; what a resumed
 * shard does with messages before its RESTORE (true: taken care of; d, kept for later when it
 * is a worker's, may be NULL for an order of no worker). */
void sw__shard_on_ping(struct sw_shard *h, const sw__from *f, const sw_msg *m);
void sw__shard_on_save(struct sw_shard *h, const sw__from *f, const sw_msg *m);
void sw__shard_on_restore(struct sw_shard *h, const sw__from *f, const sw_msg *m);
/* The shard's goodbye: its state (SHARD_STATE) flagged DONE, the answer to the run's end, which
 * the server tells again until it comes. */
void sw__shard_say_bye(struct sw_shard *h, const sw__from *to);
int sw__shard_resume(struct sw_shard *h, char *err);
/* --checkpoint as the file it names in the end (found once, into h->ckpt), and FILE.prev beside
 * it: a rotation beside a link would rename the link away. */
const char *sw__shard_ckpt_file(struct sw_shard *h);
void sw__shard_prev_path(struct sw_shard *h, char out[4096]);
bool sw__shard_awaits(struct sw_shard *h, const sw_delivery *d, const sw_msg *m);
bool sw__shard_is_lost(const struct sw_shard *h, uint32_t worker, uint64_t token, uint64_t seq);
void sw__shard_free_recovery(struct sw_shard *h);

#endif
