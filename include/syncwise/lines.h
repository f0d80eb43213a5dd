/* Reading a text file line by line, for the text formats (CSV, LIBSVM, traces, event logs). */
#ifndef SYNCWISE_LINES_H
#define SYNCWISE_LINES_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The longest line a text file may have: a LIBSVM row of a million nonzeros fits in a quarter of
 * it. A longer one is refused (a binary file, or /dev/zero, is not read to the end of memory). */
#define SW_LINE_MAX ((size_t)64 << 20)

/* Called with each line (newline included, modifiable) and its 1-based number. Returns 0 to go
 * on, or a negative sw_err (with err filled) to stop. */
typedef int (*sw_line_fn)(void *ctx, char *line, size_t lineno, char *err);

/* Opens path and hands every line to fn, the first without a UTF-8 byte-order mark (some
 * editors and spreadsheets write one first; it is no part of the text). Fails with SW_EIO naming the file when it cannot be
 * opened or read, SW_EFORMAT naming the line when it is longer than SW_LINE_MAX or holds a NUL
 * byte (not text), SW_ENOMEM when a line does not fit in memory, or with fn's own failure. */
int sw_read_lines(const char *path, sw_line_fn fn, void *ctx, char *err);

#ifdef __cplusplus
}
#endif

#endif
