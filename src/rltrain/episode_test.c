/* RL instances drawn from a family of scenarios: every entry of every list is checked before
 * anything runs, each instance draws one entry of each list with its label, draws are the same
 * each time, and a list's draws never move the others' (instances of the classic scenario stay
 * what they were). */
#include "testutil/testutil.h"

/* cmocka needs these first. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "syncwise/err.h"
#include "syncwise/rl_train.h"

static sw_data data;

static int load(void **state)
{
    (void)state;
    char err[SW_ERR_LEN];
    return sw_data_load(&data, "synthetic:task=logistic,d=6,n=400,test=50,val=50", 1, err);
}

static int unload(void **state)
{
    (void)state;
    sw_data_free(&data);
    return 0;
}

/* A quick scenario: a few hundred pushes at most. */
static sw_rl_scenario quick(void)
{
    sw_rl_scenario sc = sw_rl_default_scenario();
    sc.data = &data;
    sc.workers = "3";
    sc.models = "mlp:h=0|mlp:h=1,u=4";
    sc.max_pushes = 150;
    sc.target_acc = 0.99;
    return sc;
}

static void every_entry_is_checked(void **state)
{
    (void)state;
    char err[SW_ERR_LEN];
    sw_rl_scenario sc = quick();
    sc.lrs = "0.01|0.05";
    sc.optimizers = "sgd|sgd:momentum=0.9|adam";
    sc.workers = "3|5";
    assert_int_equal(sw_rl_scenario_check(&sc, err), 0);
    static const struct {
        size_t field;
        const char *list, *named;
    } bad[] = {
        {offsetof(sw_rl_scenario, lrs), "0.01||0.05", "learning rates"},
        {offsetof(sw_rl_scenario, lrs), "0.01|fast", "fast"},
        {offsetof(sw_rl_scenario, lrs), "0.01|-1", "-1"},
        {offsetof(sw_rl_scenario, optimizers), "sgd|sdg", "sdg"},
        {offsetof(sw_rl_scenario, workers), "3|0", "'0'"},
        {offsetof(sw_rl_scenario, workers), "3|", "workers"},
        {offsetof(sw_rl_scenario, cluster), "fixed:t=1|straggle:p=7", "p"},
        {offsetof(sw_rl_scenario, models), "mlp:h=0|", "models"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        sw_rl_scenario b = sc;
        *(const char **)((char *)&b + bad[i].field) = bad[i].list;
        err[0] = '\0';
        assert_int_not_equal(sw_rl_scenario_check(&b, err), 0);
        if (!strstr(err, bad[i].named))
            fail_msg("'%s': '%s' does not name '%s'", bad[i].list, err, bad[i].named);
    }
}

/* Each instance draws one entry of each list that offers a choice, all entries come up, and
 * the label names exactly the lists with a choice. */
static void a_family_draws_every_entry(void **state)
{
    (void)state;
    char err[SW_ERR_LEN];
    sw_rl_scenario sc = quick();
    sc.lrs = "0.01|0.05";
    sc.workers = "2|3|4";
    bool seen_lr[2] = {false}, seen_w[3] = {false};
    for (uint64_t i = 0; i < 24; i++) {
        sw_rl_run r;
        assert_int_equal(
            sw_rl_run_instance(&sc, 7, i, 0, "asp", SW_RL_PLAIN, NULL, NULL, 0, &r, err), 0);
        assert_non_null(strstr(r.regime, "model="));
        assert_null(strstr(r.regime, "optimizer="));
        assert_null(strstr(r.regime, "cluster="));
        seen_lr[0] |= strstr(r.regime, "lr=0.01") != NULL;
        seen_lr[1] |= strstr(r.regime, "lr=0.05") != NULL;
        for (int w = 0; w < 3; w++) {
            char word[16];
            snprintf(word, sizeof word, "workers=%d", w + 2);
            seen_w[w] |= strstr(r.regime, word) != NULL;
        }
        sw_rl_run again;
        assert_int_equal(
            sw_rl_run_instance(&sc, 7, i, 0, "asp", SW_RL_PLAIN, NULL, NULL, 0, &again, err), 0);
        assert_string_equal(again.regime, r.regime);
        assert_true(again.time == r.time && again.iterations == r.iterations);
    }
    assert_true(seen_lr[0] && seen_lr[1] && seen_w[0] && seen_w[1] && seen_w[2]);
}

/* A list whose entries are all the same changes nothing but the label: its draw comes from a
 * stream of its own, so the model, the data share and the run are those of the plain scenario. */
static void other_lists_leave_an_instance_as_it_was(void **state)
{
    (void)state;
    char err[SW_ERR_LEN];
    sw_rl_scenario plain = quick(), family = quick();
    family.lrs = "0.01|0.01";
    family.optimizers = "sgd|sgd";
    for (uint64_t i = 0; i < 6; i++) {
        sw_rl_run a, b;
        assert_int_equal(
            sw_rl_run_instance(&plain, 3, i, 1, "ssp:s=1", SW_RL_PLAIN, NULL, NULL, 0, &a, err), 0);
        assert_int_equal(
            sw_rl_run_instance(&family, 3, i, 1, "ssp:s=1", SW_RL_PLAIN, NULL, NULL, 0, &b, err),
            0);
        assert_string_equal(a.model, b.model);
        assert_true(a.time == b.time && a.iterations == b.iterations && a.applies == b.applies);
        assert_null(strstr(a.regime, "lr="));
        assert_non_null(strstr(b.regime, "lr=0.01 optimizer=sgd"));
    }
}

/* The progress reward is earned from the probe losses an episode records: pre-training on the
 * same copied run regresses other returns with it than without (they would be the same if the
 * losses were never seen), and a run of the policy itself is the same either way. */
static void the_progress_reward_reads_the_probe_losses(void **state)
{
    (void)state;
    char err[SW_ERR_LEN];
    sw_rl_hparams hp = sw_rl_default_hparams();
    double td[2];
    uint64_t iterations[2];
    for (int k = 0; k < 2; k++) {
        sw_rl_scenario sc = quick();
        sc.models = "mlp:h=0";
        sc.reward_progress = k ? 100 : 0;
        sw_rl_agent *a;
        assert_int_equal(sw_rl_agent_new(&a, &hp, NULL, 0, 5, err), 0);
        sw_rl_run r;
        assert_int_equal(
            sw_rl_run_instance(&sc, 3, 0, 0, "bsp", SW_RL_EMULATE, a, NULL, 0, &r, err), 0);
        td[k] = r.td_loss;
        iterations[k] = r.iterations;
        sw_rl_agent_free(a);
    }
    assert_true(iterations[0] == iterations[1] && iterations[0] > 10);
    assert_true(td[0] != td[1]);
}

/* In the stretch layout an episode runs rlswitch: copying a classic policy in every stretch is
 * that policy's own run, and a learning episode learns from its stretches. */
static void a_stretch_episode_runs_rlswitch(void **state)
{
    (void)state;
    char err[SW_ERR_LEN];
    sw_rl_hparams hp = sw_rl_default_hparams();
    hp.layout = SW_RL_LAYOUT_STRETCH;
    hp.minibatch = 2;
    sw_rl_scenario sc = quick();
    sc.models = "mlp:h=0";
    sw_rl_agent *a;
    assert_int_equal(sw_rl_agent_new(&a, &hp, NULL, 0, 5, err), 0);
    for (int k = 0; k < SW_RL_ACTIONS; k++) {
        const char *classic = sw_rl_stretch_policies[k];
        sw_rl_run copied, alone;
        assert_int_equal(
            sw_rl_run_instance(&sc, 3, 0, 0, classic, SW_RL_EMULATE, a, NULL, 0, &copied, err), 0);
        assert_int_equal(
            sw_rl_run_instance(&sc, 3, 0, 0, classic, SW_RL_PLAIN, NULL, NULL, 0, &alone, err), 0);
        assert_true(copied.iterations == alone.iterations && copied.iterations > 60);
        assert_true(copied.applies == alone.applies && copied.time == alone.time);
        assert_true(copied.td_loss > 0); /* pre-training regressed on its stretches */
    }
    sw_rl_run other; /* another ssp is none of its actions */
    assert_int_equal(
        sw_rl_run_instance(&sc, 3, 0, 0, "ssp:s=1", SW_RL_EMULATE, a, NULL, 0, &other, err),
        SW_EINVAL);
    assert_non_null(strstr(err, "not 'ssp:s=1'"));
    sw_rl_agent_free(a);
    /* Learning from its stretches, exploring: a cost per change of action is learnt from (the
     * same run, the same fresh agent, other losses). */
    double td[2];
    for (int k = 0; k < 2; k++) {
        sc.switch_cost = k ? 100 : 0;
        assert_int_equal(sw_rl_agent_new(&a, &hp, NULL, 0, 5, err), 0);
        sw_rl_run learnt;
        assert_int_equal(
            sw_rl_run_instance(&sc, 3, 0, 0, NULL, SW_RL_LEARN, a, NULL, 0.9, &learnt, err), 0);
        td[k] = learnt.td_loss;
        sw_rl_agent_free(a);
    }
    assert_true(td[0] > 0 && td[1] > td[0]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_entry_is_checked),
        cmocka_unit_test(a_family_draws_every_entry),
        cmocka_unit_test(other_lists_leave_an_instance_as_it_was),
        cmocka_unit_test(the_progress_reward_reads_the_probe_losses),
        cmocka_unit_test(a_stretch_episode_runs_rlswitch),
    };
    int failed = cmocka_run_group_tests(tests, load, unload);
    sw_test_cleanup();
    return failed;
}
