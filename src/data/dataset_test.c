/* Data set operations refuse what a caller should not ask for, with a message. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "syncwise/data.h"
#include "syncwise/err.h"
#include "syncwise/sparse.h"

static sw_dataset *make(size_t n, uint32_t dim)
{
    uint32_t shape[3] = {1, 1, dim};
    sw_dataset *ds;
    assert_int_equal(sw_dataset_new(&ds, n, shape, SW_CLASSIFY, 2, NULL), 0);
    for (size_t i = 0; i < n * dim; i++)
        ds->x[i] = (float)i;
    return ds;
}

static void a_subset_takes_the_named_rows_and_refuses_others(void **state)
{
    (void)state;
    sw_dataset *ds = make(4, 2), *s;
    char err[SW_ERR_LEN];
    uint32_t idx[2] = {3, 1};
    assert_int_equal(sw_dataset_subset(&s, ds, idx, 2, err), 0);
    assert_float_equal(s->x[0], 6, 0);
    assert_float_equal(s->x[2], 2, 0);
    sw_dataset_free(s);
    idx[1] = 4;
    assert_int_equal(sw_dataset_subset(&s, ds, idx, 2, err), SW_EINVAL);
    assert_null(s);
    assert_non_null(strstr(err, "index 4"));
    sw_dataset_free(ds);
}

static void standardising_by_other_features_is_refused(void **state)
{
    (void)state;
    sw_dataset *fit = make(4, 2), *other = make(4, 3);
    char err[SW_ERR_LEN];
    sw_dataset *apply[2] = {fit, other};
    assert_int_equal(sw_dataset_standardize(fit, apply, 2, err), SW_EMISMATCH);
    assert_non_null(strstr(err, "3 features"));
    assert_int_equal(sw_dataset_standardize(fit, apply, 1, err), 0);
    sw_dataset_free(fit);
    sw_dataset_free(other);
}

/* A generated data set is bounded: a spec from an untrusted place (a crafted checkpoint's record
 * of its data, as `eval` reads it) cannot make the program allocate gigabytes. */
static void generated_data_is_bounded(void **state)
{
    (void)state;
    sw_data d;
    char err[SW_ERR_LEN];
    assert_int_equal(sw_data_load(&d, "synthetic:task=logistic,d=1024,n=1048576", 1, err),
                     SW_ERANGE);
    assert_non_null(strstr(err, "over the 1 GiB a generator makes"));
    sw_sparse_set sp;
    assert_int_equal(sw_sparse_load(&sp, "sparse:n=268435456,dim=16777216,density=0.01", 1, err),
                     SW_ERANGE);
    assert_non_null(strstr(err, "use a LIBSVM file"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_subset_takes_the_named_rows_and_refuses_others),
        cmocka_unit_test(standardising_by_other_features_is_refused),
        cmocka_unit_test(generated_data_is_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
