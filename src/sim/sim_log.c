/* The simulator's event sink: the run's statistics (syncwise/run.h), the JSONL event log
 * (docs/log.md), and the promise checker, which ends the run on a broken promise. */
#include "sim_internal.h"

void sw__sim_sink(void *ctx, const sw_event *ev)
{
    sim *s = ctx;
    if (sw_run_stats_event(&s->r->stats, ev))
        sw__sim_fail(s, SW_ENOMEM, "out of memory for the statistics");
    if (s->c->log)
        sw_event_write_jsonl(s->c->log, ev);
    char why[SW_ERR_LEN];
    if (s->check && !s->rc && sw_check_event(s->check, ev, why))
        sw__sim_fail(s, SW_EPROMISE, "%s", why);
}
