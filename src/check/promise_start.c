/* The promise a policy spec names, and whether an engine takes that spec (rule 7); the two ways
 * a promise breaks, as the policy's or as every run's (see check_internal.h). */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_internal.h"
#include "syncwise/policy.h"

int sw__ck_broken(const sw_check *c, char *err, const char *fmt, ...)
{
    char what[SW_ERR_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return sw_fail(err, SW_EPROMISE, "%s: %s", c->spec, what);
}

int sw__ck_engine_broke(char *err, const char *fmt, ...)
{
    char what[SW_ERR_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return sw_fail(err, SW_EPROMISE, "every run: %s", what);
}

/* A spec with a key its policy does not take was never accepted by an engine. */
static int known_keys_only(sw_spec *spec, char *err)
{
    const sw_policy_ops *ops = sw_policy_find(spec->name);
    if (!ops)
        return 0;
    char keys[256];
    snprintf(keys, sizeof keys, "%s", ops->keys);
    for (char *save = NULL, *k = strtok_r(keys, ", ", &save); k; k = strtok_r(NULL, ", ", &save))
        (void)sw_spec_str(spec, k, NULL);            /* the policy's own keys count as read */
    (void)sw_spec_str(spec, SW_POLICY_LR_KEY, NULL); /* and the one every spec takes */
    char why[SW_ERR_LEN];
    int rc = sw_policy_spec_finish(spec, ops, why);
    return rc ? sw__ck_engine_broke(err, "a spec no engine takes: %s", why) : 0;
}

/* Rule 7 as the engine reads a spec (each policy's keys, ranges and choices, the learning rate
 * every spec takes): one reading, not a second copy here. A file the spec names (rlp's policy)
 * that cannot be read on this machine says nothing of the spec, so only a refusal of a value
 * counts. */
static int engine_takes(const sw_check *c, const char *spec, char *err)
{
    char why[SW_ERR_LEN];
    int rc = sw_engine_check_policy(spec, c->slots, why);
    if (rc == SW_EINVAL || rc == SW_ERANGE)
        return sw__ck_engine_broke(err, "a spec no engine takes: %s", why);
    return 0;
}

const ck_promise *sw__ck_promise_for(const char *policy)
{
    for (int i = 0; sw__promises[i]; i++)
        if (strcmp(sw__promises[i]->policy, policy) == 0)
            return sw__promises[i];
    return sw__ck_own_promise(policy) ? &sw__promise_own : NULL;
}

void sw__ck_stop_promise(sw_check *c)
{
    if (c->promise && c->promise->fini && c->pstate)
        c->promise->fini(c->pstate);
    free(c->pstate);
    c->pstate = NULL;
    c->promise = NULL;
}

int sw__ck_start_promise(sw_check *c, const char *spec_text, char *err)
{
    sw_spec spec;
    char why[SW_ERR_LEN];
    int rc = sw_spec_parse(&spec, spec_text, why);
    if (rc == SW_ENOMEM)
        return sw_fail(err, rc, "%s", why);
    if (rc)
        return sw__ck_engine_broke(err, "a spec no engine takes: %s", why);
    sw__ck_stop_promise(c);
    snprintf(c->spec, sizeof c->spec, "%s", spec_text);
    if (!(c->promise = sw__ck_promise_for(spec.name))) {
        if (!c->unknown[0])
            snprintf(c->unknown, sizeof c->unknown, "%s", spec.name);
        if (!sw_policy_find(spec.name))
            return 0; /* a policy not loaded here: nothing to hold its spec to */
        /* a plugin's policy with no promise: rule 7 still holds its spec to what it takes */
        return (rc = known_keys_only(&spec, err)) ? rc : engine_takes(c, spec_text, err);
    }
    if (!(c->pstate = calloc(1, c->promise->state_size ? c->promise->state_size : 1)))
        return sw_fail(err, SW_ENOMEM, "out of memory");
    rc = c->promise->init ? c->promise->init(c->pstate, &spec, c, why) : 0;
    if (rc == SW_ENOMEM)
        return sw_fail(err, rc, "%s", why);
    if (rc) /* a value out of its range is broken as an unknown key is (promises.md, rule 7) */
        return sw__ck_engine_broke(err, "a spec no engine takes: %s", why);
    return (rc = known_keys_only(&spec, err)) ? rc : engine_takes(c, spec_text, err);
}
