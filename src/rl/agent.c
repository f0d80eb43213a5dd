/* The DQN agent: an online Q-network and its target copy (one sw_model, two weight vectors), a
 * replay pool, double-DQN learning steps and the pre-training regression. All memory is
 * allocated in sw_rl_agent_new; learning and acting allocate nothing. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "syncwise/err.h"
#include "syncwise/optim.h"
#include "syncwise/rl.h"
#include "syncwise/rng.h"

struct sw_rl_agent {
    sw_rl_hparams hp;
    sw_model *net;
    size_t n_params, dim;
    float *theta, *target_theta, *grad;
    float *x, *y; /* a mini-batch of inputs, and of regression targets */
    float *q_out; /* the Q values sw_rl_agent_q returns */
    int *best;    /* per row: argmax of the online network at s' */
    /* Replay pool: a ring of `replay` transitions. */
    float *rs, *rnext, *rreward;
    int *raction;
    bool *rdone;
    size_t r_count, r_head;
    uint64_t steps;
    sw_rng rng;
};

sw_rl_hparams sw_rl_default_hparams(void)
{
    sw_rl_hparams hp = {.layout = SW_RL_LAYOUT_PAPER,
                        .history = 10,
                        .replay = 50,
                        .minibatch = 32,
                        .copy_every = 5,
                        .gamma = 0.8f,
                        .epsilon = 0.1f,
                        .lr = 0.01f};
    strcpy(hp.qnet, "mlp:u=64/32,act=leaky");
    return hp;
}

int sw_rl_check_hparams(const sw_rl_hparams *hp, char *err)
{
    if (!sw_rl_tuple(hp->layout))
        return sw_fail(err, SW_EINVAL,
                       "feature layout %u is not %d (the paper's), %d (momentum) or %d (waiting)",
                       hp->layout, SW_RL_LAYOUT_PAPER, SW_RL_LAYOUT_MOMENTUM, SW_RL_LAYOUT_WAITING);
    if (hp->history < 1 || hp->history > SW_RL_MAX_HISTORY)
        return sw_fail(err, SW_EINVAL, "history %u is not in [1, %d]", hp->history,
                       SW_RL_MAX_HISTORY);
    if (hp->replay < 1 || hp->replay > (1u << 24) || hp->minibatch < 1 || hp->minibatch > 4096 ||
        hp->copy_every < 1)
        return sw_fail(err, SW_EINVAL,
                       "replay %u, mini-batch %u and copy interval %u must be "
                       "positive (replay <= 2^24, mini-batch <= 4096)",
                       hp->replay, hp->minibatch, hp->copy_every);
    if (!(hp->gamma >= 0 && hp->gamma <= 1) || !(hp->epsilon >= 0 && hp->epsilon <= 1) ||
        !(hp->lr > 0 && hp->lr < 10) || !(hp->grad_clip >= 0 && isfinite(hp->grad_clip)))
        return sw_fail(err, SW_EINVAL,
                       "gamma %g and epsilon %g must be in [0, 1], lr %g in "
                       "(0, 10), the gradient clip %g finite and not negative",
                       hp->gamma, hp->epsilon, hp->lr, hp->grad_clip);
    if (memchr(hp->qnet, '\0', sizeof hp->qnet) == NULL || hp->qnet[0] == '\0')
        return sw_fail(err, SW_EINVAL, "missing Q-network spec");
    return 0;
}

static int allocate(sw_rl_agent *a)
{
    size_t b = a->hp.minibatch, n = a->hp.replay, d = a->dim, p = a->n_params;
    a->theta = malloc(p * sizeof(float));
    a->target_theta = malloc(p * sizeof(float));
    a->grad = malloc(p * sizeof(float));
    a->x = malloc(b * d * sizeof(float));
    a->y = malloc(b * SW_RL_ACTIONS * sizeof(float));
    a->q_out = malloc(SW_RL_ACTIONS * sizeof(float));
    a->best = malloc(b * sizeof(int));
    a->rs = malloc(n * d * sizeof(float));
    a->rnext = malloc(n * d * sizeof(float));
    a->rreward = malloc(n * sizeof(float));
    a->raction = malloc(n * sizeof(int));
    a->rdone = malloc(n * sizeof(bool));
    return a->theta && a->target_theta && a->grad && a->x && a->y && a->q_out && a->best && a->rs &&
                   a->rnext && a->rreward && a->raction && a->rdone
               ? 0
               : SW_ENOMEM;
}

int sw_rl_agent_new(sw_rl_agent **out, const sw_rl_hparams *hp, const float *init, size_t n_init,
                    uint64_t seed, char *err)
{
    *out = NULL;
    int rc = sw_rl_check_hparams(hp, err);
    if (rc)
        return rc;
    sw_rl_agent *a = calloc(1, sizeof *a);
    if (!a)
        return sw_fail(err, SW_ENOMEM, "out of memory for an RL agent");
    a->hp = *hp;
    a->dim = (size_t)hp->history * sw_rl_tuple(hp->layout);
    sw_model_desc d = {
        .in_shape = {1, 1, (uint32_t)a->dim}, .objective = SW_REGRESS, .n_classes = SW_RL_ACTIONS};
    strcpy(d.spec, hp->qnet);
    if ((rc = sw_model_new(&a->net, &d, hp->minibatch, err))) {
        free(a);
        return rc;
    }
    strcpy(a->hp.qnet, sw_model_get_desc(a->net)->spec);
    a->n_params = sw_model_n_params(a->net);
    if (allocate(a)) {
        sw_rl_agent_free(a);
        return sw_fail(err, SW_ENOMEM, "out of memory for an RL agent");
    }
    if (init && n_init != a->n_params) {
        rc = sw_fail(err, SW_EMISMATCH, "%zu weights for a Q-network '%s' of %zu", n_init,
                     a->hp.qnet, a->n_params);
        sw_rl_agent_free(a);
        return rc;
    }
    if (init)
        memcpy(a->theta, init, a->n_params * sizeof(float));
    else
        sw_model_init_params(a->net, a->theta, seed);
    memcpy(a->target_theta, a->theta, a->n_params * sizeof(float));
    sw_rng_seed(&a->rng, seed, SW_STREAM_RL);
    *out = a;
    return 0;
}

void sw_rl_agent_free(sw_rl_agent *a)
{
    if (!a)
        return;
    sw_model_free(a->net);
    free(a->theta);
    free(a->target_theta);
    free(a->grad);
    free(a->x);
    free(a->y);
    free(a->q_out);
    free(a->best);
    free(a->rs);
    free(a->rnext);
    free(a->rreward);
    free(a->raction);
    free(a->rdone);
    free(a);
}

size_t sw_rl_agent_n_params(const sw_rl_agent *a)
{
    return a->n_params;
}
size_t sw_rl_agent_dim(const sw_rl_agent *a)
{
    return a->dim;
}
const sw_rl_hparams *sw_rl_agent_hparams(const sw_rl_agent *a)
{
    return &a->hp;
}
const float *sw_rl_agent_weights(const sw_rl_agent *a)
{
    return a->target_theta;
}

static int argmax(const float *q)
{
    int best = 0;
    for (int i = 1; i < SW_RL_ACTIONS; i++)
        if (q[i] > q[best])
            best = i;
    return best;
}

const float *sw_rl_agent_q(sw_rl_agent *a, const float *state)
{
    memcpy(a->q_out, sw_model_forward(a->net, a->target_theta, state, 1),
           SW_RL_ACTIONS * sizeof(float));
    return a->q_out;
}

int sw_rl_agent_act(sw_rl_agent *a, const float *state, double epsilon)
{
    if (epsilon > 0 && sw_rng_uniform(&a->rng) < epsilon)
        return (int)sw_rng_below(&a->rng, SW_RL_ACTIONS);
    return argmax(sw_rl_agent_q(a, state));
}

void sw_rl_agent_remember(sw_rl_agent *a, const float *s, int action, float reward,
                          const float *next, bool done)
{
    size_t i = a->r_head, d = a->dim;
    memcpy(a->rs + i * d, s, d * sizeof(float));
    memcpy(a->rnext + i * d, next, d * sizeof(float));
    a->raction[i] = action;
    a->rreward[i] = reward;
    a->rdone[i] = done;
    a->r_head = (i + 1) % a->hp.replay;
    if (a->r_count < a->hp.replay)
        a->r_count++;
}

/* One SGD step of the online network towards y on the chosen actions only: the other outputs'
 * targets are the network's own predictions, so their errors, and gradients, are zero. */
static double fit(sw_rl_agent *a, const int *actions, const float *targets, size_t n)
{
    const float *q = sw_model_forward(a->net, a->theta, a->x, n);
    memcpy(a->y, q, n * SW_RL_ACTIONS * sizeof(float));
    for (size_t r = 0; r < n; r++)
        a->y[r * SW_RL_ACTIONS + (size_t)actions[r]] = targets[r];
    sw_batch b = {.x = a->x, .target = a->y, .n = n};
    double loss = sw_model_grad(a->net, a->theta, &b, a->grad);
    float lr = a->hp.lr;
    if (a->hp.grad_clip > 0) { /* one outlying target cannot throw the network far */
        double norm = sqrt(sw_sq_norm(a->grad, a->n_params));
        if (norm > a->hp.grad_clip)
            lr = (float)(lr * (a->hp.grad_clip / norm));
    }
    sw_sgd_step(a->theta, a->grad, a->n_params, lr, 0);
    return loss;
}

double sw_rl_agent_learn(sw_rl_agent *a)
{
    size_t n = a->hp.minibatch, d = a->dim;
    if (a->r_count < n)
        return -1;
    int actions[4096];
    float targets[4096];
    size_t pick[4096];
    for (size_t r = 0; r < n; r++) {
        pick[r] = sw_rng_below(&a->rng, a->r_count);
        memcpy(a->x + r * d, a->rnext + pick[r] * d, d * sizeof(float));
    }
    /* Double DQN: the online network picks the next action, the target network values it. */
    const float *q = sw_model_forward(a->net, a->theta, a->x, n);
    for (size_t r = 0; r < n; r++)
        a->best[r] = argmax(q + r * SW_RL_ACTIONS);
    q = sw_model_forward(a->net, a->target_theta, a->x, n);
    for (size_t r = 0; r < n; r++) {
        size_t i = pick[r];
        double next = a->rdone[i] ? 0 : q[r * SW_RL_ACTIONS + (size_t)a->best[r]];
        targets[r] = (float)(a->rreward[i] + a->hp.gamma * next);
        actions[r] = a->raction[i];
        memcpy(a->x + r * d, a->rs + i * d, d * sizeof(float));
    }
    double loss = fit(a, actions, targets, n);
    if (++a->steps % a->hp.copy_every == 0)
        memcpy(a->target_theta, a->theta, a->n_params * sizeof(float));
    return loss;
}

double sw_rl_agent_regress(sw_rl_agent *a, const float *states, const int *actions,
                           const float *targets, size_t n)
{
    if (n < 1 || n > a->hp.minibatch)
        return NAN; /* the agent's buffers hold one minibatch */
    memcpy(a->x, states, n * a->dim * sizeof(float));
    double loss = fit(a, actions, targets, n);
    memcpy(a->target_theta, a->theta, a->n_params * sizeof(float));
    return loss;
}
