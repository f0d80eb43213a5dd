/* The line reader: lines whole and numbered, a first line's byte-order mark dropped (it is no
 * part of the text, which a spreadsheet or an editor may put first), a NUL byte refused. */
#include "testutil/testutil.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "syncwise/err.h"
#include "syncwise/lines.h"

typedef struct seen {
    char text[256];
    size_t lines;
} seen;

static int keep(void *ctx, char *line, size_t lineno, char *err)
{
    (void)err;
    seen *s = ctx;
    s->lines = lineno;
    strncat(s->text, line, sizeof s->text - strlen(s->text) - 1);
    return 0;
}

static void a_first_lines_byte_order_mark_is_no_text(void **state)
{
    (void)state;
    const char *p = sw_test_path("marked.csv");
    sw_test_write_text(p, "\xEF\xBB\xBFy,a\n1,2\n\xEF\xBB\xBF\n");
    seen s = {0};
    char err[SW_ERR_LEN];
    assert_int_equal(sw_read_lines(p, keep, &s, err), 0);
    assert_int_equal(s.lines, 3);
    assert_string_equal(s.text, "y,a\n1,2\n\xEF\xBB\xBF\n"); /* a later one is the text's */
}

static void a_nul_byte_is_no_text(void **state)
{
    (void)state;
    const char *p = sw_test_path("nul.csv");
    sw_test_write(p, "1,2\n3\0,4\n", 9);
    seen s = {0};
    char err[SW_ERR_LEN];
    assert_int_equal(sw_read_lines(p, keep, &s, err), SW_EFORMAT);
    assert_non_null(strstr(err, ":2"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_first_lines_byte_order_mark_is_no_text),
        cmocka_unit_test(a_nul_byte_is_no_text),
    };
    return cmocka_run_group_tests(tests, NULL, sw_test_teardown);
}
