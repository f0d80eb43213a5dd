/* Pre-training's archive: passes over all kept records fit Q to each action's mean return where
 * the states agree (the choice a one-decision run needs); a copying run keeps in it exactly the
 * records it regresses on, and a run that only records leaves the network as it was; the passes
 * report each loss and stop when told to. */
#include "testutil/testutil.h"

/* cmocka needs these first. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "syncwise/err.h"
#include "syncwise/rl_train.h"

static sw_rl_agent *new_agent(uint32_t layout)
{
    sw_rl_hparams hp = sw_rl_default_hparams();
    hp.layout = layout;
    hp.history = 1;
    hp.minibatch = 8;
    sw_rl_agent *a;
    char err[SW_ERR_LEN];
    assert_int_equal(sw_rl_agent_new(&a, &hp, NULL, 0, 3, err), 0);
    return a;
}

/* Two states, each with three actions whose returns scatter around a mean; the best action
 * differs between the states. */
enum { KINDS = 2, REPEATS = 20 };
static const float mean_return[KINDS][SW_RL_ACTIONS] = {{-11, -5, -20}, {-3, -8, -20}};

static void fill(sw_rl_archive *ar, size_t dim)
{
    float *s = calloc(dim, sizeof *s);
    for (int rep = 0; rep < REPEATS; rep++)
        for (int kind = 0; kind < KINDS; kind++)
            for (int act = 0; act < SW_RL_ACTIONS; act++) {
                s[0] = (float)kind;
                float y = mean_return[kind][act] + (rep % 2 ? 1.0f : -1.0f);
                assert_int_equal(sw_rl_archive_add(ar, s, &act, &y, 1), 0);
            }
    free(s);
}

typedef struct seen {
    uint32_t calls, stop_at;
    double first, last;
} seen;

static int note(void *ctx, uint32_t epoch, uint32_t epochs, double loss)
{
    seen *s = ctx;
    assert_int_equal(epoch, ++s->calls);
    assert_true(epoch <= epochs && isfinite(loss));
    if (epoch == 1)
        s->first = loss;
    s->last = loss;
    return epoch == s->stop_at ? 42 : 0;
}

static void passes_fit_each_action_s_mean_return(void **state)
{
    (void)state;
    sw_rl_agent *a = new_agent(SW_RL_LAYOUT_PAPER);
    size_t dim = sw_rl_agent_dim(a);
    sw_rl_archive *ar;
    assert_int_equal(sw_rl_archive_new(&ar, dim, NULL), 0);
    fill(ar, dim);
    assert_int_equal(sw_rl_archive_size(ar), KINDS * SW_RL_ACTIONS * REPEATS);
    seen s = {0};
    assert_int_equal(sw_rl_archive_refit(ar, a, 300, 9, note, &s), 0);
    assert_int_equal(s.calls, 300);
    assert_true(s.last < s.first / 4); /* what remains is the returns' own scatter (1) */
    float *x = calloc(dim, sizeof *x);
    for (int kind = 0; kind < KINDS; kind++) {
        x[0] = (float)kind;
        const float *q = sw_rl_agent_q(a, x);
        for (int act = 0; act < SW_RL_ACTIONS; act++)
            assert_true(fabsf(q[act] - mean_return[kind][act]) < 1);
        assert_int_equal(sw_rl_agent_act(a, x, 0), kind == 0 ? 1 : 0);
    }
    free(x);
    /* The caller may stop the passes (a diverged network): its word is returned. */
    seen stop = {.stop_at = 3};
    assert_int_equal(sw_rl_archive_refit(ar, a, 10, 9, note, &stop), 42);
    assert_int_equal(stop.calls, 3);
    sw_rl_archive_free(ar);
    sw_rl_agent_free(a);
}

static void an_empty_archive_changes_nothing(void **state)
{
    (void)state;
    sw_rl_agent *a = new_agent(SW_RL_LAYOUT_PAPER);
    size_t n = sw_rl_agent_n_params(a);
    float *before = malloc(n * sizeof *before);
    memcpy(before, sw_rl_agent_weights(a), n * sizeof *before);
    sw_rl_archive *ar;
    assert_int_equal(sw_rl_archive_new(&ar, sw_rl_agent_dim(a), NULL), 0);
    seen s = {0};
    assert_int_equal(sw_rl_archive_refit(ar, a, 5, 1, note, &s), 0);
    assert_int_equal(s.calls, 0);
    assert_memory_equal(before, sw_rl_agent_weights(a), n * sizeof *before);
    free(before);
    sw_rl_archive_free(ar);
    sw_rl_agent_free(a);
}

static sw_data data;

static int load(void **state)
{
    (void)state;
    return sw_data_load(&data, "synthetic:task=logistic,d=6,n=400,test=50,val=50", 1, NULL);
}

static int unload(void **state)
{
    (void)state;
    sw_data_free(&data);
    return 0;
}

/* A copying run keeps what it regresses on; a run that only records keeps the same records and
 * leaves the network alone: a resumed pre-training gathers again what its runs kept. */
static void recording_keeps_what_copying_keeps(void **state)
{
    (void)state;
    sw_rl_scenario sc = sw_rl_default_scenario();
    sc.data = &data;
    sc.workers = "3";
    sc.models = "mlp:h=0";
    sc.max_pushes = 150;
    sc.target_acc = 0.99;
    char err[SW_ERR_LEN];
    sw_rl_agent *copier = new_agent(SW_RL_LAYOUT_PAPER), *recorder = new_agent(SW_RL_LAYOUT_PAPER);
    size_t n = sw_rl_agent_n_params(recorder);
    float *before = malloc(n * sizeof *before);
    memcpy(before, sw_rl_agent_weights(recorder), n * sizeof *before);
    sw_rl_archive *kept, *gathered;
    assert_int_equal(sw_rl_archive_new(&kept, sw_rl_agent_dim(copier), NULL), 0);
    assert_int_equal(sw_rl_archive_new(&gathered, sw_rl_agent_dim(recorder), NULL), 0);
    sw_rl_run copied, recorded;
    assert_int_equal(
        sw_rl_run_instance(&sc, 3, 0, 0, "asp", SW_RL_EMULATE, copier, kept, 0, &copied, err), 0);
    assert_int_equal(sw_rl_run_instance(&sc, 3, 0, 0, "asp", SW_RL_RECORD, recorder, gathered, 0,
                                        &recorded, err),
                     0);
    assert_true(sw_rl_archive_size(kept) > 50); /* one record a push */
    assert_int_equal(sw_rl_archive_size(kept), sw_rl_archive_size(gathered));
    assert_true(copied.td_loss > 0 && recorded.td_loss == 0);
    assert_memory_equal(before, sw_rl_agent_weights(recorder), n * sizeof *before);
    free(before);
    sw_rl_archive_free(kept);
    sw_rl_archive_free(gathered);
    sw_rl_agent_free(copier);
    sw_rl_agent_free(recorder);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(passes_fit_each_action_s_mean_return),
        cmocka_unit_test(an_empty_archive_changes_nothing),
        cmocka_unit_test_setup_teardown(recording_keeps_what_copying_keeps, load, unload),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
