/* A shard's recovery on the in-process network (shard_test_rig.h): the checkpoints the
 * server orders, a RESTORE of one, a shard resumed from its file that waits for its RESTORE,
 * the fallback to the checkpoint before when the newest is damaged, a second RESTORE of the
 * same version during the save after the first, a restarted server's restore, and the end of
 * a run a shard refused, told or its server silent. */
#define _POSIX_C_SOURCE 200809L
#include "shard_internal.h" /* SW_SHARD_REFUSED_SILENCE_S */
#include "shard_test_rig.h"

static char ckpt_dir[64], ckpt_path[96];

static int setup_with_checkpoint(void **state)
{
    snprintf(ckpt_dir, sizeof ckpt_dir, "/tmp/sw_shard_test.XXXXXX");
    assert_non_null(mkdtemp(ckpt_dir));
    snprintf(ckpt_path, sizeof ckpt_path, "%s/slice.ckpt", ckpt_dir);
    int rc = setup(state);
    rig *g = *state;
    g->p.checkpoint = ckpt_path; /* read only when it saves or resumes */
    return rc;
}

static int teardown_with_checkpoint(void **state)
{
    char prev[128];
    snprintf(prev, sizeof prev, "%s.prev", ckpt_path);
    remove(ckpt_path);
    remove(prev);
    rmdir(ckpt_dir);
    return teardown(state);
}

/* The STATE s received next: its version, and payload fields (run, saved, ..., restores taken,
 * awaiting); it names the slice the rig's shard holds (shard 1, its parameters). The last
 * restore's number goes to last_restore_no, FILE.prev's version to last_saved_before, the
 * number of the last restore it could not take to last_unable_no. */
static uint64_t last_restore_no, last_saved_before, last_unable_no;
static uint64_t expect_state(sw_sock *s, uint64_t *saved, uint64_t *restores, uint64_t *awaiting)
{
    sw_msg m;
    uint8_t pay[SW_SHARD_STATE_BYTES];
    assert_int_equal(expect_one(s, &m, pay, sizeof pay), SW_MSG_SHARD_STATE);
    assert_int_equal(m.payload_len, SW_SHARD_STATE_BYTES);
    assert_int_equal(sw_get_u64(pay + 56), 1);
    assert_int_equal(sw_get_u64(pay + 88), 5); /* its slice: [5, 10) of the rig's table */
    assert_int_equal(sw_get_u64(pay + 96), 5);
    *saved = sw_get_u64(pay + 8);
    *restores = sw_get_u64(pay + 40);
    *awaiting = sw_get_u64(pay + 48);
    last_restore_no = sw_get_u64(pay + 64);
    last_saved_before = sw_get_u64(pay + 72);
    last_unable_no = sw_get_u64(pay + 80);
    return m.version;
}

/* RESTORE from version `from`, going on as `version`, with the tokens of start_run and one lost
 * push (worker 0, token 100, seq 5). */
static void restore(sw_sock *s, uint64_t run, uint64_t from, uint64_t version, uint64_t number)
{
    uint8_t pay[28 + 8 * SLOTS + 4 + ENTRY];
    sw_put_u64(pay, run);
    sw_put_u64(pay + 8, from);
    sw_put_u64(pay + 16, number);
    sw_put_u32(pay + 24, SLOTS);
    sw_put_u64(pay + 28, 100);
    sw_put_u64(pay + 36, 200);
    sw_put_u32(pay + 44, 1);
    sw_put_u32(pay + 48, 0);
    sw_put_u64(pay + 52, 100);
    sw_put_u64(pay + 60, 5);
    sw_put_u64(pay + 68, 3);
    send_raw(s, SW_MSG_SHARD_RESTORE, SW_NO_WORKER, 0, version, pay, sizeof pay);
}

/* The slice at `version`, close to want; its restore mark. */
static uint64_t expect_slice(rig *g, sw_sock *s, uint32_t w, uint64_t version, const float *want)
{
    uint8_t tok[8];
    sw_put_u64(tok, w == 0 ? 100 : 200);
    send_raw(s, SW_MSG_SHARD_PULL, w, 0, version, tok, 8);
    settle(g);
    return expect_slice_values(s, version, want, LEN);
}

/* A second shard, resumed from the file the rig's shard saved, bound at "shard1"; its result
 * in *r. One at a time: a shard reads its parameters for its whole life. */
static sw_shard *resume_shard(rig *g, sw_shard_result *r, double server_timeout_s)
{
    static sw_shard_params p;
    sw_shard *again;
    p = (sw_shard_params){.bind = "shard1", .checkpoint = ckpt_path, .resume = true,
                          .server_timeout_s = server_timeout_s};
    assert_int_equal(sw_shard_new(&again, g->net, &p, r, NULL), 0);
    assert_int_equal(sw_loop_add(g->loop, sw_shard_agent(again), NULL), 0);
    return again;
}

/* A connection to the resumed shard, by the route `who`. */
static sw_sock *dial_resumed(rig *g, const char *who)
{
    sw_sock *s;
    sw_dial_params dp = {.endpoint = "shard1", .identity = who};
    assert_int_equal(sw_dial(g->net, &s, &dp, NULL), 0);
    return s;
}

/* A checkpoint ordered at the shard's version; a restore of it from a later version goes on at
 * the version the server says, counting the lost push as zero and ignoring its slice; a shard
 * resumed from the file keeps workers' messages until its RESTORE, and answers them after. */
static void checkpoints_restores_and_a_resume(void **state)
{
    rig *g = *state;
    const float theta[LEN] = {1, 2, 3, 4, 5}, g0[LEN] = {1, 0, -1, 2, 0.5f};
    uint64_t saved, restores, awaiting;
    start_run(g, theta);
    send_raw(g->server, SW_MSG_SHARD_SAVE, SW_NO_WORKER, 0, 6, NULL, 0);
    expect_refused(g, g->server, "does not hold");
    send_raw(g->server, SW_MSG_SHARD_SAVE, SW_NO_WORKER, 0, 7, NULL, 0);
    settle(g);
    assert_int_equal(expect_state(g->server, &saved, &restores, &awaiting), 7);
    assert_int_equal(saved, 7);
    push(g, 1, 200, 1, 7, g0, LEN);
    apply(g, SW_FLAG_WANT_NORMS, 8, 0.5f, (uint32_t[]){1}, (uint64_t[]){1},
          1); /* θ moves on to version 8 */
    settle(g);
    sw_msg m;
    uint8_t pay[256];
    assert_int_equal(expect_one(g->server, &m, pay, sizeof pay), SW_MSG_SHARD_PUSHED);
    expect_applied(g->server, 8, g0, sw_sq_norm(g0, LEN));
    /* Back to version 7's θ, going on as 12; the lost push counts as zero. */
    restore(g->stranger, 8, 7, 12, 1); /* another run's id */
    expect_refused(g, g->stranger, "another run");
    restore(g->server, 9, 7, 12, 41);
    settle(g);
    assert_int_equal(expect_state(g->server, &saved, &restores, &awaiting), 12);
    assert_int_equal(restores, 1);           /* a count */
    assert_int_equal(last_restore_no, 41);   /* and the number the server gave it */
    /* every slice says which restore it is from (its number): a worker never mixes two sides
     * of one */
    assert_int_equal(expect_slice(g, g->w[0], 0, 12, theta), 41);
    push(g, 0, 100, 5, 12, g0, LEN); /* the lost push's slice: ignored */
    apply(g, SW_FLAG_WANT_NORMS, 13, 0.5f, (uint32_t[]){0}, (uint64_t[]){5}, 1);
    settle(g);
    expect_applied(g->server, 13, NULL, 0); /* its slice counted as zero */
    assert_false(next(g->server, &m, &(sw_frame *){NULL}));
    assert_int_equal(g->r.refused, 2); /* the save of version 6 and the stranger's restore */
    assert_int_equal(expect_slice(g, g->w[1], 1, 13, theta), 41); /* a zero step */
    send_raw(g->server, SW_MSG_SHARD_SAVE, SW_NO_WORKER, 0, 13, NULL, 0);
    settle(g);
    assert_int_equal(expect_state(g->server, &saved, &restores, &awaiting), 13);

    /* A shard resumed from the file: it waits for a RESTORE, keeping a worker's pull. */
    sw_shard_result r;
    sw_shard *again = resume_shard(g, &r, 0);
    sw_sock *server = dial_resumed(g, "server2"), *w0 = dial_resumed(g, "w0");
    uint8_t tok[8];
    sw_put_u64(tok, 100);
    send_raw(w0, SW_MSG_SHARD_PULL, 0, 0, 13, tok, 8);
    send_raw(server, SW_MSG_SHARD_APPLY, SW_NO_WORKER, 0, 14, "12345678", 8); /* stale: ignored */
    send_raw(server, SW_MSG_SHARD_PING, SW_NO_WORKER, 0, 0, (uint8_t[]){9, 0, 0, 0, 0, 0, 0, 0}, 8);
    settle(g);
    assert_false(next(w0, &m, &(sw_frame *){NULL}));
    assert_int_equal(expect_state(server, &saved, &restores, &awaiting), 13);
    assert_int_equal(saved, 13);
    assert_int_equal(awaiting, 1);
    restore(server, 9, 13, 20, 2);
    settle(g);
    assert_int_equal(expect_state(server, &saved, &restores, &awaiting), 20);
    assert_int_equal(awaiting, 0);
    assert_int_equal(expect_one(w0, &m, pay, sizeof pay), SW_MSG_SHARD_SLICE);
    assert_int_equal(m.version, 20);
    assert_int_equal(sw_get_u64(pay), 2); /* its restore mark: the restore's number */
    assert_int_equal(r.refused, 0);
    sw_sock_close(server);
    sw_sock_close(w0);
    sw_shard_end(again);
}

/* A run whose shard saved version 7, was restored to it as version 8, and saved 8: FILE holds
 * 8, FILE.prev 7; its three STATEs are on their way. */
static void saved_twice(rig *g, const float *theta)
{
    start_run(g, theta);
    send_raw(g->server, SW_MSG_SHARD_SAVE, SW_NO_WORKER, 0, 7, NULL, 0);
    restore(g->server, 9, 7, 8, 1); /* version 8 */
    send_raw(g->server, SW_MSG_SHARD_SAVE, SW_NO_WORKER, 0, 8, NULL, 0);
    settle(g);
}

/* A damaged newest checkpoint: a resume reads the one before. */
static void a_resume_falls_back_to_the_previous_checkpoint(void **state)
{
    rig *g = *state;
    const float theta[LEN] = {1, 2, 3, 4, 5};
    uint64_t saved, restores, awaiting;
    saved_twice(g, theta);
    for (uint64_t v = 7; v <= 8; v++) {
        assert_int_equal(expect_state(g->server, &saved, &restores, &awaiting), v);
        if (v == 8) /* the restore's, then the save's */
            assert_int_equal(expect_state(g->server, &saved, &restores, &awaiting), v);
        assert_int_equal(saved, v);
    }
    FILE *f = fopen(ckpt_path, "r+b");
    assert_non_null(f);
    fseek(f, 60, SEEK_SET);
    fputc('!', f);
    fclose(f);
    sw_shard_result r;
    sw_shard *again = resume_shard(g, &r, 0);
    sw_sock *server;
    assert_int_equal(sw_dial(g->net, &server, &(sw_dial_params){.endpoint = "shard1"}, NULL), 0);
    send_raw(server, SW_MSG_SHARD_PING, SW_NO_WORKER, 0, 0, (uint8_t[]){9, 0, 0, 0, 0, 0, 0, 0}, 8);
    settle(g);
    assert_int_equal(expect_state(server, &saved, &restores, &awaiting), 7);
    assert_int_equal(awaiting, 1);
    /* The run ends before the RESTORE (its server found something wrong): the server that
     * pinged with the run's id says so, and the shard ends; a stranger's word does not count. */
    sw_sock *stranger;
    assert_int_equal(sw_dial(g->net, &stranger, &(sw_dial_params){.endpoint = "shard1"}, NULL), 0);
    send_raw(stranger, SW_MSG_SHARD_MEMBER, SW_NO_WORKER, SW_FLAG_DONE, 0, NULL, 0);
    settle(g);
    assert_false(r.done);
    send_raw(server, SW_MSG_SHARD_MEMBER, SW_NO_WORKER, SW_FLAG_DONE, 0, NULL, 0);
    settle(g);
    assert_true(r.done);
    sw_sock_close(stranger);
    sw_sock_close(server);
    sw_shard_end(again);
    char err[SW_ERR_LEN];
    sw_shard_params p = {.bind = "shard1", .checkpoint = "/nonexistent/slice.ckpt",
                         .resume = true};
    assert_int_not_equal(sw_shard_new(&again, g->net, &p, &r, err), 0);
    assert_non_null(strstr(err, "slice.ckpt"));
}

/* A RESTORE of a version neither file holds is not taken: the shard says so, and which two it
 * holds (FILE's, FILE.prev's), and serves no one until a RESTORE it can take, of the older. */
static void a_restore_it_cannot_take_is_answered_with_what_it_holds(void **state)
{
    rig *g = *state;
    const float theta[LEN] = {1, 2, 3, 4, 5};
    uint64_t saved, restores, awaiting;
    saved_twice(g, theta);
    assert_int_equal(expect_state(g->server, &saved, &restores, &awaiting), 7);
    assert_int_equal(last_saved_before, SW_SHARD_NONE); /* the first save */
    assert_int_equal(expect_state(g->server, &saved, &restores, &awaiting), 8); /* restored */
    assert_int_equal(expect_state(g->server, &saved, &restores, &awaiting), 8); /* saved */
    assert_int_equal(saved, 8);
    assert_int_equal(last_saved_before, 7);
    restore(g->server, 9, 5, 10, 2); /* version 5: in neither file */
    settle(g);
    assert_int_equal(expect_state(g->server, &saved, &restores, &awaiting), 8);
    assert_int_equal(awaiting, 1);
    assert_int_equal(last_unable_no, 2);
    assert_int_equal(last_restore_no, 1);
    assert_int_equal(saved, 8);
    assert_int_equal(last_saved_before, 7);
    uint8_t tok[8];
    sw_msg m;
    sw_put_u64(tok, 100);
    send_raw(g->w[0], SW_MSG_SHARD_PULL, 0, 0, 8, tok, 8);
    settle(g);
    assert_false(next(g->w[0], &m, &(sw_frame *){NULL})); /* kept until a restore is taken */
    restore(g->server, 9, 7, 10, 3);
    settle(g);
    assert_int_equal(expect_state(g->server, &saved, &restores, &awaiting), 10);
    assert_int_equal(awaiting, 0);
    assert_int_equal(last_restore_no, 3);
    assert_int_equal(saved, 7);
    assert_int_equal(last_saved_before, SW_SHARD_NONE); /* FILE.prev became FILE */
    /* marked by the restore taken, not by the version it went on as: a second restore going
     * on as the same version marks its slices apart from the first's */
    assert_int_equal(expect_slice_values(g->w[0], 10, theta, LEN), 3);
    restore(g->server, 9, 7, 10, 4);
    settle(g);
    assert_int_equal(expect_state(g->server, &saved, &restores, &awaiting), 10);
    assert_int_equal(expect_slice(g, g->w[1], 1, 10, theta), 4);
    assert_int_equal(g->r.refused, 0);
}

/* A save the run abandoned (another shard came back from the version before it) leaves the
 * restored version where the next save keeps it: should a shard come back from it again during
 * that save, this one still holds it. */
static void a_second_restore_during_the_next_save(void **state)
{
    rig *g = *state;
    const float theta[LEN] = {1, 2, 3, 4, 5};
    uint64_t saved, restores, awaiting;
    start_run(g, theta);
    send_raw(g->server, SW_MSG_SHARD_SAVE, SW_NO_WORKER, 0, 7, NULL, 0); /* the common one */
    restore(g->server, 9, 7, 8, 1);
    send_raw(g->server, SW_MSG_SHARD_SAVE, SW_NO_WORKER, 0, 8, NULL, 0); /* abandoned */
    restore(g->server, 9, 7, 9, 2);
    send_raw(g->server, SW_MSG_SHARD_SAVE, SW_NO_WORKER, 0, 9, NULL, 0); /* under way */
    restore(g->server, 9, 7, 10, 3);
    settle(g);
    const uint64_t versions[] = {7, 8, 8, 9, 9, 10};
    for (size_t i = 0; i < sizeof versions / sizeof *versions; i++)
        assert_int_equal(expect_state(g->server, &saved, &restores, &awaiting), versions[i]);
    assert_int_equal(restores, 3);
    assert_int_equal(saved, 7);
    assert_int_equal(g->r.refused, 0);
    expect_slice(g, g->w[0], 0, 10, theta);
}

/* A restarted server's restore may be lost with a broken link, and the one sent in its place is
 * not flagged DROPPED: the shard still forgets the gradients it held for the old server, which
 * knows them no longer (and they took memory for the rest of the run); an order the network
 * kept across the break, before that restore, is refused as moot. */
static void a_restarted_servers_restore_forgets_the_old_gradients(void **state)
{
    rig *g = *state;
    const float theta[LEN] = {1, 2, 3, 4, 5}, g0[LEN] = {1, 0, -1, 2, 0.5f};
    uint64_t saved, restores, awaiting;
    start_run(g, theta);
    send_raw(g->server, SW_MSG_SHARD_SAVE, SW_NO_WORKER, 0, 7, NULL, 0);
    settle(g);
    assert_int_equal(expect_state(g->server, &saved, &restores, &awaiting), 7);
    push_kept(g, 1, 200, 1, 7, g0, LEN);
    sw_sock *again; /* the server started again: a connection of its own */
    sw_dial_params dp = {.endpoint = "shard0", .identity = "server2"};
    assert_int_equal(sw_dial(g->net, &again, &dp, NULL), 0);
    /* Its order kept across the break comes before the restore sent in place of the lost one:
     * refused, flagged as moot (the server ended the run on an unflagged refusal). */
    uint8_t pay[8 + ENTRY];
    size_t len = apply_payload(pay, 0.5f, (uint32_t[]){1}, (uint64_t[]){1}, NULL, 1);
    send_raw(again, SW_MSG_SHARD_APPLY, SW_NO_WORKER, 0, 8, pay, len);
    settle(g);
    sw_msg m;
    uint8_t why[128];
    assert_int_equal(expect_one(again, &m, why, sizeof why), SW_MSG_ERROR);
    assert_true(m.flags & SW_FLAG_DROPPED);
    restore(again, 9, 7, 12, 2); /* unflagged: as one sent after a break */
    settle(g);
    assert_int_equal(expect_state(again, &saved, &restores, &awaiting), 12);
    send_raw(again, SW_MSG_SHARD_APPLY, SW_NO_WORKER, 0, 13, pay, len);
    expect_refused(g, again, "does not hold");
    expect_slice(g, g->w[0], 0, 12, theta); /* still at the checkpoint's θ */
    sw_sock_close(again);
}

/* A shard started again afresh into a run that keeps checkpoints refuses its server's orders
 * (it holds no run) and the run fails: the server's word that the run is over ends the shard
 * too, with the server's reason, where it waited for a server for ever. A stranger's end does
 * not, nor do a stranger's orders after the server's take its place. `flags`: the run's links'
 * (SW_FLAG_UNCHECKED: without checksums, as under CURVE by default). */
static void without_a_run_ends_with_the_run_it_refused(rig *g, uint32_t flags)
{
    static const char why[] = "shard 1 holds no run";
    static const uint8_t run[8] = {9};
    send_raw(g->stranger, SW_MSG_SHARD_MEMBER, SW_NO_WORKER, SW_FLAG_DONE | flags, 0, "no", 2);
    expect_refused(g, g->stranger, "holds no run");
    send_raw(g->stranger, SW_MSG_SHARD_MEMBER, SW_NO_WORKER, SW_FLAG_DONE | flags, 0, "no", 2);
    expect_refused(g, g->stranger, "holds no run");
    /* its first order a gather's pull (an evaluation's), then a ping */
    send_raw(g->server, SW_MSG_SHARD_PULL, SW_NO_WORKER, flags, 7, NULL, 0);
    expect_refused(g, g->server, "holds no run");
    send_raw(g->server, SW_MSG_SHARD_PING, SW_NO_WORKER, flags, 0, run, sizeof run);
    expect_refused(g, g->server, "holds no run");
    send_raw(g->stranger, SW_MSG_SHARD_PING, SW_NO_WORKER, flags, 0, run, sizeof run);
    expect_refused(g, g->stranger, "holds no run");
    send_raw(g->stranger, SW_MSG_SHARD_MEMBER, SW_NO_WORKER, SW_FLAG_DONE | flags, 0, "no", 2);
    expect_refused(g, g->stranger, "holds no run");
    assert_false(g->r.done);
    send_raw(g->server, SW_MSG_SHARD_MEMBER, SW_NO_WORKER, SW_FLAG_DONE | flags, 0, why,
             strlen(why));
    settle(g);
    assert_true(g->r.done);
    assert_string_equal(g->r.failed, why);
}

static void a_shard_without_a_run_ends_with_the_run_it_refused(void **state)
{
    without_a_run_ends_with_the_run_it_refused(*state, 0);
}

static void a_shard_without_a_run_ends_with_an_unchecked_run_it_refused(void **state)
{
    without_a_run_ends_with_the_run_it_refused(*state, SW_FLAG_UNCHECKED);
}

/* A shard that refused its run's INIT waits for the end of that run, which a link ZeroMQ
 * closed can lose (a SET over --max-frame), or the death of its server: while the server pings
 * it waits on, and once the server has been silent SW_SHARD_REFUSED_SILENCE_S (--server-timeout
 * if that is shorter) it ends, failed, saying why. A stranger's messages do not keep it. */
static void a_shard_that_refused_its_run_ends_when_its_server_falls_silent(void **state)
{
    rig *g = *state;
    g->p.server_timeout_s = 60;
    static const char init[] = "run=9\nshard=0\nshards=1\nslots=2\nparams=10\nchunk=5\n"
                               "first=0\nwd=0\nchecksum=on\ncheckpoints=on\n";
    static const uint8_t run[8] = {9};
    /* a malformed INIT is no server's (a stranger's, under plain TCP): its silence ends nothing,
     * and the run's server may come later */
    static const char malformed[] = "shard=0\nshards=2\n";
    send_raw(g->stranger, SW_MSG_SHARD_INIT, SW_NO_WORKER, 0, 7, malformed, strlen(malformed));
    expect_refused(g, g->stranger, "incomplete");
    send_raw(g->stranger, SW_MSG_SHARD_PING, SW_NO_WORKER, 0, 0, run, sizeof run);
    assert_int_equal(sw_loop_run(g->loop, NULL, sw_net_now(g->net) + 5, NULL), 0);
    assert_false(g->r.done);
    send_raw(g->server, SW_MSG_SHARD_INIT, SW_NO_WORKER, 0, 7, init, strlen(init));
    expect_refused(g, g->server, "--checkpoint");
    /* the run's gather (it failed; its last evaluation) is its order, not a worker's pull */
    send_raw(g->server, SW_MSG_SHARD_PULL, SW_NO_WORKER, 0, 7, NULL, 0);
    expect_refused(g, g->server, "--checkpoint");
    assert_int_equal(g->r.early, 0);
    double t0 = sw_net_now(g->net);
    for (sw_sock *from = g->server; from; from = from == g->server ? g->stranger : NULL)
        for (int k = 1; k <= 12 && !g->r.done; k++) { /* 3 s, a ping every 0.25 s */
            send_raw(from, SW_MSG_SHARD_PING, SW_NO_WORKER, 0, 0, run, sizeof run);
            double until = t0 + (from == g->server ? 0 : 3) + 0.25 * k;
            assert_int_equal(sw_loop_run(g->loop, NULL, until, NULL), 0);
            if (from == g->server)
                assert_false(g->r.done);
        }
    assert_true(g->r.done); /* 2 s after the server's last ping, its first 3 s on */
    double ended = sw_net_now(g->net) - t0;
    if (ended < 3 + SW_SHARD_REFUSED_SILENCE_S - 0.5 || ended > 3 + SW_SHARD_REFUSED_SILENCE_S + 0.5)
        fail_msg("the shard ended %.2f s after refusing its run", ended);
    if (!strstr(g->r.failed, "--checkpoint") ||
        !strstr(g->r.failed, "refused the run, and its server has been silent 2 s"))
        fail_msg("the shard's end does not say why: %s", g->r.failed);
}

/* The rig's run, started and checkpointed at version 7: a file to resume from. */
static void start_run_saved_at_7(rig *g)
{
    const float theta[LEN] = {1, 2, 3, 4, 5};
    uint64_t saved, restores, awaiting;
    start_run(g, theta);
    send_raw(g->server, SW_MSG_SHARD_SAVE, SW_NO_WORKER, 0, 7, NULL, 0);
    settle(g);
    assert_int_equal(expect_state(g->server, &saved, &restores, &awaiting), 7);
}

/* A shard resumed from its checkpoint, pinged and restored by a server of another run, refuses
 * it and waits on for its own run's server: that server's end does not end it (its file is a
 * run's only copy of its slice), and its own server still restores it. */
static void a_resumed_shard_outlives_another_runs_server(void **state)
{
    rig *g = *state;
    uint64_t saved, restores, awaiting;
    start_run_saved_at_7(g);
    sw_shard_result r;
    sw_shard *again = resume_shard(g, &r, 0);
    sw_sock *other = dial_resumed(g, "other"), *own = dial_resumed(g, "own");
    send_raw(other, SW_MSG_SHARD_PING, SW_NO_WORKER, 0, 0, (uint8_t[]){8, 0, 0, 0, 0, 0, 0, 0}, 8);
    restore(other, 8, 7, 12, 1);
    send_raw(other, SW_MSG_SHARD_MEMBER, SW_NO_WORKER, SW_FLAG_DONE, 0, "x", 1);
    settle(g);
    assert_false(r.done);
    assert_int_equal(r.refused, 3);
    sw_msg m;
    uint8_t pay[512];
    assert_int_equal(expect_one(other, &m, pay, sizeof pay), SW_MSG_ERROR);
    assert_int_equal(expect_one(other, &m, pay, sizeof pay), SW_MSG_ERROR);
    pay[m.payload_len] = '\0';
    /* the server's run, never the shard's: whoever reads it could restore the slice */
    if (!strstr((const char *)pay, "names run 8") || strchr((const char *)pay, '9'))
        fail_msg("the refusal of another run's restore names the shard's run, or not the "
                 "server's: %s", pay);
    restore(own, 9, 7, 12, 2);
    settle(g);
    assert_int_equal(expect_state(own, &saved, &restores, &awaiting), 12);
    assert_int_equal(awaiting, 0);
    sw_sock_close(other);
    sw_sock_close(own);
    sw_shard_end(again);
}

/* A resumed shard's --server-timeout counts from its start: a server that never comes (its
 * --resume refused) would leave it, and a launcher's job, waiting for ever. Another run's
 * pings do not keep it; its own server's do, until they stop. Its checkpoint stays. */
static void a_resumed_shard_gives_up_when_its_server_does_not_come(void **state)
{
    rig *g = *state;
    start_run_saved_at_7(g);
    for (int own = 0; own < 2; own++) {
        sw_shard_result r;
        double t0 = sw_net_now(g->net);
        sw_shard *again = resume_shard(g, &r, 3);
        sw_sock *server = dial_resumed(g, own ? "own" : "other");
        uint8_t run[8] = {own ? 9 : 8};
        for (int k = 1; k <= 20 && !r.done; k++) { /* 5 s of pings, every 0.25 s */
            send_raw(server, SW_MSG_SHARD_PING, SW_NO_WORKER, 0, 0, run, sizeof run);
            assert_int_equal(sw_loop_run(g->loop, NULL, t0 + 0.25 * k, NULL), 0);
        }
        assert_int_equal(r.done, !own); /* another run's server: given up at 3 s */
        for (double t = t0 + 5; own && !r.done && t < t0 + 12; t += 0.05) /* then its own */
            assert_int_equal(sw_loop_run(g->loop, NULL, t, NULL), 0); /* server falls silent */
        assert_true(r.done);
        double ended = sw_net_now(g->net) - t0;
        if (ended < (own ? 7.75 : 3) - 0.3 || ended > (own ? 7.75 : 3) + 0.3)
            fail_msg("the resumed shard gave up %.2f s after its start", ended);
        const char *want = own ? "the server has been silent for 3 s" : "no server of its run "
                                                                         "has come in 3 s";
        if (!strstr(r.failed, want))
            fail_msg("the resumed shard's end says '%s', not '%s'", r.failed, want);
        assert_int_equal(r.server_heard, own);
        sw_sock_close(server);
        sw_shard_end(again);
    }
    assert_int_equal(access(ckpt_path, F_OK), 0); /* kept for the next resume */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(checkpoints_restores_and_a_resume, setup_with_checkpoint,
                                        teardown_with_checkpoint),
        cmocka_unit_test_setup_teardown(a_resume_falls_back_to_the_previous_checkpoint,
                                        setup_with_checkpoint, teardown_with_checkpoint),
        cmocka_unit_test_setup_teardown(a_restore_it_cannot_take_is_answered_with_what_it_holds,
                                        setup_with_checkpoint, teardown_with_checkpoint),
        cmocka_unit_test_setup_teardown(a_second_restore_during_the_next_save,
                                        setup_with_checkpoint, teardown_with_checkpoint),
        cmocka_unit_test_setup_teardown(a_restarted_servers_restore_forgets_the_old_gradients,
                                        setup_with_checkpoint, teardown_with_checkpoint),
        cmocka_unit_test_setup_teardown(a_shard_without_a_run_ends_with_the_run_it_refused,
                                        setup_with_checkpoint, teardown_with_checkpoint),
        cmocka_unit_test_setup_teardown(a_shard_without_a_run_ends_with_an_unchecked_run_it_refused,
                                        setup_with_checkpoint, teardown_with_checkpoint),
        cmocka_unit_test_setup_teardown(a_shard_that_refused_its_run_ends_when_its_server_falls_silent,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(a_resumed_shard_outlives_another_runs_server,
                                        setup_with_checkpoint, teardown_with_checkpoint),
        cmocka_unit_test_setup_teardown(a_resumed_shard_gives_up_when_its_server_does_not_come,
                                        setup_with_checkpoint, teardown_with_checkpoint),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
