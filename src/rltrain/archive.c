/* Pre-training's records kept across runs (rl train --pre-epochs): each copying run regresses
 * on its own records once, in the order the runs come, so the last runs weigh most and a
 * decision met once a run (the stretch layout's first) is seen a few hundred times in all. The
 * archive keeps every (state, action, return) so that passes over all of them, shuffled, fit
 * Q to the mean return of each action where the states agree (docs/rl.md, "Pre-training"). */
#include <stdlib.h>
#include <string.h>

#include "syncwise/err.h"
#include "syncwise/rl_train.h"
#include "syncwise/rng.h"

struct sw_rl_archive {
    size_t dim, n, cap;
    float *states, *returns;
    int *actions;
};

int sw_rl_archive_new(sw_rl_archive **out, size_t dim, char *err)
{
    *out = calloc(1, sizeof **out);
    if (!*out)
        return sw_fail(err, SW_ENOMEM, "no memory for pre-training's archive");
    (*out)->dim = dim;
    return 0;
}

void sw_rl_archive_free(sw_rl_archive *ar)
{
    if (!ar)
        return;
    free(ar->states);
    free(ar->returns);
    free(ar->actions);
    free(ar);
}

size_t sw_rl_archive_size(const sw_rl_archive *ar)
{
    return ar->n;
}

static int grow(sw_rl_archive *ar, size_t need)
{
    size_t cap = ar->cap ? ar->cap : 4096;
    while (cap < need)
        cap *= 2;
    if (cap == ar->cap)
        return 0;
    float *s = realloc(ar->states, cap * ar->dim * sizeof *s);
    if (s)
        ar->states = s;
    float *r = realloc(ar->returns, cap * sizeof *r);
    if (r)
        ar->returns = r;
    int *a = realloc(ar->actions, cap * sizeof *a);
    if (a)
        ar->actions = a;
    if (!s || !r || !a)
        return SW_ENOMEM;
    ar->cap = cap;
    return 0;
}

int sw_rl_archive_add(sw_rl_archive *ar, const float *states, const int *actions,
                      const float *returns, size_t n)
{
    if (grow(ar, ar->n + n))
        return SW_ENOMEM;
    memcpy(ar->states + ar->n * ar->dim, states, n * ar->dim * sizeof(float));
    memcpy(ar->actions + ar->n, actions, n * sizeof(int));
    memcpy(ar->returns + ar->n, returns, n * sizeof(float));
    ar->n += n;
    return 0;
}

int sw_rl_regress_pass(sw_rl_agent *a, const float *states, const int *actions,
                       const float *returns, size_t n, sw_rng *r, double *loss)
{
    size_t mb = sw_rl_agent_hparams(a)->minibatch, dim = sw_rl_agent_dim(a);
    uint32_t *order = malloc((n ? n : 1) * sizeof *order);
    float *xs = malloc(mb * dim * sizeof *xs), *ys = malloc(mb * sizeof *ys);
    int *as = malloc(mb * sizeof *as);
    bool ok = order && xs && ys && as;
    *loss = 0;
    if (ok && n) {
        for (size_t i = 0; i < n; i++)
            order[i] = (uint32_t)i;
        sw_rng_shuffle(r, order, n);
        size_t steps = 0;
        for (size_t at = 0; at < n; at += mb, steps++) {
            size_t m = n - at < mb ? n - at : mb;
            for (size_t j = 0; j < m; j++) {
                uint32_t k = order[at + j];
                memcpy(xs + j * dim, states + (size_t)k * dim, dim * sizeof *xs);
                as[j] = actions[k];
                ys[j] = returns[k];
            }
            *loss += sw_rl_agent_regress(a, xs, as, ys, m);
        }
        *loss /= (double)steps;
    }
    free(order);
    free(xs);
    free(ys);
    free(as);
    return ok ? 0 : SW_ENOMEM;
}

int sw_rl_archive_refit(const sw_rl_archive *ar, sw_rl_agent *a, uint32_t epochs, uint64_t seed,
                        sw_rl_epoch_fn *done, void *ctx)
{
    sw_rng r;
    sw_rng_seed(&r, seed, SW_STREAM_RL);
    for (uint32_t ep = 0; ar->n && ep < epochs; ep++) {
        double loss;
        int rc = sw_rl_regress_pass(a, ar->states, ar->actions, ar->returns, ar->n, &r, &loss);
        if (!rc && done)
            rc = done(ctx, ep + 1, epochs, loss);
        if (rc)
            return rc;
    }
    return 0;
}
