/* Scheduled events for a simulation: "crash:w=3,t=50;leave:w=1,t=80;join:t=100" and
 * "switch:t=200,policy=dssp:lo=2,hi=6" (policy= comes last and takes the rest of the event, so
 * that the spec may have commas of its own).
 *
 * crash and leave name a worker; join without w brings a new worker into the next free slot
 * (slots after the initial workers, in the order the joins are written), join with w=K brings
 * slot K back after it left. A crash loses the step in flight; a leave is the same to the engine
 * but logged as a graceful departure.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"
#include "syncwise/engine.h"
#include "syncwise/err.h"
#include "syncwise/policy.h"
#include "syncwise/spec.h"

uint32_t sw__sim_count_joins(const char *events)
{
    uint32_t n = 0;
    char *copy = events ? strdup(events) : NULL, *save = NULL;
    for (char *e = copy ? strtok_r(copy, ";", &save) : NULL; e; e = strtok_r(NULL, ";", &save)) {
        sw_spec sp;
        n += !sw_spec_parse(&sp, e, NULL) && strcmp(sp.name, "join") == 0 && !sw_spec_has(&sp, "w");
    }
    free(copy);
    return n;
}

static int add_switch(sim *s, const char *policy, sw__sim_event *ev, char *err)
{
    if (!policy)
        return sw_fail(err, SW_EINVAL, "switch: policy=SPEC is required");
    char why[SW_ERR_LEN]; /* a bad spec is caught now rather than in the middle of the run */
    int rc = sw_engine_check_policy(policy, s->n_slots, why);
    if (rc)
        return sw_fail(err, rc, "switch to %s: %s", policy, why);
    char **grown = realloc(s->switches, (s->n_switches + 1) * sizeof *grown);
    if (!grown || !(grown[s->n_switches] = strdup(policy))) {
        if (grown)
            s->switches = grown;
        return sw_fail(err, SW_ENOMEM, "out of memory");
    }
    s->switches = grown;
    ev->worker = s->n_switches++;
    return 0;
}

/* Cuts "policy=SPEC" off the end of an event's text; returns SPEC or NULL. */
static const char *cut_policy(char *text)
{
    char *at = strstr(text, "policy=");
    if (!at || (at > text && at[-1] != ',' && at[-1] != ':'))
        return NULL;
    *at = '\0';
    if (at > text && at[-1] == ',')
        at[-1] = '\0';
    return at + strlen("policy=");
}

/* Where the joins of a worker slot beyond the first workers stand: its anonymous join's time
 * (it takes the next new slot, in the order listed), and the earliest explicit join, which
 * follows the anonymous one at the same time when listed after it (events of one time run in
 * the order listed). */
typedef struct slot_joins {
    double anon_t, named_t; /* < 0 when none */
    bool named_listed_after;
} slot_joins;

typedef struct new_slots {
    uint32_t first;    /* the workers at the start */
    slot_joins *slots; /* per slot from `first` */
} new_slots;

static int schedule_one(sim *s, char *text, uint32_t *next_new, new_slots *ns, char *err)
{
    const char *policy = cut_policy(text);
    sw_spec sp;
    int rc = sw_spec_parse(&sp, text, err);
    if (rc)
        return rc;
    double t = -1;
    long w = -1;
    bool to_policy = !strcmp(sp.name, "switch"); /* the only one that names a policy */
    if ((rc = sw_spec_double(&sp, "t", 0, 1e15, &t, err)) ||
        (!to_policy && (rc = sw_spec_int(&sp, "w", 0, (long)s->n_slots - 1, &w, err))) ||
        (rc = sw_spec_finish(&sp, to_policy ? "t, policy" : "w, t", err)))
        return rc;
    if (t < 0 && policy && strstr(policy, "t="))
        return sw_fail(err, SW_EINVAL, "event '%s': t=SECONDS is required before policy=, which "
                       "takes the rest of the event ('%s')", text, policy);
    if (t < 0)
        return sw_fail(err, SW_EINVAL, "event '%s': t=SECONDS is required", text);
    static const struct {
        const char *name;
        uint32_t kind;
    } kinds[] = {
        {"crash", EV_CRASH}, {"leave", EV_LEAVE}, {"join", EV_JOIN}, {"switch", EV_SWITCH}};
    uint32_t kind = UINT32_MAX;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (strcmp(sp.name, kinds[i].name) == 0)
            kind = kinds[i].kind;
    if (kind == UINT32_MAX)
        return sw_fail(err, SW_EINVAL, "unknown event '%s' (known: crash, leave, join, switch)",
                       sp.name);
    if (policy && !to_policy)
        return sw_fail(err, SW_EINVAL, "event '%s': policy= belongs to a switch (known: w, t)",
                       sp.name);
    if ((kind == EV_CRASH || kind == EV_LEAVE) && w < 0)
        return sw_fail(err, SW_EINVAL, "event '%s': w=WORKER is required", text);
    if (kind == EV_JOIN && w < 0) {
        w = (long)(*next_new)++;
        ns->slots[w - ns->first].anon_t = t;
    } else if (kind == EV_JOIN && w >= (long)ns->first) {
        slot_joins *j = &ns->slots[w - ns->first];
        if (j->named_t < 0 || t < j->named_t)
            *j = (slot_joins){.anon_t = j->anon_t, .named_t = t,
                              .named_listed_after = j->anon_t == t};
    }
    sw__sim_event ev = {.t = t, .kind = kind, .worker = (uint32_t)(w < 0 ? 0 : w)};
    if (kind == EV_SWITCH && (rc = add_switch(s, policy, &ev, err)))
        return rc;
    return sw__heap_push(&s->heap, ev) ? sw_fail(err, SW_ENOMEM, "out of memory") : 0;
}

int sw__sim_schedule(sim *s, const char *events, uint32_t workers, char *err)
{
    if (!events || !*events)
        return 0;
    char *copy = strdup(events), *save = NULL;
    if (!copy)
        return sw_fail(err, SW_ENOMEM, "out of memory");
    uint32_t next_new = workers, extra = s->n_slots > workers ? s->n_slots - workers : 0;
    new_slots ns = {.first = workers, .slots = malloc((extra + 1) * sizeof *ns.slots)};
    int rc = ns.slots ? 0 : sw_fail(err, SW_ENOMEM, "out of memory");
    for (uint32_t i = 0; i < extra && !rc; i++)
        ns.slots[i] = (slot_joins){.anon_t = -1, .named_t = -1};
    for (char *e = strtok_r(copy, ";", &save); e && !rc; e = strtok_r(NULL, ";", &save))
        rc = schedule_one(s, e, &next_new, &ns, err);
    /* A new worker's slot is its anonymous join's: join:w= of it may bring it back later, not
     * take it first (two joins would make one worker, the second passed over as live). */
    for (uint32_t i = 0; i < extra && !rc; i++) {
        const slot_joins *j = &ns.slots[i];
        bool brought_in = j->anon_t >= 0 && (j->anon_t < j->named_t || j->named_listed_after);
        if (j->named_t >= 0 && !brought_in)
            rc = sw_fail(err, SW_EINVAL, "join:w=%u at t=%g: worker %u is not one of the %u at "
                         "the start, and no join:t=T (without w=) brings it in before: a new "
                         "worker joins without w=", workers + i, j->named_t, workers + i,
                         workers);
    }
    free(ns.slots);
    free(copy);
    return rc;
}
