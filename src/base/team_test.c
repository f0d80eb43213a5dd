/* The team (syncwise/team.h): every part runs exactly once per run, on as many threads as the
 * team has, run after run; a team of one runs everything on the caller. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdatomic.h>

#include "syncwise/team.h"

enum { MAX_PARTS = 16 };

typedef struct tally {
    atomic_uint runs[MAX_PARTS];
    atomic_uint seen_parts; /* the `parts` every call was given, or'ed */
    pthread_t caller;
    atomic_uint on_caller;
} tally;

static void count(void *ctx, uint32_t part, uint32_t parts)
{
    tally *t = ctx;
    atomic_fetch_add(&t->runs[part], 1);
    atomic_fetch_or(&t->seen_parts, 1u << parts);
    if (pthread_equal(pthread_self(), t->caller))
        atomic_fetch_add(&t->on_caller, 1);
}

static void each_part_once(void **state)
{
    (void)state;
    sw_team *team;
    assert_int_equal(sw_team_new(&team, 4, NULL), 0);
    assert_int_equal(sw_team_size(team), 4);
    for (uint32_t parts = 1; parts <= 6; parts++) {
        for (int rep = 0; rep < 200; rep++) {
            tally t = {.caller = pthread_self()};
            sw_team_run(team, parts, count, &t);
            uint32_t used = parts > 4 ? 4 : parts; /* more parts than threads: that many */
            for (uint32_t p = 0; p < MAX_PARTS; p++)
                assert_int_equal(atomic_load(&t.runs[p]), p < used ? 1 : 0);
            assert_int_equal(atomic_load(&t.seen_parts), 1u << used);
            assert_int_equal(atomic_load(&t.on_caller), 1); /* part 0 */
        }
    }
    sw_team_free(team);
}

/* The parts run at once, each on its own thread: every part waits at a barrier for the others
 * (run one after another, they would never pass it; ctest's timeout would say so). */
static pthread_barrier_t all_parts;

static void meet(void *ctx, uint32_t part, uint32_t parts)
{
    (void)part, (void)parts;
    pthread_barrier_wait(&all_parts);
    atomic_fetch_add((atomic_uint *)ctx, 1);
}

static void parts_run_at_once(void **state)
{
    (void)state;
    for (uint32_t size = 2; size <= 4; size++) {
        sw_team *team;
        assert_int_equal(sw_team_new(&team, size, NULL), 0);
        pthread_barrier_init(&all_parts, NULL, size);
        atomic_uint met = 0;
        for (int rep = 0; rep < 50; rep++)
            sw_team_run(team, size, meet, &met);
        assert_int_equal(atomic_load(&met), 50 * size);
        pthread_barrier_destroy(&all_parts);
        /* fewer parts than threads: the idle members are not waited for, run after run */
        tally t = {.caller = pthread_self()};
        for (int rep = 0; rep < 50; rep++)
            sw_team_run(team, 2, count, &t);
        assert_int_equal(atomic_load(&t.runs[0]), 50);
        assert_int_equal(atomic_load(&t.runs[1]), 50);
        assert_int_equal(atomic_load(&t.runs[2]), 0);
        sw_team_free(team);
    }
}

static void a_team_of_one(void **state)
{
    (void)state;
    sw_team *team;
    assert_int_equal(sw_team_new(&team, 1, NULL), 0);
    tally t = {.caller = pthread_self()};
    sw_team_run(team, 3, count, &t);
    assert_int_equal(atomic_load(&t.runs[0]), 1);
    assert_int_equal(atomic_load(&t.runs[1]), 0);
    assert_int_equal(atomic_load(&t.on_caller), 1);
    sw_team_free(team);
    sw_team_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(each_part_once),
        cmocka_unit_test(parts_run_at_once),
        cmocka_unit_test(a_team_of_one),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
