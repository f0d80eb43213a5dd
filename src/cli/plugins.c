/* Policies of one's own for every command: the shared objects SYNCWISE_PLUGINS names (paths
 * separated by ':') are loaded at start, and the policies each lists (sw_plugin_policies,
 * syncwise/policy.h) join the registry, so that sim, compare, server, ctl and check name them in
 * specs as they name the built-in ones; the promises it may bring (sw_plugin_promises,
 * syncwise/check.h) join the checker's. */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "syncwise/check.h"
#include "syncwise/err.h"
#include "syncwise/policy.h"

typedef const sw_policy_ops *const *(*plugin_list)(void);
typedef const sw_promise_ops *const *(*promise_list)(void);

/* The promises a plugin may bring for its policies (sw_plugin_promises, syncwise/check.h). */
static int load_promises(void *lib, const char *path, char *err)
{
    promise_list list;
    *(void **)&list = dlsym(lib, "sw_plugin_promises");
    const sw_promise_ops *const *ops = list ? list() : NULL;
    char why[SW_ERR_LEN];
    for (size_t i = 0; ops && ops[i]; i++)
        if (sw_check_register_promise(ops[i], why))
            return sw_fail(err, SW_EINVAL, "SYNCWISE_PLUGINS: %s: %s", path, why);
    return 0;
}

/* The plugins loaded so far, to pass over one listed twice and to name, when two define one
 * policy, the one that came first. */
struct plugin {
    void *lib;
    const char *path;
};
static struct plugin loaded[SW_POLICY_MAX_REGISTERED];
static size_t n_loaded;

/* The earlier plugin whose list holds a policy called `name`; NULL if none (a built-in). */
static const char *first_with(const char *name) { return sw_cli_plugin_of(name, strlen(name)); }

const char *sw_cli_plugin_of(const char *name, size_t len)
{
    for (size_t i = 0; i < n_loaded; i++) {
        plugin_list list;
        *(void **)&list = dlsym(loaded[i].lib, "sw_plugin_policies");
        const sw_policy_ops *const *ops = list();
        for (size_t j = 0; ops[j]; j++)
            if (strlen(ops[j]->name) == len && !strncmp(ops[j]->name, name, len))
                return loaded[i].path;
    }
    return NULL;
}

/* A plugin's policies join all or none: one of its names taken (built in, by an earlier plugin,
 * or twice in its own list) refuses it before any joins, so that help never lists half a
 * plugin, nor a later plugin finds its names taken by one that failed. */
static int names_free(const sw_policy_ops *const *ops, const char *path, char *err)
{
    for (size_t i = 0; ops[i]; i++) {
        const char *name = ops[i]->name ? ops[i]->name : "";
        const char *first = first_with(name);
        bool twice = false;
        for (size_t j = 0; j < i; j++)
            twice = twice || (ops[j]->name && strcmp(ops[j]->name, name) == 0);
        if (twice || sw_policy_find(name))
            return sw_fail(err, SW_EINVAL, "SYNCWISE_PLUGINS: %s: a policy named '%s' exists "
                           "already (%s%s)", path, name,
                           twice ? "twice in this plugin's list" : first ? "from " : "built in",
                           twice || !first ? "" : first);
    }
    return 0;
}

static int register_all(const sw_policy_ops *const *ops, const char *path, char *err)
{
    char why[SW_ERR_LEN];
    int rc = names_free(ops, path, err);
    for (size_t i = 0; !rc && ops[i]; i++) {
        if (!sw_policy_register(ops[i], why))
            continue;
        return sw_fail(err, SW_EINVAL, "SYNCWISE_PLUGINS: %s: %s", path, why);
    }
    return rc;
}

/* One plugin: loaded for the process's life (its policies run until the end). */
static int load_one(const char *path, char *err)
{
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) /* dlopen looks a name without '/' up in the library path, not here */
        return sw_fail(err, SW_EIO, "SYNCWISE_PLUGINS: %s%s", dlerror(),
                       strchr(path, '/') ? "" : " (a name without '/' is looked up in the "
                                                "library path: give ./NAME for a file here)");
    for (size_t i = 0; i < n_loaded; i++)
        if (loaded[i].lib == lib) /* named twice: dlopen gave the one already loaded */
            return 0;
    if (n_loaded == SW_POLICY_MAX_REGISTERED)
        return sw_fail(err, SW_ERANGE, "SYNCWISE_PLUGINS: more than %d plugins",
                       SW_POLICY_MAX_REGISTERED);
    int (*abi)(void);
    *(void **)&abi = dlsym(lib, "sw_plugin_abi"); /* POSIX's way to a function */
    if (!abi && !dlsym(lib, "sw_plugin_policies"))
        return sw_fail(err, SW_EINVAL, "SYNCWISE_PLUGINS: %s defines neither sw_plugin_policies "
                       "nor sw_plugin_abi: it is no syncwise plugin (syncwise/policy.h)", path);
    int built = abi ? abi() : 1;
    if (built != SW_PLUGIN_ABI)
        return sw_fail(err, SW_EMISMATCH, "SYNCWISE_PLUGINS: %s was built against the plugin "
                       "interface %d%s, and this syncwise has %d: build it again against this "
                       "syncwise's headers (syncwise/policy.h)", path, built,
                       abi ? "" : " (it defines no sw_plugin_abi: SW_PLUGIN_ABI_HERE)",
                       SW_PLUGIN_ABI);
    plugin_list list;
    *(void **)&list = dlsym(lib, "sw_plugin_policies");
    if (!list)
        return sw_fail(err, SW_EINVAL, "SYNCWISE_PLUGINS: %s defines no sw_plugin_policies "
                       "(syncwise/policy.h)", path);
    const sw_policy_ops *const *ops = list();
    if (!ops)
        return sw_fail(err, SW_EINVAL, "SYNCWISE_PLUGINS: %s lists no policy", path);
    int rc = register_all(ops, path, err);
    if (!rc)
        rc = load_promises(lib, path, err);
    if (!rc)
        loaded[n_loaded++] = (struct plugin){lib, path};
    return rc;
}

int sw_cli_load_plugins(bool only_help)
{
    const char *list = getenv("SYNCWISE_PLUGINS");
    if (!list || !*list)
        return 0;
    static char paths[4096]; /* the loaded plugins' names point into it */
    char err[SW_ERR_LEN];
    if (snprintf(paths, sizeof paths, "%s", list) >= (int)sizeof paths) {
        fprintf(stderr, "syncwise: SYNCWISE_PLUGINS is longer than %zu bytes\n",
                sizeof paths - 1);
        return only_help ? 0 : 1;
    }
    char *save = NULL;
    for (char *p = strtok_r(paths, ":", &save); p; p = strtok_r(NULL, ":", &save)) {
        if (!load_one(p, err))
            continue;
        fprintf(stderr, "syncwise: %s%s\n", err,
                only_help ? " (help goes on without what could not be loaded)" : "");
        if (!only_help)
            return 1;
    }
    return 0;
}
