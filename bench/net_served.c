/* A real server for bench_net's parts (net_served.h). */
#define _POSIX_C_SOURCE 200809L
#include "net_served.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

sw_server_params sw_bench_server_params(size_t params, char *data, size_t cap, const char *epfile,
                                        const char *policy, sw_stop_flag *stop)
{
    snprintf(data, cap, "synthetic:task=lsq,d=%zu,n=32,test=8,val=8", params - 1);
    sw_server_params p = sw_server_default_params();
    p.bind = "tcp://127.0.0.1:*";
    p.endpoint_file = epfile;
    p.policy = policy;
    p.model = "softmax";
    p.data = data;
    p.eval_every_s = 1e9;
    p.checkpoint_applies = 0;
    p.checkpoint_s = 0;
    p.heartbeat_timeout_s = 1e6;
    p.stop = stop;
    return p;
}

void sw_bench_endpoint_file(char *path, size_t cap)
{
    static unsigned made;
    snprintf(path, cap, "/tmp/swnb.%d.%u", (int)getpid(), made++);
    unlink(path);
}

void sw_bench_await_endpoint(const char *file, char *ep, size_t len, const char *who,
                             const char *err)
{
    for (int i = 0; i < 6000; i++) { /* a minute: one built with sanitizers starts slowly */
        FILE *f = fopen(file, "r");
        if (f && fgets(ep, (int)len, f)) {
            ep[strcspn(ep, "\n")] = '\0';
            fclose(f);
            return;
        }
        if (f)
            fclose(f);
        nanosleep(&(struct timespec){.tv_nsec = 10000000}, NULL);
    }
    fprintf(stderr, "the %s did not start: %s\n", who, err);
    exit(1);
}
