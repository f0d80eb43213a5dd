/* sw_fail's message: whole when it fits, else its head and its tail (the reason after a long
 * path), cut between UTF-8 characters, never past the buffer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "syncwise/err.h"

static void a_short_message_is_whole(void **state)
{
    (void)state;
    char err[SW_ERR_LEN];
    assert_int_equal(sw_fail(err, SW_EIO, "%s: cannot open", "a.jsonl"), SW_EIO);
    assert_string_equal(err, "a.jsonl: cannot open");
    assert_int_equal(sw_fail(NULL, SW_EFORMAT, "nowhere"), SW_EFORMAT);
}

static void a_long_path_keeps_the_reason(void **state)
{
    (void)state;
    char path[1000], err[SW_ERR_LEN + 16];
    memset(path, 'd', sizeof path - 1);
    path[sizeof path - 1] = '\0';
    memset(err, 'X', sizeof err);
    sw_fail(err, SW_EIO, "/%s/missing.jsonl: cannot open: %s", path, "No such file or directory");
    assert_int_equal(strlen(err), SW_ERR_LEN - 1);
    assert_int_equal(err[SW_ERR_LEN], 'X'); /* nothing written past the buffer */
    assert_true(strncmp(err, "/ddd", 4) == 0);
    assert_non_null(strstr(err, "..."));
    const char *end = "/missing.jsonl: cannot open: No such file or directory";
    assert_string_equal(err + strlen(err) - strlen(end), end);
}

/* Longer than sw_fail's own room for a message (8 KiB): the reason at its end still shows. */
static void a_very_long_message_keeps_the_reason(void **state)
{
    (void)state;
    static char path[20000];
    char err[SW_ERR_LEN];
    memset(path, 'p', sizeof path - 1);
    sw_fail(err, SW_EIO, "%s: cannot open: %s", path, "No such file or directory");
    assert_int_equal(strlen(err), SW_ERR_LEN - 1);
    const char *end = "ppp: cannot open: No such file or directory";
    assert_string_equal(err + strlen(err) - strlen(end), end);
}

/* Two-byte characters (é) throughout: neither cut splits one. */
static void cuts_fall_between_characters(void **state)
{
    (void)state;
    char text[1201], err[SW_ERR_LEN];
    for (size_t i = 0; i < 600; i++)
        memcpy(text + 2 * i, "\xc3\xa9", 2);
    text[1200] = '\0';
    for (int shift = 0; shift < 2; shift++) {
        sw_fail(err, SW_EIO, "%.*s%s", shift, "x", text);
        size_t len = strlen(err);
        assert_true(len < SW_ERR_LEN);
        const char *dots = strstr(err, "...");
        assert_non_null(dots);
        size_t head = (size_t)(dots - err) - (size_t)shift, tail = len - (size_t)(dots + 3 - err);
        assert_int_equal(head % 2, 0);
        assert_int_equal(tail % 2, 0);
        assert_int_equal((unsigned char)dots[3], 0xc3);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_short_message_is_whole),
        cmocka_unit_test(a_long_path_keeps_the_reason),
        cmocka_unit_test(a_very_long_message_keeps_the_reason),
        cmocka_unit_test(cuts_fall_between_characters),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
