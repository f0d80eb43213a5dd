/* The simulator's event sink: the run's statistics (syncwise/run.h), the JSONL event log
 * (docs/log.md), and the promise checker, which ends the run on a broken promise. */
#include <math.h>

#include "sim_internal.h"

/* The first evaluation time on the grid of the parked one at or after t. */
static double next_eval(const sim *s, double t)
{
    double every = s->c->eval_every;
    return s->eval_t + every * ceil((t - s->eval_t) / every);
}

void sw__sim_sink(void *ctx, const sw_event *ev)
{
    sim *s = ctx;
    if (ev->kind == SW_EV_APPLY && s->eval_parked) { /* new parameters: evaluations resume */
        s->eval_parked = false;
        sw__sim_enqueue(s, (sw__sim_event){.t = next_eval(s, ev->t), .kind = EV_EVAL});
    }
    if (sw_run_stats_event(&s->r->stats, ev))
        sw__sim_fail(s, SW_ENOMEM, "out of memory for the statistics");
    if (s->c->log)
        sw_event_write_jsonl(s->c->log, ev);
    char why[SW_ERR_LEN];
    if (s->check && !s->rc && sw_check_event(s->check, ev, why))
        sw__sim_fail(s, SW_EPROMISE, "%s", why);
}
