/* What an apply does (engine_internal.h): the loss probes around it, θ through the optimizer
 * at the learning rate in force, and the view and event that report it. */
#include <math.h>
#include <stdlib.h>

#include "engine_internal.h"
#include "syncwise/clock.h"
#include "syncwise/err.h"

float sw_engine_lr(const sw_engine *e)
{
    return isnan(e->policy_lr) ? e->p.lr : e->policy_lr;
}

int sw__engine_optim_new(sw_engine *e, const sw_engine_params *p, char *err)
{
    if (!sw_optim_stateful(&p->optim))
        return 0;
    if (p->concurrent)
        return sw_fail(err, SW_EINVAL,
                       "concurrent applies (--apply-threads) take plain SGD "
                       "only: momentum and Adam keep a state that applies must update one at "
                       "a time");
    /* Without parameters (its driver's shards apply) there is no state to keep; the policies
     * still see the optimizer in their env (a learned policy reads the momentum). */
    if (p->n_params == 0)
        return 0;
    int rc = sw_optim_init(&e->opt, &p->optim, p->n_params, err);
    if (rc || !p->optim_init)
        return rc;
    if (p->optim_init->n != p->n_params ||
        sw_optim_arrays(&p->optim_init->p) != sw_optim_arrays(&p->optim))
        return sw_fail(err, SW_EMISMATCH,
                       "the optimizer state to resume from does not fit "
                       "this run's optimizer and %zu parameters",
                       p->n_params);
    sw_optim_copy_state(&e->opt, p->optim_init);
    return 0;
}

static bool probing(const sw_engine *e)
{
    return (e->wants & SW_WANT_LOSS) && e->p.loss_probe && e->p.n_params;
}

static double probe(sw_engine *e)
{
    double t0 = sw_clock_now_s();
    double loss = e->p.loss_probe(e->p.loss_probe_ctx, e->theta);
    e->probe_s += sw_clock_now_s() - t0;
    return loss;
}

float *sw__engine_writable_theta(sw_engine *e)
{
    if (!e->p.writable)
        return e->theta;
    float *w = e->p.writable(e->p.writable_ctx, e->theta);
    if (w != e->theta && e->theta == e->own) { /* the hook copied it: ours is no longer used */
        free(e->own);
        e->own = NULL;
    }
    return e->theta = w;
}

void sw__engine_apply(sw_engine *e, float lr_scale, double t)
{
    uint32_t count = e->view.buffered;
    e->view.last_apply_t = t;
    e->view.last_apply_n = count;
    bool probe_loss = probing(e);
    if (probe_loss && isnan(e->loss_now))
        e->loss_now = probe(e);
    double sum_sq = 0;
    double *want_sq = (e->wants & SW_WANT_SQ_NORM) ? &sum_sq : NULL;
    if (e->opt.m) { /* momentum or Adam on the mean gradient, sum / count */
        sw__gradbuf_apply_optim(&e->buf, &e->opt, sw__engine_writable_theta(e), 1.0f / (float)count,
                                sw_engine_lr(e) * lr_scale, e->p.weight_decay, want_sq);
    } else { /* θ - lr s (sum / count + wd θ), written as one SGD step on the sum */
        float lr = sw_engine_lr(e) * lr_scale / (float)count;
        sw__gradbuf_apply(&e->buf, sw__engine_writable_theta(e), lr, e->p.weight_decay * (float)count,
                          want_sq);
    }
    if ((e->wants & SW_WANT_SQ_NORM) && e->p.n_params) /* else the driver reports them */
        e->view.norms = (sw_apply_norms){.version = e->view.version + 1, .n = count,
                                         .sq_norms = e->view.buffered_sq_norm, .sum_sq = sum_sq};
    /* One probe per apply: the loss after this apply is the loss before the next one. */
    e->view.loss_before = probe_loss ? e->loss_now : NAN;
    e->loss_now = probe_loss ? probe(e) : NAN;
    e->view.loss_after = e->loss_now;
    e->view.version++;
    e->view.buffered = 0;
    e->view.buffered_sq_norm = 0;
    sw__engine_emit(e,
         &(sw_event){
             .kind = SW_EV_APPLY, .t = t, .V = e->view.version, .n = count, .lr_scale = lr_scale});
}

