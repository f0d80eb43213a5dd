/* Parameter strings: parsing, typed access, and the errors a user sees for a typo. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "syncwise/err.h"
#include "syncwise/spec.h"

static void parses_name_and_keys(void **state)
{
    (void)state;
    sw_spec s;
    char err[SW_ERR_LEN];
    assert_int_equal(sw_spec_parse(&s, "mlp:h=2,u=128", err), 0);
    assert_string_equal(s.name, "mlp");
    long h = 1, u = 256, missing = 7;
    assert_int_equal(sw_spec_int(&s, "h", 0, 10, &h, err), 0);
    assert_int_equal(sw_spec_int(&s, "u", 1, 1000, &u, err), 0);
    assert_int_equal(sw_spec_int(&s, "z", 0, 10, &missing, err), 0);
    assert_int_equal(h, 2);
    assert_int_equal(u, 128);
    assert_int_equal(missing, 7); /* absent keys keep the caller's default */
    assert_int_equal(sw_spec_finish(&s, "h, u", err), 0);
}

static void name_alone_and_trailing_colon(void **state)
{
    (void)state;
    sw_spec s;
    assert_int_equal(sw_spec_parse(&s, "bsp", NULL), 0);
    assert_string_equal(s.name, "bsp");
    assert_int_equal(s.n_args, 0);
    assert_int_equal(sw_spec_parse(&s, "bsp:", NULL), 0);
    assert_int_equal(s.n_args, 0);
}

static void unknown_key_lists_known(void **state)
{
    (void)state;
    sw_spec s;
    char err[SW_ERR_LEN];
    long h = 1;
    assert_int_equal(sw_spec_parse(&s, "mlp:hh=2", err), 0);
    assert_int_equal(sw_spec_int(&s, "h", 0, 10, &h, err), 0);
    assert_int_equal(sw_spec_finish(&s, "h, u", err), SW_EINVAL);
    assert_non_null(strstr(err, "'hh'"));
    assert_non_null(strstr(err, "h, u"));
}

static void bad_values_are_refused(void **state)
{
    (void)state;
    sw_spec s;
    char err[SW_ERR_LEN];
    long v = 0;
    double d = 0;
    assert_int_equal(sw_spec_parse(&s, "x:a=12z,b=5,c=nan,e=0.5", err), 0);
    assert_int_equal(sw_spec_int(&s, "a", 0, 100, &v, err), SW_EINVAL);
    assert_non_null(strstr(err, "12z"));
    assert_int_equal(sw_spec_int(&s, "b", 0, 4, &v, err), SW_ERANGE);
    assert_int_equal(sw_spec_double(&s, "c", 0, 1, &d, err), SW_EINVAL);
    assert_int_equal(sw_spec_int(&s, "e", 0, 4, &v, err), SW_EINVAL); /* not an integer */
    /* Decimal as users write it: strtod's hex, spaces, '+' and inf are refused. */
    assert_int_equal(sw_spec_parse(&s, "x:a=0x10,b= 1,c=+1,d=inf,e=.5,f=-2e-3,g=1e6x", err), 0);
    const char *keys[] = {"a", "b", "c", "d", "g"};
    for (int i = 0; i < 5; i++)
        assert_int_equal(sw_spec_double(&s, keys[i], -10, 1e9, &d, err), SW_EINVAL);
    assert_int_equal(sw_spec_int(&s, "b", -10, 10, &v, err), SW_EINVAL);
    assert_int_equal(sw_spec_double(&s, "e", -10, 10, &d, err), 0);
    assert_true(d == 0.5);
    assert_int_equal(sw_spec_double(&s, "f", -10, 10, &d, err), 0);
    assert_true(d == -2e-3);
}

static void malformed_strings(void **state)
{
    (void)state;
    sw_spec s;
    char err[SW_ERR_LEN];
    assert_int_equal(sw_spec_parse(&s, ":a=1", err), SW_EINVAL);
    assert_non_null(strstr(err, "missing name before ':'"));
    assert_int_equal(sw_spec_parse(&s, "", err), SW_EINVAL); /* no ':' to name */
    assert_string_equal(err, "an empty spec");
    assert_int_equal(sw_spec_parse(&s, "x:=1", err), SW_EINVAL);
    assert_int_equal(sw_spec_parse(&s, "x:a=1,,b=2", err), SW_EINVAL);
    assert_int_equal(sw_spec_parse(&s, "x:a=1,a=2", err), SW_EINVAL);
    assert_non_null(strstr(err, "twice"));
    char longname[200];
    memset(longname, 'n', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    assert_int_equal(sw_spec_parse(&s, longname, err), SW_EINVAL);
}

static void positional_values(void **state)
{
    (void)state;
    sw_spec s;
    char err[SW_ERR_LEN];
    double lo = 0, hi = 0;
    assert_int_equal(sw_spec_parse(&s, "uniform:0.5,2,seed=3", err), 0);
    assert_int_equal(s.n_pos, 2);
    assert_int_equal(sw_spec_pos_double(&s, 0, 0, 10, &lo, err), 0);
    assert_int_equal(sw_spec_pos_double(&s, 1, 0, 10, &hi, err), 0);
    assert_true(lo == 0.5 && hi == 2.0);
    /* which value was wrong, and what it was, apart: "(value 2)" read as if the value were 2 */
    assert_int_equal(sw_spec_pos_double(&s, 1, 5, 10, &hi, err), SW_ERANGE);
    assert_non_null(strstr(err, "uniform: value #2 = 2 is outside [5, 10]"));
    assert_string_equal(sw_spec_str(&s, "seed", "x"), "3");
    assert_int_equal(sw_spec_finish(&s, "", err), 0);
    assert_int_equal(sw_spec_parse(&s, "trace:/tmp/a=b.csv", err), 0); /* '=' makes it a key */
    assert_int_equal(sw_spec_parse(&s, "trace:/tmp/run.csv,extra", err), 0);
    assert_string_equal(sw_spec_pos_str(&s, 0), "/tmp/run.csv");
    assert_int_equal(sw_spec_finish(&s, "", err), SW_EINVAL);
    assert_non_null(strstr(err, "extra"));
}

static void error_names_cover_every_code(void **state)
{
    (void)state;
    for (int code = SW_ESTATE; code <= SW_OK; code++) {
        assert_non_null(sw_strerror(code));
        assert_string_not_equal(sw_err_name(code), "SW_E?");
    }
    assert_string_equal(sw_err_name(SW_ECHECKSUM), "SW_ECHECKSUM");
    assert_string_equal(sw_err_name(-999), "SW_E?");
    char err[SW_ERR_LEN];
    assert_int_equal(sw_fail(err, SW_EIO, "file %s", "x"), SW_EIO);
    assert_string_equal(err, "file x");
    assert_int_equal(sw_fail(NULL, SW_EIO, "no buffer"), SW_EIO);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parses_name_and_keys),
        cmocka_unit_test(name_alone_and_trailing_colon),
        cmocka_unit_test(unknown_key_lists_known),
        cmocka_unit_test(bad_values_are_refused),
        cmocka_unit_test(malformed_strings),
        cmocka_unit_test(positional_values),
        cmocka_unit_test(error_names_cover_every_code),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
