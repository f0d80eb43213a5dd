/* LIBSVM and CSV readers: valid files, and errors that name the file, line and column. */
#include "testutil/testutil.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "syncwise/data.h"
#include "syncwise/err.h"
#include "syncwise/lines.h"

static void libsvm_reads_sparse_rows(void **state)
{
    (void)state;
    const char *p = sw_test_path("a.svm");
    sw_test_write_text(p, "# a comment\n+1 1:0.5 3:2\n-1 2:1.5  # trailing comment\n\n-1\n");
    sw_dataset *ds;
    char err[SW_ERR_LEN];
    assert_int_equal(sw_libsvm_read(&ds, p, 0, SW_CLASSIFY, err), 0);
    assert_int_equal(ds->n, 3);
    assert_int_equal(ds->dim, 3);
    assert_int_equal(ds->n_classes, 2);
    const float want[9] = {0.5f, 0, 2, 0, 1.5f, 0, 0, 0, 0};
    for (int i = 0; i < 9; i++)
        assert_float_equal(ds->x[i], want[i], 0);
    assert_int_equal(ds->label[0], 1); /* +1 -> 1, -1 -> 0 */
    assert_int_equal(ds->label[1], 0);
    sw_dataset_free(ds);
    /* An explicit dimension pads; regression keeps raw targets. */
    assert_int_equal(sw_libsvm_read(&ds, p, 5, SW_REGRESS, err), 0);
    assert_int_equal(ds->dim, 5);
    assert_float_equal(ds->target[1], -1.0f, 0);
    sw_dataset_free(ds);
    assert_int_equal(sw_libsvm_read(&ds, p, 2, SW_CLASSIFY, err), SW_EMISMATCH);
}

static void libsvm_multiclass(void **state)
{
    (void)state;
    const char *p = sw_test_path("m.svm");
    sw_test_write_text(p, "0 1:1\n4 2:1\n2 1:3\n");
    sw_dataset *ds;
    assert_int_equal(sw_libsvm_read(&ds, p, 0, SW_CLASSIFY, NULL), 0);
    assert_int_equal(ds->n_classes, 5);
    assert_int_equal(ds->label[1], 4);
    sw_dataset_free(ds);
}

static void expect_libsvm_error(const char *text, int code, const char *where)
{
    const char *p = sw_test_path("bad.svm");
    sw_test_write_text(p, text);
    sw_dataset *ds = (sw_dataset *)1;
    char err[SW_ERR_LEN] = "";
    assert_int_equal(sw_libsvm_read(&ds, p, 0, SW_CLASSIFY, err), code);
    assert_null(ds);
    if (!strstr(err, where))
        fail_msg("message '%s' lacks '%s'", err, where);
}

static void libsvm_refuses_bad_input(void **state)
{
    (void)state;
    expect_libsvm_error("1 1:1\nx 1:1\n", SW_EFORMAT, "bad.svm:2:1");
    expect_libsvm_error("1 1:1 2\n", SW_EFORMAT, "bad.svm:1:7");
    expect_libsvm_error("1 0:1\n", SW_ERANGE, "bad.svm:1:3");
    expect_libsvm_error("1 3:1 2:1\n", SW_EFORMAT, "not above");
    expect_libsvm_error("1 2:1 2:1\n", SW_EFORMAT, "not above");
    expect_libsvm_error("1 2:abc\n", SW_EFORMAT, "bad value");
    expect_libsvm_error("1 2:1e999\n", SW_ERANGE, "value 1e999 of index 2 does not fit a float");
    expect_libsvm_error("1 2:1e39\n", SW_ERANGE, "bad.svm:1:5: value 1e39 of index 2");
    expect_libsvm_error("1e39 2:1\n", SW_ERANGE, "bad.svm:1:1: label 1e39 does not fit");
    expect_libsvm_error("1 2:nan\n", SW_EFORMAT, "bad value");
    /* strtod's hex and inf are no numbers a data file writes ("0x10" was read as 16) */
    expect_libsvm_error("1 2:0x10\n", SW_EFORMAT, "bad value after index 2");
    expect_libsvm_error("1 2:0x1p2\n", SW_EFORMAT, "bad value after index 2");
    expect_libsvm_error("1 2:inf\n", SW_EFORMAT, "bad value after index 2");
    expect_libsvm_error("0x1 2:1\n", SW_EFORMAT, "bad.svm:1:1");
    expect_libsvm_error("1.5 2:1\n", SW_ERANGE, "label 1.5");
    expect_libsvm_error("-3 2:1\n", SW_ERANGE, "label -3");
    /* The label to blame, on its own line, not the first -1 of a +1/-1 file. */
    expect_libsvm_error("-1 1:1\n+1 1:1\n-1 1:1\n1e10 2:1\n", SW_ERANGE,
                        "bad.svm:4: label 1e+10 is not a class");
    /* -1 beside class indices: two conventions, both lines named. */
    expect_libsvm_error("+1 1:1\n-1 1:1\n3 1:1\n", SW_ERANGE,
                        "mix the -1/+1 convention (line 2: -1) with class indices (line 3: 3)");
    /* An index beyond dim= names its line, an index too large its text. */
    const char *p = sw_test_path("dim.svm");
    sw_test_write_text(p, "+1 1:1\n-1 40:1\n");
    sw_dataset *ds = NULL;
    char err[SW_ERR_LEN] = "";
    assert_int_equal(sw_libsvm_read(&ds, p, 10, SW_CLASSIFY, err), SW_EMISMATCH);
    assert_non_null(strstr(err, "dim.svm:2: index 40 beyond the expected dimension dim=10"));
    expect_libsvm_error("+1 99999999999999999999:1\n", SW_ERANGE,
                        "index 99999999999999999999 outside");
    expect_libsvm_error("", SW_EFORMAT, "no examples");
    expect_libsvm_error("1 99999999999:1\n", SW_ERANGE, "index");
    assert_int_equal(sw_libsvm_read(&ds, sw_test_path("nope"), 0, SW_CLASSIFY, err), SW_EIO);
}

/* Reads path with the label in `column`. */
static int read_csv(sw_dataset **ds, const char *path, const char *column, sw_objective task,
                    char *err)
{
    sw_csv_labels labels = {.column = column};
    int rc = sw_csv_read(ds, path, &labels, task, err);
    sw_csv_labels_free(&labels);
    return rc;
}

static void csv_reads_with_header_and_label_column(void **state)
{
    (void)state;
    const char *p = sw_test_path("a.csv");
    sw_test_write_text(p, "label,a,b\n1,0.5,2\n\n0, -1 ,3e1\n");
    sw_dataset *ds;
    char err[SW_ERR_LEN];
    assert_int_equal(read_csv(&ds, p, "first", SW_CLASSIFY, err), 0);
    assert_int_equal(ds->n, 2);
    assert_int_equal(ds->dim, 2);
    assert_int_equal(ds->label[0], 1);
    assert_float_equal(ds->x[3], 30.0f, 0);
    sw_dataset_free(ds);
    assert_int_equal(read_csv(&ds, p, "last", SW_REGRESS, err), 0);
    assert_float_equal(ds->target[1], 30.0f, 0);
    assert_float_equal(ds->x[0], 1.0f, 0);
    sw_dataset_free(ds);
    assert_int_equal(read_csv(&ds, p, "b", SW_REGRESS, err), 0); /* by the header's name */
    assert_float_equal(ds->target[0], 2.0f, 0);
    sw_dataset_free(ds);
    assert_int_equal(read_csv(&ds, p, "3", SW_CLASSIFY, err), SW_EINVAL);
    assert_int_equal(read_csv(&ds, p, "c", SW_CLASSIFY, err), SW_EINVAL);
    assert_non_null(strstr(err, "no column named 'c' (the header has: label, a, b)"));
}

/* Text labels become classes in byte order, the same for the test file; a test label the
 * training set lacks is refused. */
static void csv_maps_text_labels_to_classes(void **state)
{
    (void)state;
    const char *tr = sw_test_path("tr.csv"), *te = sw_test_path("te.csv");
    sw_test_write_text(tr, "x,y,species\n1,2,versicolor\n3,4,setosa\n5,6,virginica\n"
                           "7,8,setosa\n");
    sw_test_write_text(te, "x,y,species\n1,1,virginica\n2,2,setosa\n");
    sw_csv_labels labels = {.column = "species"};
    sw_dataset *train, *test;
    char err[SW_ERR_LEN];
    assert_int_equal(sw_csv_read(&train, tr, &labels, SW_CLASSIFY, err), 0);
    assert_int_equal(train->n_classes, 3);
    assert_int_equal(labels.n, 3);
    assert_string_equal(labels.names[0], "setosa");
    const int32_t want[] = {1, 0, 2, 0};
    assert_memory_equal(train->label, want, sizeof want);
    assert_int_equal(sw_csv_read(&test, te, &labels, SW_CLASSIFY, err), 0);
    assert_int_equal(test->label[0], 2);
    assert_int_equal(test->label[1], 0);
    sw_dataset_free(test);
    sw_test_write_text(te, "x,y,species\n1,1,virginica\n2,2,daisy\n");
    assert_int_equal(sw_csv_read(&test, te, &labels, SW_CLASSIFY, err), SW_EFORMAT);
    assert_non_null(strstr(err, "te.csv:3: label 'daisy' is not a class of the training set"));
    sw_dataset_free(train);
    sw_csv_labels_free(&labels);
    /* one row of data with a text label, no header */
    sw_test_write_text(tr, "1,2,yes\n");
    assert_int_equal(read_csv(&train, tr, "last", SW_CLASSIFY, err), 0);
    assert_int_equal(train->n, 1);
    sw_dataset_free(train);
    assert_int_equal(read_csv(&train, tr, "last", SW_REGRESS, err), SW_EFORMAT);
}

static void expect_csv_error(const char *text, const char *where)
{
    const char *p = sw_test_path("bad.csv");
    sw_test_write_text(p, text);
    sw_dataset *ds = (sw_dataset *)1;
    char err[SW_ERR_LEN] = "";
    assert_true(read_csv(&ds, p, "first", SW_CLASSIFY, err) < 0);
    assert_null(ds);
    if (!strstr(err, where))
        fail_msg("message '%s' lacks '%s'", err, where);
}

static void csv_refuses_bad_input(void **state)
{
    (void)state;
    expect_csv_error("1,2,3\n1,2\n", "bad.csv:2: fewer");
    expect_csv_error("1,2,3\n1,2,3,4\n", "bad.csv:2: more");
    expect_csv_error("1,2,3\n1,x,3\n", "bad.csv:2: field 2");
    expect_csv_error("a,b\nc,d\n", "bad.csv:1: field 2 is not a number"); /* text everywhere */
    expect_csv_error("a,b\n", "no examples");
    expect_csv_error("2.5,1\n", "bad.csv:1: label 2.5 (column 0) is not a class");
    expect_csv_error("2.5,1\n", "say label=last");
    expect_csv_error("price,kind\n3.0522,1\n", "label 3.0522 (column 0, 'price')");
    expect_csv_error("1,2\n1,1e39\n", "bad.csv:2: field 2 does not fit a float");
    expect_csv_error("1,2\n1,0x10\n", "bad.csv:2: field 2");
    expect_csv_error("1\n", "columns");
}

/* Files that are not text: a NUL byte, or a line without end, are refused at the line, not read
 * to the end of memory. */
static void lines_are_text_and_bounded(void **state)
{
    (void)state;
    const char *p = sw_test_path("nul.svm");
    static const char nul[] = "1 1:1\n1 2:\0001\n";
    sw_test_write(p, nul, sizeof nul - 1);
    sw_dataset *ds;
    char err[SW_ERR_LEN];
    assert_int_equal(sw_libsvm_read(&ds, p, 0, SW_CLASSIFY, err), SW_EFORMAT);
    assert_non_null(strstr(err, "nul.svm:2: a NUL byte"));
    p = sw_test_path("long.svm");
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    static char chunk[1 << 16];
    memset(chunk, '1', sizeof chunk);
    for (size_t n = 0; n <= SW_LINE_MAX; n += sizeof chunk)
        assert_int_equal(fwrite(chunk, 1, sizeof chunk, f), sizeof chunk);
    fclose(f);
    assert_int_equal(sw_libsvm_read(&ds, p, 0, SW_CLASSIFY, err), SW_EFORMAT);
    assert_non_null(strstr(err, "long.svm:1: a line longer than 64 MiB"));
    remove(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(libsvm_reads_sparse_rows),
        cmocka_unit_test(libsvm_multiclass),
        cmocka_unit_test(libsvm_refuses_bad_input),
        cmocka_unit_test(csv_reads_with_header_and_label_column),
        cmocka_unit_test(csv_maps_text_labels_to_classes),
        cmocka_unit_test(csv_refuses_bad_input),
        cmocka_unit_test(lines_are_text_and_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, sw_test_teardown);
}
