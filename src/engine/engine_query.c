/* What the engine tells its drivers: its parameters, version, view and policy, read without
 * changing anything (but sw_engine_params_mut, which hands θ out for writing). */
#include <math.h>
#include <string.h>

#include "engine_internal.h"
#include "syncwise/engine.h"
#include "syncwise/policy.h"

void sw_engine_read_params(const sw_engine *e, float *out)
{
    if (e->shared)
        sw_shared_read(e->shared, out);
    else if (e->p.n_params)
        memcpy(out, e->theta, e->p.n_params * sizeof *out);
}

void sw_engine_gather(const sw_engine *e, const uint32_t *idx, size_t k, float *out)
{
    if (e->shared) {
        sw_shared_gather(e->shared, idx, k, out);
        return;
    }
    for (size_t i = 0; i < k; i++)
        out[i] = e->theta[idx[i]];
}

const float *sw_engine_params_ptr(const sw_engine *e)
{
    return e->shared ? NULL : e->theta;
}

float *sw_engine_params_mut(sw_engine *e)
{
    if (e->shared)
        return NULL;
    e->loss_now = NAN; /* the caller may change θ behind the probe's back */
    return sw__engine_writable_theta(e);
}

uint64_t sw_engine_version(const sw_engine *e)
{
    return e->view.version;
}

const sw_engine_view *sw_engine_get_view(const sw_engine *e)
{
    return &e->view;
}

const char *sw_engine_policy_name(const sw_engine *e)
{
    return e->ops->name;
}

bool sw_engine_policy_wants(const sw_engine *e, unsigned flags)
{
    return (e->wants & flags) == flags;
}

const sw_optim *sw_engine_optim(const sw_engine *e)
{
    return &e->opt;
}

const char *sw_engine_policy_spec(const sw_engine *e)
{
    return e->spec;
}

const char *sw_engine_error(const sw_engine *e)
{
    return e->broken[0] ? e->broken : NULL;
}

double sw_engine_decide_s(const sw_engine *e)
{
    return e->decide_s;
}

double sw_engine_probe_s(const sw_engine *e)
{
    return e->probe_s;
}
