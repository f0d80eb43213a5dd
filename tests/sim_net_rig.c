/* The rig of sim_net_equivalence.c and sim_net_shards.c (sim_net_rig.h). One engine under two
 * clocks: the same scenario run through the simulator and through the real server and workers
 * (syncwise/net.h) on the in-process network's fake clock gives the same engine decisions, for
 * every policy, with crashes, a join, a graceful leave and a policy switch.
 *
 * Both runs draw each worker's step times from the same cluster model (every worker has its own
 * stream, so the times do not depend on the order steps start in), train the same model on the
 * same data from the same seed, and see a network of the same latency. Their logs must then
 * hold the same engine events (pushes, drops, applies, grants, releases, wake-ups, membership,
 * switches) with the same fields, in the same order, at times that differ only by how the two
 * drivers add up transfer times; evaluations, which each driver schedules its own way, are left
 * out. A difference names the policy, the event and both lines. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "syncwise/cluster.h"
#include "syncwise/err.h"
#include "syncwise/net.h"
#include "syncwise/proto.h"
#include "syncwise/run.h"
#include "syncwise/shard.h"
#include "syncwise/sim.h"
#include "syncwise/transport.h"
#include "sim_net_rig.h"

#define WORKERS 4
#define SLOTS (WORKERS + 1) /* one join */
#define END_S 120.0         /* both runs stop here */
#define COMPARE_S 115.0     /* and are compared up to here */
#define LATENCY_S 1e-7
#define BANDWIDTH 1e12
#define TIME_SLACK_S 1e-4
#define SEED 7
#define CLUSTER "shexp:1,base=1;shexp:1,base=2.5@1"

/* The scenario's scripted events, for both drivers. */
typedef enum { CRASH, JOIN, LEAVE, SWITCH } script_kind;
typedef struct scripted {
    double t;
    script_kind kind;
    uint32_t worker; /* crash, leave */
} scripted;

static const scripted script[] = {
    {25, CRASH, 2}, {40, JOIN, 0}, {55, SWITCH, 0}, {80, LEAVE, 3},
};
#define N_SCRIPT (sizeof script / sizeof *script)

/* The scenario's optimizer, or plain SGD. */
static sw_optim_params optimizer(const scenario *sc)
{
    sw_optim_params o = sw_optim_default();
    char err[SW_ERR_LEN];
    if (sc->optim && sw_optim_parse(&o, sc->optim, err))
        fail_msg("%s", err);
    return o;
}

/* ---- The events of a log, as the comparison sees them ------------------------------------ */

typedef struct decided {
    sw_event ev;
    bool liveness;   /* a release by the engine's liveness rule */
    char policy[96]; /* a switch's */
} decided;

typedef struct decisions {
    decided *e;
    size_t n, cap;
} decisions;

static int keep(void *ctx, const sw_event *ev, size_t line, char *err)
{
    (void)line, (void)err;
    decisions *d = ctx;
    if (ev->kind == SW_EV_EVAL || ev->t > COMPARE_S)
        return 0;
    if (d->n == d->cap) {
        d->cap = d->cap ? 2 * d->cap : 1024;
        d->e = realloc(d->e, d->cap * sizeof *d->e);
        assert_non_null(d->e);
    }
    decided *x = &d->e[d->n++];
    memset(x, 0, sizeof *x);
    x->ev = *ev;
    x->liveness = ev->kind == SW_EV_RELEASE && ev->reason && !strcmp(ev->reason, "liveness");
    if (ev->kind == SW_EV_SWITCH)
        snprintf(x->policy, sizeof x->policy, "%s", ev->reason);
    x->ev.reason = NULL;
    return 0;
}

static decisions read_decisions(const char *log)
{
    decisions d = {0};
    sw_run_reader r = {.event = keep, .ctx = &d};
    char err[SW_ERR_LEN];
    if (sw_run_read_text(log, &r, err))
        fail_msg("%s", err);
    return d;
}

static const char *describe(const decided *x, char *buf, size_t cap)
{
    const sw_event *e = &x->ev;
    snprintf(buf, cap, "t=%.6f kind %d worker %u clock %llu ver %llu V %llu n %u scale %g at %g%s%s",
             e->t, (int)e->kind, e->worker, (unsigned long long)e->clock,
             (unsigned long long)e->ver, (unsigned long long)e->V, e->n, (double)e->lr_scale,
             e->at, x->liveness ? " liveness" : "", x->policy);
    return buf;
}

static bool same(const decided *a, const decided *b)
{
    const sw_event *x = &a->ev, *y = &b->ev;
    bool same_at = x->kind != SW_EV_WAKE || fabs(x->at - y->at) < TIME_SLACK_S;
    return x->kind == y->kind && x->worker == y->worker && x->clock == y->clock &&
           x->ver == y->ver && x->V == y->V && x->n == y->n && x->lr_scale == y->lr_scale &&
           same_at && a->liveness == b->liveness && !strcmp(a->policy, b->policy) &&
           fabs(x->t - y->t) < TIME_SLACK_S;
}

static void assert_same_decisions(const scenario *sc, const char *sim_log, const char *net_log)
{
    decisions a = read_decisions(sim_log), b = read_decisions(net_log);
    size_t n = a.n < b.n ? a.n : b.n;
    char x[256], y[256];
    for (size_t i = 0; i < n; i++)
        if (!same(&a.e[i], &b.e[i]))
            fail_msg("%s on %s: event %zu differs:\n  simulator %s\n  server    %s", sc->policy,
                     sc->model, i, describe(&a.e[i], x, sizeof x),
                     describe(&b.e[i], y, sizeof y));
    if (a.n != b.n)
        fail_msg("%s on %s: the simulator made %zu decisions by t=%g, the server %zu", sc->policy,
                 sc->model, a.n, COMPARE_S, b.n);
    assert_true(a.n > 200); /* the runs did something worth comparing */
    free(a.e);
    free(b.e);
}

/* ---- The simulator's run ------------------------------------------------------------------- */

static char *sim_log(const scenario *sc, const sw_task_data *data)
{
    char events[512];
    size_t len = 0;
    uint32_t joins = 0;
    for (size_t i = 0; i < N_SCRIPT; i++) {
        const scripted *s = &script[i];
        const char *name[] = {"crash", "join", "leave", "switch"};
        len += (size_t)snprintf(events + len, sizeof events - len, "%s%s:t=%g", i ? ";" : "",
                                name[s->kind], s->t);
        if (s->kind == CRASH || s->kind == LEAVE)
            len += (size_t)snprintf(events + len, sizeof events - len, ",w=%u", s->worker);
        if (s->kind == SWITCH)
            len += (size_t)snprintf(events + len, sizeof events - len, ",policy=%s",
                                    sc->switch_to);
        joins += s->kind == JOIN;
    }
    assert_int_equal(WORKERS + joins, SLOTS);
    sw_sim_config c = sw_sim_default_config();
    c.policy = sc->policy;
    c.workers = WORKERS;
    c.cluster = CLUSTER;
    char net[64];
    snprintf(net, sizeof net, "bw=%g,lat=%g", BANDWIDTH, LATENCY_S);
    c.net = net;
    c.events = events;
    c.data = data;
    c.model = sc->model;
    c.lr = sc->lr;
    c.optim = optimizer(sc);
    c.seed = SEED;
    c.max_time = END_S;
    c.eval_every = 1e9;
    char *text = NULL;
    size_t size = 0;
    c.log = open_memstream(&text, &size);
    sw_sim_result r;
    char err[SW_ERR_LEN];
    if (sw_sim_run(&c, &r, err))
        fail_msg("%s: the simulator: %s", sc->policy, err);
    sw_sim_result_free(&r);
    fclose(c.log);
    return text;
}

/* ---- The evaluations of a log: (version, loss) -------------------------------------------- */

typedef struct evals {
    uint64_t V[256];
    double loss[256];
    size_t n;
} evals;

static int keep_eval(void *ctx, const sw_event *ev, size_t line, char *err)
{
    (void)line, (void)err;
    evals *e = ctx;
    if (ev->kind == SW_EV_EVAL && e->n < 256) {
        e->V[e->n] = ev->V;
        e->loss[e->n++] = ev->loss;
    }
    return 0;
}

static evals read_evals(const char *log)
{
    evals e = {.n = 0};
    sw_run_reader r = {.event = keep_eval, .ctx = &e};
    char err[SW_ERR_LEN];
    if (sw_run_read_text(log, &r, err))
        fail_msg("%s", err);
    return e;
}

/* The model the shards hold is the model the server holds: every evaluation both made at one
 * version sees the same loss (to rounding: a slice may take another kernel path than the whole
 * vector), and there are enough of them to mean something. */
static void assert_same_models(const scenario *sc, const char *plain_log, const char *sharded_log)
{
    evals a = read_evals(plain_log), b = read_evals(sharded_log);
    size_t common = 0;
    for (size_t i = 0; i < a.n; i++)
        for (size_t k = 0; k < b.n; k++)
            if (a.V[i] == b.V[k]) {
                common++;
                if (fabs(a.loss[i] - b.loss[k]) > 1e-4 * (1 + fabs(a.loss[i])))
                    fail_msg("%s on %u shards: at version %llu the server's model has loss %.9g, "
                             "the shards' %.9g", sc->policy, sc->shards,
                             (unsigned long long)a.V[i], a.loss[i], b.loss[k]);
                break;
            }
    if (common < 5)
        fail_msg("%s on %u shards: only %zu evaluations at a version both runs evaluated",
                 sc->policy, sc->shards, common);
}

/* ---- The server and its workers, in process ------------------------------------------------ */

typedef struct in_process {
    const scenario *sc;
    sw_net *net;
    sw_loop *loop;
    sw_cluster *cluster;
    sw_worker_params wp;
    sw_worker *workers[SLOTS]; /* in the order they came: their ids */
    sw_worker_result results[SLOTS];
    uint32_t n_workers;
    sw_sock *ctl; /* the operator's line to the server */
    sw_shard *shards[SW_SHARDS_MAX];
    sw_shard_params shard_p[SW_SHARDS_MAX];
    sw_shard_result shard_r[SW_SHARDS_MAX];
    char shard_eps[SW_SHARDS_MAX][16];
    size_t next;  /* the next scripted event */
    sw_agent agent;
} in_process;

static double step_s(void *ctx, uint32_t worker)
{
    return sw_cluster_step_s(((in_process *)ctx)->cluster, worker);
}

static void start_worker(in_process *ip)
{
    char err[SW_ERR_LEN];
    sw_worker **k = &ip->workers[ip->n_workers];
    if (sw_worker_new(k, ip->net, &ip->wp, &ip->results[ip->n_workers], err) ||
        sw_loop_add(ip->loop, sw_worker_agent(*k), err))
        fail_msg("a worker: %s", err);
    ip->n_workers++;
}

/* A worker gone: crashed (its connection just closes) or left (LEAVE first). */
static void stop_worker(in_process *ip, uint32_t w, bool leave)
{
    sw_worker *k = ip->workers[w];
    assert_non_null(k);
    if (leave)
        sw_worker_leave(k);
    sw_loop_remove(ip->loop, sw_worker_agent(k));
    sw_worker_end(k, NULL);
    ip->workers[w] = NULL;
}

static void operator_switch(in_process *ip)
{
    char cmd[128];
    size_t len = (size_t)snprintf(cmd, sizeof cmd, "policy %s", ip->sc->switch_to);
    sw_frame *f = sw_frame_new(sw_msg_size(len));
    sw_msg m = {.type = SW_MSG_CTL, .worker = SW_NO_WORKER, .payload = (const uint8_t *)cmd,
                .payload_len = len};
    sw_msg_encode(&m, sw_frame_data(f));
    assert_true(sw_send(ip->ctl, NULL, 0, f));
}

/* The script's agent: each event at its time. */
static double script_turn(void *ctx, double now)
{
    in_process *ip = ctx;
    sw_delivery d;
    while (sw_recv(ip->ctl, &d) == 0) /* the switch's reply */
        sw_frame_unref(d.frame);
    for (; ip->next < N_SCRIPT && script[ip->next].t <= now; ip->next++) {
        const scripted *s = &script[ip->next];
        switch (s->kind) {
        case CRASH: stop_worker(ip, s->worker, false); break;
        case LEAVE: stop_worker(ip, s->worker, true); break;
        case JOIN: start_worker(ip); break;
        case SWITCH: operator_switch(ip); break;
        }
    }
    return ip->next < N_SCRIPT ? script[ip->next].t : INFINITY;
}

/* The scenario's shards, listening before the server dials them; their endpoints. */
static const char *start_shards(in_process *ip)
{
    static char list[SW_SHARDS_MAX * 16];
    list[0] = '\0';
    for (uint32_t j = 0; j < ip->sc->shards; j++) {
        char *ep = ip->shard_eps[j];
        snprintf(ep, sizeof ip->shard_eps[j], "shard%u", j);
        snprintf(list + strlen(list), sizeof list - strlen(list), j ? ",%s" : "%s", ep);
        ip->shard_p[j] = (sw_shard_params){.bind = ep};
        char err[SW_ERR_LEN];
        if (sw_shard_new(&ip->shards[j], ip->net, &ip->shard_p[j], &ip->shard_r[j], err) ||
            sw_loop_add(ip->loop, sw_shard_agent(ip->shards[j]), err))
            fail_msg("shard %u: %s", j, err);
    }
    return list;
}

/* The shards applied what the server decided (the last order may still be on its way when the
 * loop stops), and refused nothing. */
static void end_shards(in_process *ip, uint64_t version)
{
    /* every dense push reaches every shard; a sparse one only the shards its batch touches */
    bool sparse = strcmp(ip->sc->model, SPARSE_MODEL) == 0;
    uint64_t held = 0;
    for (uint32_t j = 0; j < ip->sc->shards; j++) {
        assert_int_equal(ip->shard_r[j].refused, 0);
        assert_true(ip->shard_r[j].applies <= version && ip->shard_r[j].applies + 1 >= version);
        if (!sparse && ip->shard_r[j].pushes <= 100)
            fail_msg("%s on %u shards: shard %u held %llu pushes", ip->sc->policy,
                     ip->sc->shards, j, (unsigned long long)ip->shard_r[j].pushes);
        held += ip->shard_r[j].pushes;
        sw_shard_end(ip->shards[j]);
    }
    assert_true(ip->sc->shards == 0 || held > 100);
}

static char *net_log(const scenario *sc)
{
    in_process ip = {.sc = sc};
    char err[SW_ERR_LEN];
    sw_inproc_params np = {.latency_s = LATENCY_S, .bandwidth = BANDWIDTH};
    if (sw_net_inproc_new(&ip.net, &np, err) || sw_loop_new(&ip.loop, ip.net, err) ||
        sw_cluster_new(&ip.cluster, CLUSTER, SLOTS, SEED, err))
        fail_msg("%s", err);
    const char *shards = sc->shards ? start_shards(&ip) : NULL;
    char *text = NULL;
    size_t size = 0;
    sw_server_params p = sw_server_default_params();
    p.bind = "server";
    p.ctl_bind = "operators";
    p.policy = sc->policy;
    p.model = sc->model;
    p.data = sc->data;
    p.lr = sc->lr;
    p.optim = optimizer(sc);
    p.seed = SEED;
    p.batch_mode = "shard"; /* the simulator's */
    p.max_workers = SLOTS;
    p.heartbeat_timeout_s = 1e9; /* a crash is a closed connection here */
    p.eval_every_s = sc->eval_every_s ? sc->eval_every_s : 1e9;
    p.shards = shards;
    p.checkpoint_applies = 0;
    p.checkpoint_s = 0;
    p.log = open_memstream(&text, &size);
    sw_server_result r;
    sw_server *s;
    if (sw_server_new(&s, ip.net, &p, &r, err) ||
        sw_loop_add(ip.loop, sw_server_agent(s), err) ||
        sw_dial(ip.net, &ip.ctl, &(sw_dial_params){.endpoint = "operators"}, err))
        fail_msg("%s: the server: %s", sc->policy, err);
    ip.wp = sw_worker_default_params();
    ip.wp.connect = "server";
    ip.wp.server_timeout_s = 1e9;
    ip.wp.step_s = step_s;
    ip.wp.step_ctx = &ip;
    for (uint32_t w = 0; w < WORKERS; w++)
        start_worker(&ip);
    ip.agent = (sw_agent){.turn = script_turn, .ctx = &ip, .socks = {ip.ctl}, .n_socks = 1};
    if (sw_loop_add(ip.loop, &ip.agent, err) || sw_loop_run(ip.loop, NULL, END_S, err))
        fail_msg("%s: the loop: %s", sc->policy, err);
    for (uint32_t w = 0; w < ip.n_workers; w++)
        if (ip.workers[w])
            sw_worker_end(ip.workers[w], NULL);
    if (sw_server_end(s, err))
        fail_msg("%s: the server's run: %s", sc->policy, err);
    fclose(p.log);
    sw_sock_close(ip.ctl);
    end_shards(&ip, r.version);
    sw_loop_free(ip.loop);
    sw_cluster_free(ip.cluster);
    sw_net_free(ip.net);
    return text;
}


/* ---- Both runs, compared ------------------------------------------------------------------- */

void same_decisions(const scenario *sc)
{
    sw_task_data data;
    char err[SW_ERR_LEN];
    if (sw_task_data_load(&data, sc->model, sc->data, SW_DATA_SEED, err))
        fail_msg("%s", err);
    char *a = sim_log(sc, &data), *b = net_log(sc);
    assert_same_decisions(sc, a, b);
    free(a);
    free(b);
    sw_task_data_free(&data);
}

void on_shards_n(scenario sc, const uint32_t *counts, size_t n_counts)
{
    sw_task_data data;
    char err[SW_ERR_LEN];
    if (sw_task_data_load(&data, sc.model, sc.data, SW_DATA_SEED, err))
        fail_msg("%s", err);
    sc.eval_every_s = 10;
    for (size_t c = 0; c < n_counts; c++) {
        uint32_t shards = counts[c];
        sc.shards = 0;
        char *a = sim_log(&sc, &data), *plain = net_log(&sc);
        sc.shards = shards;
        char *b = net_log(&sc);
        assert_same_decisions(&sc, a, b);
        assert_same_models(&sc, plain, b);
        free(a);
        free(plain);
        free(b);
    }
    sw_task_data_free(&data);
}
