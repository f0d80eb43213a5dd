/* One engine event as one line of the JSONL event log (docs/log.md), shared by every driver. */
#include <stdio.h>

#include "syncwise/engine.h"

static const char *const names[] = {
    [SW_EV_PUSH] = "push",   [SW_EV_APPLY] = "apply", [SW_EV_DROP] = "drop",
    [SW_EV_RELEASE] = "release", [SW_EV_JOIN] = "join", [SW_EV_LEAVE] = "leave",
    [SW_EV_CRASH] = "crash", [SW_EV_SWITCH] = "switch", [SW_EV_EVAL] = "eval",
};

void sw_event_write_jsonl(FILE *f, const sw_event *ev)
{
    fprintf(f, "{\"t\":%.9g,\"ev\":\"%s\"", ev->t, names[ev->kind]);
    switch (ev->kind) {
    case SW_EV_PUSH:
        fprintf(f, ",\"w\":%u,\"step\":%llu,\"ver\":%llu,\"V\":%llu", ev->worker,
                (unsigned long long)ev->clock, (unsigned long long)ev->ver,
                (unsigned long long)ev->V);
        break;
    case SW_EV_DROP:
        fprintf(f, ",\"w\":%u,\"ver\":%llu,\"V\":%llu", ev->worker, (unsigned long long)ev->ver,
                (unsigned long long)ev->V);
        break;
    case SW_EV_APPLY:
        fprintf(f, ",\"V\":%llu,\"n\":%u", (unsigned long long)ev->V, ev->n);
        if (ev->lr_scale != 1.0f)
            fprintf(f, ",\"lr_scale\":%.6g", (double)ev->lr_scale);
        break;
    case SW_EV_RELEASE:
        fprintf(f, ",\"w\":%u,\"step\":%llu,\"V\":%llu", ev->worker,
                (unsigned long long)ev->clock, (unsigned long long)ev->V);
        if (ev->reason && ev->reason[0] == 'l')
            fprintf(f, ",\"why\":\"liveness\"");
        break;
    case SW_EV_JOIN:
    case SW_EV_LEAVE:
    case SW_EV_CRASH:
        fprintf(f, ",\"w\":%u,\"step\":%llu,\"V\":%llu", ev->worker,
                (unsigned long long)ev->clock, (unsigned long long)ev->V);
        break;
    case SW_EV_SWITCH:
        /* Policy specs hold no quotes or backslashes: the spec parser has no quoting. */
        fprintf(f, ",\"V\":%llu,\"policy\":\"%s\"", (unsigned long long)ev->V, ev->reason);
        break;
    case SW_EV_EVAL:
        fprintf(f, ",\"V\":%llu,\"loss\":%.6g,\"acc\":%.6g", (unsigned long long)ev->V, ev->loss,
                ev->accuracy);
        break;
    }
    fputs("}\n", f);
}

