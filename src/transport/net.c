/* The calls of syncwise/transport.h, dispatched to the network a socket belongs to. */
#include <errno.h>

#include "syncwise/err.h"
#include "transport_internal.h"

void sw_net_free(sw_net *n)
{
    if (n)
        n->ops->free(n);
}

double sw_net_now(const sw_net *n) { return n->ops->now(n); }

unsigned long long sw_net_refused(const sw_net *n) { return n->ops->refused(n); }

int sw_listen(sw_net *n, sw_sock **out, const sw_listen_params *p, char *err)
{
    *out = NULL;
    return n->ops->listen(n, out, p, err);
}

int sw_dial(sw_net *n, sw_sock **out, const sw_dial_params *p, char *err)
{
    *out = NULL;
    return n->ops->dial(n, out, p, err);
}

void sw_sock_close(sw_sock *s)
{
    if (s)
        s->net->ops->close(s);
}

void sw_sock_discard(sw_sock *s)
{
    if (s && s->net->ops->discard)
        s->net->ops->discard(s);
}

const char *sw_sock_endpoint(const sw_sock *s) { return s->endpoint; }

unsigned sw_sock_reconnects(const sw_sock *s) { return s->reconnects; }

bool sw_send(sw_sock *s, const uint8_t *route, size_t route_len, sw_frame *f)
{
    if (!f) {
        errno = ENOMEM;
        return false;
    }
    return s->net->ops->send(s, route, route_len, f);
}

int sw_recv(sw_sock *s, sw_delivery *d) { return s->net->ops->recv(s, d); }

int sw_net_wait(sw_net *n, sw_sock **socks, size_t k, double until, bool *ready, char *err)
{
    return n->ops->wait(n, socks, k, until, ready, err);
}
