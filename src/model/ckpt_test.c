/* Checkpoints: round trip, and refusal of every kind of damaged or mismatched file. */
#include "testutil/testutil.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>

#include "syncwise/bytes.h"
#include "syncwise/ckpt.h"
#include "syncwise/err.h"

/* A small valid checkpoint of mlp:h=1,u=3 on 4 features and 2 classes: 4*3+3 + 3*2+2 = 23. */
static sw_ckpt sample(float *params)
{
    sw_ckpt c = {.desc = {.spec = "mlp:h=1,u=3", .in_shape = {1, 1, 4},
                          .objective = SW_CLASSIFY, .n_classes = 2},
                 .model_version = 1234567890123ULL, .seed = 99, .n_params = 23,
                 .params = params, .data_spec = "synthetic:task=logistic,d=4",
                 .note = "policy=ssp:s=3\nstarted=1"};
    for (int i = 0; i < 23; i++)
        params[i] = (float)i * 0.25f - 2.0f;
    params[5] = -0.0f;
    params[6] = 1e-38f; /* a denormal survives */
    return c;
}

static uint8_t *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static uint8_t buf[4096];
    *n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    return buf;
}

static void round_trip_is_exact(void **state)
{
    (void)state;
    float params[23];
    sw_ckpt c = sample(params), back;
    const char *path = sw_test_path("m.ckpt");
    char err[SW_ERR_LEN];
    assert_int_equal(sw_ckpt_save(path, &c, err), 0);
    assert_int_equal(sw_ckpt_load(path, &back, err), 0);
    assert_string_equal(back.desc.spec, c.desc.spec);
    assert_memory_equal(back.desc.in_shape, c.desc.in_shape, sizeof c.desc.in_shape);
    assert_int_equal(back.desc.objective, c.desc.objective);
    assert_int_equal(back.desc.n_classes, 2);
    assert_true(back.model_version == c.model_version);
    assert_true(back.seed == 99);
    assert_string_equal(back.data_spec, c.data_spec);
    assert_string_equal(back.note, c.note);
    assert_int_equal(back.n_params, 23);
    assert_memory_equal(back.params, params, sizeof params); /* bit for bit, -0 included */
    sw_ckpt_free(&back);
    /* Saving over an existing file replaces it and leaves no temporary file behind. */
    params[0] = 42;
    assert_int_equal(sw_ckpt_save(path, &c, err), 0);
    assert_int_equal(sw_ckpt_load(path, &back, err), 0);
    assert_float_equal(back.params[0], 42, 0);
    sw_ckpt_free(&back);
    assert_int_equal(sw_test_dir_entries(), 1);
    unlink(path);
}

/* A shard keeps its run's configuration as the note, a chunk table of up to SW_SHARDS_MAX shards
 * in it: the longest note a checkpoint holds is saved and read back whole. */
static void the_longest_note_round_trips(void **state)
{
    (void)state;
    float params[23];
    sw_ckpt c = sample(params), back;
    memset(c.note, 'x', sizeof c.note - 1);
    c.note[sizeof c.note - 1] = '\0';
    const char *path = sw_test_path("note.ckpt");
    char err[SW_ERR_LEN];
    assert_int_equal(sw_ckpt_save(path, &c, err), 0);
    assert_int_equal(sw_ckpt_load(path, &back, err), 0);
    assert_string_equal(back.note, c.note);
    sw_ckpt_free(&back);
    unlink(path);
}

static void expect_refused(const uint8_t *bytes, size_t n, int code, const char *needle)
{
    const char *path = sw_test_path("bad.ckpt");
    sw_test_write(path, bytes, n);
    sw_ckpt c;
    char err[SW_ERR_LEN] = "";
    assert_int_equal(sw_ckpt_load(path, &c, err), code);
    assert_null(c.params);
    assert_non_null(strstr(err, "bad.ckpt"));
    if (!strstr(err, needle))
        fail_msg("message '%s' lacks '%s'", err, needle);
}

/* Rewrites the trailing checksum so that a deliberate change is judged on its content. */
static void reseal(uint8_t *b, size_t n) { sw_put_u32(b + n - 4, sw_crc32(0, b, n - 4)); }

static void damaged_files_are_refused(void **state)
{
    (void)state;
    float params[23];
    sw_ckpt c = sample(params);
    const char *path = sw_test_path("good.ckpt");
    assert_int_equal(sw_ckpt_save(path, &c, NULL), 0);
    size_t n;
    uint8_t good[4096], b[4096];
    memcpy(good, slurp(path, &n), sizeof good);
    unlink(path);

    for (size_t i = 0; i < n; i += 7) { /* any flipped byte is caught */
        memcpy(b, good, n);
        b[i] ^= 0x10;
        const char *path2 = sw_test_path("bad.ckpt");
        sw_test_write(path2, b, n);
        sw_ckpt d;
        assert_true(sw_ckpt_load(path2, &d, NULL) < 0);
    }
    memcpy(b, good, n);
    b[n - 20] ^= 1;
    expect_refused(b, n, SW_ECHECKSUM, "checksum");
    expect_refused(good, n - 1, SW_ECHECKSUM, "checksum");  /* truncated */
    expect_refused(good, 10, SW_EFORMAT, "not a syncwise"); /* very short */
    expect_refused(good, 0, SW_EFORMAT, "not a syncwise");
    memcpy(b, good, n);
    b[0] = 'X';
    expect_refused(b, n, SW_EFORMAT, "magic");
    memcpy(b, good, n);
    sw_put_u32(b + 4, 3);
    reseal(b, n);
    expect_refused(b, n, SW_EVERSION, "version 3");
    memcpy(b, good, n);
    sw_put_u64(b + 44, 24); /* claims one more parameter than the file holds */
    reseal(b, n);
    expect_refused(b, n, SW_EFORMAT, "file size");
    memcpy(b, good, n);
    sw_put_u32(b + 52, 500); /* spec length beyond the limit */
    reseal(b, n);
    expect_refused(b, n, SW_EFORMAT, "model spec length");
    memcpy(b, good, n);
    sw_put_u64(b + 28, SW_CKPT_MAX_VERSION + 1); /* a version no run reaches (2^64 - 1 wrapped) */
    reseal(b, n);
    expect_refused(b, n, SW_EFORMAT, "over 2^53");
    sw_put_u64(b + 28, SW_CKPT_MAX_VERSION); /* the last a log can write */
    reseal(b, n);
    const char *edge = sw_test_path("edge.ckpt");
    sw_test_write(edge, b, n);
    sw_ckpt d;
    assert_int_equal(sw_ckpt_load(edge, &d, NULL), 0);
    assert_true(d.model_version == SW_CKPT_MAX_VERSION);
    sw_ckpt_free(&d);
}

/* Momentum's state comes back bit for bit; a version-1 file (no optimizer section) still reads,
 * as plain SGD's; a damaged optimizer section is refused. */
static void optimizer_state_round_trips(void **state)
{
    (void)state;
    float params[23], mom[46];
    sw_ckpt c = sample(params), back;
    for (int i = 0; i < 46; i++)
        mom[i] = (float)i / 7.0f - 3.0f;
    snprintf(c.optimizer, sizeof c.optimizer, "adam:beta1=0.9,beta2=0.999,eps=1e-08");
    c.optim_steps = 777;
    c.optim_arrays = 2;
    c.optim_state = mom;
    const char *path = sw_test_path("o.ckpt");
    char err[SW_ERR_LEN];
    assert_int_equal(sw_ckpt_save(path, &c, err), 0);
    assert_int_equal(sw_ckpt_load(path, &back, err), 0);
    assert_string_equal(back.optimizer, c.optimizer);
    assert_true(back.optim_steps == 777);
    assert_int_equal(back.optim_arrays, 2);
    assert_memory_equal(back.optim_state, mom, sizeof mom);
    sw_ckpt_free(&back);
    size_t n;
    uint8_t good[4096], b[4096];
    memcpy(good, slurp(path, &n), sizeof good);
    size_t state_at = n - 4 - sizeof mom;
    memcpy(b, good, n);
    sw_put_u32(b + state_at - 4, 1); /* one array where adam keeps two */
    reseal(b, n);
    expect_refused(b, n, SW_EFORMAT, "state arrays");
    memcpy(b, good, n);
    sw_put_f32(b + state_at + 8, NAN);
    reseal(b, n);
    expect_refused(b, n, SW_EFORMAT, "not finite");
    expect_refused(good, n - 8, SW_ECHECKSUM, "checksum");
    memcpy(b, good, n - 8);
    reseal(b, n - 8);
    expect_refused(b, n - 8, SW_EFORMAT, "file size");

    /* plain SGD: an empty optimizer section (4 + 8 + 4 bytes) that version 1 did not have */
    c = sample(params);
    assert_int_equal(sw_ckpt_save(path, &c, err), 0);
    memcpy(good, slurp(path, &n), sizeof good);
    size_t v1 = n - 16;
    memcpy(b, good, v1 - 4);
    sw_put_u32(b + 4, 1);
    reseal(b, v1);
    sw_test_write(path, b, v1);
    assert_int_equal(sw_ckpt_load(path, &back, err), 0);
    assert_memory_equal(back.params, params, sizeof params);
    assert_string_equal(back.optimizer, "");
    assert_int_equal(back.optim_arrays, 0);
    assert_null(back.optim_state);
    sw_ckpt_free(&back);
    unlink(path);
}

/* An optimizer goes into a checkpoint and comes back the same; another optimizer's state is
 * not taken. */
static void optimizer_put_and_take(void **state)
{
    (void)state;
    float params[23];
    sw_ckpt c = sample(params), back;
    sw_optim_params p;
    sw_optim o, again = {0};
    char err[SW_ERR_LEN];
    assert_int_equal(sw_optim_parse(&p, "sgd:momentum=0.9", err), 0);
    assert_int_equal(sw_optim_init(&o, &p, 23, err), 0);
    for (int i = 0; i < 23; i++)
        o.m[i] = (float)i - 11.5f;
    o.steps = 42;
    assert_int_equal(sw_ckpt_put_optim(&c, &o, err), 0);
    const char *path = sw_test_path("p.ckpt");
    assert_int_equal(sw_ckpt_save(path, &c, err), 0);
    free(c.optim_state);
    assert_int_equal(sw_ckpt_load(path, &back, err), 0);
    assert_int_equal(sw_ckpt_take_optim(&back, &p, &again, err), 0);
    assert_memory_equal(again.m, o.m, 23 * sizeof *o.m);
    assert_true(again.steps == 42);
    sw_optim_free(&again);
    sw_optim_params adam;
    assert_int_equal(sw_optim_parse(&adam, "adam", err), 0);
    assert_int_equal(sw_ckpt_take_optim(&back, &adam, &again, err), 1);
    assert_null(again.m);
    sw_ckpt_free(&back);
    sw_optim_free(&o);
    unlink(path);
}

static void mismatched_architecture_is_refused(void **state)
{
    (void)state;
    float params[23];
    sw_ckpt c = sample(params);
    char err[SW_ERR_LEN];
    strcpy(c.desc.spec, "mlp:h=1,u=4"); /* needs 30 parameters, 23 stored */
    const char *path = sw_test_path("mismatch.ckpt");
    assert_int_equal(sw_ckpt_save(path, &c, err), 0);
    sw_ckpt d;
    assert_int_equal(sw_ckpt_load(path, &d, err), SW_EMISMATCH);
    assert_non_null(strstr(err, "23 parameters"));
    strcpy(c.desc.spec, "transformer");
    assert_int_equal(sw_ckpt_save(path, &c, err), 0);
    assert_int_equal(sw_ckpt_load(path, &d, err), SW_EMISMATCH);
    assert_non_null(strstr(err, "transformer"));
    /* A NaN written by hand (the writer refuses one) is refused by the loader. */
    c = sample(params);
    params[3] = 12345.0f; /* a value to find in the file */
    assert_int_equal(sw_ckpt_save(path, &c, err), 0);
    size_t n;
    uint8_t *b = slurp(path, &n);
    uint8_t mark[4], nan[4];
    sw_put_f32(mark, 12345.0f);
    sw_put_f32(nan, NAN);
    size_t at = 0;
    while (at + 4 <= n && memcmp(b + at, mark, 4) != 0)
        at++;
    assert_true(at + 4 <= n);
    memcpy(b + at, nan, 4);
    reseal(b, n);
    expect_refused(b, n, SW_EFORMAT, "parameter 3 is not finite");
    unlink(path);
}

/* A sparse linear model: dim features, a weight each and a bias. */
static void sparse_models_round_trip_and_are_checked(void **state)
{
    (void)state;
    float params[11];
    for (int i = 0; i < 11; i++)
        params[i] = (float)i - 5.5f;
    sw_ckpt c = {.desc = {.spec = "svm:lambda=0.0001", .in_shape = {10, 1, 1},
                          .objective = SW_CLASSIFY, .n_classes = 2},
                 .model_version = 77, .n_params = 11, .params = params,
                 .data_spec = "sparse:n=100,dim=10"};
    const char *path = sw_test_path("sparse.ckpt");
    char err[SW_ERR_LEN];
    sw_ckpt back;
    assert_int_equal(sw_ckpt_save(path, &c, err), 0);
    assert_int_equal(sw_ckpt_load(path, &back, err), 0);
    assert_string_equal(back.desc.spec, "svm:lambda=0.0001");
    assert_int_equal(back.desc.in_shape[0], 10);
    assert_memory_equal(back.params, params, sizeof params);
    sw_ckpt_free(&back);
    c.desc.in_shape[0] = 12; /* 13 parameters needed, 11 stored */
    assert_int_equal(sw_ckpt_save(path, &c, err), 0);
    assert_int_equal(sw_ckpt_load(path, &back, err), SW_EMISMATCH);
    assert_non_null(strstr(err, "11 parameters"));
    c.desc.in_shape[0] = 10;
    c.desc.n_classes = 3; /* a linear model separates two classes */
    assert_int_equal(sw_ckpt_save(path, &c, err), 0);
    assert_int_equal(sw_ckpt_load(path, &back, err), SW_EMISMATCH);
    assert_non_null(strstr(err, "binary classifier"));
    c.desc.n_classes = 2;
    strcpy(c.desc.spec, "svm:lambda=-1");
    assert_int_equal(sw_ckpt_save(path, &c, err), 0);
    assert_int_equal(sw_ckpt_load(path, &back, err), SW_EMISMATCH);
    assert_non_null(strstr(err, "not valid"));
    unlink(path);
}

/* Parameters that overflowed are never saved over a good file: the writer refuses them, naming
 * the first, and the file keeps the last finite save (which the loader still reads). */
static void diverged_parameters_are_not_saved(void **state)
{
    (void)state;
    float params[23];
    sw_ckpt c = sample(params), back;
    const char *path = sw_test_path("d.ckpt");
    char err[SW_ERR_LEN];
    assert_int_equal(sw_ckpt_save(path, &c, err), 0);
    params[7] = -INFINITY;
    params[9] = NAN;
    assert_int_equal(sw_ckpt_save(path, &c, err), SW_ERANGE);
    assert_non_null(strstr(err, "parameter 7 is not finite"));
    assert_int_equal(sw_ckpt_load(path, &back, err), 0);
    assert_float_equal(back.params[7], 7 * 0.25f - 2.0f, 0);
    sw_ckpt_free(&back);
    unlink(path);
}

static void unwritable_place_is_an_error(void **state)
{
    (void)state;
    float params[23];
    sw_ckpt c = sample(params);
    char err[SW_ERR_LEN];
    assert_int_equal(sw_ckpt_save("/nonexistent-dir/m.ckpt", &c, err), SW_EIO);
    assert_non_null(strstr(err, "/nonexistent-dir"));
    sw_ckpt d;
    assert_int_equal(sw_ckpt_load("/nonexistent-dir/m.ckpt", &d, err), SW_EIO);
}

/* What a writer killed mid-write left (PATH.tmp.PID of a process that is gone) is removed by the
 * next save; a live writer's file is left alone. Something not a regular file is refused at
 * once, not waited on. */
static void stale_temporaries_go_and_fifos_are_refused(void **state)
{
    (void)state;
    float params[23];
    sw_ckpt c = sample(params);
    const char *path = sw_test_path("s.ckpt");
    char dead[700], alive[700], err[SW_ERR_LEN];
    snprintf(dead, sizeof dead, "%s.tmp.2147483646", path); /* above any pid_max */
    snprintf(alive, sizeof alive, "%s.tmp.%ld", path, (long)getppid());
    sw_test_write_text(dead, "half a checkpoint");
    sw_test_write_text(alive, "another writer's work");
    assert_int_equal(sw_ckpt_save(path, &c, err), 0);
    assert_int_equal(access(dead, F_OK), -1);
    assert_int_equal(access(alive, F_OK), 0);
    unlink(alive);
    unlink(path);
    const char *fifo = sw_test_path("fifo.ckpt");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    sw_ckpt back;
    assert_int_equal(sw_ckpt_load(fifo, &back, err), SW_EIO);
    assert_non_null(strstr(err, "not a regular file"));
    unlink(fifo);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(round_trip_is_exact),
        cmocka_unit_test(the_longest_note_round_trips),
        cmocka_unit_test(damaged_files_are_refused),
        cmocka_unit_test(optimizer_state_round_trips),
        cmocka_unit_test(optimizer_put_and_take),
        cmocka_unit_test(mismatched_architecture_is_refused),
        cmocka_unit_test(sparse_models_round_trip_and_are_checked),
        cmocka_unit_test(diverged_parameters_are_not_saved),
        cmocka_unit_test(unwritable_place_is_an_error),
        cmocka_unit_test(stale_temporaries_go_and_fifos_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, sw_test_teardown);
}
