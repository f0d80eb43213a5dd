/* The data of a report: a log's runs, evaluations, applies, timeline and staleness rows, as the
 * log's events say; a trace's rows; refusals that name the file and line. */
#include "testutil/testutil.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>

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
    sw_report_free(&r);
    assert_int_equal(r.n_runs, 1);
    assert_int_equal(r.workers, 2);
    assert_int_equal(r.zipline_rows, 2);
    /* The policy's comma would split its column: a space stands for it. Its 13 lines are 11
     * events, as check counts them: not the start and end lines. */
    assert_string_equal(table(dir, SW_CSV_RUNS),
                        "run,policy,workers,seed,model,events\n"
                        "a-run,\"ssp:s=2 lr_mod=x\",2,7,\"none\",11\n");
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
    assert_int_equal(sw_report_add_log(&r, sw_test_path("twice.jsonl"), err), SW_EPROMISE);
    assert_non_null(strstr(err, "twice.jsonl:14"));
    sw_test_write_text(sw_test_path("t.csv"), "candidate,d\n0,x\n");
    assert_int_equal(sw_report_add_trace(&r, sw_test_path("t.csv"), err), SW_EFORMAT);
    assert_non_null(strstr(err, "t.csv:2"));
    sw_test_write_text(sw_test_path("junk.jsonl"), "not a log\n");
    assert_int_equal(sw_report_add_log(&r, sw_test_path("junk.jsonl"), err), SW_EFORMAT);
    assert_int_equal(sw_report_close(&r, err), 0);
    sw_report_free(&r);
    assert_int_equal(sw_report_open(&r, sw_test_path("missing/dir"), err), SW_EIO);
    sw_report_close(&r, NULL);
    sw_report_free(&r);
}

/* A one-worker run of `policy` with evaluations (t, acc) and an end line saying why. */
static const char *one_run(const char *name, const char *policy, const double *t,
                           const double *acc, int n, double end, const char *why)
{
    static char text[4096];
    int len = snprintf(text, sizeof text,
                       "{\"t\":0,\"ev\":\"start\",\"policy\":\"%s\",\"workers\":1,"
                       "\"slots\":1,\"seed\":1,\"V\":0,\"model\":\"m\",\"params\":1,"
                       "\"batch\":1,\"lr\":0.1,\"cluster\":\"c\",\"target_acc\":0.75,"
                       "\"driver\":\"sim\"}\n",
                       policy);
    for (int i = 0; i < n; i++)
        len += snprintf(text + len, sizeof text - (size_t)len,
                        "{\"t\":%g,\"ev\":\"eval\",\"V\":0,\"loss\":1,\"acc\":%g}\n", t[i],
                        acc[i]);
    snprintf(text + len, sizeof text - (size_t)len,
             "{\"t\":%g,\"ev\":\"end\",\"V\":0,\"why\":\"%s\"}\n", end, why);
    const char *path = sw_test_path(name);
    sw_test_write_text(path, text);
    return path;
}

/* Times to target from the end lines or from a given accuracy; the mean curve over seeds; the
 * table with the answer. */
static void runs_summarize_into_times_and_a_mean_curve(void **state)
{
    (void)state;
    const double t[] = {10, 20, 30}, a1[] = {0.5, 0.7, 0.9}, a2[] = {0.3, 0.5, 0.8};
    const double b[] = {0.2, 0.4, 0.6};
    const char *dir = sw_test_path("summary");
    mkdir(dir, 0755);
    const char *logs[] = {one_run("fast1.jsonl", "fast", t, a1, 3, 30, "target accuracy"),
                          one_run("fast2.jsonl", "fast", t, a2, 3, 30, "target accuracy"),
                          one_run("bsp1.jsonl", "bsp", t, b, 3, 40, "time limit")};
    for (int given = 0; given < 2; given++) {
        sw_report r;
        char err[SW_ERR_LEN];
        assert_int_equal(sw_report_open(&r, dir, err), 0);
        for (int i = 0; i < 3; i++)
            assert_int_equal(sw_report_add_log(&r, logs[i], err), 0);
        assert_int_equal(sw_report_summarize(&r, given ? 0.7 : 0, NULL, err), 0);
        assert_int_equal(r.n_policies, 2);
        const sw_trials *fast = &r.policies[0].trials, *bsp = &r.policies[1].trials;
        assert_int_equal(fast->n, 2);
        assert_int_equal(fast->reached, 2);
        /* ended on target at 30 and 30, or first at 0.7 at 20 and 30 */
        assert_true(fabs(fast->mean - (given ? 25 : 30)) < 1e-9);
        assert_int_equal(bsp->reached, 0);
        assert_true(fabs(bsp->mean - 40) < 1e-9); /* censored at its end */
        assert_int_equal(r.best, 1);               /* the only baseline */
        FILE *md = tmpfile();
        sw_report_write_table(&r, md);
        rewind(md);
        char text[2048] = "";
        assert_true(fread(text, 1, sizeof text - 1, md) > 0);
        fclose(md);
        /* bsp never reached it: its mean is a lower bound, and so is the speedup over it */
        assert_non_null(strstr(text, given
                                         ? "**Fastest: `fast`, >=1.60x the best baseline (`bsp`)"
                                         : "**Fastest: `fast`, >=1.33x the best baseline (`bsp`)"));
        assert_non_null(strstr(text, "| `bsp` | 0/1 | 40.0 +- 0.0 (>=) |"));
        assert_int_equal(sw_report_close(&r, err), 0);
        sw_report_free(&r);
    }
    /* Nothing before the first evaluation; at t = 21 (a grid point of 30 s in 200 steps) fast's
     * runs hold 0.7 and 0.5: mean 0.6 between them. */
    const char *mean = table(dir, SW_CSV_ACCURACY);
    assert_null(strstr(mean, "fast,0,"));
    assert_non_null(strstr(mean, "\nfast,21,0.6,0.5,0.7,2\n"));
    assert_non_null(strstr(mean, "\nbsp,40,0.6,0.6,0.6,1\n"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_log_becomes_tidy_rows),
        cmocka_unit_test(bad_inputs_are_named),
        cmocka_unit_test(runs_summarize_into_times_and_a_mean_curve),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    sw_test_cleanup();
    return rc;
}
