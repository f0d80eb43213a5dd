/* Logging: the one place where the library writes text.
 *
 * Messages go to standard error with a level tag. The level is the library's only global
 * mutable state; the command-line front end sets it from --quiet / -v before any work starts.
 */
#ifndef SYNCWISE_LOG_H
#define SYNCWISE_LOG_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum sw_log_level {
    SW_LOG_ERROR = 0,
    SW_LOG_WARN = 1,
    SW_LOG_INFO = 2,
    SW_LOG_DEBUG = 3,
} sw_log_level;

/* Messages above level are discarded. The default is SW_LOG_INFO. */
void sw_log_set_level(sw_log_level level);
sw_log_level sw_log_get_level(void);

/* Writes one line "syncwise: LEVEL: message" when level is enabled; fmt has no newline. */
void sw_log(sw_log_level level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Counts one more refused message in *count and says it at `level` for the first
 * SW_LOG_SAID_FIRST only, the rest at debug: an operator wants to know why a count grows, and
 * a stranger's flood must not drown the log. The last one said tells that the rest are not. */
#define SW_LOG_SAID_FIRST 5
void sw_log_counted(sw_log_level level, uint64_t *count, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

#ifdef __cplusplus
}
#endif

#endif
