/* A synchronization policy of your own, run by the syncwise simulator without forking its tree.
 *
 * "half": apply the buffered gradients as soon as half of the live workers have pushed (their
 * mean), then release those who pushed; the others' gradients join the next apply. A simple
 * relative of backup workers, to show the whole interface: a policy is a table of functions
 * that read the engine's view and fill a decision (syncwise/policy.h), and the simulator runs
 * it with sw_sim_config.policy_ops (syncwise/sim.h).
 *
 * Build against an installed syncwise, as a program of its own that drives the simulator:
 *   cc half_barrier.c $(pkg-config --cflags --libs syncwise) -o half_barrier
 *   ./half_barrier [WORKERS] [PUSHES]
 * or as a plugin, which gives every syncwise command the policy (sim, compare, server, ctl,
 * check) by the name "half", and `syncwise check` its promise:
 *   cc -shared -fPIC half_barrier.c $(pkg-config --cflags syncwise) -o half.so
 *   SYNCWISE_PLUGINS=$PWD/half.so syncwise compare --policies "half;bsp;asp" ...
 * (the program, with LD_LIBRARY_PATH=PREFIX/lib for an install under a prefix of your own; the
 * plugin needs no library of its own: syncwise lends it the one it carries).
 */
#include <stdio.h>
#include <stdlib.h>

#include <syncwise/check.h>
#include <syncwise/err.h>
#include <syncwise/policy.h>
#include <syncwise/sim.h>

typedef struct half {
    double share; /* of the live workers whose pushes make an apply */
} half;

static int read_share(half *h, sw_spec *spec, char *err)
{
    h->share = 0.5;
    return sw_spec_double(spec, "share", 0.01, 1, &h->share, err);
}

/* Gradients that make an apply when `live` workers run. */
static uint32_t needed(const half *h, uint32_t live)
{
    uint32_t need = (uint32_t)(h->share * live + 0.999);
    return need ? need : 1;
}

static int half_init(void *state, sw_spec *spec, const sw_engine_view *v, const sw_policy_env *env,
                     char *err)
{
    (void)v, (void)env;
    return read_share(state, spec, err);
}

/* The one decision, on a push (`incoming`: its gradient is not yet in the buffer) and on
 * whatever else changes who is live or waiting: apply once the share have pushed, or once every
 * live worker waits (some left or crashed, or the policy took over from another), then release
 * everyone. A policy that could leave every live worker waiting would hang a real run; the
 * engine's liveness rule would release them, and `check` counts that as a broken promise. */
static void decide(const half *h, const sw_engine_view *v, uint32_t incoming, sw_decision *d)
{
    uint32_t pushed = v->buffered + incoming;
    if (pushed < needed(h, v->n_live) && !sw_policy_all_waiting(v))
        return; /* the pushers wait */
    d->apply = pushed > 0;
    sw_policy_release_all(v, d);
}

static void half_push(void *state, const sw_engine_view *v, const sw_push *p, sw_decision *d)
{
    (void)p;
    decide(state, v, 1, d);
}

static void half_leave(void *state, const sw_engine_view *v, uint32_t w, sw_decision *d)
{
    (void)w;
    decide(state, v, 0, d);
}

/* The engine ticks a policy it switched to: the workers the last one left waiting. */
static void half_tick(void *state, const sw_engine_view *v, sw_decision *d)
{
    decide(state, v, 0, d);
}

static const sw_policy_ops half_policy = {
    .name = "half",
    .keys = "share",
    .help = "apply when a share of the live workers have pushed",
    .state_size = sizeof(half),
    .init = half_init,
    .on_push = half_push,
    .on_leave = half_leave,
    .on_tick = half_tick,
};

/* What "half" promises, as `syncwise check` holds its logs to it (syncwise/check.h): an apply
 * holds at least the share of the workers live at that decision, or else releases every live
 * worker (all waited: after a leave, or a switch from a policy that held some without their
 * gradients). (`check` also holds every policy
 * to the engine's rules, such as never leaving every live worker waiting.) */
static int half_promise_init(void *state, sw_spec *spec, char *why)
{
    return read_share(state, spec, why);
}

static int half_promise_end(void *state, const sw_check *c, char *why)
{
    sw_check_call call;
    sw_check_call_facts(c, &call);
    if (!call.applied)
        return 0;
    if (!call.started)
        return snprintf(why, SW_ERR_LEN, "applied before any event");
    uint32_t need = needed(state, call.live_at_decision);
    bool everyone = call.released >= call.live_at_decision; /* every live worker waited */
    if (call.applied_n < need && !everyone)
        return snprintf(why, SW_ERR_LEN, "applied %u gradients of %u live workers, fewer than %u",
                        call.applied_n, call.live_at_decision, need);
    return 0;
}

static const sw_promise_ops half_promise = {
    .policy = "half",
    .state_size = sizeof(half),
    .init = half_promise_init,
    .on_end = half_promise_end,
};

/* The plugin interface this file was built against (SYNCWISE_PLUGINS refuses another), the
 * policies it gives syncwise as a plugin (syncwise/policy.h), and their promises
 * (syncwise/check.h). */
SW_PLUGIN_ABI_HERE
const sw_policy_ops *const *sw_plugin_policies(void)
{
    static const sw_policy_ops *const policies[] = {&half_policy, NULL};
    return policies;
}

const sw_promise_ops *const *sw_plugin_promises(void)
{
    static const sw_promise_ops *const promises[] = {&half_promise, NULL};
    return promises;
}

int main(int argc, char **argv)
{
    sw_sim_config c = sw_sim_default_config();
    c.policy = "half:share=0.5";
    c.policy_ops = &half_policy;
    c.workers = argc > 1 ? (uint32_t)atoi(argv[1]) : 8;
    c.cluster = "straggle:p=0.3,mean=10,sd=4,base=4.5";
    c.max_pushes = argc > 2 ? strtoull(argv[2], NULL, 10) : 20000;
    c.data = NULL; /* timing only: no model, so it runs in a blink */
    sw_sim_result r;
    char err[SW_ERR_LEN];
    int rc = sw_sim_run(&c, &r, err);
    if (rc) {
        fprintf(stderr, "half_barrier: %s\n", err);
        return 1;
    }
    printf("policy half: %llu pushes, %llu applies (%.2f gradients each) in %.1f virtual s, "
           "idle share %.3f\n",
           (unsigned long long)r.stats.pushes, (unsigned long long)r.stats.applies,
           (double)r.stats.pushes / (double)(r.stats.applies ? r.stats.applies : 1), r.end_t,
           sw_run_stats_idle_share(&r.stats));
    sw_sim_result_free(&r);
    return 0;
}
