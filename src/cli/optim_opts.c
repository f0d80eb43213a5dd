/* --optimizer, --momentum and --nesterov together (optim_opts.h). */
#include "optim_opts.h"

#include "syncwise/err.h"

int sw_cli_optim_resolve(const sw_cli_optim *o, sw_optim_params *out, char *err)
{
    sw_optim_params p = sw_optim_default();
    int rc = sw_optim_parse(&p, o->spec ? o->spec : "sgd", err);
    if (rc)
        return rc;
    if ((o->momentum > 0 || o->nesterov) && p.kind != SW_OPTIM_SGD)
        return sw_fail(err, SW_EINVAL,
                       "--momentum and --nesterov go with sgd; adam takes "
                       "beta1 (--optimizer adam:beta1=B1)");
    if (o->momentum > 0 && p.momentum > 0 && p.momentum != o->momentum)
        return sw_fail(err, SW_EINVAL, "--momentum %g and --optimizer %s say two momenta: "
                       "give one", o->momentum, o->spec);
    if (o->momentum > 0)
        p.momentum = o->momentum;
    if (o->nesterov)
        p.nesterov = true;
    if (p.nesterov && p.momentum == 0)
        return sw_fail(err, SW_EINVAL, "--nesterov needs a momentum (--momentum MU)");
    *out = p;
    return 0;
}
