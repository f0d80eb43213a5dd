/* RLP: the DQN learns an MDP whose optimal policy is known; features are laid out and
 * normalised as documented; policy files round-trip and damaged ones are refused; a greedy
 * policy's actions are deterministic. */
#include "testutil/testutil.h"

/* cmocka needs these first. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "syncwise/bytes.h"
#include "syncwise/err.h"
#include "syncwise/policy.h"
#include "syncwise/rl_train.h"

/* A small agent: history 1 (4 features), the paper's network shape. */
static sw_rl_agent *small_agent(float lr, uint32_t replay, uint64_t seed)
{
    sw_rl_hparams hp = sw_rl_default_hparams();
    hp.history = 1;
    hp.lr = lr;
    hp.replay = replay;
    sw_rl_agent *a;
    char err[SW_ERR_LEN];
    if (sw_rl_agent_new(&a, &hp, NULL, 0, seed, err))
        fail_msg("%s", err);
    return a;
}

/* The MDP: from A, action 0 costs 0.1 and leads to B (then +1, end); action 1 costs nothing
 * and leads to C (then -1, end); action 2 costs 0.5 and stays in A. With gamma 0.8 the optimal
 * values at A are Q(A,0) = -0.1 + 0.8 = 0.7, Q(A,1) = -0.8, Q(A,2) = -0.5 + 0.8 * 0.7 = 0.06:
 * the best first move is the one that looks worse now. */
enum { A, B, C };
static void encode(int s, float *x)
{
    memset(x, 0, 4 * sizeof *x);
    x[s] = 1;
}

static void dqn_learns_a_delayed_reward(void **state)
{
    (void)state;
    sw_rl_agent *a = small_agent(0.02f, 200, 3);
    float x[4], next[4];
    for (int step = 0, s = A; step < 20000; step++) {
        encode(s, x);
        int act = sw_rl_agent_act(a, x, 0.5);
        int to = s != A ? -1 : act == 0 ? B : act == 1 ? C : A;
        float reward = s == B ? 1.0f : s == C ? -1.0f : act == 0 ? -0.1f : act == 1 ? 0 : -0.5f;
        encode(to < 0 ? A : to, next);
        sw_rl_agent_remember(a, x, act, reward, next, to < 0);
        sw_rl_agent_learn(a);
        s = to < 0 ? A : to;
    }
    encode(A, x);
    const float *q = sw_rl_agent_q(a, x);
    assert_int_equal(sw_rl_agent_act(a, x, 0), 0);
    assert_true(fabsf(q[0] - 0.7f) < 0.15f);
    assert_true(fabsf(q[1] + 0.8f) < 0.15f);
    assert_true(fabsf(q[2] - 0.06f) < 0.15f);
    sw_rl_agent_free(a);
}

static void regression_fits_returns(void **state)
{
    (void)state;
    sw_rl_agent *a = small_agent(0.05f, 50, 4);
    float xs[32 * 4];
    int acts[32];
    float ys[32];
    for (int i = 0; i < 32; i++) {
        encode(i % 3, xs + 4 * i);
        acts[i] = i % 3;
        ys[i] = (float)(i % 3) - 1.0f; /* Q(s, s) = s - 1 */
    }
    double first = sw_rl_agent_regress(a, xs, acts, ys, 32), last = first;
    for (int k = 0; k < 2000; k++)
        last = sw_rl_agent_regress(a, xs, acts, ys, 32);
    assert_true(last < 0.01 * first);
    for (int s = 0; s < 3; s++) {
        float x[4];
        encode(s, x);
        assert_true(fabsf(sw_rl_agent_q(a, x)[s] - ((float)s - 1.0f)) < 0.05f);
    }
    sw_rl_agent_free(a);
}

static sw_engine_view view_at(uint64_t version, uint32_t live, double before, double after)
{
    return (sw_engine_view){
        .version = version, .n_live = live, .loss_before = before, .loss_after = after};
}

static void features_are_normalised_newest_first(void **state)
{
    (void)state;
    sw_rl_features f;
    sw_rl_features_init(&f, 3, SW_RL_LAYOUT_PAPER, &(sw_optim_params){.momentum = 0.9f});
    sw_engine_view v = view_at(1, 5, 2.0, 1.9);
    sw_rl_features_update(&f, &v, &(sw_push){.version = 0});
    /* n: ln(1 + 1/5) / ln(1001); L/L0 = 0.95; 100 * -0.1 / 2 = -5; no applies in between. */
    assert_true(fabsf(f.state[0] - (float)(log1p(0.2) / log1p(1000.0))) < 1e-6f);
    assert_true(fabsf(f.state[1] - 0.95f) < 1e-6f);
    assert_true(fabsf(f.state[2] + 5.0f) < 1e-5f);
    assert_true(f.state[3] == 0.0f);
    for (int i = 4; i < 12; i++)
        assert_true(f.state[i] == 0.0f); /* zero padding before the history fills */
    /* Pulled at version 1, pushed when 9 applies had happened (the view shows 10 after this
     * one): 8 others' applies over 4 other workers = 2. A huge loss change is clipped. */
    v = view_at(10, 5, 1.9, 100.0);
    sw_rl_features_update(&f, &v, &(sw_push){.version = 1});
    assert_true(fabsf(f.state[3] - 2.0f) < 1e-6f);
    assert_true(f.state[2] == (float)SW_RL_DLOSS_CLIP);
    assert_true(fabsf(f.state[5] - 0.95f) < 1e-6f); /* the older tuple moved back */
    for (int k = 0; k < 5; k++)
        sw_rl_features_update(&f, &v, &(sw_push){.version = 9});
    assert_true(f.n == 7);
    assert_true(f.state[8] > 0 && f.state[11] == 0.0f); /* the ring holds only 3 */
}

/* The default Q-network on a layout's state (10 tuples) has `inputs` inputs:
 * (inputs x 64 + 64) + (64 x 32 + 32) + (32 x 3 + 3) parameters. */
static void network_reads(uint32_t layout, size_t inputs)
{
    sw_rl_hparams hp = sw_rl_default_hparams();
    hp.layout = layout;
    sw_rl_agent *a;
    char err[SW_ERR_LEN];
    assert_int_equal(sw_rl_agent_new(&a, &hp, NULL, 0, 1, err), 0);
    assert_int_equal(sw_rl_agent_n_params(a), inputs * 64 + 64 + 64 * 32 + 32 + 32 * 3 + 3);
    sw_rl_agent_free(a);
}

/* The second layout adds the optimizer's momentum to every tuple (Adam's beta1), the paper's
 * four features unchanged before it. */
static void the_momentum_layout_adds_the_optimizers_momentum(void **state)
{
    (void)state;
    sw_rl_features f;
    sw_rl_features_init(&f, 2, SW_RL_LAYOUT_MOMENTUM, &(sw_optim_params){.momentum = 0.9f});
    assert_int_equal(f.tuple, 5);
    sw_engine_view v = view_at(1, 5, 2.0, 1.9);
    sw_rl_features_update(&f, &v, &(sw_push){.version = 0});
    assert_true(fabsf(f.state[1] - 0.95f) < 1e-6f && f.state[4] == 0.9f);
    for (int i = 5; i < 10; i++)
        assert_true(f.state[i] == 0.0f);
    sw_rl_features_update(&f, &v, &(sw_push){.version = 0});
    assert_true(f.state[4] == 0.9f && f.state[9] == 0.9f && fabsf(f.state[6] - 0.95f) < 1e-6f);
    sw_optim_params adam = {.kind = SW_OPTIM_ADAM, .beta1 = 0.8f, .beta2 = 0.999f};
    sw_rl_features_init(&f, 2, SW_RL_LAYOUT_MOMENTUM, &adam);
    sw_rl_features_update(&f, &v, &(sw_push){.version = 0});
    assert_true(f.state[4] == 0.8f);
    network_reads(SW_RL_LAYOUT_MOMENTUM, 50);
    sw_rl_hparams hp = sw_rl_default_hparams();
    sw_rl_agent *a;
    char err[SW_ERR_LEN];
    hp.layout = 5;
    assert_int_equal(sw_rl_agent_new(&a, &hp, NULL, 0, 1, err), SW_EINVAL);
    assert_non_null(strstr(err, "feature layout 5"));
}

/* The third layout adds what a barrier or a bound decides on: the share of live workers
 * waiting (the pusher among them) and how far the pusher is ahead of the slowest clock. */
static void the_waiting_layout_sees_who_waits_and_how_far_ahead(void **state)
{
    (void)state;
    sw_rl_features f;
    sw_rl_features_init(&f, 2, SW_RL_LAYOUT_WAITING, &(sw_optim_params){.momentum = 0.5f});
    assert_int_equal(f.tuple, 7);
    sw_engine_view v = view_at(1, 4, 2.0, 1.9);
    v.n_waiting = 3;
    v.min_live_clock = 5;
    sw_rl_features_update(&f, &v, &(sw_push){.version = 0, .clock = 13});
    assert_true(fabsf(f.state[1] - 0.95f) < 1e-6f && f.state[4] == 0.5f);
    assert_true(f.state[5] == 0.75f);
    assert_true(fabsf(f.state[6] - 1.0f) < 1e-6f); /* 8 ahead reads 1 */
    v.n_waiting = 4;
    sw_rl_features_update(&f, &v, &(sw_push){.version = 0, .clock = 2}); /* a fresh joiner */
    assert_true(f.state[5] == 1.0f && f.state[6] == 0.0f);
    assert_true(f.state[7 + 5] == 0.75f); /* the older tuple moved back whole */
    network_reads(SW_RL_LAYOUT_WAITING, 70);
}

/* The stretch layout: one tuple per stretch (n from the pushes, L / L0, the loss fall over the
 * stretch, the momentum, the action that ran it one-hot), newest first. */
static void the_stretch_layout_sees_each_stretch_and_who_ran_it(void **state)
{
    (void)state;
    sw_rl_features f;
    sw_rl_features_init(&f, 2, SW_RL_LAYOUT_STRETCH, &(sw_optim_params){.momentum = 0.9f});
    assert_int_equal(f.tuple, 7);
    sw_engine_view v = view_at(0, 5, NAN, NAN);
    sw_rl_features_stretch(&f, &v, 0, -1); /* the run's start: nothing known but the momentum */
    for (int i = 0; i < 14; i++)
        assert_true(f.state[i] == (i == 3 ? 0.9f : 0.0f));
    v = view_at(1, 5, 2.0, 1.9);
    sw_rl_features_note_loss0(&f, &v);
    v = view_at(40, 5, 1.6, 1.5);
    sw_rl_features_note_loss0(&f, &v); /* L0 stays the first apply's */
    sw_rl_features_stretch(&f, &v, 50, 2);
    assert_true(fabsf(f.state[0] - (float)(log1p(10.0) / log1p(1000.0))) < 1e-6f);
    assert_true(fabsf(f.state[1] - 0.75f) < 1e-6f);
    assert_true(f.state[2] == 0.0f); /* no loss known when the stretch began */
    assert_true(f.state[3] == 0.9f && f.state[4] == 0 && f.state[5] == 0 && f.state[6] == 1);
    assert_true(f.state[7 + 3] == 0.9f); /* the start's tuple moved back */
    v = view_at(60, 5, 1.2, 1.1);
    sw_rl_features_stretch(&f, &v, 100, 0);
    /* 10 (1.5 - 1.1) / 2 = 2 */
    assert_true(fabsf(f.state[2] - 2.0f) < 1e-5f && f.state[4] == 1 && f.state[6] == 0);
    assert_true(f.state[7 + 6] == 1); /* the stretch before, run by action 2 */
    network_reads(SW_RL_LAYOUT_STRETCH, 70);
}

static int spy_init(void *state, sw_spec *spec, const sw_engine_view *v, const sw_policy_env *env,
                    char *err)
{
    (void)state, (void)spec, (void)v, (void)err;
    *(float *)env->ctx = env->optim.momentum;
    return 0;
}

static void spy_push(void *state, const sw_engine_view *v, const sw_push *p, sw_decision *d)
{
    (void)state, (void)v;
    d->apply = true;
    sw_decision_release(d, p->worker);
}

/* A policy learns the engine's optimizer at init (what rlp's momentum feature reads). */
static void a_policy_learns_the_engines_optimizer(void **state)
{
    (void)state;
    static const sw_policy_ops spy = {
        .name = "spy", .keys = "", .init = spy_init, .on_push = spy_push};
    float momentum = -1;
    sw_engine_params ep = sw_engine_default_params();
    ep.policy = "spy";
    ep.policy_ops = &spy;
    ep.policy_ctx = &momentum;
    ep.optim.momentum = 0.75f;
    sw_engine *e;
    char err[SW_ERR_LEN];
    if (sw_engine_new(&e, &ep, err))
        fail_msg("%s", err);
    assert_true(momentum == 0.75f);
    sw_engine_free(e);
}

static sw_rl_policy trained_like(sw_rl_agent **agent)
{
    *agent = small_agent(0.01f, 50, 9);
    sw_rl_policy p = {.hp = *sw_rl_agent_hparams(*agent),
                      .weights = (float *)sw_rl_agent_weights(*agent),
                      .n_weights = sw_rl_agent_n_params(*agent)};
    strcpy(p.note, "syncwise rl train --seed 9");
    p.pre_runs = 500;
    p.episodes = 25;
    return p;
}

static void policy_file_round_trip(void **state)
{
    (void)state;
    sw_rl_agent *a;
    sw_rl_policy p = trained_like(&a);
    const char *path = sw_test_path("p.swrl");
    assert_int_equal(sw_rl_policy_save(path, &p, NULL), 0);
    sw_rl_policy back;
    char err[SW_ERR_LEN];
    if (sw_rl_policy_load(path, &back, err))
        fail_msg("%s", err);
    /* field by field: neither padding nor the bytes after qnet's end are the file's */
    assert_int_equal(back.hp.layout, p.hp.layout);
    assert_int_equal(back.hp.history, p.hp.history);
    assert_int_equal(back.hp.replay, p.hp.replay);
    assert_int_equal(back.hp.minibatch, p.hp.minibatch);
    assert_int_equal(back.hp.copy_every, p.hp.copy_every);
    assert_true(back.hp.gamma == p.hp.gamma && back.hp.epsilon == p.hp.epsilon &&
                back.hp.lr == p.hp.lr);
    assert_string_equal(back.hp.qnet, p.hp.qnet);
    assert_string_equal(back.note, p.note);
    assert_true(back.has_progress && back.pre_runs == 500 && back.episodes == 25);
    assert_int_equal(back.n_weights, p.n_weights);
    assert_memory_equal(back.weights, p.weights, p.n_weights * sizeof(float));
    sw_rl_policy_free(&back);
    sw_rl_agent_free(a);
    /* the momentum layout: its five features per iteration round-trip with it */
    sw_rl_hparams hp = sw_rl_default_hparams();
    hp.layout = SW_RL_LAYOUT_MOMENTUM;
    hp.history = 2;
    assert_int_equal(sw_rl_agent_new(&a, &hp, NULL, 0, 3, err), 0);
    p = (sw_rl_policy){.hp = hp, .weights = (float *)sw_rl_agent_weights(a),
                       .n_weights = sw_rl_agent_n_params(a)};
    assert_int_equal(sw_rl_policy_save(path, &p, err), 0);
    if (sw_rl_policy_load(path, &back, err))
        fail_msg("%s", err);
    assert_int_equal(back.hp.layout, SW_RL_LAYOUT_MOMENTUM);
    assert_int_equal(back.n_weights, p.n_weights);
    sw_rl_policy_free(&back);
    sw_rl_agent_free(a);
}

static uint8_t file_buf[1 << 16];

static size_t slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    size_t n = fread(file_buf, 1, sizeof file_buf, f);
    fclose(f);
    return n;
}

static int load_after(const char *path, size_t n, bool fix_crc, char *err)
{
    if (fix_crc)
        sw_put_u32(file_buf + n - 4, sw_crc32(0, file_buf, n - 4));
    FILE *f = fopen(path, "wb");
    fwrite(file_buf, 1, n, f);
    fclose(f);
    sw_rl_policy p;
    int rc = sw_rl_policy_load(path, &p, err);
    if (!rc)
        sw_rl_policy_free(&p);
    return rc;
}

/* A file of format 1 (the shipped policies): no progress, the rest read as before. */
static void format_1_files_are_read_without_progress(void **state)
{
    (void)state;
    sw_rl_agent *a;
    sw_rl_policy p = trained_like(&a);
    const char *v2 = sw_test_path("v2.swrl"), *v1 = sw_test_path("v1.swrl");
    assert_int_equal(sw_rl_policy_save(v2, &p, NULL), 0);
    size_t n = slurp(v2);
    memmove(file_buf + 68, file_buf + 84, n - 84); /* drop the progress */
    sw_put_u32(file_buf + 4, 1);
    char err[SW_ERR_LEN];
    assert_int_equal(load_after(v1, n - 16, true, err), 0);
    sw_rl_policy back;
    assert_int_equal(sw_rl_policy_load(v1, &back, err), 0);
    assert_false(back.has_progress);
    assert_string_equal(back.note, p.note);
    assert_memory_equal(back.weights, p.weights, p.n_weights * sizeof(float));
    sw_rl_policy_free(&back);
    sw_rl_agent_free(a);
}

static void damaged_files_are_refused(void **state)
{
    (void)state;
    sw_rl_agent *a;
    sw_rl_policy p = trained_like(&a);
    const char *good = sw_test_path("good.swrl"), *bad = sw_test_path("bad.swrl");
    assert_int_equal(sw_rl_policy_save(good, &p, NULL), 0);
    char err[SW_ERR_LEN];
    size_t n = slurp(good);
    file_buf[200] ^= 0x10; /* a flipped bit in the weights */
    assert_int_equal(load_after(bad, n, false, err), SW_ECHECKSUM);
    assert_non_null(strstr(err, "corrupt"));
    n = slurp(good);
    assert_int_equal(load_after(bad, n - 9, false, err), SW_ECHECKSUM); /* truncated */
    assert_int_equal(load_after(bad, 10, false, err), SW_EFORMAT);
    n = slurp(good);
    sw_put_u32(file_buf + 4, 99);
    assert_int_equal(load_after(bad, n, true, err), SW_EVERSION);
    assert_non_null(strstr(err, "version 99"));
    n = slurp(good);
    sw_put_f32(file_buf + 16, 50.0f); /* trained with another feature scaling */
    assert_int_equal(load_after(bad, n, true, err), SW_EFORMAT);
    n = slurp(good);
    sw_put_u32(file_buf + 8, 9); /* a layout this build does not know */
    assert_int_equal(load_after(bad, n, true, err), SW_EFORMAT);
    n = slurp(good);
    sw_put_u32(file_buf + 8, SW_RL_LAYOUT_MOMENTUM); /* its tuple size says the paper's */
    assert_int_equal(load_after(bad, n, true, err), SW_EFORMAT);
    n = slurp(good);
    sw_put_u32(file_buf + 24, 2); /* history 2: the weights no longer fit the network */
    assert_int_equal(load_after(bad, n, true, err), SW_EFORMAT);
    n = slurp(good);
    sw_put_f32(file_buf + n - 8, NAN);
    assert_int_equal(load_after(bad, n, true, err), SW_EFORMAT);
    assert_non_null(strstr(err, "not finite"));
    n = slurp(good);
    sw_put_f32(file_buf + 48, 7.0f); /* gamma 7 */
    assert_int_equal(load_after(bad, n, true, err), SW_EFORMAT);
    assert_int_equal(sw_rl_policy_load(sw_test_path("missing.swrl"), &p, err), SW_EIO);
    sw_rl_agent_free(a);
}

/* The `rlp` policy in the engine: the same pushes give the same releases whatever the seed of
 * the policy's stream, because eps = 0 never draws from it. */
static void greedy_rlp_is_deterministic(void **state)
{
    (void)state;
    sw_rl_agent *a;
    sw_rl_policy p = trained_like(&a);
    const char *path = sw_test_path("det.swrl");
    assert_int_equal(sw_rl_policy_save(path, &p, NULL), 0);
    char spec[700];
    snprintf(spec, sizeof spec, "rlp:file=%s,eps=0", path);
    uint32_t seen[2][64];
    for (int run = 0; run < 2; run++) {
        sw_engine_params ep = sw_engine_default_params();
        ep.max_workers = 4;
        ep.policy = spec;
        ep.seed = 100 + (uint64_t)run;
        sw_engine *e;
        char err[SW_ERR_LEN];
        if (sw_engine_new(&e, &ep, err))
            fail_msg("%s", err);
        sw_engine_result r;
        for (uint32_t w = 0; w < 4; w++)
            sw_engine_join(e, w, 0, &r);
        for (int i = 0; i < 64; i++) {
            const sw_engine_view *v = sw_engine_get_view(e);
            uint32_t w = (uint32_t)i % 4;
            while (v->workers[w].state != SW_WORKER_RUNNING)
                w = (w + 1) % 4;
            sw_engine_push(e, w, NULL, v->workers[w].version, i, &r);
            seen[run][i] = r.n_released * 16 + (r.n_released ? r.released[0] : 0);
        }
        sw_engine_free(e);
    }
    assert_memory_equal(seen[0], seen[1], sizeof seen[0]);
    sw_rl_agent_free(a);
}

static void rlp_refuses_a_bad_file(void **state)
{
    (void)state;
    sw_engine_params ep = sw_engine_default_params();
    ep.policy = "rlp:file=/nonexistent/p.swrl";
    sw_engine *e;
    char err[SW_ERR_LEN];
    assert_int_equal(sw_engine_new(&e, &ep, err), SW_EIO);
    assert_non_null(strstr(err, "/nonexistent/p.swrl"));
    ep.policy = "rlp:file=x,eps=2";
    assert_int_equal(sw_engine_new(&e, &ep, err), SW_ERANGE);
    assert_non_null(strstr(err, "eps"));
}

/* A policy file of a layout whose network always takes `action`: every weight 0 but the
 * output's bias. */
static const char *constant_policy(const char *name, uint32_t layout, int action)
{
    sw_rl_agent *a;
    sw_rl_policy p = trained_like(&a);
    p.hp.layout = layout;
    sw_rl_agent_free(a);
    if (sw_rl_agent_new(&a, &p.hp, NULL, 0, 1, NULL))
        fail_msg("layout %u", layout);
    p.n_weights = sw_rl_agent_n_params(a);
    float *w = calloc(p.n_weights, sizeof *w);
    assert_non_null(w);
    w[p.n_weights - SW_RL_ACTIONS + (size_t)action] = 1;
    p.weights = w;
    const char *path = sw_test_path(name);
    assert_int_equal(sw_rl_policy_save(path, &p, NULL), 0);
    free(w);
    sw_rl_agent_free(a);
    return path;
}

/* Workers released by the first push of 2 workers under `policy` and momentum mu. */
static uint32_t released_by_first_push(const char *policy, float mu)
{
    sw_engine_params ep = sw_engine_default_params();
    ep.max_workers = 2;
    ep.policy = policy;
    ep.optim.momentum = mu;
    sw_engine *e;
    char err[SW_ERR_LEN];
    if (sw_engine_new(&e, &ep, err))
        fail_msg("%s", err);
    sw_engine_result r;
    for (uint32_t w = 0; w < 2; w++)
        sw_engine_join(e, w, 0, &r);
    sw_engine_push(e, 0, NULL, 0, 1, &r);
    uint32_t n = r.n_released;
    sw_engine_free(e);
    return n;
}

/* rlp:high=B: under momentum of at least `above` network B decides, else the file's. */
static void the_momentum_chooses_the_network(void **state)
{
    (void)state;
    char spec[1500];
    const char *none = constant_policy("none.swrl", SW_RL_LAYOUT_PAPER, 0),
               *pusher = constant_policy("pusher.swrl", SW_RL_LAYOUT_PAPER, 1);
    snprintf(spec, sizeof spec, "rlp:file=%s", none); /* one network for every regime */
    assert_int_equal(released_by_first_push(spec, 0.9f), 0);
    snprintf(spec, sizeof spec, "rlp:file=%s,high=%s", none, pusher);
    assert_int_equal(released_by_first_push(spec, 0), 0);
    assert_int_equal(released_by_first_push(spec, 0.5f), 0);
    assert_int_equal(released_by_first_push(spec, 0.7f), 1); /* the default above=0.7 */
    assert_int_equal(released_by_first_push(spec, 0.9f), 1);
    snprintf(spec, sizeof spec, "rlp:file=%s,high=%s,above=0.4", none, pusher);
    assert_int_equal(released_by_first_push(spec, 0.5f), 1);

    /* Both files are read whichever decides: a bad one is said in every regime. */
    sw_engine_params ep = sw_engine_default_params();
    snprintf(spec, sizeof spec, "rlp:file=%s,high=/nonexistent/h.swrl", none);
    ep.policy = spec;
    sw_engine *e;
    char err[SW_ERR_LEN];
    assert_int_equal(sw_engine_new(&e, &ep, err), SW_EIO);
    assert_non_null(strstr(err, "/nonexistent/h.swrl"));
    snprintf(spec, sizeof spec, "rlp:file=%s,high=%s,above=1.5", none, pusher);
    assert_int_equal(sw_engine_new(&e, &ep, err), SW_ERANGE);
    assert_non_null(strstr(err, "above"));
}

/* rlswitch runs the policy its network picks (a barrier holds the first push of two, asp lets
 * it go on); rlp and rlswitch each refuse the other's files, saying which to use. */
static void rlswitch_runs_the_policy_its_network_picks(void **state)
{
    (void)state;
    char spec[1500], err[SW_ERR_LEN];
    const char *bsp = constant_policy("bsp.swrl", SW_RL_LAYOUT_STRETCH, SW_RL_STRETCH_BSP),
               *asp = constant_policy("asp.swrl", SW_RL_LAYOUT_STRETCH, SW_RL_STRETCH_ASP),
               *paper = constant_policy("paper.swrl", SW_RL_LAYOUT_PAPER, 1);
    snprintf(spec, sizeof spec, "rlswitch:file=%s", bsp);
    assert_int_equal(released_by_first_push(spec, 0.9f), 0);
    snprintf(spec, sizeof spec, "rlswitch:file=%s", asp);
    assert_int_equal(released_by_first_push(spec, 0.9f), 1);
    sw_engine_params ep = sw_engine_default_params();
    sw_engine *e;
    ep.policy = spec;
    snprintf(spec, sizeof spec, "rlp:file=%s", asp);
    assert_int_equal(sw_engine_new(&e, &ep, err), SW_EINVAL);
    assert_non_null(strstr(err, "run it as rlswitch:file="));
    snprintf(spec, sizeof spec, "rlswitch:file=%s", paper);
    assert_int_equal(sw_engine_new(&e, &ep, err), SW_EINVAL);
    assert_non_null(strstr(err, "run it as rlp:file="));
    /* Also as the network of the other regime, which this run (no momentum) would not use. */
    snprintf(spec, sizeof spec, "rlp:file=%s,high=%s", paper, asp);
    assert_int_equal(sw_engine_new(&e, &ep, err), SW_EINVAL);
    assert_non_null(strstr(err, "run it as rlswitch:file="));
}

/* A recording or learning episode without an agent is refused before anything runs. */
static void an_episode_that_learns_needs_an_agent(void **state)
{
    (void)state;
    sw_rl_scenario sc = {0};
    sw_rl_run out;
    char err[SW_ERR_LEN];
    assert_int_equal(
        sw_rl_run_instance(&sc, 1, 0, 0, "bsp", SW_RL_LEARN, NULL, NULL, 0.1, &out, err),
        SW_EINVAL);
    assert_non_null(strstr(err, "needs an agent"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(dqn_learns_a_delayed_reward),
        cmocka_unit_test(regression_fits_returns),
        cmocka_unit_test(an_episode_that_learns_needs_an_agent),
        cmocka_unit_test(the_stretch_layout_sees_each_stretch_and_who_ran_it),
        cmocka_unit_test(rlswitch_runs_the_policy_its_network_picks),
        cmocka_unit_test(features_are_normalised_newest_first),
        cmocka_unit_test(the_momentum_layout_adds_the_optimizers_momentum),
        cmocka_unit_test(the_waiting_layout_sees_who_waits_and_how_far_ahead),
        cmocka_unit_test(a_policy_learns_the_engines_optimizer),
        cmocka_unit_test(policy_file_round_trip),
        cmocka_unit_test(format_1_files_are_read_without_progress),
        cmocka_unit_test(damaged_files_are_refused),
        cmocka_unit_test(greedy_rlp_is_deterministic),
        cmocka_unit_test(rlp_refuses_a_bad_file),
        cmocka_unit_test(the_momentum_chooses_the_network),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    sw_test_cleanup();
    return failed;
}
