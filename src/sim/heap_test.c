/* The event heap: earliest first, ties in insertion order, against a sorted reference. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>

#include "sim/heap.h"
#include "syncwise/rng.h"

static void ties_pop_in_insertion_order(void **state)
{
    (void)state;
    sw__heap h;
    assert_int_equal(sw__heap_init(&h, 2), 0); /* small: forces growth */
    for (uint32_t i = 0; i < 10; i++)
        assert_int_equal(sw__heap_push(&h, (sw__sim_event){.t = i % 2 ? 1.0 : 2.0, .worker = i}), 0);
    uint32_t want[] = {1, 3, 5, 7, 9, 0, 2, 4, 6, 8};
    sw__sim_event ev;
    for (int i = 0; i < 10; i++) {
        assert_int_equal(sw__heap_pop(&h, &ev), 1);
        assert_int_equal(ev.worker, want[i]);
    }
    assert_int_equal(sw__heap_pop(&h, &ev), 0);
    sw__heap_free(&h);
}

static int by_time_then_seq(const void *a, const void *b)
{
    const sw__sim_event *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void matches_a_sorted_reference(void **state)
{
    (void)state;
    sw__heap h;
    assert_int_equal(sw__heap_init(&h, 1), 0);
    sw_rng r;
    sw_rng_seed(&r, 5, 5);
    enum { N = 5000 };
    static sw__sim_event ref[N];
    size_t n_ref = 0, popped = 0;
    for (int i = 0; i < N; i++) {
        /* Coarse times make many ties; interleave pops to exercise both directions. */
        sw__sim_event ev = {.t = (double)sw_rng_below(&r, 50), .worker = (uint32_t)i};
        ev.seq = (uint64_t)i;
        ref[n_ref++] = ev;
        assert_int_equal(sw__heap_push(&h, ev), 0);
    }
    qsort(ref, n_ref, sizeof *ref, by_time_then_seq);
    sw__sim_event ev;
    while (sw__heap_pop(&h, &ev)) {
        assert_true(ev.t == ref[popped].t);
        assert_int_equal(ev.worker, ref[popped].worker);
        popped++;
    }
    assert_int_equal(popped, N);
    sw__heap_free(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ties_pop_in_insertion_order),
        cmocka_unit_test(matches_a_sorted_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
