/* The whole-file writers (syncwise/file.h): a private file is 0600 from its making and never
 * written over one that is there; the shared writer replaces; neither leaves a temporary. */
#include "testutil/testutil.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "syncwise/err.h"
#include "syncwise/file.h"

/* The file's bytes as text (at most 255), or "" when it cannot be read. */
static const char *text_of(const char *path)
{
    static char text[256];
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
    if (f)
        fclose(f);
    text[n] = '\0';
    return text;
}

static void a_private_file_is_new_and_its_owners(void **state)
{
    (void)state;
    char err[SW_ERR_LEN];
    const char *path = sw_test_path("secret.key");
    assert_int_equal(sw_file_write_private(path, (const uint8_t *)"one\n", 4, "key", err), 0);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    assert_int_equal(sw_file_write_private(path, (const uint8_t *)"two\n", 4, "key", err),
                     SW_ESTATE);
    assert_string_equal(text_of(path), "one\n"); /* the secret there is kept */
    assert_int_equal(sw_test_dir_entries(), 1);        /* and no temporary is left */
    unlink(path);
}

static void the_shared_writer_replaces(void **state)
{
    (void)state;
    char err[SW_ERR_LEN];
    const char *path = sw_test_path("table.csv");
    assert_int_equal(sw_file_write_atomic(path, (const uint8_t *)"one\n", 4, "table", err), 0);
    assert_int_equal(sw_file_write_atomic(path, (const uint8_t *)"two\n", 4, "table", err), 0);
    assert_string_equal(text_of(path), "two\n");
    assert_int_equal(sw_test_dir_entries(), 1);
    unlink(path);
}

/* A claimed file's name must leave room for the longest suffix its saves add
 * (NAME.model.tmp.PID under the largest pid), whatever this process's pid: one that failed at a
 * save, at a sharded run's very end, is refused before anything runs. The name that counts is
 * the file's own, where a link leads. */
static void claim_of(const char *path, int want, const char *said)
{
    char err[SW_ERR_LEN], lock[4200];
    int fd = -1;
    assert_int_equal(sw_file_claim(path, "--out", &fd, err), want);
    if (said)
        assert_non_null(strstr(err, said));
    sw_file_release(fd);
    snprintf(lock, sizeof lock, "%s.lock", path);
    unlink(lock);
}

static void a_name_leaves_room_for_its_saves(void **state)
{
    (void)state;
    char name[256], target[256];
    for (size_t len = 236; len <= 240; len++) {
        memset(name, 'c', len);
        name[len] = '\0';
        claim_of(sw_test_path(name), len <= 237 ? 0 : SW_EINVAL,
                 len <= 237 ? NULL : "give one of at most 237");
    }
    memset(target, 't', 246); /* a short link to a long name: the long one is written */
    target[246] = '\0';
    char link_path[800];
    snprintf(link_path, sizeof link_path, "%s", sw_test_path("short"));
    assert_int_equal(symlink(sw_test_path(target), link_path), 0);
    claim_of(link_path, SW_EINVAL, "a name of 246 bytes (the file it links to)");
    unlink(link_path);
    memset(name, 'l', 240); /* a long link to a short name: the short one is written */
    name[240] = '\0';
    snprintf(link_path, sizeof link_path, "%s", sw_test_path(name));
    assert_int_equal(symlink(sw_test_path("t"), link_path), 0);
    claim_of(link_path, 0, NULL);
    unlink(link_path);
    unlink(sw_test_path("t.lock"));
    assert_int_equal(sw_test_dir_entries(), 0); /* the trials' temporaries went again */
}

/* The checkpoint before kept as FILE.prev while FILE stays: a save that then fails leaves
 * both whole; nothing to keep is no failure; no temporary is left. */
static void the_one_before_is_kept_beside(void **state)
{
    (void)state;
    char err[SW_ERR_LEN], prev[4096];
    const char *path = sw_test_path("slice.ckpt");
    snprintf(prev, sizeof prev, "%s.prev", path);
    assert_int_equal(sw_file_keep_as(path, prev), 0); /* no FILE yet */
    assert_int_equal(access(prev, F_OK), -1);
    assert_int_equal(sw_file_write_atomic(path, (const uint8_t *)"one\n", 4, "slice", err), 0);
    assert_int_equal(sw_file_keep_as(path, prev), 1);
    assert_string_equal(text_of(path), "one\n"); /* FILE stays ... */
    assert_string_equal(text_of(prev), "one\n"); /* ... and FILE.prev holds it too */
    assert_int_equal(sw_file_write_atomic(path, (const uint8_t *)"two\n", 4, "slice", err), 0);
    assert_string_equal(text_of(prev), "one\n"); /* a save replaces FILE alone */
    assert_int_equal(sw_file_keep_as(path, prev), 1);
    assert_string_equal(text_of(prev), "two\n");
    assert_int_equal(sw_test_dir_entries(), 2);
    unlink(path);
    unlink(prev);
}

/* A save through the link writes the file it names, and the link stays a link. */
static void expect_saved_through(const char *link_path, const char *path, const char *text)
{
    char err[SW_ERR_LEN];
    assert_int_equal(sw_file_write_atomic(link_path, (const uint8_t *)text, strlen(text), "ckpt",
                                          err), 0);
    assert_string_equal(text_of(path), text);
    struct stat st;
    assert_int_equal(lstat(link_path, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
}

/* The link, the file it names and the file's lock, removed. */
static void remove_linked(const char *link_path, const char *path)
{
    char lock[4096];
    snprintf(lock, sizeof lock, "%s.lock", path);
    unlink(lock);
    unlink(link_path);
    unlink(path);
}

/* A claim reached through a symbolic link (to the file, or to its directory) meets the claim
 * on the file itself: two processes never save one checkpoint in turns. */
static void a_link_meets_the_claim(void **state)
{
    (void)state;
    char err[SW_ERR_LEN], path[2048], link_path[2048], dir_link[2048], via_dir[4096];
    snprintf(path, sizeof path, "%s", sw_test_path("run.ckpt"));
    snprintf(link_path, sizeof link_path, "%s", sw_test_path("link.ckpt"));
    snprintf(dir_link, sizeof dir_link, "%s", sw_test_path("dirlink"));
    assert_int_equal(sw_file_write_atomic(path, (const uint8_t *)"one\n", 4, "ckpt", err), 0);
    assert_int_equal(symlink(path, link_path), 0);
    char dir[2048];
    snprintf(dir, sizeof dir, "%s", path);
    *strrchr(dir, '/') = '\0';
    assert_int_equal(symlink(dir, dir_link), 0);
    snprintf(via_dir, sizeof via_dir, "%s/run.ckpt", dir_link);
    int held, other = -1;
    assert_int_equal(sw_file_claim(path, "--checkpoint", &held, err), 0);
    assert_int_equal(sw_file_claim(link_path, "--checkpoint", &other, err), SW_ESTATE);
    assert_non_null(strstr(err, "another process writes it already"));
    assert_int_equal(sw_file_claim(via_dir, "--checkpoint", &other, err), SW_ESTATE);
    sw_file_release(held);
    assert_int_equal(sw_file_claim(link_path, "--checkpoint", &other, err), 0);
    sw_file_release(other);
    expect_saved_through(link_path, path, "two\n");
    unlink(dir_link);
    remove_linked(link_path, path);
}

/* A link made before the first save (to a big disk, say) names a file that is not there yet:
 * its claim meets the claim on the file all the same, and a save through it makes the file
 * where it points, the link kept. */
static void a_link_to_no_file_yet(void **state)
{
    (void)state;
    char err[SW_ERR_LEN], path[2048], link_path[2048];
    snprintf(path, sizeof path, "%s", sw_test_path("later.ckpt"));
    snprintf(link_path, sizeof link_path, "%s", sw_test_path("early-link.ckpt"));
    assert_int_equal(symlink("later.ckpt", link_path), 0); /* relative, as ln -s makes it */
    int held, other = -1;
    assert_int_equal(sw_file_claim(path, "--out", &held, err), 0);
    assert_int_equal(sw_file_claim(link_path, "--out", &other, err), SW_ESTATE);
    sw_file_release(held);
    expect_saved_through(link_path, path, "one\n");
    remove_linked(link_path, path);
}

/* A shard killed between its rotation and its save, through a link: the link names nothing,
 * FILE.prev beside the file it names holds the only copy, and a resume goes on from it. */
static void a_resume_through_a_link_finds_the_prev(void **state)
{
    (void)state;
    char err[SW_ERR_LEN], path[2048], link_path[2048], prev[4096], lock[4096];
    snprintf(path, sizeof path, "%s", sw_test_path("slice.ckpt"));
    snprintf(link_path, sizeof link_path, "%s", sw_test_path("slice-link.ckpt"));
    snprintf(prev, sizeof prev, "%s.prev", path);
    snprintf(lock, sizeof lock, "%s.lock", path);
    assert_int_equal(symlink(path, link_path), 0);
    assert_int_equal(sw_file_write_atomic(prev, (const uint8_t *)"old\n", 4, "ckpt", err), 0);
    int fd;
    bool resume = true, made;
    assert_int_equal(sw_file_claim_checkpoint(link_path, "shard", &resume, &fd, &made, err), 0);
    sw_file_note_saved(fd);
    sw_file_release(fd);
    assert_true(resume); /* neither refused nor started afresh */
    assert_int_equal(sw_file_claim_checkpoint(link_path, "shard", &resume, &fd, &made, err), 0);
    assert_true(resume);
    sw_file_release(fd);
    unlink(lock);
    unlink(prev);
    unlink(link_path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_private_file_is_new_and_its_owners),
        cmocka_unit_test(the_shared_writer_replaces),
        cmocka_unit_test(the_one_before_is_kept_beside),
        cmocka_unit_test(a_name_leaves_room_for_its_saves),
        cmocka_unit_test(a_link_meets_the_claim),
        cmocka_unit_test(a_link_to_no_file_yet),
        cmocka_unit_test(a_resume_through_a_link_finds_the_prev),
    };
    return cmocka_run_group_tests(tests, NULL, sw_test_teardown);
}
