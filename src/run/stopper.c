/* The stopping rules of a run (see syncwise/run.h): one copy for the simulator and the server. */
#include <math.h>
#include <string.h>

#include "syncwise/err.h"
#include "syncwise/run.h"

const char *sw_stop_reason_name(sw_stop_reason r)
{
    static const char *const names[] = {"none", "target accuracy", "target loss", "time limit",
                                        "apply limit", "push limit", "no improvement",
                                        "no workers left"};
    return r <= SW_STOP_NO_WORKERS ? names[r] : "?";
}

bool sw_end_reason_known(const char *why)
{
    if (!strcmp(why, "stopped") || !strncmp(why, SW_END_FAILED, strlen(SW_END_FAILED)))
        return true;
    for (int r = SW_STOP_TARGET_ACC; r <= SW_STOP_NO_WORKERS; r++)
        if (!strcmp(why, sw_stop_reason_name((sw_stop_reason)r)))
            return true;
    return false;
}

void sw_stopper_init(sw_stopper *st, const sw_stop_rules *rules)
{
    *st = (sw_stopper){.rules = *rules};
}

int sw_stop_rules_check(const sw_stop_rules *rules, bool classify, char *err)
{
    if (!(rules->target_acc >= 0 && rules->target_acc <= 1)) /* a log's reader refuses it */
        return sw_fail(err, SW_EINVAL, "a target accuracy of %g is not in [0, 1]",
                       rules->target_acc);
    if (rules->target_acc > 0 && !classify)
        return sw_fail(err, SW_EINVAL,
                       "a target accuracy needs a classification task, and this data set's is "
                       "regression, which has no accuracy: stop the run on another rule");
    return 0;
}

sw_stop_reason sw_stopper_eval(sw_stopper *st, const sw_stop_eval *e, bool *improved)
{
    const sw_stop_rules *r = &st->rules;
    /* Early stopping keeps the best weights: higher accuracy, or lower loss for regression. */
    double metric = e->classify ? e->accuracy : -e->loss;
    bool finite = isfinite(e->loss); /* diverged parameters meet no target and are never best */
    *improved = finite && (st->evals == 0 || metric > st->best);
    st->evals += finite; /* the evaluations a best can come from */
    if (*improved) {
        st->best = metric;
        st->since_best = 0;
    } else {
        st->since_best++;
    }
    if (finite && r->target_acc > 0 && e->accuracy >= r->target_acc)
        return SW_STOP_TARGET_ACC;
    if (r->target_loss > 0 && e->train_loss <= r->target_loss)
        return SW_STOP_TARGET_LOSS;
    if (r->patience && st->since_best >= r->patience)
        return SW_STOP_PATIENCE;
    return SW_STOP_NONE;
}

sw_stop_reason sw_stopper_limits(const sw_stopper *st, double t, uint64_t applies,
                                 uint64_t pushes)
{
    const sw_stop_rules *r = &st->rules;
    if (r->max_time > 0 && t >= r->max_time)
        return SW_STOP_MAX_TIME;
    if (r->max_applies && applies >= r->max_applies)
        return SW_STOP_MAX_APPLIES;
    if (r->max_pushes && pushes >= r->max_pushes)
        return SW_STOP_MAX_PUSHES;
    return SW_STOP_NONE;
}

int sw_run_stopped_early(const sw_stop_flag *stop, int rc, char *err)
{
    if (!sw_stop_requested(stop))
        return rc;
    return sw_fail(err, SW_ESTATE, "stopped by a signal as it loaded its data, before it bound or "
                   "wrote anything");
}
