/* The server as the control plane of a sharded run (server --shards, syncwise/shard.h): its
 * engine holds no parameters (n_params 0) and decides on facts; the shards hold θ.
 *
 * A push is counted once every shard has said it holds its slice (SHARD_PUSHED): then the
 * engine decides, and what its log reports becomes orders to every shard, in the one order of
 * the engine's events: a PUSH event puts the push in the order of the next apply, a DROP takes
 * it out again (SHARD_APPLY with DROPPED: forget it), an APPLY sends the order (SHARD_APPLY,
 * the learning rate in force times the apply's scale). Membership goes to the shards as it
 * changes (SHARD_MEMBER), before the worker hears of it. Evaluations gather θ from the shards
 * (SHARD_PULL from the server), and the run ends after a last gather at its final version. */
#ifndef SW_NET_SERVER_SHARDS_H
#define SW_NET_SERVER_SHARDS_H

#include <stdbool.h>
#include <stdint.h>

#include "syncwise/engine.h"
#include "syncwise/proto.h"
#include "syncwise/shard.h"
#include "syncwise/transport.h"
#include "batch.h"
#include "shard_set.h"

/* A push some shards have reported, per worker slot: a worker has one push in flight. */
typedef struct sw__reporting {
    uint64_t token, seq, version;
    sw_shard_set shards; /* the shards that reported it */
    sw_shard_set to;     /* the shards holding a slice of it (a sparse push touches some) */
    uint32_t flags;  /* SW_FLAG_WANT_MODEL, as the slices said */
    uint64_t restore_no; /* the shards' last restore when the first report came */
    bool open;
} sw__reporting;

/* A counted push that waits for the last apply's norms before the engine decides on it. */
typedef struct sw__held {
    uint32_t worker;
    sw__reporting push;
} sw__held;

/* An apply's norms as the shards report them (SHARD_APPLIED), for the engine (DBW). */
typedef struct sw__apply_report {
    sw_apply_norms norms; /* sum_sq, sq_norms: the reported slices' sums */
    sw_shard_set shards;  /* the shards that reported it */
} sw__apply_report;

/* Applies whose norms may still be coming: the newest, by version modulo this. */
#define SW_SHARDS_REPORTS 64

/* What a shard last said of itself (SHARD_STATE), and when the server last heard from it. */
typedef struct sw__shard_seen {
    double heard;
    uint64_t version, saved, bytes_in, bytes_out, refused, restores;
    uint64_t restore_no; /* the number of the last RESTORE it took */
    uint64_t saved_before; /* the older checkpoint its FILE.prev holds (SW_SHARD_NONE: none) */
    uint64_t unable_no;    /* the number of the last RESTORE it could not take (0: none) */
    bool answered; /* it has said something */
    bool awaiting;
    bool warned;   /* told the operator it has not answered yet */
    unsigned reconnects; /* the link's breaks seen so far (sw_sock_reconnects) */
} sw__shard_seen;

typedef struct sw__shards {
    uint32_t n; /* 0: not a sharded run */
    /* A shard whose link broke before any push (its reason may be on its way: link_broke),
     * and when; `early_break` false: none. */
    bool early_break;
    uint32_t early_broken;
    double early_break_at;
    char route[32]; /* this process's route, which dial makes each link's of (server_shards.c) */
    sw_chunk_table table;
    char eps[SW_SHARDS_MAX][SW_SHARD_EP_LEN];
    char welcome[SW_SHARDS_MAX * SW_SHARD_EP_LEN + 4096]; /* shards=, chunk=, first= lines */
    sw_sock *socks[SW_SHARDS_MAX];
    sw__reporting *reporting; /* per slot */
    /* The next apply's SHARD_APPLY payload: 8 bytes (lr, n), then its pushes' entries (worker,
     * token, seq, shards; `entry` bytes each), n_order of them (room for cap_order). */
    size_t entry;
    uint8_t *order;
    uint32_t n_order, cap_order;
    uint8_t deciding[20 + 8 * SW_SHARD_SET_WORDS]; /* the push the engine is deciding */
    sw__apply_report reports[SW_SHARDS_REPORTS];
    /* While the policy reads the applies' norms, the engine decides no push before it has the
     * last apply's, as an unsharded engine would (server_shards.c, "Norms"): norms_due names
     * that apply (0: none due), and the pushes counted meanwhile wait in `held`, in the order
     * they came (a ring of twice the slots: a worker has one push in flight, and a slot's old
     * membership may have one beside its new one's). */
    uint64_t norms_due;
    sw__held *held;
    uint32_t held_first, n_held, cap_held;
    uint64_t waited;          /* pushes that waited for norms, for ctl status */
    uint64_t waited_gather;   /* pushes that waited for an evaluation's gather (no norms due) */
    /* The gathered θ, for evaluations: the slices at the version each had. */
    float *theta;
    uint64_t theta_version;   /* the lowest of the slices' versions */
    bool have_theta;
    bool gathering;
    bool ended; /* every shard was told the run is over (sw__shards_end) */
    /* The run's end, told again until each shard that was there says goodbye (a link that
     * broke at the end can lose it, and that shard would wait out its --server-timeout, then
     * fail a run that ended well): why it failed ("" : it did not), the shards still owing a
     * goodbye, and until when the server waits for them (server_shards_end.c). */
    char end_why[SW_ERR_LEN];
    sw_shard_set owe_bye;
    double bye_by;
    sw_shard_set gathered;    /* the shards whose slices are in */
    uint64_t gather_min;      /* the lowest version among the slices in */
    uint64_t gather_max;      /* the highest */
    /* Recovery (server_shards_recover.c). */
    uint64_t run;             /* the run's id: INIT gives it, PING and RESTORE carry it */
    sw__shard_seen seen[SW_SHARDS_MAX];
    double next_ping;
    uint64_t saved;           /* the newest version every shard checkpointed (SW_SHARD_NONE) */
    uint64_t saving;          /* the version being checkpointed */
    sw_shard_set saved_by;    /* the shards that have */
    uint64_t restores;        /* RESTOREs sent by this server */
    uint64_t restore_no;      /* the last one's number (a restarted server's first is random) */
    sw_shard_set restoring;   /* the shards that have not yet taken the last RESTORE */
    double restore_sent;      /* when the last RESTORE was sent (the server's clock) */
    uint64_t restore_from;    /* the checkpoint it went back to (SW_SHARD_NONE: none yet) */
    /* The applies in θ (the version less the applies restores undid) at the last saves, by
     * version: going back to one undoes exactly those since it, however many restores came
     * between (a save after a restore is not as many applies past the one before as their
     * versions say). */
    struct { uint64_t version, kept; } kept_at[4];
    unsigned next_kept;
    uint64_t saving_kept;     /* that count when the save under way was ordered */
    uint64_t lost_applies;    /* applies the restores undid */
    uint64_t restored_at;     /* the version the last restore went on as (0: none) */
    /* The orders of no worker a turn sends every shard, sent as one frame at its end
     * (batch.h); a message to one shard, or of a worker, goes after what is gathered. */
    sw__batch to_all;
    uint32_t skip; /* a shard the batch's flush passes by (its link just broke), or n */
} sw__shards;

/* How long a stopped sharded server waits for the last gather and checkpoint. */
#define SW_SHARDS_LAST_GATHER_S 10.0
/* How often the server pings each shard. */
#define SW_SHARDS_PING_S 0.25
/* A shard silent this long (four pings unanswered) is out: killed, stopped or cut off. */
#define SW_SHARDS_OUT_S 1.0
/* A shard that still says it awaits a RESTORE this long after one was sent lost it: it was
 * started again before it took it (its answers to pings from before the RESTORE come sooner). */
#define SW_SHARDS_RESTORE_LOST_S 2.0

struct sw_server;

/* A sharded run's table, its connections, and the shards set to θ0 at `version` (after
 * sw__shards_check). */
int sw__shards_open(struct sw_server *s, const float *theta0, uint64_t version, char *err);
/* Tells every shard the run is over (`failed`: why it failed, NULL: it did not), once: when the
 * run concludes, or at sw__shards_close if it never got that far. */
void sw__shards_end(struct sw_server *s, const char *failed);
/* Ends the run for every shard (sw__shards_end) and closes. */
void sw__shards_close(struct sw_server *s, const char *failed);
/* After the end: a shard's frame, read only for its goodbye (SHARD_STATE flagged DONE, the
 * answer to the end); the end told again to those still owing one, every SW_SHARDS_PING_S;
 * whether the server still waits for any (at most SW_SHARDS_BYE_S). */
void sw__shards_take_bye(struct sw_server *s, uint32_t j, const sw_delivery *d);
void sw__shards_end_again(struct sw_server *s);
bool sw__shards_byes_due(const struct sw_server *s);
/* How long after the end the server waits for the shards' goodbyes. */
#define SW_SHARDS_BYE_S 2.0
/* Whether the policy spec can run sharded (the facts it wants are there); why not in err. */
int sw__shards_policy_ok(const char *spec, char *err);

/* Worker w's membership: joined with its token, or gone (token 0; its half-reported push
 * dropped). */
void sw__shards_member(struct sw_server *s, uint32_t w, uint64_t token);
/* The orders an engine event calls for (the server's sink). */
void sw__shards_event(struct sw_server *s, const sw_event *ev);
/* What shard j sent. */
void sw__shards_take(struct sw_server *s, uint32_t j, const sw_delivery *d);
/* Asks every shard for its slice at the engine's version (one gather at a time). */
void sw__shards_gather(struct sw_server *s);
/* Shared by server_shards.c, server_shards_decide.c and server_shards_recover.c: a message to
 * shard j or to all (one frame), a push every shard forgets, a push the engine decides on, a
 * shard's failure that ends the run. */
void sw__shards_send_to(struct sw_server *s, uint32_t j, const sw_msg *m, const float *floats);
void sw__shards_send_all(struct sw_server *s, const sw_msg *m);
/* Sends the orders gathered in the turn (the server's turn ends with it). */
void sw__shards_flush(struct sw_server *s);
/* The turn's orders so far to every shard but j, whose link broke before they went: they
 * predate the restore it gets, and it could not take them. */
void sw__shards_flush_but(struct sw_server *s, uint32_t j);
void sw__shards_drop_everywhere(struct sw_server *s, uint32_t w, uint64_t token, uint64_t seq);
void sw__shards_counted(struct sw_server *s, uint32_t w, const sw__reporting *r);
/* The engine decides the pushes that waited for the last apply's norms: they came, or after a
 * restore they never will (a shard lost its part). */
void sw__shards_stop_waiting_for_norms(struct sw_server *s);
/* Whether the engine decides nothing now: the last apply's norms are due, or a gather is on its
 * way (its slices are then all of the version it asked for, and an evaluation that meets the
 * target is of the model the run ends with). The decisions that waited are taken by
 * sw__shards_decide_held once it is not so. */
bool sw__shards_paused(const struct sw_server *s);
void sw__shards_decide_held(struct sw_server *s);
void sw__shards_failed(struct sw_server *s, uint32_t j, const char *what, int len,
                       const char *detail);
/* server_shards_decide.c: shard j holds its slice of a push (SHARD_PUSHED), and its share of
 * an apply's norms (SHARD_APPLIED). */
void sw__shards_reported(struct sw_server *s, uint32_t j, const sw_msg *m);
void sw__shards_measured(struct sw_server *s, uint32_t j, const sw_msg *m);

/* server_shards_recover.c: the pings (and a silent shard's end of the run), what a shard says
 * of itself (SHARD_STATE: a resumed one is restored), and the checkpoints all shards take at
 * one version. */
void sw__shards_keep_alive(struct sw_server *s, double now);
/* A link that broke before the run's first push ends the run once its grace is over (or a
 * push came, or the run concluded), unless the shard's reason ended it first. */
void sw__shards_settle_early_break(struct sw_server *s, double now);
/* Whether shard j's link broke since last looked at (the connection made again): then every
 * shard goes back to the common checkpoint before anything the new connection brings is
 * handled (server_shards_recover.c). */
void sw__shards_notice_break(struct sw_server *s, uint32_t j);
void sw__shards_notice_breaks(struct sw_server *s); /* every shard's */
/* Whether shard j cannot serve the workers now: silent past SW_SHARDS_OUT_S, or resumed and
 * waiting for its restore. Every worker's push and pull needs it until it is back. */
bool sw__shards_out(const struct sw_server *s, uint32_t j);
bool sw__shards_any_out(const struct sw_server *s);
void sw__shards_state(struct sw_server *s, uint32_t j, const sw_msg *m);
/* Orders every shard to checkpoint the engine's version, unless one is under way or done. */
void sw__shards_save(struct sw_server *s);
/* A restarted server's start (server_shards_record.c): the run's id, the version every shard
 * checkpointed and the chunk size their slices were cut by (the table is cut again by it), from
 * the record --checkpoint FILE holds. A start record (version=start) says only the run's id and
 * chunks: the run starts again (resuming turns false), and the shards it configured take its
 * INIT again. */
int sw__shards_read_record(struct sw_server *s, uint64_t *version, char *err);
/* --checkpoint FILE: the record of the version every shard saved, or before any save, of the
 * run's start (written before the first INIT, so that a server killed after it can name the run
 * its shards were configured for). */
int sw__shards_write_record(struct sw_server *s, char *err);
#define SW_SHARDS_START_RECORD "start"
/* A fresh start refused (rc, err) because --checkpoint FILE is not empty: when FILE is the
 * start record of a sharded run that stopped before every shard saved its start, err says how to
 * take that run up again, or start another. rc, as it was. */
int sw__shards_explain_start_record(const char *checkpoint, int rc, char *err);
/* Reads the --shards list and checks what a sharded run cannot do yet: at setup, before the
 * record of a resume (sw__shards_read_record) and sw__shards_open, which take the list. */
int sw__shards_check(struct sw_server *s, char *err);
/* RESTORE to every shard of a restarted server: back to `version`, forgetting every gradient
 * held (no push from before counts), with no members. */
void sw__shards_restart(struct sw_server *s, uint64_t version);

/* ctl status's lines on the shards, appended to text (cap bytes, len used); the new length. */
int sw__shards_status(const struct sw_server *s, char *text, size_t cap, int len);

#endif
