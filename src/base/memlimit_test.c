/* The memory a process may hold: the least of the machine's and of its control groups' limits
 * (v2 and v1, its own group's and those above it), read from a made-up cgroup tree. */
#include "testutil/testutil.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "syncwise/memlimit.h"

#define GiB 1073741824.0

/* dir (under the scratch root, made with its parents) holding file with text. */
static void put(const char *dir, const char *file, const char *text)
{
    char path[1024], *p;
    snprintf(path, sizeof path, "%s/%s", sw_test_dir(), dir);
    for (p = path + strlen(sw_test_dir()) + 1; (p = strchr(p, '/')); *p++ = '/') {
        *p = '\0';
        mkdir(path, 0755);
    }
    mkdir(path, 0755);
    snprintf(path + strlen(path), sizeof path - strlen(path), "/%s", file);
    sw_test_write(path, text, strlen(text));
}

static double limit(const char *self)
{
    const char *proc = sw_test_path("self.cgroup");
    sw_test_write(proc, self, strlen(self));
    char root[600];
    snprintf(root, sizeof root, "%s/fs", sw_test_dir());
    return sw_memory_limit_in(proc, root, 24 * GiB);
}

static void no_groups_leave_the_machines_memory(void **state)
{
    (void)state;
    assert_true(limit("") == 24 * GiB);
    assert_true(sw_memory_limit_in("/nonexistent/cgroup", "/nonexistent", 3 * GiB) == 3 * GiB);
    assert_true(sw_memory_limit_in("/nonexistent/cgroup", "/nonexistent", 0) == 0);
}

static void a_v2_group_and_the_groups_above_it_bound(void **state)
{
    (void)state;
    put("fs/job", "memory.max", "4294967296\n");
    put("fs/job/step", "memory.max", "max\n");
    assert_true(limit("0::/job/step\n") == 4 * GiB); /* its parent's, as "max" bounds nothing */
    put("fs/job/step", "memory.max", "2147483648\n");
    assert_true(limit("0::/job/step\n") == 2 * GiB);
    put("fs/unified/job/step", "memory.max", "1073741824\n"); /* a hybrid tree's v2 part */
    assert_true(limit("0::/job/step\n") == 1 * GiB);
}

static void a_v1_memory_group_bounds_and_others_do_not(void **state)
{
    (void)state;
    put("fs/memory/box", "memory.limit_in_bytes", "536870912\n");
    put("fs/cpu/box", "memory.limit_in_bytes", "1024\n"); /* not the memory controller's */
    assert_true(limit("5:cpu,cpuacct:/box\n4:memory:/box\n0::/\n") == 0.5 * GiB);
    assert_true(limit("5:cpu,cpuacct:/box\n") == 24 * GiB);
    put("fs/memory/huge", "memory.limit_in_bytes", "9223372036854771712\n"); /* v1's none */
    assert_true(limit("4:blkio,memory:/huge\n") == 24 * GiB);
}

/* A container sees its own group as the root, and /proc names the host's path for it. */
static void a_group_the_namespace_hides_is_passed_over(void **state)
{
    (void)state;
    put("fs/memory", "memory.limit_in_bytes", "3221225472\n");
    assert_true(limit("4:memory:/docker/0123abcd\n") == 3 * GiB);
}

static void garbage_is_no_limit(void **state)
{
    (void)state;
    put("fs/odd", "memory.max", "lots\n");
    put("fs/zero", "memory.max", "0\n");
    assert_true(limit("0::/odd\n") == 24 * GiB);
    assert_true(limit("not a cgroup line\n::\n0:/\n") == 24 * GiB);
}

static void this_machines_limit_is_some_memory(void **state)
{
    (void)state;
    assert_true(sw_memory_limit() > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(no_groups_leave_the_machines_memory),
        cmocka_unit_test(a_v2_group_and_the_groups_above_it_bound),
        cmocka_unit_test(a_v1_memory_group_bounds_and_others_do_not),
        cmocka_unit_test(a_group_the_namespace_hides_is_passed_over),
        cmocka_unit_test(garbage_is_no_limit),
        cmocka_unit_test(this_machines_limit_is_some_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
