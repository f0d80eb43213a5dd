/* The simulated network (--net): what a step's transfers cost, and with shards (servers.h) the
 * way of a push through the shards' links and the control plane's queue. */
#include <stdio.h>

#include "sim_internal.h"
#include "syncwise/err.h"
#include "syncwise/spec.h"
#include "syncwise/task.h"

/* --net's servers: shards=S, each link at server_bw (default: a worker's bw), the control plane
 * at fanout S seconds a turn and decide + entry S a push (servers.h), the parameters cut into
 * chunks of chunk= bytes as `server --chunk` cuts them (default: the rule's). */
static int parse_servers(sim *s, sw_spec *sp, char *err)
{
    double server_bw = s->bw;
    sw__sim_ctl_costs costs = {0};
    long shards = 0, chunk = 0;
    int rc;
    if ((rc = sw_spec_int(sp, "shards", 0, SW_SIM_SHARDS_MAX, &shards, err)) ||
        (rc = sw_spec_int(sp, "chunk", 4, 1L << 30, &chunk, err)) ||
        (rc = sw_spec_double(sp, "server_bw", 1, 1e15, &server_bw, err)) ||
        (rc = sw_spec_double(sp, "decide", 0, 1e6, &costs.decide, err)) ||
        (rc = sw_spec_double(sp, "fanout", 0, 1e6, &costs.fanout, err)) ||
        (rc = sw_spec_double(sp, "entry", 0, 1e6, &costs.entry, err)))
        return rc;
    if (!shards && (sw_spec_has(sp, "server_bw") || sw_spec_has(sp, "decide") ||
                    sw_spec_has(sp, "fanout") || sw_spec_has(sp, "entry") ||
                    sw_spec_has(sp, "chunk")))
        return sw_fail(err, SW_EINVAL,
                       "--net server_bw=, decide=, fanout=, entry= and chunk= need shards=S");
    if (chunk % 4)
        return sw_fail(err, SW_EINVAL, "--net chunk=%ld: a chunk holds whole floats, a multiple "
                       "of 4 bytes", chunk);
    return sw__sim_servers_init(&s->servers, (uint32_t)shards, s->n_wire, (size_t)chunk / 4,
                                server_bw, s->lat, costs, err);
}

/* --net: a worker's link (bw, lat), the size of a run without a model (params), the servers. */
int sw__sim_parse_net(sim *s, char *err)
{
    char text[SW_SPEC_VAL_LEN];
    snprintf(text, sizeof text, "net:%s", s->c->net ? s->c->net : "");
    sw_spec sp;
    double bw = 1.25e9, lat = 5e-5;
    long params = 0;
    int rc = sw_spec_parse(&sp, text, err);
    if (!rc && !(rc = sw_spec_double(&sp, "bw", 1, 1e15, &bw, err)) &&
        !(rc = sw_spec_double(&sp, "lat", 0, 1e6, &lat, err)))
        rc = sw_spec_int(&sp, "params", 0, 1L << 40, &params, err);
    if (!rc && sw_spec_has(&sp, "params") && s->c->data)
        rc = sw_fail(err, SW_EINVAL,
                     "--net params= sizes the transfers of a run without a model "
                     "(--no-model): a model has its own size");
    s->bw = bw;
    s->lat = lat;
    s->n_wire = params ? (size_t)params : s->n_params;
    if (!rc && !(rc = parse_servers(s, &sp, err)))
        rc = sw_spec_finish(
            &sp, "bw, lat, params, shards, chunk, server_bw, decide, fanout, entry", err);
    return rc;
}

/* The bytes of one transfer of a step: the whole model, or for a sparse task the weights its
 * batch touches, which its gradient's pairs name: their indices up and values down on the pull,
 * (index, value) pairs on the push, 8 bytes a weight either way. */
static double transfer_bytes(const sim *s, const sim_worker *k)
{
    if (!s->task || !sw_task_is_sparse(s->task))
        return 4.0 * (double)s->n_wire;
    return 8.0 * (double)k->grad.nnz;
}

double sw__sim_transfer_end(sim *s, const sim_worker *k, double t, sw__sim_dir dir)
{
    double bytes = transfer_bytes(s, k);
    double end = t + (s->lat + bytes / s->bw);
    if (!s->servers.n)
        return end;
    double there = sw__sim_servers_transfer(&s->servers, t, bytes, dir);
    return there > end ? there : end;
}

void sw__sim_on_send(sim *s, const sw__sim_event *ev)
{
    if (sw__sim_outlived(s, ev))
        return;
    sw__sim_event next = *ev;
    next.kind = EV_FACTS;
    next.t = sw__sim_transfer_end(s, &s->w[ev->worker], ev->t, SW_SIM_PUSH) + s->lat;
    sw__sim_enqueue(s, next);
}

void sw__sim_on_facts(sim *s, const sw__sim_event *ev)
{
    if (sw__sim_outlived(s, ev))
        return;
    sw__sim_event next = *ev;
    next.kind = EV_ARRIVE;
    next.t = sw__sim_servers_decide(&s->servers, ev->t);
    sw__sim_enqueue(s, next);
}
