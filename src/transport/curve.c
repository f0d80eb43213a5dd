/* CURVE key files (syncwise/curve.h), and for the ZeroMQ network the socket options and the ZAP
 * handler (curve_internal.h). */
#define _POSIX_C_SOURCE 200809L
#include "curve_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

#include "syncwise/err.h"
#include "syncwise/file.h"
#include "syncwise/lines.h"
#include "syncwise/log.h"

int sw_curve_available(void) { return zmq_has("curve"); }

int sw_curve_keygen(const char *name, char *err)
{
    if (!sw_curve_available())
        return sw_fail(err, SW_ENOTFOUND, "this libzmq has no CURVE support (needs libsodium)");
    char pub[SW_Z85_KEY], sec[SW_Z85_KEY], path[4096], text[200];
    if (!*name || name[strlen(name) - 1] == '/')
        return sw_fail(err, SW_EINVAL, "'%s' names no key pair (NAME makes NAME.key, NAME.pub)",
                       name);
    snprintf(path, sizeof path, "%s.key", name);
    if (access(path, F_OK) == 0) /* a new pair would lose the secret whoever holds it uses */
        return sw_fail(err, SW_ESTATE, "%s exists: remove it first to replace its key pair",
                       path);
    if (zmq_curve_keypair(pub, sec) != 0)
        return sw_fail(err, SW_EIO, "cannot make a key pair: %s", zmq_strerror(errno));
    /* Each file written whole or not at all (a full disk left an empty NAME.key that then
     * refused a retry as "exists"); the secret is 0600 from its making. No NAME.pub, no
     * NAME.key: a pair half written is taken back. */
    snprintf(text, sizeof text, "public %s\nsecret %s\n", pub, sec);
    int rc = sw_file_write_private(path, (const uint8_t *)text, strlen(text), "key pair", err);
    if (rc)
        return rc;
    char pub_path[4096];
    snprintf(pub_path, sizeof pub_path, "%s.pub", name);
    snprintf(text, sizeof text, "public %s\n", pub);
    rc = sw_file_write_atomic(pub_path, (const uint8_t *)text, strlen(text), "public key", err);
    if (rc)
        unlink(path);
    return rc;
}

typedef struct key_reading {
    sw_curve_keys *k;
    const char *path;
} key_reading;

static int key_line(void *ctx, char *line, size_t lineno, char *err)
{
    key_reading *r = ctx;
    char kind[16], key[64];
    if (line[strspn(line, " \t\r\n")] == '\0' || line[0] == '#')
        return 0;
    if (sscanf(line, "%15s %63s", kind, key) != 2 || strlen(key) != 40)
        return sw_fail(err, SW_EFORMAT, "%s:%zu: expected 'public KEY' or 'secret KEY' (40 Z85 "
                                        "characters)",
                       r->path, lineno);
    uint8_t raw[32];
    if (!zmq_z85_decode(raw, key))
        return sw_fail(err, SW_EFORMAT, "%s:%zu: not a Z85 key", r->path, lineno);
    char *slot = !strcmp(kind, "public") ? r->k->pub : !strcmp(kind, "secret") ? r->k->sec : NULL;
    if (slot && slot[0])
        return sw_fail(err, SW_EFORMAT, "%s:%zu: a second %s key", r->path, lineno, kind);
    if (slot)
        memcpy(slot, key, SW_Z85_KEY);
    else
        return sw_fail(err, SW_EFORMAT, "%s:%zu: unknown key kind '%s'", r->path, lineno, kind);
    return 0;
}

int sw_curve_read(const char *path, int need_secret, sw_curve_keys *out, char *err)
{
    memset(out, 0, sizeof *out);
    key_reading r = {out, path};
    int rc = sw_read_lines(path, key_line, &r, err);
    if (!rc && (!out->pub[0] || (need_secret && !out->sec[0])))
        rc = sw_fail(err, SW_EFORMAT, "%s: lacks the %s key", path,
                     out->pub[0] ? "secret" : "public");
    /* A damaged secret would pass for a key and fail every handshake, each side blaming the
     * other: the public key must be the one the secret makes. */
    char derived[SW_Z85_KEY];
    if (!rc && out->sec[0] &&
        (zmq_curve_public(derived, out->sec) != 0 || memcmp(derived, out->pub, SW_Z85_KEY - 1) != 0))
        rc = sw_fail(err, SW_EFORMAT, "%s: its public and secret keys are not a pair (a damaged "
                                      "file? make a new one with syncwise keygen)",
                     path);
    return rc;
}

int sw__curve_server(void *sock, const sw_curve_keys *server, char *err)
{
    int one = 1;
    if (zmq_setsockopt(sock, ZMQ_CURVE_SERVER, &one, sizeof one) ||
        zmq_setsockopt(sock, ZMQ_CURVE_SECRETKEY, server->sec, 40))
        return sw_fail(err, SW_EIO, "cannot enable CURVE: %s", zmq_strerror(errno));
    return 0;
}

int sw__curve_client(void *sock, const sw_curve_keys *client, const char *server_pub, char *err)
{
    if (zmq_setsockopt(sock, ZMQ_CURVE_SERVERKEY, server_pub, 40) ||
        zmq_setsockopt(sock, ZMQ_CURVE_PUBLICKEY, client->pub, 40) ||
        zmq_setsockopt(sock, ZMQ_CURVE_SECRETKEY, client->sec, 40))
        return sw_fail(err, SW_EIO, "cannot enable CURVE: %s", zmq_strerror(errno));
    return 0;
}

struct sw__zap {
    void *sock;
    uint8_t (*keys)[32]; /* workers' keys, then operators' */
    size_t n, n_workers;
    uint64_t refused;
};

typedef struct clients_reading {
    sw__zap *z;
    const char *path;
    bool public_only; /* the workers' list; the operators' may be the listener's own key pair */
} clients_reading;

static int client_line(void *ctx, char *line, size_t lineno, char *err)
{
    clients_reading *r = ctx;
    sw_curve_keys k;
    key_reading kr = {&k, r->path};
    memset(&k, 0, sizeof k);
    int rc = key_line(&kr, line, lineno, err);
    if (!rc && k.sec[0] && r->public_only) /* a NAME.key given for NAME.pub lines: astray */
        rc = sw_fail(err, SW_EFORMAT, "%s:%zu: a secret key in a list of public keys (give the "
                                      "lines of NAME.pub files, never NAME.key)",
                     r->path, lineno);
    if (rc || !k.pub[0])
        return rc;
    uint8_t(*grown)[32] = realloc(r->z->keys, (r->z->n + 1) * sizeof *grown);
    if (!grown)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    r->z->keys = grown;
    zmq_z85_decode(r->z->keys[r->z->n++], k.pub);
    return 0;
}

int sw__zap_new(sw__zap **out, void *ctx, const char *clients_path, bool group,
                const char *operators_path, char *err)
{
    *out = NULL;
    sw__zap *z = calloc(1, sizeof *z);
    if (!z)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    clients_reading r = {z, clients_path, !group};
    int rc = sw_read_lines(clients_path, client_line, &r, err);
    z->n_workers = z->n;
    if (!rc && operators_path) {
        r.path = operators_path;
        r.public_only = false;
        rc = sw_read_lines(operators_path, client_line, &r, err);
        if (!rc && z->n == z->n_workers)
            rc = sw_fail(err, SW_EFORMAT, "%s: no operator keys", operators_path);
    }
    if (!rc && z->n == 0)
        rc = sw_fail(err, SW_EFORMAT, "%s: no client keys", clients_path);
    if (!rc && (!(z->sock = zmq_socket(ctx, ZMQ_REP)) ||
                zmq_bind(z->sock, "inproc://zeromq.zap.01") != 0))
        rc = sw_fail(err, SW_EIO, "cannot start the ZAP handler: %s", zmq_strerror(errno));
    if (rc) {
        sw__zap_free(z);
        return rc;
    }
    *out = z;
    return 0;
}

void sw__zap_free(sw__zap *z)
{
    if (!z)
        return;
    if (z->sock)
        zmq_close(z->sock);
    free(z->keys);
    free(z);
}

void *sw__zap_socket(const sw__zap *z) { return z->sock; }
unsigned long long sw__zap_refused(const sw__zap *z) { return z->refused; }

/* ZAP (RFC 27): request frames version, request id, domain, address, identity, mechanism,
 * credentials; the reply is version, request id, status code, status text, user id, metadata. */
int sw__zap_handle(sw__zap *z)
{
    zmq_msg_t f[8];
    int n = 0, more = 1;
    while (more && n < 8) {
        zmq_msg_init(&f[n]);
        if (zmq_msg_recv(&f[n], z->sock, 0) < 0)
            break;
        more = zmq_msg_more(&f[n++]);
    }
    while (more) { /* more frames than ZAP has: drain them */
        zmq_msg_t extra;
        zmq_msg_init(&extra);
        zmq_msg_recv(&extra, z->sock, 0);
        more = zmq_msg_more(&extra);
        zmq_msg_close(&extra);
    }
    size_t at = z->n; /* the key's index, z->n when unknown */
    if (n == 7 && zmq_msg_size(&f[5]) == 5 && !memcmp(zmq_msg_data(&f[5]), "CURVE", 5) &&
        zmq_msg_size(&f[6]) == 32)
        for (size_t i = 0; i < z->n && at == z->n; i++)
            at = !memcmp(zmq_msg_data(&f[6]), z->keys[i], 32) ? i : z->n;
    int ok = at < z->n;
    const char *code = ok ? "200" : "400", *text = ok ? "OK" : "unknown client key";
    const char *user = !ok ? "" : at < z->n_workers ? "worker" : SW_ZAP_OPERATOR;
    zmq_send(z->sock, "1.0", 3, ZMQ_SNDMORE);
    if (n >= 2)
        zmq_send(z->sock, zmq_msg_data(&f[1]), zmq_msg_size(&f[1]), ZMQ_SNDMORE);
    else
        zmq_send(z->sock, "", 0, ZMQ_SNDMORE);
    zmq_send(z->sock, code, 3, ZMQ_SNDMORE);
    zmq_send(z->sock, text, strlen(text), ZMQ_SNDMORE);
    zmq_send(z->sock, user, strlen(user), ZMQ_SNDMORE);
    zmq_send(z->sock, "", 0, 0);
    for (int i = 0; i < n; i++)
        zmq_msg_close(&f[i]);
    if (!ok)
        sw_log_counted(SW_LOG_WARN, &z->refused, "refused a connection with an unknown client key");
    return ok;
}
