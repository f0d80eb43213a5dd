/* The two networks behind syncwise/transport.h: a table of operations each fills in, and the
 * part of a network and a socket that the shared code reads. */
#ifndef SW_TRANSPORT_INTERNAL_H
#define SW_TRANSPORT_INTERNAL_H

#include "syncwise/transport.h"

typedef struct sw__net_ops {
    int (*listen)(sw_net *n, sw_sock **out, const sw_listen_params *p, char *err);
    int (*dial)(sw_net *n, sw_sock **out, const sw_dial_params *p, char *err);
    void (*close)(sw_sock *s);
    void (*discard)(sw_sock *s); /* may be NULL: nothing waits at close */
    bool (*send)(sw_sock *s, const uint8_t *route, size_t route_len, sw_frame *f);
    int (*recv)(sw_sock *s, sw_delivery *d);
    int (*wait)(sw_net *n, sw_sock **socks, size_t k, double until, bool *ready, char *err);
    double (*now)(const sw_net *n);
    unsigned long long (*refused)(const sw_net *n);
    void (*free)(sw_net *n);
} sw__net_ops;

struct sw_net {
    const sw__net_ops *ops;
};

struct sw_sock {
    sw_net *net;
    char endpoint[256];
    unsigned reconnects; /* a dialer's handshakes after its first (sw_sock_reconnects) */
};

extern const sw__net_ops sw__net_zmq, sw__net_inproc;

#endif
