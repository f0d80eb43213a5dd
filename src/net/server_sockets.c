/* The server's sockets: the listener workers reach (with CURVE when keys are given), the
 * operator socket beside it (ctl), and the word that the server is ready.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server_internal.h"
#include "syncwise/err.h"
#include "syncwise/file.h"
#include "syncwise/log.h"

/* The directory of this host's operator sockets: ours alone (0700), or the operator socket
 * would be open to every local user. */
static int private_dir(const char *ipc_path, char *err)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s", ipc_path);
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir)
        return 0;
    *slash = '\0';
    if (mkdir(dir, 0700) != 0 && errno != EEXIST)
        return sw_fail(err, SW_EIO, "cannot create %s: %s", dir, strerror(errno));
    struct stat st;
    if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 077))
        return sw_fail(err, SW_EIO,
                       "%s is not a private directory of ours (mode 0700): the "
                       "operator socket would be open to others; give --ctl-bind",
                       dir);
    return 0;
}

/* The operator socket: on this host's private ipc socket by default, or where --ctl-bind says
 * (then open to anyone who reaches it, as its owner chose). */
static int bind_operators(server *s, const char *bound, char *err)
{
    const char *want = s->p->ctl_bind;
    if (want && !strcmp(want, "none"))
        return 0;
    int rc = want ? 0 : sw_ctl_endpoint(bound, s->ops_ep, sizeof s->ops_ep, err);
    if (want)
        snprintf(s->ops_ep, sizeof s->ops_ep, "%s", want);
    bool private_ipc = !want && !strncmp(s->ops_ep, "ipc://", 6);
    if (!rc && private_ipc && (rc = private_dir(s->ops_ep + 6, err)))
        return rc;
    /* The socket is named by the port alone, so a server of another address on this port has
     * it: taking it over would send that server's operator commands here. */
    if (!rc && private_ipc && sw_ctl_socket_answers(s->ops_ep + 6))
        return sw_fail(err, SW_ESTATE,
                       "another server on this host serves port %s and takes its operator "
                       "commands at %s: give this one --ctl-bind ENDPOINT (or none)",
                       strrchr(bound, ':') ? strrchr(bound, ':') + 1 : bound, s->ops_ep);
    if (!rc && private_ipc)
        unlink(s->ops_ep + 6); /* a socket a killed server left behind */
    if (!rc &&
        (rc = sw_listen(s->net, &s->ops,
                        &(sw_listen_params){.endpoint = s->ops_ep, .max_frame = 65536}, err)))
        return rc;
    if (!rc && !strncmp(s->ops_ep, "ipc://", 6))
        chmod(s->ops_ep + 6, 0600);
    if (!rc)
        sw_log(want ? SW_LOG_WARN : SW_LOG_INFO, "operator commands on %s%s", s->ops_ep,
               want ? " (open to anyone who reaches it)" : "");
    return rc;
}

/* The largest payload of an unsharded run: the model, or a sparse push naming every weight
 * (8 bytes each), with room for a batch's messages' heads. */
uint64_t sw__server_run_payload(const server *s)
{
    return (sw_task_is_sparse(s->task) ? 8 : 4) * (uint64_t)s->n + SW_BATCH_BYTES;
}

/* The listener workers reach (with CURVE when keys are given), and the operator socket. */
int sw__server_bind(server *s, char *err)
{
    const sw_server_params *p = s->p;
    sw_listen_params lp = {
        .endpoint = p->bind,
        .linger_s = 1,
        .max_frame = sw_msg_size(sw__server_run_payload(s)), /* longer frames never land */
        .curve_key = p->curve_key,
        .curve_clients = p->curve_clients,
        .curve_operators = p->curve_operators,
        .dead_link_s = s->p->dead_link_s};
    int rc = sw_listen(s->net, &s->sock, &lp, err);
    return rc ? rc : bind_operators(s, sw_sock_endpoint(s->sock), err);
}

/* Ready: said, and the endpoint written where the caller waits for it. */
int sw__server_announce(server *s, char *err)
{
    const sw_server_params *p = s->p;
    const char *ep = sw_sock_endpoint(s->sock);
    sw_log(SW_LOG_INFO,
           "serving %s on %s (%zu parameters, version %llu); %s; payload checksums %s",
           s->policy, ep, s->n, (unsigned long long)s->r->start_version,
           sw_endpoint_security(ep, p->curve_key),
           s->unchecked ? "off" : "on");
    return p->endpoint_file ? sw_file_write_line(p->endpoint_file, ep, "endpoint file", err)
                            : 0;
}
