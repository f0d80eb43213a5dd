/* CURVE security for the networked runtime: key files. The ZeroMQ network (syncwise/transport.h)
 * uses them on its sockets, and admits to a CURVE listener only the client keys it was given.
 *
 * A key file holds "public Z85KEY" and, for a key pair, "secret Z85KEY" lines (40-character Z85
 * encodings of 32-byte Curve25519 keys, as zmq_curve_keypair makes them). An authorised-clients
 * file holds one "public Z85KEY" line per client. Secret key files are written mode 0600.
 */
#ifndef SYNCWISE_CURVE_H
#define SYNCWISE_CURVE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

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

#ifdef __cplusplus
}
#endif

#endif
