/* libFuzzer target for the text parsers that read user input in memory: parameter specs
 * ("name:key=value,...") with their typed getters, and JSONL event-log lines. The first byte
 * picks the parser; the rest is the text. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "syncwise/logread.h"
#include "syncwise/spec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 4096)
        return 0;
    char *text = malloc(size);
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';
    if (data[0] & 1) {
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
