/* Reading syncwise's JSONL event logs (docs/log.md) back: each line is one flat JSON object of
 * numbers and strings. The parser accepts exactly that and says where a line goes wrong; the
 * writers of those lines put their strings through sw_log_put_string. */
#ifndef SYNCWISE_LOGREAD_H
#define SYNCWISE_LOGREAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SW_LOG_MAX_FIELDS 24
/* The largest seed the commands that write logs take: a log's numbers are doubles to a JSON
 * reader that knows no other (whole up to 2^53). This reader reads a seed's digits exactly
 * (sw_log_whole), so a log of an older version with a larger seed still opens. */
#define SW_LOG_MAX_SEED 0x1p53

typedef struct sw_log_field {
    char key[24];
    char str[3 * 1024]; /* string values, empty for numbers: the longest a log holds, a
                         * cluster spec of up to 1023 bytes (run.h's sw_run_info), each byte
                         * that is no UTF-8 read back as U+FFFD's 3 (sw_log_put_string) */
    double num;    /* number values; 0 for strings (str then holds the number's text) */
    bool is_str;
} sw_log_field;

typedef struct sw_log_line {
    int n;
    sw_log_field f[SW_LOG_MAX_FIELDS];
} sw_log_line;

/* Writes text as a JSON string, quotes, backslashes and control characters escaped (what
 * sw_log_parse_line reads back); UTF-8 as it is, and each byte that is no UTF-8 as U+FFFD (the
 * replacement character), since JSON is Unicode text. */
void sw_log_put_string(FILE *f, const char *text);

/* Parses one line; on failure fills err with "column C: what" and returns SW_EFORMAT. */
int sw_log_parse_line(const char *text, sw_log_line *out, char *err);

/* A field's number (dflt when absent or a string) and string (NULL when absent or a number). */
double sw_log_num(const sw_log_line *l, const char *key, double dflt);
/* A field written as digits alone, exactly, into *out: false when absent, a string, or not such
 * a number up to 2^64 - 1 (a sign, a fraction, an exponent). */
bool sw_log_whole(const sw_log_line *l, const char *key, uint64_t *out);
const char *sw_log_str(const sw_log_line *l, const char *key);

#ifdef __cplusplus
}
#endif

#endif
