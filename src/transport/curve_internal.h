/* CURVE on ZeroMQ sockets, and the ZAP handler through which a listener admits only the client
 * keys it was given (the ZeroMQ network's own; see syncwise/curve.h for the key files). */
#ifndef SW_CURVE_INTERNAL_H
#define SW_CURVE_INTERNAL_H

#include <stdbool.h>

#include "syncwise/curve.h"

/* Sets a server socket up for CURVE with this key pair (call before bind). */
int sw__curve_server(void *sock, const sw_curve_keys *server, char *err);

/* Sets a client socket up for CURVE with its key pair and the server's public key. */
int sw__curve_client(void *sock, const sw_curve_keys *client, const char *server_pub, char *err);

/* The ZAP handler: a REP socket in ctx answering authentication requests, admitting the
 * public keys of `clients_path` (workers; with `group`, the listener's own key pair file, whose
 * holders are the clients) and of `operators_path` (may be NULL: operators, who may also switch
 * the policy). The ZAP user id of an admitted connection is "worker" or
 * "operator" (SW_ZAP_OPERATOR): each message it sends carries it as its "User-Id" property.
 * Poll sw__zap_socket and call sw__zap_handle when readable. */
#define SW_ZAP_OPERATOR "operator"
typedef struct sw__zap sw__zap;
int sw__zap_new(sw__zap **out, void *ctx, const char *clients_path, bool group,
                const char *operators_path, char *err);
void sw__zap_free(sw__zap *z);
void *sw__zap_socket(const sw__zap *z);
/* Answers one request; returns 1 if it admitted the client, 0 if it refused it. */
int sw__zap_handle(sw__zap *z);
/* Connections refused so far. */
unsigned long long sw__zap_refused(const sw__zap *z);

#endif
