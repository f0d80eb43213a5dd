/* The RLP state: the last H normalised tuples (n, L(w), L(w') - L(w), l_n), newest first, each
 * with the optimizer's momentum in the second layout, and with the share of live workers
 * waiting and the pusher's lead over the slowest clock in the third; or, in the stretch layout,
 * one tuple per stretch of rlswitch. The normalisations are documented in syncwise/rl.h and
 * docs/rl.md. */
#include <math.h>
#include <string.h>

#include "syncwise/rl.h"

const char *const sw_rl_stretch_policies[SW_RL_ACTIONS] = {
    [SW_RL_STRETCH_BSP] = "bsp", [SW_RL_STRETCH_SSP] = "ssp:s=4", [SW_RL_STRETCH_ASP] = "asp"};

int sw_rl_stretch_action(const char *policy)
{
    for (int a = 0; a < SW_RL_ACTIONS; a++)
        if (strcmp(policy, sw_rl_stretch_policies[a]) == 0)
            return a;
    return -1;
}

uint32_t sw_rl_tuple(uint32_t layout)
{
    switch (layout) {
    case SW_RL_LAYOUT_PAPER: return 4;
    case SW_RL_LAYOUT_MOMENTUM: return 5;
    case SW_RL_LAYOUT_WAITING: return 7;
    case SW_RL_LAYOUT_STRETCH: return 7;
    default: return 0;
    }
}

float sw_rl_momentum(const sw_optim_params *o)
{
    return o->kind == SW_OPTIM_ADAM ? o->beta1 : o->momentum;
}

void sw_rl_features_init(sw_rl_features *f, uint32_t history, uint32_t layout,
                         const sw_optim_params *o)
{
    memset(f, 0, sizeof *f);
    f->history = history < 1 ? 1 : history > SW_RL_MAX_HISTORY ? SW_RL_MAX_HISTORY : history;
    f->tuple = sw_rl_tuple(layout) ? sw_rl_tuple(layout) : sw_rl_tuple(SW_RL_LAYOUT_PAPER);
    f->loss0 = f->mark_loss = NAN;
    f->momentum = sw_rl_momentum(o);
}

static float clip(double x, double bound)
{
    if (!(x == x)) /* NAN: a missing loss reads as no information */
        return 0.0f;
    return (float)(x < -bound ? -bound : x > bound ? bound : x);
}

void sw_rl_features_note_loss0(sw_rl_features *f, const sw_engine_view *v)
{
    if (isnan(f->loss0) && isfinite(v->loss_before) && v->loss_before > 0)
        f->loss0 = v->loss_before;
}

/* The newest tuple, to fill: the ring's slot for iteration (or stretch) f->n, counted now. */
static float *next_tuple(sw_rl_features *f)
{
    f->n++;
    return f->ring[(f->n - 1) % f->history];
}

/* f->state from the ring, newest first, zeros for what has not happened yet. */
static void rebuild_state(sw_rl_features *f)
{
    size_t bytes = f->tuple * sizeof(float);
    for (uint32_t k = 0; k < f->history; k++) {
        float *dst = f->state + (size_t)k * f->tuple;
        if (k < f->n)
            memcpy(dst, f->ring[(f->n - 1 - k) % f->history], bytes);
        else
            memset(dst, 0, bytes);
    }
}

static float steps_feature(double per_worker)
{
    return (float)(log1p(per_worker) / log1p(SW_RL_STEPS_UNIT));
}

void sw_rl_features_update(sw_rl_features *f, const sw_engine_view *v, const sw_push *p)
{
    float *t = next_tuple(f);
    double live = v->n_live ? (double)v->n_live : 1.0;
    sw_rl_features_note_loss0(f, v);
    double l0 = isnan(f->loss0) ? 1.0 : f->loss0;
    /* The view is after the apply: the applies between pull and push exclude this one. */
    double between = v->version > p->version + 1 ? (double)(v->version - 1 - p->version) : 0;
    /* A fresh joiner's clock may sit below the slowest started one: it leads by nothing. */
    double lead = p->clock > v->min_live_clock ? (double)(p->clock - v->min_live_clock) : 0;
    t[0] = steps_feature((double)f->n / live);
    t[1] = clip(v->loss_after / l0, 1e3);
    t[2] = clip(SW_RL_DLOSS_SCALE * (v->loss_after - v->loss_before) / l0, SW_RL_DLOSS_CLIP);
    t[3] = clip(between / (live > 1 ? live - 1 : 1), 1e3);
    t[4] = f->momentum;                  /* the later layouts' */
    t[5] = (float)(v->n_waiting / live); /* the pusher counts: it waits until released */
    t[6] = (float)(log1p(lead) / log1p(SW_RL_LEAD_UNIT));
    rebuild_state(f);
}

void sw_rl_features_stretch(sw_rl_features *f, const sw_engine_view *v, uint64_t pushes, int ran)
{
    float *t = next_tuple(f);
    double live = v->n_live ? (double)v->n_live : 1.0;
    double l0 = isnan(f->loss0) ? 1.0 : f->loss0;
    double loss = v->version > 0 ? v->loss_after : NAN; /* none before the first apply */
    t[0] = steps_feature((double)pushes / live);
    t[1] = isfinite(loss) ? clip(loss / l0, 1e3) : 0.0f;
    t[2] = clip(SW_RL_STRETCH_DLOSS_SCALE * (f->mark_loss - loss) / l0, SW_RL_DLOSS_CLIP);
    t[3] = f->momentum;
    for (int a = 0; a < SW_RL_ACTIONS; a++)
        t[4 + a] = a == ran ? 1.0f : 0.0f;
    f->mark_loss = loss;
    rebuild_state(f);
}
