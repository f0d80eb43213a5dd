/* The team (syncwise/team.h): every part runs exactly once per run, on as many threads as the
 * team has, run after run; a team of one runs everything on the caller. */
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
        cmocka_unit_test(a_team_of_one),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
