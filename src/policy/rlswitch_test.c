/* rlswitch on simulator runs (each checked against its promise by the simulator): a stretch is
 * its policy's, so a choice that never changes gives the very run that policy gives alone; the
 * choice comes once per stretch; through every hand-over from one policy to another, every
 * worker pushes in every stretch (none is left held by the policy before); choosing once is one
 * policy's run, and the checker holds it to that. */
#include "testutil/simlog.h"

#include "syncwise/rl.h"
#include "testutil/simdata.h"

enum { WORKERS = 5 };

static sw_sim_config base(const char *policy)
{
    sw_sim_config c = small_run(policy, WORKERS, "straggle:p=0.3,mean=4,sd=1,base=1", 1000);
    assert_int_equal(sw_optim_parse(&c.optim, "sgd:momentum=0.5", NULL), 0);
    c.target_acc = 0; /* none: every run goes on to its end */
    return c;
}

/* Every ordered pair of actions follows one another once in this cycle. */
static const int every_hand_over[] = {0, 1, 2, 0, 2, 1};
enum { HAND_OVERS = sizeof every_hand_over / sizeof every_hand_over[0] };

/* The chooser of the test: always `fixed`, or (fixed < 0) the cycle above. */
typedef struct picks {
    int fixed;
    uint64_t calls;
    bool saw_momentum; /* every state carried the run's momentum */
} picks;

static int pick(void *ctx, const float *state, double now, double loss)
{
    (void)now, (void)loss;
    picks *p = ctx;
    p->saw_momentum &= state[3] == 0.5f; /* the newest stretch's tuple: n, L, fall, momentum */
    return p->fixed >= 0 ? p->fixed : every_hand_over[p->calls++ % HAND_OVERS];
}

/* A run of `spec` (rlswitch's) under the test's chooser; its log. */
static char *run_spec(const char *spec, picks *p, sw_sim_result *res)
{
    sw_rl_chooser chooser = {.choose = pick, .ctx = p, .history = 3};
    sw_sim_config c = base(spec);
    c.policy_ops = sw_policy_find("rlswitch");
    c.policy_ctx = &chooser;
    return run_log(c, res); /* it fails the test on a broken promise */
}

static char *run_switching(picks *p, sw_sim_result *res)
{
    return run_spec("rlswitch", p, res);
}

static void a_stretch_is_its_policy_s_run(void **state)
{
    (void)state;
    for (int a = 0; a < SW_RL_ACTIONS; a++) {
        picks p = {.fixed = a, .saw_momentum = true};
        sw_sim_result mixed, alone;
        free(run_switching(&p, &mixed));
        sw_sim_config c = base(sw_rl_stretch_policies[a]);
        assert_int_equal(sw_sim_run(&c, &alone, NULL), 0);
        assert_true(p.saw_momentum);
        assert_int_equal(mixed.stats.pushes, alone.stats.pushes);
        assert_int_equal(mixed.stats.applies, alone.stats.applies);
        assert_true(mixed.end_t == alone.end_t);
        assert_true(mixed.target_t == alone.target_t);
        sw_sim_result_free(&mixed);
        sw_sim_result_free(&alone);
    }
}

static void the_choice_comes_once_per_stretch_and_nobody_is_held_over(void **state)
{
    (void)state;
    picks p = {.fixed = -1};
    sw_sim_result res;
    char *log = run_switching(&p, &res);
    uint64_t stretch = SW_RL_STRETCH_STEPS * WORKERS;
    assert_true(res.stats.pushes > (HAND_OVERS + 1) * stretch); /* every hand-over happened */
    /* At the start, then at the push that follows each whole stretch. */
    assert_int_equal(p.calls, 1 + (res.stats.pushes - 1) / stretch);
    events es = read_events(log);
    uint64_t pushes = 0, pushed[WORKERS] = {0};
    for (size_t i = 0; i < es.n; i++) {
        if (es.e[i].ev.kind != SW_EV_PUSH)
            continue;
        pushed[es.e[i].ev.worker]++;
        if (++pushes % stretch == 0) { /* a whole stretch: everyone pushed in it */
            for (uint32_t w = 0; w < WORKERS; w++)
                assert_true(pushed[w] > 0);
            memset(pushed, 0, sizeof pushed);
        }
    }
    free(es.e);
    free(log);
    sw_sim_result_free(&res);
}

/* choose=once: the first choice, made at the start, runs the whole run as its policy alone would,
 * however the chooser would go on. */
static void choosing_once_runs_the_first_choice_throughout(void **state)
{
    (void)state;
    picks p = {.fixed = -1};
    sw_sim_result once, alone;
    free(run_spec("rlswitch:choose=once", &p, &once));
    assert_int_equal(p.calls, 1);
    sw_sim_config c = base(sw_rl_stretch_policies[every_hand_over[0]]);
    assert_int_equal(sw_sim_run(&c, &alone, NULL), 0);
    assert_true(once.stats.pushes > (HAND_OVERS + 1) * SW_RL_STRETCH_STEPS * WORKERS);
    assert_int_equal(once.stats.pushes, alone.stats.pushes);
    assert_int_equal(once.stats.applies, alone.stats.applies);
    assert_true(once.end_t == alone.end_t);
    sw_sim_result_free(&once);
    sw_sim_result_free(&alone);

    /* Held to choosing once, a run that hands over breaks the promise: no one policy's run. */
    p = (picks){.fixed = -1};
    char *log = run_switching(&p, &alone);
    events es = read_events(log);
    sw_check *check;
    char err0[SW_ERR_LEN] = "";
    assert_int_equal(sw_check_new(&check, "rlswitch:choose=once", es.info.slots, 0, err0), 0);
    sw_check_simulated(check);
    int rc = 0;
    for (size_t i = 0; i < es.n && !rc; i++)
        rc = sw_check_event(check, &es.e[i].ev, err0);
    assert_int_equal(rc, SW_EPROMISE);
    assert_non_null(strstr(err0, "kept none of its policies' promises"));
    sw_check_free(check);
    free(es.e);
    free(log);
    sw_sim_result_free(&alone);

    c = base("rlswitch:choose=sometimes");
    char err[SW_ERR_LEN] = "";
    assert_int_not_equal(sw_sim_run(&c, &alone, err), 0);
    assert_non_null(strstr(err, "choose='sometimes' is not stretch or once"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_stretch_is_its_policy_s_run),
        cmocka_unit_test(the_choice_comes_once_per_stretch_and_nobody_is_held_over),
        cmocka_unit_test(choosing_once_runs_the_first_choice_throughout),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
