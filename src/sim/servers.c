/* The shards' links and the control plane of a simulated sharded server (servers.h). */
#include <stdbool.h>
#include <stdlib.h>

#include "servers.h"
#include "syncwise/err.h"
#include "syncwise/placement.h"

/* Shard j's fraction of n_params in chunks of `chunk` floats, by the chunk table's rule. */
static void place(sw__sim_servers *v, size_t n_params, size_t chunk)
{
    if (n_params == 0) {
        for (uint32_t j = 0; j < v->n; j++)
            v->share[j] = 1.0 / v->n;
        return;
    }
    uint32_t chunks = sw_chunk_count(n_params, chunk);
    for (uint32_t j = 0; j < v->n; j++) {
        size_t at = (size_t)sw_chunk_first(chunks, v->n, j) * chunk;
        size_t end = (size_t)sw_chunk_first(chunks, v->n, j + 1) * chunk;
        end = end < n_params ? end : n_params;
        v->share[j] = (double)(end - at) / (double)n_params;
    }
}

int sw__sim_servers_init(sw__sim_servers *v, uint32_t n, size_t n_params, size_t chunk_floats,
                         double bw, double lat, sw__sim_ctl_costs costs, char *err)
{
    *v = (sw__sim_servers){.n = n, .bw = bw, .lat = lat, .turn_s = costs.fanout * n,
                           .push_s = costs.decide + costs.entry * n, .turn_at = -1};
    if (n == 0)
        return 0;
    if (n > SW_SIM_SHARDS_MAX || (n_params && n > n_params))
        return sw_fail(err, SW_EINVAL,
                       "cannot place %zu parameters on %u shards (at most %d, and at most one "
                       "per parameter)",
                       n_params, n, SW_SIM_SHARDS_MAX);
    size_t chunk = n_params ? sw_chunk_floats(n_params, chunk_floats, n) : 0;
    if (n_params && !sw_chunk_count_fits(n_params, chunk))
        return sw_fail(err, SW_EINVAL, "chunks of %zu floats cut %zu parameters into more than "
                       "2^32 - 1 chunks, as no run could: take larger chunks", chunk, n_params);
    bool ok = (v->share = calloc(n, sizeof *v->share)) != NULL;
    for (int d = 0; d < 2; d++)
        ok = ok && (v->free_at[d] = calloc(n, sizeof *v->free_at[d])) &&
             (v->busy_s[d] = calloc(n, sizeof *v->busy_s[d]));
    if (!ok) {
        sw__sim_servers_free(v);
        return sw_fail(err, SW_ENOMEM, "out of memory for %u shards", n);
    }
    place(v, n_params, chunk);
    return 0;
}

void sw__sim_servers_free(sw__sim_servers *v)
{
    free(v->share);
    v->share = NULL;
    for (int d = 0; d < 2; d++) {
        free(v->free_at[d]);
        free(v->busy_s[d]);
        v->free_at[d] = v->busy_s[d] = NULL;
    }
}

double sw__sim_servers_transfer(sw__sim_servers *v, double t, double bytes, sw__sim_dir dir)
{
    double end = t, *free_at = v->free_at[dir];
    for (uint32_t j = 0; j < v->n; j++) {
        double carry = v->share[j] * bytes / v->bw;
        double start = free_at[j] > t ? free_at[j] : t;
        free_at[j] = start + carry;
        v->busy_s[dir][j] += carry;
        end = free_at[j] > end ? free_at[j] : end;
    }
    return end + v->lat;
}

double sw__sim_servers_decide(sw__sim_servers *v, double t)
{
    double cost = v->push_s;
    if (t >= v->turn_at) { /* a new turn, when the control plane is free */
        v->turn_at = v->ctl_free_at > t ? v->ctl_free_at : t;
        v->ctl_free_at = v->turn_at;
        cost += v->turn_s;
    }
    v->ctl_free_at += cost;
    v->ctl_busy_s += cost;
    return v->ctl_free_at;
}

/* busy seconds as a share of [0, end], at most 1 (work queued past the end counts up to it) */
static double load(double busy, double end)
{
    if (!(end > 0))
        return 0;
    return busy < end ? busy / end : 1;
}

double sw__sim_servers_link_load(const sw__sim_servers *v, double end)
{
    double most = 0;
    for (int d = 0; d < 2; d++)
        for (uint32_t j = 0; j < v->n; j++)
            most = v->busy_s[d][j] > most ? v->busy_s[d][j] : most;
    return load(most, end);
}

double sw__sim_servers_ctl_load(const sw__sim_servers *v, double end)
{
    return load(v->ctl_busy_s, end);
}
