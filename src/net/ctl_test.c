/* Where ctl may take the server's private operator socket for it: only for an endpoint on this
 * host, since the socket is found by the port alone. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "syncwise/net.h"

static void this_host_and_others(void **state)
{
    (void)state;
    const char *here[] = {"tcp://127.0.0.1:5555", "tcp://127.1.2.3:1", "tcp://localhost:5555",
                          "tcp://0.0.0.0:5555",   "tcp://*:5555",      "tcp://[::1]:5555",
                          "ipc:///tmp/x"};
    for (size_t i = 0; i < sizeof here / sizeof *here; i++)
        assert_true(sw_ctl_is_this_host(here[i]));
    /* Documentation addresses (RFC 5737) are nobody's interface. */
    const char *elsewhere[] = {"tcp://192.0.2.1:5555", "tcp://203.0.113.9:5555",
                               "tcp://127.0.0.1",      "tcp://:5555",
                               "inproc://x",           "tcp://[2001:db8::1]:5555"};
    for (size_t i = 0; i < sizeof elsewhere / sizeof *elsewhere; i++)
        assert_false(sw_ctl_is_this_host(elsewhere[i]));
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(this_host_and_others)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
