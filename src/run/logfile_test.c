/* A log's start and end lines: what is written is what is read back, field by field, and a
 * start line with a field out of its domain is refused. */
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
#include "syncwise/run.h"

typedef struct seen {
    sw_run_info info;
    int starts, ends;
    double end_t;
    uint64_t end_V;
    char why[64];
} seen;

static int on_start(void *ctx, const sw_run_info *info, size_t line, char *err)
{
    (void)line, (void)err;
    seen *s = ctx;
    s->info = *info;
    s->starts++;
    return 0;
}

static int on_end(void *ctx, double t, uint64_t V, const char *why, size_t line, char *err)
{
    (void)line, (void)err;
    seen *s = ctx;
    s->ends++, s->end_t = t, s->end_V = V;
    snprintf(s->why, sizeof s->why, "%s", why);
    return 0;
}

/* The lines written for info and an end, read back. */
static int round_trip(const sw_run_info *info, seen *out, char *err)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    sw_run_write_start(f, info);
    sw_run_write_end(f, 12.5, 7, "target loss");
    assert_int_equal(fclose(f), 0);
    memset(out, 0, sizeof *out);
    sw_run_reader r = {.start = on_start, .end = on_end, .ctx = out};
    int rc = sw_run_read_text(text, &r, err);
    free(text);
    return rc;
}

static void start_and_end_lines_round_trip(void **state)
{
    (void)state;
    for (int regress = 0; regress < 2; regress++) {
        sw_run_info in = {.driver = "server", .policy = "dbw:agg=mean,lr=0.08", .workers = 3,
                          .slots = 5, .seed = 42, .version = 9, .model = "mlp:h=1,u=8",
                          .params = 1234, .batch = 32, .lr = 0.25f,
                          .optimizer = "sgd:momentum=0.9", .target_acc = regress ? 0 : 0.875,
                          .regress = regress, .cluster = "real"};
        seen out;
        char err[SW_ERR_LEN];
        assert_int_equal(round_trip(&in, &out, err), 0);
        assert_int_equal(out.starts, 1);
        assert_int_equal(out.ends, 1);
        const sw_run_info *o = &out.info;
        assert_string_equal(o->driver, in.driver);
        assert_string_equal(o->policy, in.policy);
        assert_string_equal(o->model, in.model);
        assert_string_equal(o->optimizer, in.optimizer);
        assert_string_equal(o->cluster, in.cluster);
        assert_int_equal(o->workers, in.workers);
        assert_int_equal(o->slots, in.slots);
        assert_int_equal(o->seed, in.seed);
        assert_int_equal(o->version, in.version);
        assert_int_equal(o->params, in.params);
        assert_int_equal(o->batch, in.batch);
        assert_true(o->lr == in.lr);
        assert_true(o->target_acc == in.target_acc);
        assert_int_equal(o->regress, in.regress);
        assert_true(out.end_t == 12.5);
        assert_int_equal(out.end_V, 7);
        assert_string_equal(out.why, "target loss");
    }
}

/* Older logs have no "task" and no "optimizer": a classification task under plain SGD. */
static void older_start_lines_read_with_their_defaults(void **state)
{
    (void)state;
    seen out = {0};
    char err[SW_ERR_LEN];
    sw_run_reader r = {.start = on_start, .ctx = &out};
    assert_int_equal(sw_run_read_text("{\"t\":0,\"ev\":\"start\",\"policy\":\"bsp\",\"slots\":2,"
                                      "\"driver\":\"sim\"}\n",
                                      &r, err),
                     0);
    assert_false(out.info.regress);
    assert_string_equal(out.info.optimizer, "sgd");
}

/* Seeds are read as written, digit for digit: an older version wrote seeds above 2^53, which a
 * double would round. */
static void seeds_beyond_a_double_read_exactly(void **state)
{
    (void)state;
    seen out = {0};
    char err[SW_ERR_LEN];
    sw_run_reader r = {.start = on_start, .ctx = &out};
    assert_int_equal(sw_run_read_text("{\"t\":0,\"ev\":\"start\",\"policy\":\"bsp\",\"slots\":2,"
                                      "\"seed\":18446744073709551615,\"driver\":\"sim\"}\n",
                                      &r, err),
                     0);
    assert_true(out.info.seed == UINT64_MAX);
    assert_int_equal(sw_run_read_text("{\"t\":0,\"ev\":\"start\",\"policy\":\"bsp\",\"slots\":2,"
                                      "\"seed\":9007199254740993,\"driver\":\"sim\"}\n",
                                      &r, err),
                     0);
    assert_true(out.info.seed == 9007199254740993ull); /* 2^53 + 1, which no double holds */
}

/* A start line of bsp with `fields` after `slots` (its "slots" field, or "") is refused as a
 * format error whose message says `want`, and reaches no callback. */
static void expect_start_refused(const char *fields, const char *slots, const char *want)
{
    char text[256];
    snprintf(text, sizeof text,
             "{\"t\":0,\"ev\":\"start\",\"policy\":\"bsp\",\"driver\":\"sim\",%s%s}\n",
             slots, fields);
    seen out = {0};
    char err[SW_ERR_LEN] = "";
    sw_run_reader r = {.start = on_start, .ctx = &out};
    assert_int_equal(sw_run_read_text(text, &r, err), SW_EFORMAT);
    if (!strstr(err, want))
        fail_msg("%s: '%s' does not say '%s'", fields, err, want);
    assert_int_equal(out.starts, 0);
}

static void start_fields_out_of_their_domain_are_refused(void **state)
{
    (void)state;
    static const char *const bad[][2] = {
        {"\"task\":\"cluster\"", "\"task\""},
        {"\"task\":1", "\"task\""},
        {"\"target_acc\":1.5", "\"target_acc\""},
        {"\"slots\":0", "\"slots\" is missing or not a whole number in [1, "},
        {"\"slots\":2.5", "\"slots\""},
        {"\"seed\":-1", "\"seed\""},
        {"\"seed\":2.5", "\"seed\""},
        {"\"seed\":\"7\"", "\"seed\""},
        {"\"seed\":18446744073709551616", "\"seed\""}, /* 2^64 */
        {"\"workers\":\"ten\"", "\"workers\""}, /* a number as text is not one */
        {"\"slots\":\"2\"", "\"slots\""},
        {"\"lr\":\"0.1\"", "\"lr\""},
        {"\"target_acc\":\"0.9\"", "\"target_acc\""},
        {"\"driver\":\"bogus\"", "\"driver\""},
        {"\"driver\":1", "\"driver\""},
        {"\"workers\":3", "\"workers\" (3) exceed"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        expect_start_refused(bad[i][0], strstr(bad[i][0], "slots") ? "" : "\"slots\":2,",
                             bad[i][1]);
}

/* A line the reader refuses says why, at its column: two readers of one log must agree on it. */
static void lines_json_allows_but_a_log_never_holds_are_named(void **state)
{
    (void)state;
    static const char *const bad[][2] = {
        {"\"w\":0,\"w\":1", "the key \"w\" a second time"},
        {"\"V\":1e400", "a number out of range"},
        {"\"x\":\"caf\\u0000\"", "an escape that is no character"},
        {"\"x\":\"a\tb\"", "a control character"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        expect_start_refused(bad[i][0], "\"slots\":2,", bad[i][1]);
}

/* After an end line only a restarted server's start line may come: same slots, a version the
 * log reached. Another run (a simulation, other slots, a version never reached) is refused. */
static void a_log_holds_one_run_and_its_restarts(void **state)
{
    (void)state;
    static const char *const second[][2] = {
        {"\"driver\":\"server\",\"slots\":2,\"V\":3", NULL},
        {"\"driver\":\"sim\",\"slots\":2,\"V\":3", "a second run"},
        {"\"driver\":\"server\",\"slots\":3,\"V\":3", "a second run"},
        {"\"driver\":\"server\",\"slots\":2,\"V\":9", "a second run"},
    };
    for (size_t i = 0; i < sizeof second / sizeof *second; i++) {
        char text[512];
        snprintf(text, sizeof text,
                 "{\"t\":0,\"ev\":\"start\",\"policy\":\"asp\",\"driver\":\"server\","
                 "\"slots\":2}\n{\"t\":1,\"ev\":\"end\",\"V\":4,\"why\":\"stopped\"}\n"
                 "{\"t\":0,\"ev\":\"start\",\"policy\":\"asp\",%s}\n",
                 second[i][0]);
        seen out = {0};
        char err[SW_ERR_LEN] = "";
        sw_run_reader r = {.start = on_start, .end = on_end, .ctx = &out};
        int rc = sw_run_read_text(text, &r, err);
        if (second[i][1] ? rc != SW_EPROMISE || !strstr(err, second[i][1]) : rc != 0)
            fail_msg("%s: %d '%s'", second[i][0], rc, err);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_log_holds_one_run_and_its_restarts),
        cmocka_unit_test(lines_json_allows_but_a_log_never_holds_are_named),
        cmocka_unit_test(start_and_end_lines_round_trip),
        cmocka_unit_test(older_start_lines_read_with_their_defaults),
        cmocka_unit_test(seeds_beyond_a_double_read_exactly),
        cmocka_unit_test(start_fields_out_of_their_domain_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
