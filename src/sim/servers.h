/* The servers' side of the simulated network (--net shards=S,...): S shard links, each carrying
 * its slice of every transfer in turn, and one control plane deciding the pushes one at a time.
 *
 * Off (no shards), a transfer costs its worker's link alone, as it always has: the latency plus
 * its bytes over the worker's bandwidth, never queued behind another. With S shards the
 * parameters are placed by the chunk table's rule (syncwise/shard.h), and a transfer of B bytes
 * started at t ends once the worker's link and every shard's link have carried their part, one
 * latency later: shard j carries share_j B at its own bandwidth, after all it had queued before
 * in that direction (a link is full duplex: pulls queue behind pulls, pushes behind pushes).
 * A sparse transfer is spread over the shards by the same shares (its indices are not looked up:
 * a projection, not a replay). A push's facts then reach the control plane one latency later
 * (the shards report it), where it waits behind the pushes before it. The control plane works in
 * turns, as the server does (src/net/batch.h): a turn takes every push whose facts came while
 * the turn before it ran, hears one frame from every shard and sends each one (fanout S seconds
 * a turn), and spends decide + entry S seconds on each of its pushes (deciding, and a report
 * from every shard and an order entry read and written).
 */
#ifndef SW_SIM_SERVERS_H
#define SW_SIM_SERVERS_H

#include <stddef.h>
#include <stdint.h>

#define SW_SIM_SHARDS_MAX 65536

typedef enum { SW_SIM_PULL, SW_SIM_PUSH } sw__sim_dir;

typedef struct sw__sim_servers {
    uint32_t n;           /* shards (0: off) */
    double bw, lat;       /* each shard link's bytes per second; seconds per message */
    double turn_s;        /* the control plane's seconds per turn: a frame from and to each shard */
    double push_s;        /* and per push in it: its decision and its entries from and to each */
    double turn_at;       /* when the newest turn begins (later than now: queued) */
    double *share;        /* shard j's fraction of the parameters */
    double *free_at[2];   /* per direction (sw__sim_dir), when shard j's link has carried
                           * everything queued on it */
    double *busy_s[2];    /* per direction, shard j's link: seconds spent carrying */
    double ctl_free_at;   /* when the control plane has decided every push queued on it */
    double ctl_busy_s;
} sw__sim_servers;

/* n shards (0: off, and nothing else is read) over n_params floats (0: even shares) in chunks of
 * chunk_floats (0: the rule's own, syncwise/placement.h), the control plane's costs in seconds:
 * decide a push, fanout a turn per shard, entry a push per shard. Fails (SW_EINVAL) on more
 * shards than parameters or than SW_SIM_SHARDS_MAX, or on more chunks than a run may have. */
typedef struct sw__sim_ctl_costs {
    double decide, fanout, entry;
} sw__sim_ctl_costs;
int sw__sim_servers_init(sw__sim_servers *v, uint32_t n, size_t n_params, size_t chunk_floats,
                         double bw, double lat, sw__sim_ctl_costs costs, char *err);
void sw__sim_servers_free(sw__sim_servers *v);

/* When the shards' links have carried a transfer of `bytes` in direction dir that starts at t,
 * one latency included (the worker's own link is the caller's); queues it on every link. */
double sw__sim_servers_transfer(sw__sim_servers *v, double t, double bytes, sw__sim_dir dir);
/* When the control plane has decided a push whose facts reach it at t: in the turn queued
 * behind a busy one when that has not begun, else in a turn of its own. */
double sw__sim_servers_decide(sw__sim_servers *v, double t);
/* The busiest shard link's share of [0, end] spent carrying (in its busier direction), and the
 * control plane's spent deciding. */
double sw__sim_servers_link_load(const sw__sim_servers *v, double end);
double sw__sim_servers_ctl_load(const sw__sim_servers *v, double end);

#endif
