/* Where bench_net's two ends run (net_placement.h). */
#define _POSIX_C_SOURCE 200809L
#include "net_placement.h"

#include <stdio.h>
#include <stdlib.h>

#include "syncwise/cpus.h"
#include "syncwise/err.h"

static bool apart;
static char server_cpu[16], client_cpu[16];
static char all[256]; /* every CPU the process may use, for going back to shared */
static char said[320];

static void pin(const char *list)
{
    char err[SW_ERR_LEN];
    if (sw_cpus_pin_thread(list, err) < 0) {
        fprintf(stderr, "bench_net: %s\n", err);
        exit(1);
    }
}

bool sw_bench_place_apart(bool want)
{
    if (!all[0]) { /* before any pin: what the process was given */
        sw_cpus_allowed(all, sizeof all);
        snprintf(server_cpu, sizeof server_cpu, "%d", sw_cpus_allowed_nth(0));
        snprintf(client_cpu, sizeof client_cpu, "%d", sw_cpus_allowed_nth(1));
    }
    apart = want && client_cpu[0] != '-';
    pin(apart ? client_cpu : all);
    if (apart)
        snprintf(said, sizeof said, "apart: the serving side on CPU %s, the client on CPU %s",
                 server_cpu, client_cpu);
    else
        snprintf(said, sizeof said, "shared: every thread on any of CPUs %s", all);
    return apart == want;
}

void sw_bench_place_server(void)
{
    if (apart)
        pin(server_cpu);
}

const char *sw_bench_placement(void)
{
    return said;
}
