/* The logger: level filter and one line per message on standard error. */
#include "syncwise/log.h"

#include <stdarg.h>
#include <stdio.h>

static sw_log_level g_level = SW_LOG_INFO;

void sw_log_set_level(sw_log_level level) { g_level = level; }

sw_log_level sw_log_get_level(void) { return g_level; }

void sw_log(sw_log_level level, const char *fmt, ...)
{
    static const char *const tags[] = {"error", "warning", "info", "debug"};
    if (level > g_level)
        return;
    /* Build the whole line first so that concurrent writers never interleave within a line. */
    char line[1024];
    int off = snprintf(line, sizeof line, "syncwise: %s: ", tags[level]);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line + off, sizeof line - (size_t)off, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s\n", line);
}
