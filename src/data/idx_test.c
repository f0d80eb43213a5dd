/* IDX reader: valid files (plain and gzip) and every way a file can be broken. */
#include "testutil/testutil.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "syncwise/data.h"
#include "syncwise/err.h"

/* Builds an IDX image file of n images of r x c pixels with pixel value (i + j) % 256. */
static size_t make_images(uint8_t *buf, uint32_t n, uint32_t r, uint32_t c)
{
    uint8_t head[16] = {0, 0, 0x08, 3};
    uint32_t dims[3] = {n, r, c};
    for (int i = 0; i < 3; i++) {
        head[4 + 4 * i] = (uint8_t)(dims[i] >> 24);
        head[5 + 4 * i] = (uint8_t)(dims[i] >> 16);
        head[6 + 4 * i] = (uint8_t)(dims[i] >> 8);
        head[7 + 4 * i] = (uint8_t)dims[i];
    }
    memcpy(buf, head, 16);
    size_t total = (size_t)n * r * c;
    for (size_t i = 0; i < total; i++)
        buf[16 + i] = (uint8_t)(i % 256);
    return 16 + total;
}

static size_t make_labels(uint8_t *buf, uint32_t n, uint8_t max_label)
{
    uint8_t head[8] = {0, 0, 0x08, 1, (uint8_t)(n >> 24), (uint8_t)(n >> 16), (uint8_t)(n >> 8),
                       (uint8_t)n};
    memcpy(buf, head, 8);
    for (uint32_t i = 0; i < n; i++)
        buf[8 + i] = (uint8_t)(i % (max_label + 1u));
    return 8 + n;
}

static uint8_t img[16 + 5 * 4 * 3], lab[8 + 5];
static size_t img_n, lab_n;

static int setup(void **state)
{
    (void)state;
    img_n = make_images(img, 5, 4, 3);
    lab_n = make_labels(lab, 5, 9);
    return 0;
}

static void reads_plain_and_gzip(void **state)
{
    (void)state;
    const char *paths[][2] = {{"i.idx", "l.idx"}, {"i.idx.gz", "l.idx.gz"}};
    for (int k = 0; k < 2; k++) {
        const char *ip = sw_test_path(paths[k][0]), *lp = sw_test_path(paths[k][1]);
        if (k == 0) {
            sw_test_write(ip, img, img_n);
            sw_test_write(lp, lab, lab_n);
        } else {
            sw_test_write_gz(ip, img, img_n);
            sw_test_write_gz(lp, lab, lab_n);
        }
        sw_dataset *ds;
        char err[SW_ERR_LEN];
        assert_int_equal(sw_idx_read(&ds, ip, lp, 10, err), 0);
        assert_int_equal(ds->n, 5);
        assert_int_equal(ds->dim, 12);
        assert_int_equal(ds->shape[0], 4);
        assert_int_equal(ds->shape[1], 3);
        assert_int_equal(ds->shape[2], 1);
        for (size_t i = 0; i < 60; i++)
            assert_float_equal(ds->x[i], (float)(i % 256) / 255.0f, 1e-7);
        for (int i = 0; i < 5; i++)
            assert_int_equal(ds->label[i], i);
        sw_dataset_free(ds);
    }
}

/* Writes a corrupted copy of the image file and checks the error names file and problem. */
static void expect_image_error(uint8_t *bytes, size_t n, int code, const char *needle)
{
    const char *ip = sw_test_path("bad.idx"), *lp = sw_test_path("l.idx");
    sw_test_write(ip, bytes, n);
    sw_test_write(lp, lab, lab_n);
    sw_dataset *ds = (sw_dataset *)1;
    char err[SW_ERR_LEN] = "";
    assert_int_equal(sw_idx_read(&ds, ip, lp, 10, err), code);
    assert_null(ds);
    assert_non_null(strstr(err, "bad.idx"));
    if (!strstr(err, needle))
        fail_msg("message '%s' lacks '%s'", err, needle);
}

static void refuses_broken_images(void **state)
{
    (void)state;
    uint8_t b[sizeof img + 1];
    memcpy(b, img, img_n);
    expect_image_error(b, img_n - 1, SW_EFORMAT, "ends early"); /* truncated pixels */
    expect_image_error(b, 10, SW_EFORMAT, "ends early");        /* truncated header */
    expect_image_error(b, 0, SW_EFORMAT, "ends early");         /* empty file */
    b[img_n] = 7;
    expect_image_error(b, img_n + 1, SW_EFORMAT, "after the last"); /* trailing data */
    b[0] = 1;
    expect_image_error(b, img_n, SW_EFORMAT, "magic");
    b[0] = 0;
    b[2] = 0x0D;
    expect_image_error(b, img_n, SW_EFORMAT, "type");
    b[2] = 0x08;
    b[3] = 2;
    expect_image_error(b, img_n, SW_EFORMAT, "dimensions");
    b[3] = 3;
    b[7] = 0; /* zero images */
    expect_image_error(b, img_n, SW_EFORMAT, "zero");
    b[7] = 5;
    b[4] = 0x7f; /* about 2^31 images: larger than the file and than we allow */
    expect_image_error(b, img_n, SW_ERANGE, "too large");
}

/* A gzip file cut in its trailer (CRC-32 and size) held all the data, unchecked: refused for
 * each length cut, never read as whole. */
static void refuses_a_gzip_cut_in_its_trailer(void **state)
{
    (void)state;
    const char *whole = sw_test_path("whole.idx.gz"), *ip = sw_test_path("cut.idx.gz"),
               *lp = sw_test_path("l.idx");
    sw_test_write_gz(whole, img, img_n);
    sw_test_write(lp, lab, lab_n);
    static uint8_t gz[4096];
    FILE *f = fopen(whole, "rb");
    assert_non_null(f);
    size_t n = fread(gz, 1, sizeof gz, f);
    fclose(f);
    for (size_t cut = 1; cut <= 8; cut++) {
        sw_test_write(ip, gz, n - cut);
        sw_dataset *ds;
        char err[SW_ERR_LEN] = "";
        assert_int_equal(sw_idx_read(&ds, ip, lp, 10, err), SW_EFORMAT);
        if (!strstr(err, "cut.idx.gz") || !strstr(err, "before its checksum"))
            fail_msg("cut by %zu: '%s'", cut, err);
    }
}

static void refuses_broken_labels(void **state)
{
    (void)state;
    const char *ip = sw_test_path("i.idx"), *lp = sw_test_path("bad-labels.idx");
    sw_test_write(ip, img, img_n);
    sw_dataset *ds;
    char err[SW_ERR_LEN];
    uint8_t b[sizeof lab];
    memcpy(b, lab, lab_n);
    b[8 + 3] = 10; /* label out of range for 10 classes */
    sw_test_write(lp, b, lab_n);
    assert_int_equal(sw_idx_read(&ds, ip, lp, 10, err), SW_ERANGE);
    assert_non_null(strstr(err, "bad-labels.idx"));
    assert_non_null(strstr(err, "example 3"));
    uint8_t four[8 + 4];
    make_labels(four, 4, 9); /* 4 labels for 5 images */
    sw_test_write(lp, four, sizeof four);
    assert_int_equal(sw_idx_read(&ds, ip, lp, 10, err), SW_EMISMATCH);
    assert_int_equal(sw_idx_read(&ds, ip, sw_test_path("missing"), 10, err), SW_EIO);
    assert_non_null(strstr(err, "missing"));
    assert_int_equal(sw_idx_read(&ds, ip, lp, 1, err), SW_EINVAL);
}

static void garbage_gzip_is_an_error(void **state)
{
    (void)state;
    /* A gzip header followed by garbage: zlib reports a data error, not a crash. */
    uint8_t g[64] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3};
    for (int i = 10; i < 64; i++)
        g[i] = (uint8_t)(i * 37);
    expect_image_error(g, sizeof g, SW_EFORMAT, "bad.idx");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reads_plain_and_gzip),
        cmocka_unit_test(refuses_broken_images),
        cmocka_unit_test(refuses_a_gzip_cut_in_its_trailer),
        cmocka_unit_test(refuses_broken_labels),
        cmocka_unit_test(garbage_gzip_is_an_error),
    };
    return cmocka_run_group_tests(tests, setup, sw_test_teardown);
}
