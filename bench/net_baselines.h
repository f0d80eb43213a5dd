/* The baselines bench_net measures syncwise against: the same bytes moved the same way by raw
 * TCP on loopback and by ZeroMQ alone, with no protocol and no work between the turns. */
#ifndef SW_BENCH_NET_BASELINES_H
#define SW_BENCH_NET_BASELINES_H

#include <pthread.h>
#include <stddef.h>

/* A bsp barrier of W workers on the big model: each pushes 4 MB, and when all are in each gets
 * the same 4 MB of parameters back. */
enum { W = 4 };

typedef struct barrier_client { /* what every client thread of a barrier reads */
    const char *ep;
    size_t n;
    int rounds;
    pthread_barrier_t *go;
} barrier_client;

typedef struct zmq_echo {
    void *ctx;
    char ep[64];
    int rounds, bound; /* bound: set once ep holds the endpoint */
} zmq_echo;

/* MB/s of `rounds` ping-pongs of `bytes` each way over raw TCP on loopback. */
double raw_tcp_mbps(size_t bytes, int rounds);
/* The same through a ZeroMQ ROUTER that sends each message straight back. */
double zmq_echo_mbps(size_t bytes, int rounds);
/* The same with the work a --checksum off server cannot skip (each push's floats checked finite
 * and applied to n parameters, which go back from where they lie): the bound on syncwise's
 * push + pull without checksums on this machine, measured rather than added up. */
double zmq_work_mbps(size_t n, int rounds);
/* Waits until e's ROUTER is bound and e->ep names it. */
void await_bound(const zmq_echo *e);
/* A barrier's exchange by ZeroMQ alone: the server thread (arg: a zmq_echo) and a worker
 * thread (arg: a barrier_client). */
void *zmq_fan_server(void *arg);
void *zmq_fan_worker(void *arg);

#endif
