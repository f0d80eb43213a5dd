/* A shard's apply in parts (shard_step.c): whatever the number of parts and the order they run
 * in, θ and the optimizer's state get the bits of the apply in one part, and the parts' shares
 * of the squared norms add up to the whole ones (of the sum, and the sum of the gradients'
 * own, which DBW reads, those measured as they came left out); for dense and sparse gradients,
 * a lone dense one (its own sum), an apply whose slices were all lost, plain SGD, momentum and
 * Adam; run one part after another and on a team of threads. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "shard_internal.h"
#include "syncwise/optim.h"
#include "syncwise/team.h"

enum { LEN = 1001, GRADS = 3, NNZ = 97 };

typedef struct slice {
    float theta[LEN], sum[LEN];
    sw_optim opt;
} slice;

/* Gradients: dense ones, and a sparse one of NNZ ascending places. */
static float dense[GRADS][LEN], sparse_val[NNZ];
static uint32_t sparse_idx[NNZ];

static void make_gradients(void)
{
    for (int k = 0; k < GRADS; k++)
        for (int j = 0; j < LEN; j++)
            dense[k][j] = sinf((float)(j * (k + 3))) * (0.5f + (float)k);
    for (uint32_t i = 0; i < NNZ; i++) {
        sparse_idx[i] = i * (LEN / NNZ) + (i % 3);
        sparse_val[i] = cosf((float)i) - 0.25f;
    }
}

static void slice_init(slice *s, const char *optim)
{
    for (int j = 0; j < LEN; j++)
        s->theta[j] = 0.01f * (float)(j % 17) - 0.08f;
    memset(&s->opt, 0, sizeof s->opt);
    if (optim) {
        sw_optim_params p;
        assert_int_equal(sw_optim_parse(&p, optim, NULL), 0);
        assert_int_equal(sw_optim_init(&s->opt, &p, LEN, NULL), 0);
    }
}

/* Three applies of the case's gradients in `parts` parts, run last part first (or on the team
 * when given); the squared norms of their sums in sq, the sums of the gradients' in each. */
static void apply(slice *s, const sw__held *const *g, uint32_t n_g, uint32_t n, bool lone,
                  uint32_t parts, sw_team *team, double sq[3], double each[3])
{
    for (int t = 0; t < 3; t++) {
        sw__apply_plan p = {.g = g, .n_g = n_g, .lone = lone ? g[0]->g : NULL,
                            .theta = s->theta, .sum = s->sum, .len = LEN,
                            .opt = s->opt.m ? &s->opt : NULL, .step = s->opt.steps + 1,
                            .lr = 0.05f, .wd = 0.001f, .n = n, .want_sq = true};
        if (team) /* on threads, as a shard's apply runs */
            sw_team_run(team, parts, sw__shard_apply_part, &p);
        else
            for (uint32_t i = parts; i-- > 0;)
                sw__shard_apply_part(&p, i, parts);
        if (p.opt)
            s->opt.steps = p.step;
        sq[t] = each[t] = 0;
        for (uint32_t i = 0; i < parts; i++) {
            sq[t] += p.sq[i];
            each[t] += p.each[i];
        }
    }
}

static void parts_give_the_bits_of_one(void **state)
{
    (void)state;
    make_gradients();
    sw__held d[GRADS], sp = {.g = sparse_val, .idx = sparse_idx, .nnz = NNZ};
    for (int k = 0; k < GRADS; k++)
        d[k] = (sw__held){.g = dense[k]};
    sw__held measured = d[0]; /* as a push measured when it came: its parts add none */
    measured.measured = true;
    measured.sq = 1e30;
    const sw__held *dense_three[] = {&d[0], &d[1], &d[2]}, *sparse_first[] = {&sp, &d[1]},
                   *lone[] = {&d[2]}, *one_measured[] = {&d[1], &measured, &sp};
    struct {
        const sw__held *const *g;
        uint32_t n_g, n;
        bool lone;
    } cases[] = {
        {dense_three, 3, 3, false}, {sparse_first, 2, 4, false}, /* two of four lost */
        {lone, 1, 1, true},        {NULL, 0, 2, false},          /* every slice lost */
        {one_measured, 3, 3, false},
    };
    const char *optims[] = {NULL, "sgd:momentum=0.9", "sgd:momentum=0.5,nesterov=1", "adam"};
    const uint32_t parts[] = {2, 3, 7, 64, 3}; /* the last on a team of three threads */
    sw_team *team;
    assert_int_equal(sw_team_new(&team, 3, NULL), 0);
    for (size_t o = 0; o < 4; o++)
        for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
            static slice one, many;
            double sq1[3], sqn[3], each1[3], eachn[3], want = 0;
            for (uint32_t k = 0; k < cases[c].n_g; k++) {
                const sw__held *e = cases[c].g[k];
                want += e->measured ? 0 : sw_sq_norm(e->g, e->idx ? e->nnz : LEN);
            }
            slice_init(&one, optims[o]);
            apply(&one, cases[c].g, cases[c].n_g, cases[c].n, cases[c].lone, 1, NULL, sq1,
                  each1);
            for (size_t p = 0; p < 5; p++) {
                slice_init(&many, optims[o]);
                apply(&many, cases[c].g, cases[c].n_g, cases[c].n, cases[c].lone, parts[p],
                      p == 4 ? team : NULL, sqn, eachn);
                assert_memory_equal(one.theta, many.theta, sizeof one.theta);
                if (one.opt.m)
                    assert_memory_equal(one.opt.m, many.opt.m, sizeof one.theta);
                if (one.opt.u)
                    assert_memory_equal(one.opt.u, many.opt.u, sizeof one.theta);
                for (int t = 0; t < 3; t++) {
                    assert_true(fabs(sq1[t] - sqn[t]) <= 1e-9 * (1 + sq1[t]));
                    assert_true(fabs(eachn[t] - want) <= 1e-9 * (1 + want));
                }
                sw_optim_free(&many.opt);
            }
            for (int t = 0; t < 3; t++) /* a lone gradient's sum is itself */
                assert_true(fabs(each1[t] - want) <= 1e-9 * (1 + want) &&
                            (!cases[c].lone || sq1[t] == each1[t]));
            assert_true(cases[c].n_g == 0 || sq1[0] > 0);
            sw_optim_free(&one.opt);
        }
    sw_team_free(team);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parts_give_the_bits_of_one),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
