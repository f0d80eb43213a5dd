/* Log files through the promise checker: a broken promise named at its line, and the end line
 * held to the run before it. */
#include "testutil/testutil.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "syncwise/check.h"
#include "syncwise/err.h"

/* Lines 2-8 of the logs below: two workers join and start, worker 0's push is applied and
 * evaluated. */
#define TWO_WORKERS_ONE_APPLY                                                                      \
    "{\"t\":0,\"ev\":\"join\",\"w\":0,\"step\":0,\"V\":0}\n"                                       \
    "{\"t\":0,\"ev\":\"release\",\"w\":0,\"step\":0,\"V\":0}\n"                                    \
    "{\"t\":0,\"ev\":\"join\",\"w\":1,\"step\":0,\"V\":0}\n"                                       \
    "{\"t\":0,\"ev\":\"release\",\"w\":1,\"step\":0,\"V\":0}\n"                                    \
    "{\"t\":1,\"ev\":\"push\",\"w\":0,\"step\":1,\"ver\":0,\"V\":0}\n"                             \
    "{\"t\":1,\"ev\":\"apply\",\"V\":1,\"n\":1}\n"                                                 \
    "{\"t\":1,\"ev\":\"eval\",\"V\":1,\"loss\":1,\"acc\":0.5}\n"

static void a_log_file_is_checked_and_its_line_named(void **state)
{
    (void)state;
    const char *path = sw_test_path("run.jsonl");
    sw_test_write_text(
        path,
        "{\"t\":0,\"ev\":\"start\",\"policy\":\"ssp:s=0\",\"slots\":2}\n" TWO_WORKERS_ONE_APPLY
        "{\"t\":1,\"ev\":\"release\",\"w\":0,\"step\":1,\"V\":1}\n");
    sw_check_summary sum;
    char err[SW_ERR_LEN];
    assert_int_equal(sw_check_log(path, &sum, err), SW_EPROMISE);
    assert_non_null(strstr(err, "run.jsonl:9:"));
    assert_non_null(strstr(err, "(s=0)"));
    /* Without the release, worker 0 waits within s=1: the decision of its push, on line 6, is
     * at fault, though it shows only when the run's end judges that call. */
    sw_test_write_text(
        path,
        "{\"t\":0,\"ev\":\"start\",\"policy\":\"ssp:s=1\",\"slots\":2}\n" TWO_WORKERS_ONE_APPLY
        "{\"t\":2,\"ev\":\"end\",\"V\":1,\"why\":\"time limit\"}\n");
    assert_int_equal(sw_check_log(path, &sum, err), SW_EPROMISE);
    assert_non_null(strstr(err, "run.jsonl:6: t=1, push of worker 0 (its decision as a whole)"));
    sw_test_write_text(path, "{\"t\":0,\"ev\":\"join\",\"w\":0,\"step\":0,\"V\":0}\n");
    assert_int_equal(sw_check_log(path, &sum, err), SW_EFORMAT);
    assert_non_null(strstr(err, "start"));
}

/* An asp run of one push, applied, evaluated at 0.5 (target 0.4), then `end` (a whole line). */
static int check_with_end(const char *end, char *err)
{
    const char *path = sw_test_path("ended.jsonl");
    char text[2048];
    snprintf(text, sizeof text,
             "{\"t\":0,\"ev\":\"start\",\"policy\":\"asp\",\"slots\":1,\"target_acc\":0.4}\n"
             "{\"t\":0,\"ev\":\"join\",\"w\":0,\"step\":0,\"V\":0}\n"
             "{\"t\":0,\"ev\":\"release\",\"w\":0,\"step\":0,\"V\":0}\n"
             "{\"t\":1,\"ev\":\"push\",\"w\":0,\"step\":1,\"ver\":0,\"V\":0}\n"
             "{\"t\":1,\"ev\":\"apply\",\"V\":1,\"n\":1}\n"
             "{\"t\":1,\"ev\":\"release\",\"w\":0,\"step\":1,\"V\":1}\n"
             "{\"t\":1,\"ev\":\"eval\",\"V\":1,\"loss\":1,\"acc\":0.5}\n%s\n",
             end);
    sw_test_write_text(path, text);
    sw_check_summary sum;
    return sw_check_log(path, &sum, err);
}

/* The end line says when, at which version and why a run ended: each is held to the events
 * before it, a target to an evaluation that met it, and nothing but a restart follows it. */
static void the_end_line_is_held_to_the_run(void **state)
{
    (void)state;
    char err[SW_ERR_LEN];
    static const char *const kept[] = {
        "{\"t\":2,\"ev\":\"end\",\"V\":1,\"why\":\"time limit\"}",
        "{\"t\":1,\"ev\":\"end\",\"V\":1,\"why\":\"target accuracy\"}",
        "{\"t\":1,\"ev\":\"end\",\"V\":1,\"why\":\"failed: shard 0 was lost\"}",
        "{\"t\":1,\"ev\":\"end\",\"V\":1,\"why\":\"stopped\"}",
    };
    for (size_t i = 0; i < sizeof kept / sizeof *kept; i++)
        if (check_with_end(kept[i], err))
            fail_msg("%s: %s", kept[i], err);
    static const char *const broken[][3] = {
        {"{\"t\":0.5,\"ev\":\"end\",\"V\":1,\"why\":\"time limit\"}", "time went back", ":8:"},
        {"{\"t\":2,\"ev\":\"end\",\"V\":999,\"why\":\"time limit\"}", "says version 999", ":8:"},
        {"{\"t\":2,\"ev\":\"end\",\"V\":1,\"why\":\"bananas\"}", "no known reason", ":8:"},
        {"{\"t\":2,\"ev\":\"end\",\"V\":1,\"why\":\"target loss\"}\n"
         "{\"t\":3,\"ev\":\"push\",\"w\":0,\"step\":2,\"ver\":1,\"V\":1}",
         "an event after the run's \"end\" line", ":9:"},
        {"{\"t\":2,\"ev\":\"end\",\"V\":1,\"why\":\"time limit\"}\n"
         "{\"t\":2,\"ev\":\"end\",\"V\":1,\"why\":\"time limit\"}",
         "a second end", ":9:"},
    };
    for (size_t i = 0; i < sizeof broken / sizeof *broken; i++) {
        int rc = check_with_end(broken[i][0], err); /* rule 10: broken, not unreadable */
        if (rc != SW_EPROMISE || !strstr(err, broken[i][1]) || !strstr(err, broken[i][2]))
            fail_msg("%s: %d '%s' (wanted '%s' on line %s)", broken[i][0], rc, err, broken[i][1],
                     broken[i][2]);
    }
    /* A higher target than any evaluation met: the end line is no proof. */
    const char *path = sw_test_path("forged.jsonl");
    sw_test_write_text(path, "{\"t\":0,\"ev\":\"start\",\"policy\":\"asp\",\"slots\":1,"
                             "\"target_acc\":0.9}\n"
                             "{\"t\":0,\"ev\":\"eval\",\"V\":0,\"loss\":1,\"acc\":0.5}\n"
                             "{\"t\":1,\"ev\":\"end\",\"V\":0,\"why\":\"target accuracy\"}\n");
    sw_check_summary sum;
    assert_int_equal(sw_check_log(path, &sum, err), SW_EPROMISE);
    assert_non_null(strstr(err, "no evaluation reached 0.9"));
}

/* A log cut after a wake-up went overdue: the simulator's ticks come on time, so its log broke
 * a promise; a server's real clock may serve a push first, and its cut log tells nothing. */
static void the_driver_says_whether_ticks_come_on_time(void **state)
{
    (void)state;
    const char *path = sw_test_path("cut.jsonl");
    const char *run = "\"policy\":\"mystery\",\"slots\":2}\n" TWO_WORKERS_ONE_APPLY
                      "{\"t\":1,\"ev\":\"wake\",\"V\":1,\"at\":1.5}\n"
                      "{\"t\":2,\"ev\":\"push\",\"w\":1,\"step\":1,\"ver\":0,\"V\":1}\n";
    char text[2048];
    sw_check_summary sum;
    char err[SW_ERR_LEN];
    snprintf(text, sizeof text, "{\"t\":0,\"ev\":\"start\",\"driver\":\"sim\",%s", run);
    sw_test_write_text(path, text);
    assert_int_equal(sw_check_log(path, &sum, err), SW_EPROMISE);
    assert_non_null(strstr(err, "cut.jsonl:10: t=2, push of worker 1: "));
    assert_non_null(strstr(err, "a wake-up due at t=1.5 had not come"));
    snprintf(text, sizeof text, "{\"t\":0,\"ev\":\"start\",\"driver\":\"server\",%s", run);
    sw_test_write_text(path, text);
    if (sw_check_log(path, &sum, err))
        fail_msg("%s", err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_log_file_is_checked_and_its_line_named),
        cmocka_unit_test(the_end_line_is_held_to_the_run),
        cmocka_unit_test(the_driver_says_whether_ticks_come_on_time),
    };
    return cmocka_run_group_tests(tests, NULL, sw_test_teardown);
}
