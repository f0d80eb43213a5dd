/* The logger: level filter and one line per message on standard error. */
#include "syncwise/log.h"

#include <stdarg.h>
#include <stdio.h>

static sw_log_level g_level = SW_LOG_INFO;

void sw_log_set_level(sw_log_level level) { g_level = level; }

sw_log_level sw_log_get_level(void) { return g_level; }

static void log_line(sw_log_level level, const char *tail, const char *fmt, va_list ap)
{
    static const char *const tags[] = {"error", "warning", "info", "debug"};
    if (level > g_level)
        return;
    /* Build the whole line first so that concurrent writers never interleave within a line. */
    char line[1024];
    int off = snprintf(line, sizeof line, "syncwise: %s: ", tags[level]);
    vsnprintf(line + off, sizeof line - (size_t)off, fmt, ap);
    fprintf(stderr, "%s%s\n", line, tail);
}

void sw_log(sw_log_level level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    log_line(level, "", fmt, ap);
    va_end(ap);
}

void sw_log_counted(sw_log_level level, uint64_t *count, const char *fmt, ...)
{
    uint64_t n = ++*count;
    va_list ap;
    va_start(ap, fmt);
    log_line(n <= SW_LOG_SAID_FIRST ? level : SW_LOG_DEBUG,
             n == SW_LOG_SAID_FIRST ? " (further ones are counted only)" : "", fmt, ap);
    va_end(ap);
}
