/* libFuzzer target for the text parsers that read user input in memory: parameter specs
 * ("name:key=value,...") with their typed getters, and JSONL event-log lines; and the log's
 * string writer, whose every output must read back (the same text when it was UTF-8). The
 * first byte picks the parser; the rest is the text. */
#define _POSIX_C_SOURCE 200809L
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "syncwise/logread.h"
#include "syncwise/spec.h"
#include "syncwise/utf8.h"

/* Any text written as a log's string reads back; as itself when it is UTF-8. */
static void string_round_trip(const char *text)
{
    static char buf[6 * 4096 + 16];
    static sw_log_line line;
    FILE *f = fmemopen(buf, sizeof buf, "w");
    if (!f)
        return;
    fputs("{\"x\":", f);
    sw_log_put_string(f, text);
    fputs("}", f);
    fclose(f);
    if (sw_log_parse_line(buf, &line, NULL) != 0) {
        if (strlen(text) < sizeof line.f[0].str / 3) /* a longer one may not fit: refused */
            abort();
        return;
    }
    bool utf8 = true;
    for (const char *c = text; *c && utf8; c += utf8 ? sw_utf8_char_len(c) : 0)
        utf8 = sw_utf8_char_len(c) > 0;
    if (utf8 && strcmp(sw_log_str(&line, "x"), text))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 4096)
        return 0;
    char *text = malloc(size);
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';
    if (data[0] & 2) {
        string_round_trip(text);
    } else if (data[0] & 1) {
        static sw_log_line line;
        if (sw_log_parse_line(text, &line, NULL) == 0) {
            sw_log_num(&line, "t", 0);
            sw_log_str(&line, "ev");
        }
    } else {
        sw_spec s;
        if (sw_spec_parse(&s, text, NULL) == 0) {
            long l = 0;
            double d = 0;
            sw_spec_int(&s, "k", -5, 5, &l, NULL);
            sw_spec_double(&s, "x", -1, 1, &d, NULL);
            sw_spec_pos_double(&s, 0, 0, 10, &d, NULL);
            sw_spec_str(&s, "name", NULL);
            sw_spec_finish(&s, "k, x", NULL);
        }
    }
    free(text);
    return 0;
}
