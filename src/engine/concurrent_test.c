/* Concurrent applies: locked and atomic applies lose nothing under contention; hogwild never
 * invents an update (it can only lose some); one thread is exact in every mode. */
/* cmocka needs these first. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <pthread.h>
#include <stdlib.h>

#include "syncwise/concurrent.h"

enum { N = 64, PUSHES = 20000, THREADS = 4 };

/* Every push adds exactly 1 to each coordinate it names (val -1, lr 1): sums stay exact. */
static void *hammer(void *arg)
{
    sw_shared_params *p = arg;
    uint32_t idx[N];
    float val[N];
    for (int k = 0; k < N; k++) {
        idx[k] = (uint32_t)k;
        val[k] = -1.0f;
    }
    for (int i = 0; i < PUSHES; i++)
        sw_shared_apply_sparse(p, idx, val, N, 1.0f, 0);
    return NULL;
}

static double run(sw_apply_mode mode, int threads, float *out)
{
    sw_shared_params *p;
    assert_int_equal(sw_shared_new(&p, N, NULL, mode, NULL), 0);
    pthread_t th[THREADS];
    for (int t = 0; t < threads; t++)
        pthread_create(&th[t], NULL, hammer, p);
    for (int t = 0; t < threads; t++)
        pthread_join(th[t], NULL);
    sw_shared_read(p, out);
    sw_shared_free(p);
    double total = 0;
    for (int j = 0; j < N; j++)
        total += out[j];
    return total;
}

static void locked_and_atomic_lose_nothing(void **state)
{
    (void)state;
    float out[N];
    const double want = (double)N * PUSHES * THREADS;
    assert_true(run(SW_APPLY_LOCKED, THREADS, out) == want);
    assert_true(run(SW_APPLY_ATOMIC, THREADS, out) == want);
}

static void hogwild_only_loses(void **state)
{
    (void)state;
    float out[N];
    double got = run(SW_APPLY_HOGWILD, THREADS, out);
    assert_true(got <= (double)N * PUSHES * THREADS);
    for (int j = 0; j < N; j++)
        assert_true(out[j] >= PUSHES && out[j] == (float)(int)out[j]); /* whole updates only */
    assert_true(run(SW_APPLY_HOGWILD, 1, out) == (double)N * PUSHES);
}

static void modes_parse(void **state)
{
    (void)state;
    assert_int_equal(sw_apply_mode_parse("hogwild"), SW_APPLY_HOGWILD);
    assert_int_equal(sw_apply_mode_parse("locked"), SW_APPLY_LOCKED);
    assert_int_equal(sw_apply_mode_parse("lockless"), -1);
    assert_string_equal(sw_apply_mode_name(SW_APPLY_ATOMIC), "atomic");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(locked_and_atomic_lose_nothing),
        cmocka_unit_test(hogwild_only_loses),
        cmocka_unit_test(modes_parse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
