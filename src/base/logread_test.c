/* A log line's strings: UTF-8 as JSON writes it, every escape JSON has read back (a surrogate
 * pair as one character), and what no JSON text holds (a byte that is no UTF-8, \u0000, a lone
 * surrogate) never written and refused when read. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "syncwise/err.h"
#include "syncwise/logread.h"
#include "syncwise/utf8.h"

/* The line {"x":TEXT} as sw_log_put_string writes it, in buf. */
static void put_line(const char *text, char *buf, size_t cap)
{
    FILE *f = fmemopen(buf, cap, "w");
    assert_non_null(f);
    fputs("{\"x\":", f);
    sw_log_put_string(f, text);
    fputs("}", f);
    fclose(f);
}

/* The string field x of a line, or NULL with err set. */
static const char *read_x(const char *line, sw_log_line *l, char *err)
{
    return sw_log_parse_line(line, l, err) ? NULL : sw_log_str(l, "x");
}

static void every_string_we_write_reads_back(void **state)
{
    (void)state;
    static const char *const texts[] = {
        "", "ssp:s=2", "a \"quoted\" back\\slash", "tab\there\nline", "\x01\x1f\x7f",
        "trace:tr\xc3\xa9.csv", "\xe2\x82\xac \xf0\x9f\x98\x80", /* é, €, an emoji */
    };
    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
        char buf[256], err[SW_ERR_LEN];
        sw_log_line l;
        put_line(texts[i], buf, sizeof buf);
        const char *back = read_x(buf, &l, err);
        if (!back || strcmp(back, texts[i]))
            fail_msg("'%s' wrote %s and read back '%s' (%s)", texts[i], buf, back ? back : "",
                     back ? "" : err);
    }
}

static void bytes_that_are_no_utf8_are_written_as_the_replacement_character(void **state)
{
    (void)state;
    char buf[256], err[SW_ERR_LEN];
    sw_log_line l;
    put_line("bad\xff.csv \xc3 \xc0\x80 \xed\xa0\x80", buf, sizeof buf);
    assert_string_equal(buf, "{\"x\":\"bad\\ufffd.csv \\ufffd \\ufffd\\ufffd "
                             "\\ufffd\\ufffd\\ufffd\"}");
    const char *back = read_x(buf, &l, err);
    assert_non_null(back);
    assert_string_equal(back, "bad\xef\xbf\xbd.csv \xef\xbf\xbd \xef\xbf\xbd\xef\xbf\xbd "
                              "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
}

static void every_escape_json_has_is_read(void **state)
{
    (void)state;
    static const char *const lines[][2] = {
        {"{\"x\":\"caf\\u00e9\"}", "caf\xc3\xa9"},
        {"{\"x\":\"\\u20AC\"}", "\xe2\x82\xac"},
        {"{\"x\":\"\\ud83d\\ude00\"}", "\xf0\x9f\x98\x80"}, /* a surrogate pair: one character */
        {"{\"x\":\"\\/\\b\\f\\n\\r\\t\\\"\\\\\"}", "/\b\f\n\r\t\"\\"},
        {"{\"x\":\"\\u0041\"}", "A"},
    };
    for (size_t i = 0; i < sizeof lines / sizeof *lines; i++) {
        sw_log_line l;
        char err[SW_ERR_LEN];
        const char *back = read_x(lines[i][0], &l, err);
        if (!back || strcmp(back, lines[i][1]))
            fail_msg("%s read as '%s' (%s)", lines[i][0], back ? back : "", back ? "" : err);
    }
}

static void what_no_json_text_holds_is_refused_and_named(void **state)
{
    (void)state;
    static const char *const lines[][2] = {
        {"{\"x\":\"a\\u0000b\"}", "an escape that is no character"},
        {"{\"x\":\"\\ud800\"}", "an escape that is no character"},
        {"{\"x\":\"\\ud800\\u0041\"}", "an escape that is no character"},
        {"{\"x\":\"\\ude00\"}", "an escape that is no character"},
        {"{\"x\":\"\\u12g4\"}", "an escape that is no character"},
        {"{\"x\":\"bad\xff\"}", "a byte that is no UTF-8"},
        {"{\"x\":\"\xc0\x80\"}", "a byte that is no UTF-8"}, /* an overlong NUL */
        {"{\"x\":\"\xe2\x82\"}", "a byte that is no UTF-8"}, /* cut short */
        {"{\"x\":\"a\",}", "'}' after ','"},                  /* a trailing comma */
        {"{\"x\":\"a\" , }", "'}' after ','"},
        {"{\"x\":\"a\" \"y\":1}", "expected ',' or '}'"},
    };
    for (size_t i = 0; i < sizeof lines / sizeof *lines; i++) {
        sw_log_line l;
        char err[SW_ERR_LEN] = "";
        if (read_x(lines[i][0], &l, err) || !strstr(err, lines[i][1]))
            fail_msg("%s: wanted '%s', got '%s'", lines[i][0], lines[i][1], err);
    }
}

/* The message names the fault, walking characters and escapes as the reader does: a string's
 * valid UTF-8 and surrogate pairs are no fault. */
static void a_refusal_names_the_fault_not_a_character_before_it(void **state)
{
    (void)state;
    static char line[16384];
    sw_log_line *l = malloc(sizeof *l);
    char err[SW_ERR_LEN];
    assert_non_null(l);
    assert_int_not_equal(sw_log_parse_line("{\"x\":\"caf\xc3\xa9}", l, err), 0);
    assert_non_null(strstr(err, "a string without its end"));
    for (int pair = 0; pair < 2; pair++) {
        size_t n = (size_t)snprintf(line, sizeof line, "{\"x\":\"");
        for (int i = 0; i < 1100; i++)
            n += (size_t)snprintf(line + n, sizeof line - n, "%s",
                                  pair ? "\\ud83d\\ude00" : "\xc3\xa9\xc3\xa9");
        snprintf(line + n, sizeof line - n, "\"}");
        assert_int_not_equal(sw_log_parse_line(line, l, err), 0);
        if (!strstr(err, "a string longer than any a log holds"))
            fail_msg("%s: '%s'", pair ? "pairs" : "UTF-8", err);
    }
    free(l);
}

static void utf8_lengths_and_forms(void **state)
{
    (void)state;
    assert_int_equal(sw_utf8_char_len("a"), 1);
    assert_int_equal(sw_utf8_char_len("\xc3\xa9"), 2);
    assert_int_equal(sw_utf8_char_len("\xef\xbf\xbd"), 3);
    assert_int_equal(sw_utf8_char_len("\xf4\x8f\xbf\xbf"), 4); /* U+10FFFF */
    assert_int_equal(sw_utf8_char_len("\xf4\x90\x80\x80"), 0); /* past U+10FFFF */
    assert_int_equal(sw_utf8_char_len("\xed\xa0\x80"), 0);     /* a surrogate */
    assert_int_equal(sw_utf8_char_len("\xe0\x80\xaf"), 0);     /* overlong */
    assert_int_equal(sw_utf8_char_len("\x80"), 0);
    assert_int_equal(sw_utf8_char_len("\xc3"), 0); /* its NUL ends it */
    char out[4];
    for (uint32_t cp = 1; cp <= 0x10FFFF; cp += cp < 0x1000 ? 1 : 97) {
        size_t len = sw_utf8_put(cp, out);
        if (cp >= 0xD800 && cp <= 0xDFFF) {
            assert_int_equal(len, 0);
            continue;
        }
        char z[5] = {0};
        memcpy(z, out, len);
        if (sw_utf8_char_len(z) != len)
            fail_msg("U+%04X: %zu bytes written, %zu read", (unsigned)cp, len,
                     sw_utf8_char_len(z));
    }
    assert_int_equal(sw_utf8_put(0x110000, out), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_string_we_write_reads_back),
        cmocka_unit_test(bytes_that_are_no_utf8_are_written_as_the_replacement_character),
        cmocka_unit_test(every_escape_json_has_is_read),
        cmocka_unit_test(what_no_json_text_holds_is_refused_and_named),
        cmocka_unit_test(a_refusal_names_the_fault_not_a_character_before_it),
        cmocka_unit_test(utf8_lengths_and_forms),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
