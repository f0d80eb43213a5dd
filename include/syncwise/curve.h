/* CURVE security for the networked runtime: key files, and the ZAP handler through which the
 * server admits only the client keys it was given.
 *
 * A key file holds "public Z85KEY" and, for a key pair, "secret Z85KEY" lines (40-character Z85
 * encodings of 32-byte Curve25519 keys, as zmq_curve_keypair makes them). An authorised-clients
 * file holds one "public Z85KEY" line per client. Secret key files are written mode 0600.
 */
#ifndef SYNCWISE_CURVE_H
#define SYNCWISE_CURVE_H

#include <stddef.h>

#define SW_Z85_KEY 41 /* 40 characters and a NUL */

typedef struct sw_curve_keys {
    char pub[SW_Z85_KEY], sec[SW_Z85_KEY]; /* sec is empty in a public-only file */
} sw_curve_keys;

/* Whether this libzmq can do CURVE (it needs libsodium). */
int sw_curve_available(void);

/* Makes a key pair and writes NAME.key (both keys, mode 0600) and NAME.pub (public only). */
int sw_curve_keygen(const char *name, char *err);

/* Reads a key file; a pair when need_secret, else at least the public key. */
int sw_curve_read(const char *path, int need_secret, sw_curve_keys *out, char *err);

/* Sets a server socket up for CURVE with this key pair (call before bind). */
int sw_curve_server(void *sock, const sw_curve_keys *server, char *err);

/* Sets a client socket up for CURVE with its key pair and the server's public key. */
int sw_curve_client(void *sock, const sw_curve_keys *client, const char *server_pub, char *err);

/* The ZAP handler: a REP socket in ctx answering authentication requests, admitting the
 * public keys of `clients_path` (workers) and of `operators_path` (may be NULL: operators, who
 * may also switch the policy). The ZAP user id of an admitted connection is "worker" or
 * "operator" (SW_ZAP_OPERATOR): each message it sends carries it as its "User-Id" property.
 * Poll sw_zap_socket and call sw_zap_handle when readable. */
#define SW_ZAP_OPERATOR "operator"
typedef struct sw_zap sw_zap;
int sw_zap_new(sw_zap **out, void *ctx, const char *clients_path, const char *operators_path,
               char *err);
void sw_zap_free(sw_zap *z);
void *sw_zap_socket(const sw_zap *z);
/* Answers one request; returns 1 if it admitted the client, 0 if it refused it. */
int sw_zap_handle(sw_zap *z);
/* Connections refused so far. */
unsigned long long sw_zap_refused(const sw_zap *z);

#endif
