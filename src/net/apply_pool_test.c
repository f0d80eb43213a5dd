/* The server's apply threads: a drain waits for every job handed over, so that θ read after it
 * holds every apply the engine decided (what a checkpoint labelled with the engine's version
 * must hold). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h> /* after what it needs */

#include "apply_pool.h"
#include "syncwise/err.h"
#include "syncwise/proto.h"

#define N (1 << 20) /* 4 MB a gradient: a job takes long enough to be caught unfinished */
#define PUSHES 48

/* A checked PUSH frame of N ones, as the server hands one to the pool. */
static sw_frame *push_of_ones(void)
{
    float *ones = malloc(N * sizeof *ones);
    assert_non_null(ones);
    for (size_t i = 0; i < N; i++)
        ones[i] = 1.0f;
    sw_msg m = {.type = SW_MSG_PUSH, .payload_len = N * sizeof(float)};
    sw_frame *f = sw_frame_new(sw_msg_size(m.payload_len));
    assert_non_null(f);
    sw_msg_encode_floats(&m, ones, sw_frame_data(f));
    free(ones);
    return f;
}

static void a_drain_waits_for_every_job_handed_over(void **state)
{
    (void)state;
    sw_engine_params p = sw_engine_default_params();
    p.n_params = N;
    p.lr = 0.5f;
    p.max_workers = 1;
    p.policy = "asp";
    p.concurrent = true;
    sw_engine *e;
    char err[SW_ERR_LEN];
    sw_engine_result r;
    assert_int_equal(sw_engine_new(&e, &p, err), 0);
    assert_int_equal(sw_engine_join(e, 0, 0, &r), 0);
    sw__apply_pool pool;
    assert_int_equal(sw__pool_start(&pool, e, N, 2, err), 0);
    sw_frame *f = push_of_ones();
    for (int k = 0; k < PUSHES; k++) {
        assert_int_equal(sw_engine_push(e, 0, NULL, sw_engine_version(e), k + 1.0, &r), 0);
        assert_true(r.has_job);
        sw__pool_run(&pool, f, &r.job);
    }
    sw__pool_drain(&pool);
    float *theta = malloc(N * sizeof *theta);
    assert_non_null(theta);
    sw_engine_read_params(e, theta);
    for (size_t i = 0; i < N; i += 4093) /* every apply is in: 48 steps of 0.5 from 0 */
        assert_true(theta[i] == -0.5f * PUSHES);
    free(theta);
    sw_frame_unref(f);
    sw__pool_stop(&pool);
    sw_engine_free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_drain_waits_for_every_job_handed_over),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
