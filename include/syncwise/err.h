/* Errors.
 *
 * Failures (a bad file, a bad message, the network, memory, and a caller breaking a function's
 * contract) are returned as a negative sw_err code, and functions that can say more fill a
 * caller's message buffer of SW_ERR_LEN bytes (it may be NULL). The library never ends the
 * process: only the command line (src/cli) decides to exit. Functions that return a value, not a
 * code, say in their header what a broken contract gives (NaN, NULL).
 */
#ifndef SYNCWISE_ERR_H
#define SYNCWISE_ERR_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* X(name, value, text): the one list from which the enum, sw_strerror and sw_err_name come. */
#define SW_ERR_MAP(X)                                                        \
    X(SW_EINVAL, -1, "invalid argument")                                     \
    X(SW_ENOMEM, -2, "out of memory")                                        \
    X(SW_EIO, -3, "input/output error")                                      \
    X(SW_EFORMAT, -4, "malformed input")                                     \
    X(SW_ECHECKSUM, -5, "checksum mismatch")                                 \
    X(SW_EMISMATCH, -6, "incompatible with what was expected")               \
    X(SW_ENOTFOUND, -7, "not found")                                         \
    X(SW_ERANGE, -8, "value out of range")                                   \
    X(SW_EVERSION, -9, "unsupported format version")                         \
    X(SW_ESTATE, -10, "operation not valid in the current state")            \
    X(SW_EBUG, -11, "a broken internal contract (a bug)")                    \
    X(SW_EPROMISE, -12, "a policy broke its promise")                        \
    X(SW_EAUTH, -13, "refused by the peer's authentication")

typedef enum sw_err {
    SW_OK = 0,
#define SW__ERR_ENUM(name, value, text) name = value,
    SW_ERR_MAP(SW__ERR_ENUM)
#undef SW__ERR_ENUM
} sw_err;

/* Size of the message buffers that fallible functions fill: room for a message relayed with
 * its context (a shard's refusal, named by the server, then told to a worker). */
#define SW_ERR_LEN 512

/* A short human sentence for code ("checksum mismatch"); never NULL. */
const char *sw_strerror(int code);

/* The symbolic name of code ("SW_ECHECKSUM"); never NULL. */
const char *sw_err_name(int code);

/* Formats a message into err (when err is not NULL) and returns code, so that a failing
 * function can end with `return sw_fail(err, SW_EFORMAT, "%s: bad magic", path);`. */
int sw_fail(char *err, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

#ifdef __cplusplus
}
#endif

#endif
