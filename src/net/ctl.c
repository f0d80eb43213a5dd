/* The operator's client (`syncwise ctl`): one CTL request to a running server, one answer; and
 * where a server takes operator commands on this host. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>
#include <unistd.h>
#include <zmq.h>

#include "syncwise/curve.h"
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

/* Sets up sock to talk to the server at `connect`, with CURVE when curve_key is given. */
static int open_line(void *sock, const char *connect, const char *curve_key,
                     const char *curve_server, char *err)
{
    if (curve_key) {
        sw_curve_keys mine, theirs;
        if (!curve_server)
            return sw_fail(err, SW_EINVAL, "CURVE needs the server's public key");
        int rc = sw_curve_read(curve_key, 1, &mine, err);
        if (!rc)
            rc = sw_curve_read(curve_server, 0, &theirs, err);
        if (!rc)
            rc = sw_curve_client(sock, &mine, theirs.pub, err);
        if (rc)
            return rc;
    }
    int linger = 0;
    char checked[300];
    int rc = sw_endpoint_check(connect, false, checked, sizeof checked, err);
    if (rc)
        return rc;
    zmq_setsockopt(sock, ZMQ_LINGER, &linger, sizeof linger);
    if (zmq_connect(sock, connect))
        return sw_fail(err, SW_EIO, "cannot connect to %s", connect);
    return 0;
}

/* Sends the command and waits up to timeout_s for the answer, whose text goes to reply. */
static int ask(void *sock, const char *connect, const char *command, double timeout_s,
               char *reply, size_t reply_cap, char *err)
{
    size_t len = strlen(command);
    uint8_t *buf = malloc(sw_msg_size(len));
    if (!buf)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    sw_msg m = {.type = SW_MSG_CTL, .worker = SW_NO_WORKER, .payload = (const uint8_t *)command,
                .payload_len = len};
    sw_msg_encode(&m, buf);
    zmq_send(sock, buf, sw_msg_size(len), 0);
    free(buf);
    zmq_pollitem_t item = {.socket = sock, .events = ZMQ_POLLIN};
    zmq_msg_t frame;
    zmq_msg_init(&frame);
    sw_msg r;
    int rc = 0;
    if (zmq_poll(&item, 1, (long)(timeout_s * 1000)) <= 0 || zmq_msg_recv(&frame, sock, 0) < 0)
        rc = sw_fail(err, SW_EIO, "no answer from %s within %.0f s", connect, timeout_s);
    else
        rc = sw_msg_decode(zmq_msg_data(&frame), zmq_msg_size(&frame), 1 << 20, &r, err);
    if (!rc && r.type == SW_MSG_ERROR) /* refused: the reply says why, as an error */
        snprintf(reply, reply_cap, "error: %.*s\n", (int)r.payload_len, (const char *)r.payload);
    else if (!rc)
        snprintf(reply, reply_cap, "%.*s", (int)r.payload_len, (const char *)r.payload);
    zmq_msg_close(&frame);
    return rc;
}

int sw_ctl(const char *connect, const char *command, double timeout_s, const char *curve_key,
           const char *curve_server, char *reply, size_t reply_cap, char *err)
{
    void *ctx = zmq_ctx_new(), *sock = ctx ? zmq_socket(ctx, ZMQ_DEALER) : NULL;
    int rc = sock ? open_line(sock, connect, curve_key, curve_server, err)
                  : sw_fail(err, SW_EIO, "cannot create a ZeroMQ socket");
    if (!rc)
        rc = ask(sock, connect, command, timeout_s, reply, reply_cap, err);
    if (sock)
        zmq_close(sock);
    if (ctx)
        zmq_ctx_term(ctx);
    return rc;
}
