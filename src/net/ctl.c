/* The operator's client (`syncwise ctl`): one CTL request to a running server, one answer; and
 * where a server takes operator commands on this host. */
#define _GNU_SOURCE /* getifaddrs */
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "syncwise/err.h"
#include "syncwise/net.h"
#include "syncwise/proto.h"

int sw_ctl_endpoint(const char *server_endpoint, char *out, size_t cap, char *err)
{
    const char *ep = server_endpoint;
    char path[512];
    if (!strncmp(ep, "ipc://", 6)) {
        snprintf(path, sizeof path, "%s.ctl", ep + 6);
    } else if (!strncmp(ep, "tcp://", 6) && strrchr(ep + 6, ':')) {
        /* By port alone: the same server whether reached as localhost, 127.0.0.1 or bound to
         * every interface. */
        const char *port = strrchr(ep + 6, ':') + 1, *rt = getenv("XDG_RUNTIME_DIR");
        if (!*port || port[strspn(port, "0123456789")])
            return sw_fail(err, SW_EINVAL, "no operator endpoint for %s: give one with "
                           "--ctl-bind", ep);
        if (rt && *rt)
            snprintf(path, sizeof path, "%s/syncwise/syncwise-%s.ctl", rt, port);
        else
            snprintf(path, sizeof path, "/tmp/syncwise-%u/syncwise-%s.ctl", (unsigned)getuid(),
                     port);
    } else {
        return sw_fail(err, SW_EINVAL, "no operator endpoint for %s: give one with --ctl-bind",
                       ep);
    }
    if (strlen(path) >= sizeof ((struct sockaddr_un *)0)->sun_path || strlen(path) + 7 > cap)
        return sw_fail(err, SW_EINVAL, "the operator socket %s is too long a path: give "
                       "--ctl-bind", path);
    snprintf(out, cap, "ipc://%s", path);
    return 0;
}

bool sw_ctl_socket_answers(const char *path)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof a.sun_path)
        return false;
    memcpy(a.sun_path, path, strlen(path));
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return false;
    bool answers = connect(fd, (struct sockaddr *)&a, sizeof a) == 0;
    close(fd);
    return answers;
}

/* Whether a is a loopback or wildcard address, or that of one of the interfaces. */
static bool local_address(const struct sockaddr *a, const struct ifaddrs *ifs)
{
    if (a->sa_family == AF_INET) {
        struct in_addr in = ((const struct sockaddr_in *)a)->sin_addr;
        uint32_t host = ntohl(in.s_addr);
        if ((host >> 24) == 127 || host == INADDR_ANY)
            return true;
        for (const struct ifaddrs *i = ifs; i; i = i->ifa_next)
            if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET &&
                ((const struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr == in.s_addr)
                return true;
    } else if (a->sa_family == AF_INET6) {
        const struct in6_addr *in6 = &((const struct sockaddr_in6 *)a)->sin6_addr;
        if (IN6_IS_ADDR_LOOPBACK(in6) || IN6_IS_ADDR_UNSPECIFIED(in6))
            return true;
        for (const struct ifaddrs *i = ifs; i; i = i->ifa_next)
            if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET6 &&
                !memcmp(&((const struct sockaddr_in6 *)i->ifa_addr)->sin6_addr, in6,
                        sizeof *in6))
                return true;
    }
    return false;
}

bool sw_ctl_is_this_host(const char *endpoint)
{
    if (!strncmp(endpoint, "ipc://", 6))
        return true;
    const char *h = endpoint + 6, *colon = strrchr(h, ':');
    if (strncmp(endpoint, "tcp://", 6) || !colon)
        return false;
    char host[256];
    size_t len = (size_t)(colon - h);
    if (len >= 2 && h[0] == '[' && h[len - 1] == ']') /* [::1]:5555 */
        h++, len -= 2;
    if (len == 0 || len >= sizeof host)
        return false;
    memcpy(host, h, len);
    host[len] = '\0';
    if (!strcmp(host, "*"))
        return true;
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res;
    if (getaddrinfo(host, NULL, &hints, &res))
        return false;
    struct ifaddrs *ifs = NULL;
    if (getifaddrs(&ifs))
        ifs = NULL;
    bool local = false;
    for (const struct addrinfo *a = res; a && !local; a = a->ai_next)
        local = local_address(a->ai_addr, ifs);
    freeifaddrs(ifs);
    freeaddrinfo(res);
    return local;
}

/* Sends the command and waits up to timeout_s for the answer, whose text goes to reply. */
static int ask(sw_net *net, sw_sock *sock, const char *connect, const char *command,
               double timeout_s, char *reply, size_t reply_cap, char *err)
{
    size_t len = strlen(command);
    sw_msg m = {.type = SW_MSG_CTL, .worker = SW_NO_WORKER, .payload = (const uint8_t *)command,
                .payload_len = len};
    sw_frame *f = sw_frame_new(sw_msg_size(len));
    if (!f)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    sw_msg_encode(&m, sw_frame_data(f));
    sw_send(sock, NULL, 0, f);
    double until = sw_net_now(net) + timeout_s;
    sw_delivery d = {0};
    bool ready = false;
    int rc = 0;
    while (!rc && sw_recv(sock, &d) != 0) {
        if (sw_net_now(net) >= until)
            return sw_fail(err, SW_EIO, "no answer from %s within %g s (--timeout)", connect,
                           timeout_s);
        rc = sw_net_wait(net, &sock, 1, until, &ready, err);
    }
    sw_msg r;
    char why[SW_ERR_LEN];
    if (!rc && (rc = sw_msg_decode(sw_frame_data(d.frame), sw_frame_size(d.frame), 1 << 20, &r,
                                   why)))
        sw_fail(err, rc, "%s answered with something that is not syncwise's (%s): is a syncwise "
                "server listening there?", connect, why);
    if (!rc && r.type == SW_MSG_ERROR) /* refused: the reply says why, as an error */
        snprintf(reply, reply_cap, "error: %.*s\n", (int)r.payload_len, (const char *)r.payload);
    else if (!rc)
        snprintf(reply, reply_cap, "%.*s", (int)r.payload_len, (const char *)r.payload);
    sw_frame_unref(d.frame);
    return rc;
}

int sw_ctl(const char *connect, const char *command, double timeout_s, const char *curve_key,
           const char *curve_server, char *reply, size_t reply_cap, char *err)
{
    sw_net *net;
    sw_sock *sock = NULL;
    int rc = sw_net_zmq_new(&net, err);
    if (rc)
        return rc;
    sw_dial_params dp = {.endpoint = connect, .max_frame = 1 << 20, .curve_key = curve_key,
                         .curve_server = curve_server};
    if (!(rc = sw_dial(net, &sock, &dp, err)))
        rc = ask(net, sock, connect, command, timeout_s, reply, reply_cap, err);
    sw_sock_close(sock);
    sw_net_free(net);
    return rc;
}
