/* Networked runtime benchmarks, side by side in one run on loopback:
 *
 * 1. Push + pull throughput of a 1M-float model: a client pushes a gradient (4 MB) and gets the
 *    parameters back with its release (4 MB), in a loop against the real server (asp), beside raw
 *    TCP on loopback moving the same bytes the same way (4 MB one way, 4 MB back), and ZeroMQ
 *    alone doing the same; syncwise twice, with payload checksums and without (--checksum off);
 *    five interleaved trials, so that the machine's drift hits them all alike, and their median.
 *    Goals: 70% of raw TCP with checksums, 80% without. Beside each, the CPU time the process
 *    spent per round trip (every thread, user and kernel): on two cores the copies and checks
 *    of both ends share the cores the transfer needs, so CPU per trip bounds the rate.
 * 2. Small-message round trip: push and release of an 8-float model, p50 and p99.
 * 3. Applies per second with 8 concurrent clients on a small model (asp).
 * 4. A bsp barrier of 4 clients on the 1M-float model, beside ZeroMQ alone doing the same
 *    exchange with one shared reply buffer: what releasing many workers at once costs.
 * 5. Part 1's push + pull through one shard (net_bench_shards.c): the gradient goes to the
 *    shard, the release comes from the server, the parameters come back from the shard on a
 *    pull; with checksums and without, beside raw TCP moving the same 8 MB, interleaved.
 * 6. Whether parts would help: part 1's exchange by ZeroMQ alone carrying syncwise frames,
 *    each end doing syncwise's work on them (net_parts.c), whole and cut into 2, 4 and 8 parts
 *    each way so that one part's check could hide behind the next part's transfer; with
 *    checksums and without, beside raw TCP, interleaved.
 * The clients send zero gradients, so the figures measure the runtime, not the model.
 */
#define _POSIX_C_SOURCE 200809L
#include <cblas.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include <zmq.h>

#include "bench_args.h"
#include "lend.h"
#include "net_baselines.h"
#include "net_bench_shards.h"
#include "net_parts.h"
#include "net_placement.h"
#include "net_served.h"
#include "syncwise/clock.h"
#include "syncwise/log.h"
#include "syncwise/net.h"
#include "syncwise/optim.h"
#include "syncwise/proto.h"

static sw_stop_flag stop_server;

typedef struct served {
    sw_server_params p;
    sw_server_result r;
    char ep[256], epfile[64], data[128], err[256];
    pthread_t th;
} served;

static void *serve(void *arg)
{
    served *s = arg;
    sw_bench_place_server();
    sw_server_run(&s->p, &s->r, s->err);
    return NULL;
}

/* Starts a server on a free loopback port with a linear model of about `params` parameters,
 * payload checksums as `checksum` says. */
static void start_checked(served *s, size_t params, const char *policy, sw_checksum_mode checksum)
{
    memset(s, 0, sizeof *s);
    sw_bench_endpoint_file(s->epfile, sizeof s->epfile);
    s->p = sw_bench_server_params(params, s->data, sizeof s->data, s->epfile, policy,
                                  &stop_server);
    s->p.checksum = checksum;
    stop_server = 0;
    pthread_create(&s->th, NULL, serve, s);
    sw_bench_await_endpoint(s->epfile, s->ep, sizeof s->ep, "server", s->err);
}

static void start(served *s, size_t params, const char *policy)
{
    start_checked(s, params, policy, SW_CHECKSUM_AUTO);
}

static void finish(served *s)
{
    stop_server = 1;
    pthread_join(s->th, NULL);
    unlink(s->epfile);
}

/* A raw client: joins, then push (zero gradient) / release round trips. */
typedef struct client {
    void *ctx, *sock;
    uint32_t id, flags; /* flags: SW_FLAG_UNCHECKED when WELCOME said checksum=off */
    size_t n;
    uint64_t version;
    uint8_t *buf;
    sw__lender lender;
    float *grad; /* zeros, in one of the lender's buffers as a worker's gradient is */
} client;

static int recv_msg(client *c, sw_msg *m, zmq_msg_t *f)
{
    zmq_msg_init(f);
    if (zmq_msg_recv(f, c->sock, 0) < 0)
        return -1;
    return sw_msg_decode(zmq_msg_data(f), zmq_msg_size(f), (uint64_t)1 << 31, m, NULL);
}

static void open_client(client *c, const char *ep, size_t n)
{
    c->ctx = zmq_ctx_new();
    c->sock = zmq_socket(c->ctx, ZMQ_DEALER);
    zmq_connect(c->sock, ep);
    c->n = n;
    c->buf = calloc(1, SW_PROTO_HEADER);
    sw__lender_init(&c->lender, n);
    sw_msg j = {.type = SW_MSG_JOIN, .worker = SW_NO_WORKER};
    sw_msg_encode(&j, c->buf);
    zmq_send(c->sock, c->buf, SW_PROTO_HEADER, 0);
    for (;;) { /* WELCOME, then the first RELEASE */
        sw_msg m;
        zmq_msg_t f;
        if (recv_msg(c, &m, &f) == 0) {
            if (m.type == SW_MSG_WELCOME) {
                c->id = m.worker;
                char text[2048];
                snprintf(text, sizeof text, "%.*s", (int)m.payload_len, (const char *)m.payload);
                bool off = strstr(text, "checksum=off") != NULL;
                c->flags = off ? SW_FLAG_UNCHECKED : 0;
            }
            c->version = m.version;
            int released = m.type == SW_MSG_RELEASE;
            zmq_msg_close(&f);
            if (released)
                break;
        } else {
            zmq_msg_close(&f);
        }
    }
}

static void close_client(client *c)
{
    zmq_close(c->sock);
    zmq_ctx_term(c->ctx);
    free(c->buf);
    sw__lender_free(&c->lender);
}

/* Says LEAVE, then closes the client. */
static void leave(client *c)
{
    sw_msg l = {.type = SW_MSG_LEAVE, .worker = c->id};
    sw_msg_encode(&l, c->buf);
    zmq_send(c->sock, c->buf, SW_PROTO_HEADER, 0);
    close_client(c);
}

static void unref_frame(void *data, void *hint)
{
    (void)data;
    sw_frame_unref(hint);
}

/* One push of a zero gradient and the release that answers it (with the parameters). The push
 * is sent as syncwise's worker sends it: from a buffer lent to ZeroMQ, checksummed, not copied
 * (or copied into ZeroMQ's buffer with its checksum when that buffer is still in flight). */
static void round_trip(client *c)
{
    sw_msg p = {.type = SW_MSG_PUSH, .worker = c->id, .flags = SW_FLAG_WANT_MODEL | c->flags,
                .version = c->version, .payload_len = 4 * c->n};
    float *g = c->grad;
    c->grad = sw__lender_writable(&c->lender, c->grad, false); /* where a worker computes */
    if (c->grad != g)
        memset(c->grad, 0, 4 * c->n);
    sw_frame *push = sw__frame_build(&c->lender, &p, c->grad);
    zmq_msg_t frame;
    if (push && zmq_msg_init_data(&frame, sw_frame_data(push), sw_frame_size(push), unref_frame,
                                  push) == 0)
        zmq_msg_send(&frame, c->sock, 0);
    for (;;) {
        sw_msg m;
        zmq_msg_t f;
        int ok = recv_msg(c, &m, &f) == 0 && m.type == SW_MSG_RELEASE;
        if (ok)
            c->version = m.version;
        zmq_msg_close(&f);
        if (ok)
            return;
    }
}

/* CPU seconds this process has used so far, all threads, user and kernel. */
static double cpu_s(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct racer {
    const char *ep;
    double seconds;
    long trips;
} racer;

static void *race(void *arg)
{
    racer *r = arg;
    client c;
    open_client(&c, r->ep, 9);
    double end = sw_clock_now_s() + r->seconds;
    while (sw_clock_now_s() < end) {
        round_trip(&c);
        r->trips++;
    }
    leave(&c);
    return NULL;
}

static void *bsp_worker(void *arg)
{
    barrier_client *b = arg;
    client c;
    open_client(&c, b->ep, b->n);
    pthread_barrier_wait(b->go);
    for (int i = 0; i < b->rounds; i++)
        round_trip(&c);
    leave(&c);
    return NULL;
}

/* Barriers per second: syncwise's server under bsp, or ZeroMQ alone; *cpu_us: the CPU time of
 * the whole process per barrier. */
static double barriers_per_s(bool ours, size_t n, int rounds, double *cpu_us)
{
    served s;
    zmq_echo e = {.rounds = rounds};
    pthread_t srv, th[W];
    const char *ep;
    if (ours) {
        start(&s, n, "bsp");
        ep = s.ep;
    } else {
        e.ctx = zmq_ctx_new();
        pthread_create(&srv, NULL, zmq_fan_server, &e);
        await_bound(&e);
        ep = e.ep;
    }
    pthread_barrier_t go;
    pthread_barrier_init(&go, NULL, W + 1);
    barrier_client b = {.ep = ep, .n = n, .rounds = rounds, .go = &go};
    for (int w = 0; w < W; w++)
        pthread_create(&th[w], NULL, ours ? bsp_worker : zmq_fan_worker, &b);
    pthread_barrier_wait(&go);
    double t0 = sw_clock_now_s(), c0 = cpu_s();
    for (int w = 0; w < W; w++)
        pthread_join(th[w], NULL);
    double dt = sw_clock_now_s() - t0;
    *cpu_us = (cpu_s() - c0) / rounds * 1e6;
    pthread_barrier_destroy(&go);
    if (ours) {
        finish(&s);
    } else {
        pthread_join(srv, NULL);
        zmq_ctx_term(e.ctx);
    }
    return rounds / dt;
}

enum { TRIALS = 5 };
static const size_t big = 1 << 20;

/* What a round trip's steps work on: the parameters, a gradient, a frame holding a push. */
typedef struct trip_bufs {
    float *theta, *grad;
    uint8_t *frame;
} trip_bufs;

/* Median microseconds of step over REPS runs. */
static double step_us(void (*step)(const trip_bufs *), const trip_bufs *t)
{
    enum { REPS = 41 };
    double us[REPS];
    for (int r = 0; r < REPS; r++) {
        double t0 = sw_clock_now_s();
        step(t);
        us[r] = (sw_clock_now_s() - t0) * 1e6;
    }
    qsort(us, REPS, sizeof *us, cmp);
    return us[REPS / 2];
}

static void checksum_step(const trip_bufs *t)
{
    sw_msg m = {.type = SW_MSG_PUSH, .payload_len = 4 * big}; /* payload in place */
    sw_msg_encode(&m, t->frame);
}

static void verify_step(const trip_bufs *t)
{
    sw_msg m;
    if (sw_msg_decode(t->frame, sw_msg_size(4 * big), (uint64_t)1 << 31, &m, NULL) != 0)
        abort();
}

/* The finiteness check alone, as a server without checksums runs it (a checked frame's decoder
 * does it in its checksum's pass). */
static void finite_step(const trip_bufs *t)
{
    sw_msg m = {.type = SW_MSG_PUSH, .payload = t->frame + SW_PROTO_HEADER,
                .payload_len = 4 * big};
    if (!sw_msg_floats_in_place(&m, big, NULL))
        abort();
}

static void apply_step(const trip_bufs *t)
{
    sw_sgd_step(t->theta, t->grad, big, 0.01f, 0); /* the engine's plain SGD step */
}

/* The work a push + pull round trip requires besides moving bytes, each step timed alone on
 * 4 MB: the checksum written by the sender and checked by the receiver, each way (the check
 * also finds non-finite floats, in the same pass); the apply. Without checksums the server
 * checks finiteness in a pass of its own. In a ping-pong every step waits for the one before. */
static double trip_work_us(void)
{
    trip_bufs t = {.theta = calloc(big, sizeof(float)), .grad = calloc(big, sizeof(float)),
                   .frame = calloc(1, sw_msg_size(4 * big))};
    checksum_step(&t); /* a valid frame for the others */
    double crc = step_us(checksum_step, &t), check = step_us(verify_step, &t);
    double finite = step_us(finite_step, &t), apply = step_us(apply_step, &t);
    double all = 2 * crc + 2 * check + apply;
    printf("   a round trip's own work, each step alone on 4 MB: checksum %.0f us, its check "
           "(with\n   the finiteness scan) %.0f, apply %.0f; in all (two checksums and two checks) "
           "%.0f us;\n   without checksums the finiteness scan alone %.0f\n",
           crc, check, apply, all, finite);
    free(t.theta);
    free(t.grad);
    free(t.frame);
    return all;
}

/* MB/s of `rounds` round trips of client c, and the CPU they took per trip (us). */
static double trips_mbps(client *c, int rounds, double *cpu_us)
{
    double t0 = sw_clock_now_s(), c0 = cpu_s();
    for (int i = 0; i < rounds; i++)
        round_trip(c);
    *cpu_us = (cpu_s() - c0) / rounds * 1e6;
    return 2.0 * 4 * (double)big * rounds / (sw_clock_now_s() - t0) / 1e6;
}

static double median(double *v)
{
    qsort(v, TRIALS, sizeof *v, cmp);
    return v[TRIALS / 2];
}

/* Two servers side by side, with payload checksums and without (--checksum off), each ratio
 * taken against the raw TCP of its own trial. */
static void throughput(int rounds)
{
    enum { ON, OFF, ZMQ, WORK, RAW, KINDS };
    static const char *const names[KINDS] = {"syncwise", "checksum off", "ZeroMQ alone",
                                             "ZeroMQ + work", "raw TCP"};
    served s[2];
    client c[2];
    start_checked(&s[ON], big, "asp", SW_CHECKSUM_ON);
    start_checked(&s[OFF], big, "asp", SW_CHECKSUM_OFF);
    for (int k = ON; k <= OFF; k++) {
        open_client(&c[k], s[k].ep, big);
        for (int i = 0; i < 3; i++) /* warm up */
            round_trip(&c[k]);
    }
    double mbps[KINDS][TRIALS], cpu[KINDS][TRIALS], ratio[2][TRIALS];
    printf("\n1. push + pull of a %zu-float model (4 MB each way), %d round trips a trial;\n"
           "   syncwise with payload checksums and without (--checksum off), and the same bytes\n"
           "   moved the same way by ZeroMQ alone, by ZeroMQ with the work a server without\n"
           "   checksums cannot skip (finiteness, apply), and by raw TCP, interleaved;\n"
           "   %s\n",
           big, rounds, sw_bench_placement());
    for (int t = 0; t < TRIALS; t++) {
        for (int k = ON; k <= OFF; k++)
            mbps[k][t] = trips_mbps(&c[k], rounds, &cpu[k][t]);
        double c0 = cpu_s();
        mbps[ZMQ][t] = zmq_echo_mbps(4 * big, rounds);
        double cw = cpu_s();
        mbps[WORK][t] = zmq_work_mbps(big, rounds);
        double c1 = cpu_s();
        mbps[RAW][t] = raw_tcp_mbps(4 * big, rounds);
        cpu[ZMQ][t] = (cw - c0) / rounds * 1e6;
        cpu[WORK][t] = (c1 - cw) / rounds * 1e6;
        cpu[RAW][t] = (cpu_s() - c1) / rounds * 1e6;
        for (int k = ON; k <= OFF; k++)
            ratio[k][t] = mbps[k][t] / mbps[RAW][t];
        printf("   trial %d: syncwise %5.0f MB/s   checksum off %5.0f   ZeroMQ alone %5.0f   "
               "ZeroMQ + work %5.0f   raw TCP %5.0f   ratios %.2f %.2f\n", t + 1, mbps[ON][t],
               mbps[OFF][t], mbps[ZMQ][t], mbps[WORK][t], mbps[RAW][t], ratio[ON][t],
               ratio[OFF][t]);
    }
    for (int k = ON; k <= OFF; k++) {
        close_client(&c[k]);
        finish(&s[k]);
    }
    double med[KINDS], med_cpu[KINDS];
    for (int k = 0; k < KINDS; k++) {
        med[k] = median(mbps[k]);
        med_cpu[k] = median(cpu[k]);
    }
    printf("   median MB/s:");
    for (int k = 0; k < KINDS; k++)
        printf("  %s %.0f", names[k], med[k]);
    printf("\n   CPU per round trip (median, all threads, us):");
    for (int k = 0; k < KINDS; k++)
        printf("  %s %.0f", names[k], med_cpu[k]);
    static const double goal[2] = {0.70, 0.80};
    for (int k = ON; k <= OFF; k++) {
        double mid = median(ratio[k]);
        printf("\n   %s / raw TCP: %.2f (range %.2f-%.2f; goal %.2f: %s)", names[k], mid,
               ratio[k][0], ratio[k][TRIALS - 1], goal[k], mid >= goal[k] ? "met" : "NOT met");
    }
    printf("\n   ZeroMQ alone / raw TCP: %.2f   ZeroMQ + work / raw TCP: %.2f (the measured bound "
           "without checksums)\n", med[ZMQ] / med[RAW], med[WORK] / med[RAW]);
    double work = trip_work_us(), bytes = 2.0 * 4 * (double)big;
    double zmq_us = bytes / med[ZMQ], raw_us = bytes / med[RAW];
    printf("   a ZeroMQ round trip (%.0f us) followed by that work: at best %.2f of raw TCP (%.0f "
           "us)\n", zmq_us, raw_us / (zmq_us + work), raw_us);
}

static void small_round_trips(void)
{
    served s;
    start(&s, 9, "asp");
    client c;
    open_client(&c, s.ep, 9);
    enum { N = 5000 };
    static double lat[N];
    for (int i = 0; i < 200; i++)
        round_trip(&c);
    for (int i = 0; i < N; i++) {
        double a = sw_clock_now_s();
        round_trip(&c);
        lat[i] = (sw_clock_now_s() - a) * 1e6;
    }
    qsort(lat, N, sizeof *lat, cmp);
    printf("\n2. push + release round trip, 9-float model, %d trips\n", N);
    printf("   p50 %.1f us   p99 %.1f us   max %.1f us\n", lat[N / 2], lat[N * 99 / 100],
           lat[N - 1]);
    close_client(&c);
    finish(&s);
}

static void many_clients(void)
{
    served s;
    start(&s, 9, "asp");
    racer r[8];
    pthread_t th[8];
    for (int i = 0; i < 8; i++) {
        r[i] = (racer){.ep = s.ep, .seconds = 3};
        pthread_create(&th[i], NULL, race, &r[i]);
    }
    long total = 0;
    for (int i = 0; i < 8; i++) {
        pthread_join(th[i], NULL);
        total += r[i].trips;
    }
    finish(&s);
    printf("\n3. 8 concurrent clients (asp, 9-float model), 3 s\n");
    printf("   %.0f applies per second (%ld in all)\n", total / 3.0, total);
}

static void barriers(int rounds)
{
    double bo[TRIALS], bz[TRIALS], br[TRIALS], co[TRIALS], cz[TRIALS];
    printf("\n4. bsp barrier of %d clients on the %zu-float model (4 MB in from each, the same\n"
           "   4 MB back to each), %d barriers a trial; ZeroMQ alone doing the same exchange\n",
           W, big, rounds);
    for (int t = 0; t < TRIALS; t++) {
        bo[t] = barriers_per_s(true, big, rounds, &co[t]);
        bz[t] = barriers_per_s(false, big, rounds, &cz[t]);
        br[t] = bo[t] / bz[t];
        printf("   trial %d: syncwise %.1f barriers/s   ZeroMQ alone %.1f   ratio %.2f   "
               "CPU us/barrier %5.0f %5.0f\n", t + 1, bo[t], bz[t], br[t], co[t], cz[t]);
    }
    qsort(bo, TRIALS, sizeof *bo, cmp);
    qsort(bz, TRIALS, sizeof *bz, cmp);
    qsort(br, TRIALS, sizeof *br, cmp);
    qsort(co, TRIALS, sizeof *co, cmp);
    qsort(cz, TRIALS, sizeof *cz, cmp);
    printf("   median: syncwise %.1f barriers/s   ZeroMQ alone %.1f   syncwise/ZeroMQ alone %.2f "
           "(range %.2f-%.2f)\n", bo[TRIALS / 2], bz[TRIALS / 2], br[TRIALS / 2], br[0],
           br[TRIALS - 1]);
    printf("   CPU per barrier (median, all threads): syncwise %.0f us   ZeroMQ alone %.0f\n",
           co[TRIALS / 2], cz[TRIALS / 2]);
}

/* MB/s of `rounds` sharded steps of s, and the CPU they took per step (us). */
static double sharded_mbps(sharded *s, int rounds, double *cpu_us)
{
    double t0 = sw_clock_now_s(), c0 = cpu_s();
    for (int i = 0; i < rounds; i++)
        sw_bench_sharded_trip(s);
    *cpu_us = (cpu_s() - c0) / rounds * 1e6;
    return 2.0 * 4 * (double)big * rounds / (sw_clock_now_s() - t0) / 1e6;
}

static void sharded_throughput(int rounds)
{
    enum { ON, OFF, RAW, KINDS };
    static const char *const names[KINDS] = {"one shard", "checksum off", "raw TCP"};
    sharded *s[2] = {sw_bench_sharded_open(big, SW_CHECKSUM_ON),
                     sw_bench_sharded_open(big, SW_CHECKSUM_OFF)};
    double mbps[KINDS][TRIALS], cpu[KINDS][TRIALS], ratio[2][TRIALS], legs[2][2][TRIALS];
    printf("\n5. push + pull of the %zu-float model through one shard: the gradient to the shard,\n"
           "   the release from the server, a pull and the slice back from the shard; with\n"
           "   payload checksums and without, beside raw TCP moving the same bytes, interleaved,\n"
           "   %d steps a trial; %s\n", big, rounds, sw_bench_placement());
    for (int t = 0; t < TRIALS; t++) {
        for (int k = ON; k <= OFF; k++) {
            mbps[k][t] = sharded_mbps(s[k], rounds, &cpu[k][t]);
            sw_bench_sharded_legs(s[k], &legs[k][0][t], &legs[k][1][t]);
        }
        double c0 = cpu_s();
        mbps[RAW][t] = raw_tcp_mbps(4 * big, rounds);
        cpu[RAW][t] = (cpu_s() - c0) / rounds * 1e6;
        for (int k = ON; k <= OFF; k++)
            ratio[k][t] = mbps[k][t] / mbps[RAW][t];
        printf("   trial %d: one shard %5.0f MB/s   checksum off %5.0f   raw TCP %5.0f   ratios "
               "%.2f %.2f\n", t + 1, mbps[ON][t], mbps[OFF][t], mbps[RAW][t], ratio[ON][t],
               ratio[OFF][t]);
    }
    for (int k = ON; k <= OFF; k++)
        sw_bench_sharded_close(s[k]);
    printf("   median MB/s:");
    for (int k = 0; k < KINDS; k++)
        printf("  %s %.0f", names[k], median(mbps[k]));
    printf("\n   CPU per step (median, all threads, us):");
    for (int k = 0; k < KINDS; k++)
        printf("  %s %.0f", names[k], median(cpu[k]));
    static const double goal[2] = {0.70, 0.80};
    for (int k = ON; k <= OFF; k++) {
        double mid = median(ratio[k]);
        printf("\n   %s / raw TCP: %.2f (range %.2f-%.2f; goal %.2f: %s)", names[k], mid,
               ratio[k][0], ratio[k][TRIALS - 1], goal[k], mid >= goal[k] ? "met" : "NOT met");
    }
    printf("\n   a step's two legs (median of the trials' means, us): push to release %.0f, "
           "release to slice %.0f;\n   checksum off %.0f and %.0f; raw TCP's one way %.0f\n",
           median(legs[ON][0]), median(legs[ON][1]), median(legs[OFF][0]), median(legs[OFF][1]),
           4 * (double)big / median(mbps[RAW]));
}

/* Part 6: the exchange whole and in parts, with checksums and without, beside raw TCP. */
static void in_parts(int rounds)
{
    enum { CUTS = 4 };
    static const int cuts[CUTS] = {1, 2, 4, 8};
    double mbps[2][CUTS][TRIALS], raw[TRIALS];
    printf("\n6. part 1's exchange (%zu floats each way) by ZeroMQ alone carrying syncwise frames,\n"
           "   each end checking, stepping and checksumming as syncwise does, whole (lent) and\n"
           "   cut into parts (each copied as it is checksummed); %d round trips a trial;\n   %s\n",
           big, rounds, sw_bench_placement());
    for (int t = 0; t < TRIALS; t++) {
        printf("   trial %d:", t + 1);
        for (int on = 1; on >= 0; on--)
            for (int i = 0; i < CUTS; i++) {
                mbps[on][i][t] = zmq_parts_mbps(big, cuts[i], on, rounds);
                printf(" %s%d %.0f", on ? "" : "off/", cuts[i], mbps[on][i][t]);
            }
        raw[t] = raw_tcp_mbps(4 * big, rounds);
        printf("   raw TCP %.0f MB/s\n", raw[t]);
    }
    double r = median(raw);
    for (int on = 1; on >= 0; on--) {
        printf("   median / raw TCP, checksums %s:", on ? "on " : "off");
        for (int i = 0; i < CUTS; i++)
            printf("  %d part%s %.2f", cuts[i], cuts[i] > 1 ? "s" : " ", median(mbps[on][i]) / r);
        printf("\n");
    }
}

/* Runs a part under each placement asked for (net_placement.h), shared first; the parts after
 * run shared. */
static void placed(void (*part)(int), int rounds, const char *placement)
{
    for (int apart = 0; apart <= 1; apart++) {
        if (strcmp(placement, "both") && strcmp(placement, apart ? "apart" : "shared"))
            continue;
        if (sw_bench_place_apart(apart))
            part(rounds);
        else
            printf("\n   (apart needs two CPUs this process may use: not measured)\n");
    }
    sw_bench_place_apart(false);
}

int main(int argc, char **argv)
{
    bench_usage(argc, argv, 3,
                "[ROUNDS [PART [PLACEMENT]]]\n"
                "The networked runtime on loopback, side by side with ZeroMQ alone and raw TCP\n"
                "(bench/net_bench.c says what each part measures).\n"
                "  ROUNDS  round trips a trial of the throughput parts (default 200): more\n"
                "          steady the figures\n"
                "  PART    all (default), throughput, small, clients, barrier, shards or parts:\n"
                "          that part alone, for profiling it\n"
                "  PLACEMENT  of the throughput, shards and parts parts: shared (every thread\n"
                "          where the scheduler puts it), apart (the serving side on one CPU,\n"
                "          the client on another, as --cpus gives processes) or both (default)\n");
    setvbuf(stdout, NULL, _IOLBF, 0); /* each figure seen as it comes, and a hang's last */
    int rounds = argc > 1 ? (int)bench_long(argv[0], "ROUNDS", argv[1], 1, 1000000) : 200;
    const char *part = argc > 2 ? argv[2] : "all";
    static const char *const parts[] = {"all", "throughput", "small", "clients", "barrier",
                                        "shards", "parts"};
    size_t known = 0;
    while (known < sizeof parts / sizeof *parts && strcmp(part, parts[known]))
        known++;
    if (known == sizeof parts / sizeof *parts)
        bench_refuse(argv[0], part,
                     "PART is all, throughput, small, clients, barrier, shards or parts");
    const char *placement = argc > 3 ? argv[3] : "both";
    if (strcmp(placement, "shared") && strcmp(placement, "apart") && strcmp(placement, "both"))
        bench_refuse(argv[0], placement, "PLACEMENT is shared, apart or both");
    sw_net_keep_freed_memory(); /* as the syncwise commands do */
    const char *core = getenv("OPENBLAS_CORETYPE"), *threads = getenv("OPENBLAS_NUM_THREADS");
    if (!threads) { /* as `syncwise server` does by default */
        openblas_set_num_threads(1);
        threads = "1 (syncwise server's default)";
    }
    printf("networked runtime on loopback (%ld cores; OPENBLAS_CORETYPE=%s "
           "OPENBLAS_NUM_THREADS=%s)\n", sysconf(_SC_NPROCESSORS_ONLN), core ? core : "(unset)",
           threads);
    sw_log_set_level(SW_LOG_WARN); /* not every worker's leaving */
    bool all = strcmp(part, "all") == 0;
    if (all || strcmp(part, "throughput") == 0)
        placed(throughput, rounds, placement);
    if (all || strcmp(part, "small") == 0)
        small_round_trips();
    if (all || strcmp(part, "clients") == 0)
        many_clients();
    if (all || strcmp(part, "barrier") == 0)
        barriers(rounds / 4 > 10 ? rounds / 4 : 10);
    if (all || strcmp(part, "shards") == 0)
        placed(sharded_throughput, rounds, placement);
    if (all || strcmp(part, "parts") == 0)
        placed(in_parts, rounds, placement);
    return 0;
}
