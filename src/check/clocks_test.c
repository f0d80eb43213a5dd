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

/* A wait that stands outlives the prunings of the others' stale ones. Under the policies that
 * never ask who waits (the ones whose heaps are pruned), a run can switch to ssp; a worker left
 * waiting meanwhile must still be found. Driven on the heap itself: no event stream of ssp's
 * own keeps a wait standing for a prune's worth of pushes (its decisions pop the stale ones). */
static void a_standing_wait_survives_the_pruning(void **state)
{
    (void)state;
    char err[SW_ERR_LEN];
    sw_check *c;
    assert_int_equal(sw_check_new(&c, "asp", SLOTS, 0, err), 0);
    c->w[0] = (ck_worker){.state = SW_WORKER_WAITING, .clock = 7};
    assert_int_equal(sw__ck_wait_at(c, 0), 0);
    for (uint64_t k = 1; k <= 100; k++)
        for (uint32_t w = 1; w < SLOTS; w++) { /* each waits at k, and is released */
            c->w[w].state = SW_WORKER_WAITING;
            c->w[w].clock = k;
            assert_int_equal(sw__ck_wait_at(c, w), 0);
            c->w[w].state = SW_WORKER_RUNNING;
        }
    assert_true(c->cap_waits < 200); /* pruned on the way */
    c->min_clock = 5;
    assert_int_equal(sw__ck_waiting_within(c, 2), 0);
    assert_int_equal(sw__ck_waiting_within(c, 1), UINT32_MAX); /* 2 ahead: not within 1 */
    sw_check_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_long_run_keeps_its_waits_few),
        cmocka_unit_test(a_standing_wait_survives_the_pruning),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
