/* Policies of one's own for every command: the shared objects SYNCWISE_PLUGINS names (paths
 * separated by ':') are loaded at start, and the policies each lists (sw_plugin_policies,
 * syncwise/policy.h) join the registry, so that sim, compare, server, ctl and check name them in
 * specs as they name the built-in ones; the promises it may bring (sw_plugin_promises,
 * syncwise/check.h) join the checker's. */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
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

/* One plugin: loaded for the process's life (its policies run until the end). */
static int load_one(const char *path, char *err)
{
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) /* dlopen looks a name without '/' up in the library path, not here */
        return sw_fail(err, SW_EIO, "SYNCWISE_PLUGINS: %s%s", dlerror(),
                       strchr(path, '/') ? "" : " (a name without '/' is looked up in the "
                                                "library path: give ./NAME for a file here)");
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
    int rc = ops ? 0 : sw_fail(err, SW_EINVAL, "SYNCWISE_PLUGINS: %s lists no policy", path);
    char why[SW_ERR_LEN];
    for (size_t i = 0; !rc && ops[i]; i++)
        if ((rc = sw_policy_register(ops[i], why)))
            rc = sw_fail(err, rc, "SYNCWISE_PLUGINS: %s: %s", path, why);
    return rc ? rc : load_promises(lib, path, err);
}

int sw_cli_load_plugins(void)
{
    const char *list = getenv("SYNCWISE_PLUGINS");
    if (!list || !*list)
        return 0;
    char paths[4096], err[SW_ERR_LEN];
    snprintf(paths, sizeof paths, "%s", list);
    char *save = NULL;
    for (char *p = strtok_r(paths, ":", &save); p; p = strtok_r(NULL, ":", &save))
        if (load_one(p, err)) {
            fprintf(stderr, "syncwise: %s\n", err);
            return 1;
        }
    return 0;
}
