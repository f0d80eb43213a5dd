/* The k-of-n mechanism shared by backup workers and DBW (see policy_internal.h). */
#include "policy_internal.h"
#include "syncwise/policy.h"

static void apply_and_release(uint32_t gradients, bool mean, const sw_engine_view *v,
                              sw_decision *d)
{
    d->apply = true;
    d->lr_scale = mean ? 1.0f : (float)gradients;
    sw_policy_release_all(v, d);
}

void sw__kofn_push(uint32_t k, bool mean, const sw_engine_view *v, const sw_push *p,
                   sw_decision *d)
{
    if (p->version < v->version) {
        d->drop = true;
        sw_decision_release(d, p->worker);
        return;
    }
    /* Never wait for more workers than are live, nor past the point where nobody computes. */
    uint32_t need = k < v->n_live ? k : v->n_live;
    if (v->buffered + 1 >= need || sw_policy_all_waiting(v))
        apply_and_release(v->buffered + 1, mean, v, d);
}

void sw__kofn_settle(uint32_t k, bool mean, const sw_engine_view *v, sw_decision *d)
{
    uint32_t need = k < v->n_live ? k : v->n_live;
    if (v->buffered > 0 && (v->buffered >= need || sw_policy_all_waiting(v)))
        apply_and_release(v->buffered, mean, v, d);
    else if (v->buffered == 0 && sw_policy_all_waiting(v))
        sw_policy_release_all(v, d);
}

void sw__kofn_join(uint32_t k, bool mean, const sw_engine_view *v, uint32_t w, sw_decision *d)
{
    if (sw_policy_slot_buffered(v, w))
        sw__kofn_settle(k, mean, v, d);
    else
        sw_decision_release(d, w);
}
