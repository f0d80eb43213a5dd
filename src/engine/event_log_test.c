/* The JSONL event log round-trips: every kind of event written and read back is the same event,
 * and lines a writer never produces are refused with the field at fault. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "syncwise/engine.h"
#include "syncwise/err.h"
#include "syncwise/logread.h"

static sw_log_line line; /* about 73 KiB: off the stack */

/* ev written, parsed and read back. */
static sw_event round_trip(const sw_event *ev)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    sw_event_write_jsonl(f, ev);
    fclose(f);
    char err[SW_ERR_LEN];
    if (sw_log_parse_line(text, &line, err))
        fail_msg("%s: %s", text, err);
    sw_event back;
    if (sw_event_from_log(&line, &back, err))
        fail_msg("%s: %s", text, err);
    free(text);
    return back;
}

static void every_kind_reads_back_as_written(void **state)
{
    (void)state;
    const sw_event evs[] = {
        {.kind = SW_EV_PUSH, .t = 1.25, .worker = 3, .clock = 17, .ver = 9, .V = 11},
        {.kind = SW_EV_DROP, .t = 1.25, .worker = 3, .ver = 9, .V = 11},
        {.kind = SW_EV_APPLY, .t = 2, .V = 12, .n = 4, .lr_scale = 1.0f / 3},
        {.kind = SW_EV_APPLY, .t = 2, .V = 13, .n = 1, .lr_scale = 1},
        {.kind = SW_EV_RELEASE, .t = 3, .worker = 63, .clock = 5, .V = 13, .reason = "policy"},
        {.kind = SW_EV_RELEASE, .t = 3, .worker = 0, .clock = 5, .V = 13, .reason = "liveness"},
        {.kind = SW_EV_JOIN, .t = 4, .worker = 7, .clock = 2, .V = 13},
        {.kind = SW_EV_LEAVE, .t = 5, .worker = 7, .clock = 3, .V = 13},
        {.kind = SW_EV_CRASH, .t = 6, .worker = 1, .clock = 8, .V = 14},
        {.kind = SW_EV_SWITCH, .t = 7, .V = 14, .reason = "dssp:lo=2,hi=6"},
        {.kind = SW_EV_GRANT, .t = 8, .worker = 2, .n = 4, .V = 15},
        {.kind = SW_EV_WAKE, .t = 9, .at = 9.5, .V = 15},
        {.kind = SW_EV_TICK, .t = 9.5, .V = 15},
        {.kind = SW_EV_EVAL, .t = 10, .V = 15, .loss = 0.5, .accuracy = 0.75},
        {.kind = SW_EV_RESTORE, .t = 11, .V = 15, .ver = 10, .n = 5},
    };
    for (size_t i = 0; i < sizeof evs / sizeof evs[0]; i++) {
        const sw_event *a = &evs[i];
        sw_event b = round_trip(a);
        assert_int_equal(b.kind, a->kind);
        assert_true(b.t == a->t);
        assert_int_equal(b.worker, a->worker);
        assert_int_equal(b.clock, a->clock);
        assert_int_equal(b.ver, a->ver);
        assert_int_equal(b.V, a->V);
        assert_int_equal(b.n, a->n);
        assert_true(b.at == a->at);
        if (a->kind == SW_EV_APPLY)
            assert_true(b.lr_scale == a->lr_scale); /* bit for bit: %.9g holds a float */
        if (a->kind == SW_EV_RELEASE || a->kind == SW_EV_SWITCH)
            assert_string_equal(b.reason, a->reason);
        if (a->kind == SW_EV_EVAL) {
            assert_float_equal(b.loss, a->loss, 1e-6);
            assert_float_equal(b.accuracy, a->accuracy, 1e-6);
        }
    }
}

static int read_back(const char *text, sw_event *ev, char *err)
{
    int rc = sw_log_parse_line(text, &line, err);
    return rc ? rc : sw_event_from_log(&line, ev, err);
}

/* A diverged run's evaluation (loss NaN or infinite) still makes a line JSON readers take: the
 * value is left out and reads back as NaN. */
static void an_unmeasured_loss_reads_back_as_nan(void **state)
{
    (void)state;
    sw_event b = round_trip(&(sw_event){.kind = SW_EV_EVAL, .t = 3, .V = 4, .loss = NAN,
                                        .accuracy = 0.5});
    assert_true(isnan(b.loss) && b.accuracy == 0.5);
    b = round_trip(&(sw_event){.kind = SW_EV_EVAL, .t = 3, .V = 4, .loss = INFINITY,
                               .accuracy = NAN});
    assert_true(isnan(b.loss) && isnan(b.accuracy) && b.V == 4);
}

static void lines_no_writer_makes_are_refused(void **state)
{
    (void)state;
    static const struct {
        const char *text, *why;
        int rc;
    } bad[] = {
        {"{\"t\":0,\"ev\":\"start\",\"policy\":\"asp\"}", "unknown event 'start'", SW_ENOTFOUND},
        {"{\"t\":1,\"ev\":\"push\",\"w\":1,\"step\":2,\"V\":0}", "\"ver\"", SW_EFORMAT},
        {"{\"t\":1,\"ev\":\"push\",\"w\":-1,\"step\":2,\"ver\":0,\"V\":0}", "\"w\"", SW_EFORMAT},
        {"{\"t\":1,\"ev\":\"apply\",\"V\":1.5,\"n\":1}", "\"V\"", SW_EFORMAT},
        {"{\"t\":1,\"ev\":\"grant\",\"w\":1,\"V\":1}", "\"n\"", SW_EFORMAT},
        {"{\"t\":1,\"ev\":\"release\",\"w\":1,\"step\":1,\"V\":1,\"why\":\"mood\"}", "why",
         SW_EFORMAT},
        {"{\"t\":1,\"ev\":\"switch\",\"V\":1}", "policy", SW_EFORMAT},
        {"{\"t\":1,\"ev\":\"wake\",\"V\":1}", "\"at\"", SW_EFORMAT},
        /* numbers strtod reads and JSON does not: "0x10" was read as 16 */
        {"{\"t\":0x10,\"ev\":\"wake\",\"V\":1,\"at\":2}", "not as JSON writes it", SW_EFORMAT},
        {"{\"t\":0x1p2,\"ev\":\"wake\",\"V\":1,\"at\":2}", "not as JSON writes it", SW_EFORMAT},
        {"{\"t\":+1,\"ev\":\"wake\",\"V\":1,\"at\":2}", "not as JSON writes it", SW_EFORMAT},
        {"{\"t\":01,\"ev\":\"wake\",\"V\":1,\"at\":2}", "not as JSON writes it", SW_EFORMAT},
        {"{\"t\":1.,\"ev\":\"wake\",\"V\":1,\"at\":2}", "not as JSON writes it", SW_EFORMAT},
        {"{\"t\":.5,\"ev\":\"wake\",\"V\":1,\"at\":2}", "not as JSON writes it", SW_EFORMAT},
        {"{\"t\":1e,\"ev\":\"wake\",\"V\":1,\"at\":2}", "not as JSON writes it", SW_EFORMAT},
        {"{\"t\":1,\"ev\":\"wa\\qke\",\"V\":1,\"at\":2}", "an escape JSON does not have",
         SW_EFORMAT},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        sw_event ev;
        char err[SW_ERR_LEN] = "";
        assert_int_equal(read_back(bad[i].text, &ev, err), bad[i].rc);
        if (!strstr(err, bad[i].why))
            fail_msg("%s: '%s' does not name %s", bad[i].text, err, bad[i].why);
    }
}

/* Every number JSON allows reads: a sign, zero, a fraction, an exponent of either case and sign. */
static void json_numbers_read(void **state)
{
    (void)state;
    static const struct {
        const char *t;
        double want;
    } good[] = {{"0", 0}, {"-0", 0}, {"0.5", 0.5}, {"1e-05", 1e-5}, {"2E+3", 2e3}, {"10", 10}};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        char text[128], err[SW_ERR_LEN] = "";
        snprintf(text, sizeof text, "{\"t\":%s,\"ev\":\"wake\",\"V\":1,\"at\":%s}", good[i].t,
                 good[i].t);
        sw_event ev;
        if (read_back(text, &ev, err))
            fail_msg("%s: %s", text, err);
        assert_true(ev.t == good[i].want);
    }
}

/* A log whose stream failed (a full disk) is written no more: it ends where it failed, with no
 * later line beyond a hole. */
static void a_failed_stream_is_written_no_more(void **state)
{
    (void)state;
    char path[] = "/tmp/sw-event-log-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    const sw_event push = {.kind = SW_EV_PUSH, .t = 1, .worker = 0, .clock = 1, .ver = 0, .V = 0};
    sw_event_write_jsonl(f, &push);
    fflush(f);
    long before = ftell(f);
    assert_true(before > 0);
    assert_int_equal(fgetc(f), EOF); /* a read of a stream opened for writing only fails: */
    assert_true(ferror(f));          /* its error flag is set, as a full disk's write sets it */
    sw_event_write_jsonl(f, &push);
    fflush(f);
    assert_int_equal(ftell(f), before);
    fclose(f);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_kind_reads_back_as_written),
        cmocka_unit_test(a_failed_stream_is_written_no_more),
        cmocka_unit_test(an_unmeasured_loss_reads_back_as_nan),
        cmocka_unit_test(lines_no_writer_makes_are_refused),
        cmocka_unit_test(json_numbers_read),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
