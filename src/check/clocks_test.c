/* The checker's heap of waiting workers stays as small as the slots, however long the run: under
 * the policies that never ask who waits within a bound (asp, bsp, the k-of-n ones) nothing
 * popped its stale entries, and a server's checker grew by 16 bytes a push (a simulated asp
 * run of 10M pushes held 164 MB where ssp's held 9; a large-sizes trial). */
#include "check_test_rig.h"

#include "check_internal.h"

enum { SLOTS = 3, ROUNDS = 50000 };

/* Every worker pushes once a round: applied and released at once, or all at a barrier. The
 * stream is left open for the caller. */
static script *rounds_of(const char *policy, bool barrier)
{
    script *s = open_script(policy, SLOTS);
    start_all(s, SLOTS);
    for (uint64_t k = 1; k <= ROUNDS && !s->rc; k++) {
        uint64_t at = s->V;
        for (uint32_t w = 0; w < SLOTS; w++) {
            push(s, w, k, barrier ? at : s->V);
            if (!barrier) {
                apply(s, 1);
                release(s, w, k);
            }
        }
        if (barrier) {
            apply(s, SLOTS);
            for (uint32_t w = 0; w < SLOTS; w++)
                release(s, w, k);
        }
        if (s->c->cap_waits > 64 + 4 * SLOTS)
            fail_msg("%s: room for %u waits after %llu rounds of %d workers", policy,
                     s->c->cap_waits, (unsigned long long)k, SLOTS);
    }
    return s;
}

static void a_long_run_keeps_its_waits_few(void **state)
{
    (void)state;
    expect(rounds_of("asp", false), NULL);
    expect(rounds_of("ssp:s=2", false), NULL);
    expect(rounds_of("bsp", true), NULL);
}

/* A wait that stands outlives the prunings of the others' stale ones: worker 0 is left waiting
 * within ssp's bound while the others push 100 times, a heap pruned at 64 entries, and the
 * checker still sees that it was never released. */
static void a_standing_wait_survives_the_pruning(void **state)
{
    (void)state;
    script *s = open_script("ssp:s=1000", SLOTS);
    start_all(s, SLOTS);
    push(s, 0, 1, s->V);
    apply(s, 1); /* and never released */
    for (uint64_t k = 1; k <= 50; k++)
        for (uint32_t w = 1; w < SLOTS; w++) {
            push(s, w, k, s->V);
            apply(s, 1);
            release(s, w, k);
        }
    assert_true(s->c->cap_waits < 100); /* the heap was pruned on the way */
    expect(s, "left worker 0 waiting");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_long_run_keeps_its_waits_few),
        cmocka_unit_test(a_standing_wait_survives_the_pruning),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
