/* Reading a text file line by line, for the text formats (CSV, LIBSVM, traces). */
#ifndef SYNCWISE_LINES_H
#define SYNCWISE_LINES_H

#include <stddef.h>

/* Called with each line (newline included, modifiable) and its 1-based number. Returns 0 to go
 * on, or a negative sw_err (with err filled) to stop. */
typedef int (*sw_line_fn)(void *ctx, char *line, size_t lineno, char *err);

/* Opens path and hands every line to fn. Fails with SW_EIO naming the file when it cannot be
 * opened or read, or with fn's own failure. */
int sw_read_lines(const char *path, sw_line_fn fn, void *ctx, char *err);

#endif
