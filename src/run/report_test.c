/* The data of a report: a log's runs, evaluations, applies, timeline and staleness rows, as the
 * log's events say; a trace's rows; refusals that name the file and line. */
#include "testutil/testutil.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "syncwise/err.h"
#include "syncwise/report.h"

/* Two asp workers: worker 1's gradient is applied one version late. */
static const char *const LOG =
    "{\"t\":0,\"ev\":\"start\",\"policy\":\"ssp:s=2,lr_mod=x\",\"workers\":2,\"slots\":2,"
    "\"seed\":7,\"V\":0,\"model\":\"none\",\"params\":0,\"batch\":16,\"lr\":0.01,"
    "\"cluster\":\"const:1\",\"driver\":\"sim\"}\n"
    "{\"t\":0,\"ev\":\"join\",\"w\":0,\"step\":0,\"V\":0}\n"
    "{\"t\":0,\"ev\":\"release\",\"w\":0,\"step\":0,\"V\":0}\n"
    "{\"t\":0,\"ev\":\"join\",\"w\":1,\"step\":0,\"V\":0}\n"
    "{\"t\":0,\"ev\":\"release\",\"w\":1,\"step\":0,\"V\":0}\n"
    "{\"t\":1,\"ev\":\"push\",\"w\":0,\"step\":1,\"ver\":0,\"V\":0}\n"
    "{\"t\":1,\"ev\":\"apply\",\"V\":1,\"n\":1}\n"
    "{\"t\":1,\"ev\":\"release\",\"w\":0,\"step\":1,\"V\":1}\n"
    "{\"t\":2,\"ev\":\"push\",\"w\":1,\"step\":1,\"ver\":0,\"V\":1}\n"
    "{\"t\":2,\"ev\":\"apply\",\"V\":2,\"n\":1}\n"
    "{\"t\":2.5,\"ev\":\"release\",\"w\":1,\"step\":1,\"V\":2}\n"
    "{\"t\":2.5,\"ev\":\"eval\",\"V\":2,\"loss\":0.5,\"acc\":0.75}\n"
    "{\"t\":3,\"ev\":\"end\",\"V\":2,\"why\":\"time limit\"}\n";

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    static char buf[8192];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static const char *table(const char *dir, int which)
{
    static char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, sw_report_csv_name(which));
    return slurp(path);
}

static void a_log_becomes_tidy_rows(void **state)
{
    (void)state;
    const char *dir = sw_test_path("report");
    mkdir(dir, 0755);
    sw_test_write_text(sw_test_path("a-run.jsonl"), LOG);
    sw_test_write_text(sw_test_path("z.csv"), "candidate,d\n0,1.5\n1,0.25\n");
    sw_report r;
    char err[SW_ERR_LEN];
    assert_int_equal(sw_report_open(&r, dir, err), 0);
    assert_int_equal(sw_report_add_log(&r, sw_test_path("a-run.jsonl"), err), 0);
    assert_int_equal(sw_report_add_trace(&r, sw_test_path("z.csv"), err), 0);
    assert_int_equal(sw_report_close(&r, err), 0);
    assert_int_equal(r.n_runs, 1);
    assert_int_equal(r.workers, 2);
    assert_int_equal(r.zipline_rows, 2);
    /* The policy's comma would split its column: a space stands for it. */
    assert_string_equal(table(dir, SW_CSV_RUNS),
                        "run,policy,workers,seed,model,events\n"
                        "a-run,\"ssp:s=2 lr_mod=x\",2,7,\"none\",13\n");
    assert_string_equal(table(dir, SW_CSV_EVALS),
                        "run,policy,t,V,loss,acc\na-run,ssp:s=2 lr_mod=x,2.5,2,0.5,0.75\n");
    assert_string_equal(table(dir, SW_CSV_APPLIES),
                        "run,policy,t,V,n\na-run,ssp:s=2 lr_mod=x,1,1,1\n"
                        "a-run,ssp:s=2 lr_mod=x,2,2,1\n");
    assert_string_equal(table(dir, SW_CSV_STALENESS),
                        "run,policy,staleness,count,share\n"
                        "a-run,ssp:s=2 lr_mod=x,0,1,0.500000\n"
                        "a-run,ssp:s=2 lr_mod=x,1,1,0.500000\n");
    const char *tl = table(dir, SW_CSV_TIMELINE);
    assert_non_null(strstr(tl, "a-run,ssp:s=2 lr_mod=x,0,running,0,1\n"));
    assert_non_null(strstr(tl, "a-run,ssp:s=2 lr_mod=x,1,waiting,2,2.5\n"));
    assert_non_null(strstr(tl, "a-run,ssp:s=2 lr_mod=x,1,running,2.5,3\n")); /* closed at end */
    assert_non_null(strstr(table(dir, SW_CSV_ZIPLINE), "z,1,0.25\n"));
}

static void bad_inputs_are_named(void **state)
{
    (void)state;
    const char *dir = sw_test_path("bad");
    mkdir(dir, 0755);
    sw_report r;
    char err[SW_ERR_LEN];
    assert_int_equal(sw_report_open(&r, dir, err), 0);
    /* A resumed server's log holds two runs. */
    char twice[4096];
    snprintf(twice, sizeof twice, "%s%s", LOG, LOG);
    sw_test_write_text(sw_test_path("twice.jsonl"), twice);
    assert_int_equal(sw_report_add_log(&r, sw_test_path("twice.jsonl"), err), SW_EFORMAT);
    assert_non_null(strstr(err, "twice.jsonl:14"));
    sw_test_write_text(sw_test_path("t.csv"), "candidate,d\n0,x\n");
    assert_int_equal(sw_report_add_trace(&r, sw_test_path("t.csv"), err), SW_EFORMAT);
    assert_non_null(strstr(err, "t.csv:2"));
    sw_test_write_text(sw_test_path("junk.jsonl"), "not a log\n");
    assert_int_equal(sw_report_add_log(&r, sw_test_path("junk.jsonl"), err), SW_EFORMAT);
    assert_int_equal(sw_report_close(&r, err), 0);
    assert_int_equal(sw_report_open(&r, sw_test_path("missing/dir"), err), SW_EIO);
    sw_report_close(&r, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_log_becomes_tidy_rows),
        cmocka_unit_test(bad_inputs_are_named),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    sw_test_cleanup();
    return rc;
}
