/* One engine event as one line of the JSONL event log (docs/log.md), shared by every driver, and
 * the same line read back into an event. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "syncwise/engine.h"
#include "syncwise/err.h"
#include "syncwise/logread.h"

static const char *const names[] = {
    [SW_EV_PUSH] = "push",       [SW_EV_APPLY] = "apply", [SW_EV_DROP] = "drop",
    [SW_EV_RELEASE] = "release", [SW_EV_JOIN] = "join",   [SW_EV_LEAVE] = "leave",
    [SW_EV_CRASH] = "crash",     [SW_EV_SWITCH] = "switch", [SW_EV_EVAL] = "eval",
    [SW_EV_GRANT] = "grant",     [SW_EV_WAKE] = "wake",   [SW_EV_TICK] = "tick",
    [SW_EV_RESTORE] = "restore",
};
#define N_KINDS (sizeof names / sizeof names[0])

/* The fields each kind carries besides "t" and "ev", in the order they are written. */
enum { F_W = 1 << 0, F_STEP = 1 << 1, F_VER = 1 << 2, F_N = 1 << 3 };
static const unsigned fields[N_KINDS] = {
    [SW_EV_PUSH] = F_W | F_STEP | F_VER, [SW_EV_APPLY] = F_N,  [SW_EV_DROP] = F_W | F_VER,
    [SW_EV_RELEASE] = F_W | F_STEP,      [SW_EV_JOIN] = F_W | F_STEP,
    [SW_EV_LEAVE] = F_W | F_STEP,        [SW_EV_CRASH] = F_W | F_STEP,
    [SW_EV_GRANT] = F_W | F_N,           [SW_EV_RESTORE] = F_VER | F_N,
};

const char *sw_event_kind_name(sw_event_kind kind)
{
    return (unsigned)kind < N_KINDS ? names[kind] : NULL;
}

static unsigned long long ull(uint64_t v) { return (unsigned long long)v; }

void sw_event_write_jsonl(FILE *f, const sw_event *ev)
{
    if (ferror(f))
        return;
    unsigned has = fields[ev->kind];
    fprintf(f, "{\"t\":%.9g,\"ev\":\"%s\"", ev->t, names[ev->kind]);
    if (has & F_W)
        fprintf(f, ",\"w\":%u", ev->worker);
    if (has & F_STEP)
        fprintf(f, ",\"step\":%llu", ull(ev->clock));
    if (has & F_VER)
        fprintf(f, ",\"ver\":%llu", ull(ev->ver));
    fprintf(f, ",\"V\":%llu", ull(ev->V));
    if (has & F_N)
        fprintf(f, ",\"n\":%u", ev->n);
    switch (ev->kind) {
    case SW_EV_APPLY:
        if (ev->lr_scale != 1.0f)
            fprintf(f, ",\"lr_scale\":%.9g", (double)ev->lr_scale);
        break;
    case SW_EV_RELEASE:
        if (ev->reason && ev->reason[0] == 'l')
            fprintf(f, ",\"why\":\"liveness\"");
        break;
    case SW_EV_SWITCH:
        fputs(",\"policy\":", f);
        sw_log_put_string(f, ev->reason);
        break;
    case SW_EV_EVAL:
        /* JSON has no NaN: a value a diverged run could not measure is left out (read as
         * NAN), so that the log stays readable to its end. */
        if (isfinite(ev->loss))
            fprintf(f, ",\"loss\":%.6g", ev->loss);
        if (isfinite(ev->accuracy)) /* as many digits as a target's: 5/6 must meet 0.8333333 */
            fprintf(f, ",\"acc\":%.9g", ev->accuracy);
        break;
    case SW_EV_WAKE:
        fprintf(f, ",\"at\":%.9g", ev->at);
        break;
    default:
        break;
    }
    fputs("}\n", f);
}

/* A whole number in [0, max] under key, into *out. */
static int count(const sw_log_line *l, const char *key, double max, uint64_t *out, char *err)
{
    double v = sw_log_num(l, key, NAN);
    if (!(v >= 0 && v <= max && v == floor(v)))
        return sw_fail(err, SW_EFORMAT, "\"%s\" is missing or not a whole number in [0, %.0f]",
                       key, max);
    *out = (uint64_t)v;
    return 0;
}

static int read_fields(const sw_log_line *l, unsigned has, sw_event *ev, char *err)
{
    uint64_t w = 0, n = 0;
    int rc;
    if ((has & F_W) && (rc = count(l, "w", UINT32_MAX - 1.0, &w, err)))
        return rc;
    if ((has & F_STEP) && (rc = count(l, "step", 0x1p53, &ev->clock, err)))
        return rc;
    if ((has & F_VER) && (rc = count(l, "ver", 0x1p53, &ev->ver, err)))
        return rc;
    if ((has & F_N) && (rc = count(l, "n", UINT32_MAX, &n, err)))
        return rc;
    ev->worker = (uint32_t)w;
    ev->n = (uint32_t)n;
    return count(l, "V", 0x1p53, &ev->V, err);
}

int sw_event_from_log(const sw_log_line *l, sw_event *ev, char *err)
{
    const char *kind = sw_log_str(l, "ev");
    *ev = (sw_event){.t = sw_log_num(l, "t", NAN), .lr_scale = 1.0f, .reason = "policy"};
    size_t k = 0;
    while (k < N_KINDS && !(names[k] && kind && strcmp(names[k], kind) == 0))
        k++;
    if (k == N_KINDS)
        return sw_fail(err, SW_ENOTFOUND, "unknown event '%s'", kind ? kind : "");
    ev->kind = (sw_event_kind)k;
    int rc = read_fields(l, fields[k], ev, err);
    if (rc)
        return rc;
    const char *why = sw_log_str(l, "why");
    switch (ev->kind) {
    case SW_EV_APPLY:
        ev->lr_scale = (float)sw_log_num(l, "lr_scale", 1.0);
        break;
    case SW_EV_RELEASE:
        if (why && strcmp(why, "liveness") == 0)
            ev->reason = "liveness";
        else if (why)
            return sw_fail(err, SW_EFORMAT, "a release's \"why\" is \"liveness\" or absent");
        break;
    case SW_EV_SWITCH:
        if (!(ev->reason = sw_log_str(l, "policy")))
            return sw_fail(err, SW_EFORMAT, "a switch names its \"policy\"");
        break;
    case SW_EV_EVAL:
        ev->loss = sw_log_num(l, "loss", NAN);
        ev->accuracy = sw_log_num(l, "acc", NAN);
        if (ev->accuracy < 0 || ev->accuracy > 1 || ev->loss < 0)
            return sw_fail(err, SW_EFORMAT, "an evaluation's \"acc\" is in [0, 1] and its "
                           "\"loss\" not below 0");
        break;
    case SW_EV_WAKE:
        ev->at = sw_log_num(l, "at", NAN);
        if (isnan(ev->at))
            return sw_fail(err, SW_EFORMAT, "a wake-up says when (\"at\")");
        break;
    default:
        break;
    }
    return 0;
}
