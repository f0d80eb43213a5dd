/* Endpoints as users write them (see sw_endpoint_check in syncwise/transport.h). ZeroMQ takes a port
 * above 65535 modulo 65536 (tcp://127.0.0.1:99999 serves on 34463) and binds only to addresses
 * and interface names ("localhost" fails with "No such device"), so both are settled here. */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <netdb.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "syncwise/err.h"
#include "syncwise/transport.h"

/* A port: "*" (binding only: any free one) or a number in [1, 65535]. */
static int check_port(const char *ep, const char *port, bool bind, char *err)
{
    if (bind && !strcmp(port, "*"))
        return 0;
    /* Digits only: strtol also takes a sign and spaces, which ZeroMQ then refuses late. */
    size_t digits = strspn(port, "0123456789");
    long v = digits && digits <= 5 && !port[digits] ? strtol(port, NULL, 10) : 0;
    if (v < 1 || v > 65535)
        return sw_fail(err, SW_EINVAL, "%s: port '%s' is not a number in [1, 65535]%s", ep, port,
                       bind ? " or *" : "");
    return 0;
}

/* Whether host is written as an address (or *, any interface): ZeroMQ takes it as it is. */
static bool is_address(const char *host)
{
    unsigned char buf[sizeof(struct in6_addr)];
    char bare[128];
    size_t len = strlen(host);
    if (!strcmp(host, "*") || inet_pton(AF_INET, host, buf) == 1)
        return true;
    if (len >= 2 && host[0] == '[' && host[len - 1] == ']' && len - 2 < sizeof bare) {
        memcpy(bare, host + 1, len - 2);
        bare[len - 2] = '\0';
        return inet_pton(AF_INET6, bare, buf) == 1;
    }
    return false;
}

/* Whether a process listens on the Unix socket at path: ZeroMQ binding ipc://PATH removes the
 * file there first, and would take a running server's endpoint from it without a word. */
static bool ipc_listened(const char *path)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (path[0] == '@' || strlen(path) >= sizeof a.sun_path) /* abstract, or ZeroMQ refuses */
        return false;
    memcpy(a.sun_path, path, strlen(path) + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    bool live = fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) == 0;
    if (fd >= 0)
        close(fd);
    return live;
}

int sw_endpoint_check(const char *ep, bool bind, char *out, size_t cap, char *err)
{
    /* inproc:// is not one: it reaches no other process (ZeroMQ's own, used inside ours) */
    if (strstr(ep, "://") && strstr(strstr(ep, "://") + 3, "://"))
        return sw_fail(err, SW_EINVAL, "%s: two endpoints run together: give one", ep);
    if (strncmp(ep, "tcp://", 6) != 0) {
        if (strncmp(ep, "ipc://", 6))
            return sw_fail(err, SW_EINVAL, "%s: not an endpoint (tcp://HOST:PORT, ipc://PATH)",
                           ep);
        if (!ep[6])
            return sw_fail(err, SW_EINVAL, "%s: ipc:// needs the socket's path", ep);
        if (bind && ipc_listened(ep + 6))
            return sw_fail(err, SW_ESTATE, "cannot bind %s: another process listens there (a "
                           "second server on one path?): give another", ep);
        return snprintf(out, cap, "%s", ep) < (int)cap ? 0
                   : sw_fail(err, SW_EINVAL, "%s: endpoint too long", ep);
    }
    const char *colon = strrchr(ep + 6, ':');
    char host[256];
    size_t hlen = colon ? (size_t)(colon - (ep + 6)) : 0;
    if (!colon || hlen == 0 || hlen >= sizeof host)
        return sw_fail(err, SW_EINVAL, "%s: expected tcp://HOST:PORT", ep);
    memcpy(host, ep + 6, hlen);
    host[hlen] = '\0';
    /* A second colon outside [IPv6] brackets, or a separator: two endpoints run together
     * ("tcp://a:1;tcp://b:2"), or one port too many, which ZeroMQ would refuse only late. */
    bool bracketed = hlen > 2 && host[0] == '[' && host[hlen - 1] == ']';
    if ((!bracketed && strpbrk(host, ":[]")) || host[strcspn(host, ";, \t\n")])
        return sw_fail(err, SW_EINVAL,
                       "%s: expected tcp://HOST:PORT, one endpoint (an IPv6 address in brackets: "
                       "tcp://[::1]:5555)",
                       ep);
    if (!bind && !strcmp(host, "*"))
        return sw_fail(err, SW_EINVAL,
                       "%s: '*' (every interface) is a host to bind, not one to connect to: "
                       "name the host (tcp://127.0.0.1:%s on this machine)",
                       ep, colon + 1);
    int rc = check_port(ep, colon + 1, bind, err);
    if (rc)
        return rc;
    if (is_address(host) || !bind) /* ZeroMQ resolves names it connects to */
        return snprintf(out, cap, "%s", ep) < (int)cap ? 0
                   : sw_fail(err, SW_EINVAL, "%s: endpoint too long", ep);
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *res = NULL;
    if (getaddrinfo(host, NULL, &hints, &res) != 0 || !res) /* maybe an interface, as eth0 */
        return snprintf(out, cap, "%s", ep) < (int)cap ? 0
                   : sw_fail(err, SW_EINVAL, "%s: endpoint too long", ep);
    char addr[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &((struct sockaddr_in *)(void *)res->ai_addr)->sin_addr, addr,
              sizeof addr);
    freeaddrinfo(res);
    if (snprintf(out, cap, "tcp://%s:%s", addr, colon + 1) >= (int)cap)
        return sw_fail(err, SW_EINVAL, "%s: endpoint too long", ep);
    return 0;
}

const char *sw_endpoint_security(const char *ep, bool curve)
{
    if (curve)
        return "CURVE: encrypted, known keys only";
    return strncmp(ep, "ipc://", 6) ? "plain TCP, no CURVE" : "plain IPC, no CURVE";
}
