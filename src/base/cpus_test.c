/* --cpus: lists parsed or refused by name, every thread of the process moved, and a CPU the
 * process may not use refused without changing anything. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "syncwise/cpus.h"
#include "syncwise/err.h"

static cpu_set_t allowed, started_on; /* what the kernel lets it use; what it was given */

/* Reads the kernel's own answer: offered every CPU, a thread keeps those it may use. */
static int save_allowed(void **state)
{
    (void)state;
    cpu_set_t every;
    memset(&every, 0xff, sizeof every);
    return sched_getaffinity(0, sizeof started_on, &started_on) ||
           sched_setaffinity(0, sizeof every, &every) ||
           sched_getaffinity(0, sizeof allowed, &allowed) ||
           sched_setaffinity(0, sizeof started_on, &started_on);
}

static int restore_allowed(void **state)
{
    (void)state;
    return sched_setaffinity(0, sizeof started_on, &started_on);
}

static int first_allowed(void)
{
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &allowed))
            return c;
    return -1;
}

static void malformed_lists_are_refused_by_name(void **state)
{
    (void)state;
    static const char *const bad[] = {"", "a", "1-", "-1", "3-1", "0,,1", "0,", "0 1", "1.5",
                                      "0-99999", "99999", "0x1", "+1", "0-4:0", "0-4:", "0:2",
                                      "0-4:2:1", "0-4:-1"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char err[SW_ERR_LEN] = "";
        assert_int_equal(sw_cpus_pin_thread(bad[i], err), SW_EINVAL);
        assert_non_null(strstr(err, "not a list of CPUs"));
        char named[64];
        snprintf(named, sizeof named, "--cpus '%s':", bad[i]);
        assert_non_null(strstr(err, named));
        assert_non_null(strstr(err, "this process may use")); /* and what it may */
    }
}

static void allowed_list_reads_back(void **state)
{
    (void)state;
    char list[256];
    int n = sw_cpus_allowed(list, sizeof list);
    assert_int_equal(n, CPU_COUNT(&allowed));
    /* The list it writes is one the parser takes, naming the same CPUs. */
    char err[SW_ERR_LEN];
    assert_int_equal(sw_cpus_pin_thread(list, err), CPU_COUNT(&allowed));
    cpu_set_t now;
    assert_int_equal(sched_getaffinity(0, sizeof now, &now), 0);
    assert_true(CPU_EQUAL(&now, &allowed));
}

static void the_nth_allowed_cpu_counts_the_set(void **state)
{
    (void)state;
    int n = CPU_COUNT(&allowed), last = -1;
    for (int i = 0; i < n; i++) {
        int c = sw_cpus_allowed_nth(i);
        assert_true(c > last && CPU_ISSET(c, &allowed));
        last = c;
    }
    assert_int_equal(sw_cpus_allowed_nth(n), -1);
    assert_int_equal(sw_cpus_allowed_nth(-1), -1);
    assert_int_equal(sw_cpus_allowed_nth(0), first_allowed());
}

/* A thread pinned to one CPU may still be moved to any other the process may use (the
 * benchmarks pin their client's thread, then start a server's thread from it). */
static void a_pinned_thread_may_move_to_another_cpu(void **state)
{
    (void)state;
    if (CPU_COUNT(&allowed) < 2)
        skip();
    char first[16], second[16], err[SW_ERR_LEN];
    snprintf(first, sizeof first, "%d", sw_cpus_allowed_nth(0));
    snprintf(second, sizeof second, "%d", sw_cpus_allowed_nth(1));
    assert_int_equal(sw_cpus_pin_thread(first, err), 1);
    assert_int_equal(sw_cpus_allowed(NULL, 0), CPU_COUNT(&allowed)); /* not what it runs on */
    assert_int_equal(sw_cpus_pin_thread(second, err), 1);
    cpu_set_t now, want;
    CPU_ZERO(&want);
    CPU_SET(sw_cpus_allowed_nth(1), &want);
    assert_int_equal(sched_getaffinity(0, sizeof now, &now), 0);
    assert_true(CPU_EQUAL(&now, &want));
}

/* Lists as taskset takes them: strides, repeats and overlaps name each CPU once. */
static void strides_and_repeats_name_each_cpu_once(void **state)
{
    (void)state;
    if (CPU_COUNT(&allowed) < 2)
        skip();
    int a = sw_cpus_allowed_nth(0), b = sw_cpus_allowed_nth(1); /* none between them */
    cpu_set_t both, first;
    CPU_ZERO(&both);
    CPU_SET(a, &both);
    CPU_SET(b, &both);
    CPU_ZERO(&first);
    CPU_SET(a, &first);
    struct {
        char list[64];
    } cases[5];
    snprintf(cases[0].list, sizeof cases[0].list, "%d-%d:%d", a, b, b - a);
    snprintf(cases[1].list, sizeof cases[1].list, "%d-%d:%d", a, b, b - a + 1);
    snprintf(cases[2].list, sizeof cases[2].list, "%d,%d", a, a);
    snprintf(cases[3].list, sizeof cases[3].list, "%d,%d-%d:%d,%d", b, a, b, b - a, a);
    snprintf(cases[4].list, sizeof cases[4].list, "%d-%d:%d", a, a, 5);
    const cpu_set_t *want[5] = {&both, &first, &first, &both, &first};
    for (int i = 0; i < 5; i++) {
        char err[SW_ERR_LEN];
        assert_int_equal(sw_cpus_pin_thread(cases[i].list, err), CPU_COUNT(want[i]));
        cpu_set_t now;
        assert_int_equal(sched_getaffinity(0, sizeof now, &now), 0);
        assert_true(CPU_EQUAL(&now, want[i]));
    }
}

static void *wait_on(void *arg)
{
    pthread_barrier_wait(arg); /* started */
    pthread_barrier_wait(arg); /* checked */
    return NULL;
}

static void a_process_pin_moves_every_thread(void **state)
{
    (void)state;
    pthread_barrier_t b;
    pthread_barrier_init(&b, NULL, 2);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, wait_on, &b), 0);
    pthread_barrier_wait(&b);
    char one[16], err[SW_ERR_LEN];
    snprintf(one, sizeof one, "%d", first_allowed());
    assert_int_equal(sw_cpus_pin_process(one, err), 1);
    cpu_set_t want, got;
    CPU_ZERO(&want);
    CPU_SET(first_allowed(), &want);
    assert_int_equal(pthread_getaffinity_np(th, sizeof got, &got), 0); /* started before */
    assert_true(CPU_EQUAL(&got, &want));
    assert_int_equal(sched_getaffinity(0, sizeof got, &got), 0);
    assert_true(CPU_EQUAL(&got, &want));
    pthread_barrier_wait(&b);
    pthread_join(th, NULL);
    restore_allowed(NULL);
}

static void a_cpu_not_allowed_is_refused_and_nothing_changes(void **state)
{
    (void)state;
    int outside = -1;
    for (int c = CPU_SETSIZE - 1; c >= 0 && outside < 0; c--)
        if (!CPU_ISSET(c, &allowed))
            outside = c;
    if (outside < 0)
        skip(); /* a machine of CPU_SETSIZE CPUs, all allowed */
    char list[32], err[SW_ERR_LEN] = "";
    snprintf(list, sizeof list, "%d,%d", first_allowed(), outside);
    assert_int_equal(sw_cpus_pin_process(list, err), SW_EINVAL);
    char named[48];
    snprintf(named, sizeof named, "may not use CPU %d (it may use", outside);
    assert_non_null(strstr(err, named));
    cpu_set_t now;
    assert_int_equal(sched_getaffinity(0, sizeof now, &now), 0);
    assert_true(CPU_EQUAL(&now, &started_on));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(malformed_lists_are_refused_by_name),
        cmocka_unit_test_teardown(allowed_list_reads_back, restore_allowed),
        cmocka_unit_test(the_nth_allowed_cpu_counts_the_set),
        cmocka_unit_test_teardown(a_pinned_thread_may_move_to_another_cpu, restore_allowed),
        cmocka_unit_test_teardown(strides_and_repeats_name_each_cpu_once, restore_allowed),
        cmocka_unit_test_teardown(a_process_pin_moves_every_thread, restore_allowed),
        cmocka_unit_test(a_cpu_not_allowed_is_refused_and_nothing_changes),
    };
    return cmocka_run_group_tests(tests, save_allowed, NULL);
}
