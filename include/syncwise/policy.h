/* Synchronization policies: the decisions of the parameter server, one file per policy.
 *
 * A policy is pure: it reads the engine's const view and fills a decision; it does no I/O, reads
 * no clock and draws randomness only from the stream it is handed. That is what lets one policy
 * run unchanged under the simulator and the network server, and be tested with hand-made event
 * scripts. Policies are chosen by a spec string "name:key=value,..." through the registry.
 */
#ifndef SYNCWISE_POLICY_H
#define SYNCWISE_POLICY_H

#include <stddef.h>

#include "syncwise/engine.h"
#include "syncwise/spec.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The key every policy spec takes besides its own: "lr=X" sets the learning rate while that
 * policy is in force, overriding the run's (so one comparison can run each policy at its
 * paper's rate). The engine reads it; policies never see it. */
#define SW_POLICY_LR_KEY "lr"

/* What a policy asks the engine to compute for it; the others cost nothing. */
enum {
    SW_WANT_SQ_NORM = 1 << 0, /* squared norm of each push, and the buffer's running sum */
    SW_WANT_LOSS = 1 << 1,    /* the probe loss before and after each apply (view.loss_*) */
};

/* The three actions of the RLP paper's action space. */
typedef enum sw_action {
    SW_ACTION_NONE = 0,   /* every idle worker stays idle */
    SW_ACTION_PUSHER = 1, /* the worker that pushed runs again */
    SW_ACTION_ALL = 2,    /* every idle worker runs */
} sw_action;

/* What the engine hands a policy besides its parameters. */
typedef struct sw_policy_env {
    sw_rng *rng; /* the policy's own random stream */
    void *ctx;   /* a caller's own policy: sw_engine_params.policy_ctx; NULL for registered ones */
    sw_optim_params optim; /* the engine's update (a policy may weigh staleness by momentum) */
} sw_policy_env;

typedef struct sw_policy_ops {
    const char *name;
    const char *keys; /* accepted parameter names, for error messages ("s", "" or NULL) */
    const char *help; /* one line for --help */
    size_t state_size;
    unsigned wants;   /* SW_WANT_* flags (every spec's, unless wants_of says otherwise) */
    /* Its applies may run on other threads, after its decisions (sw_engine_params.concurrent):
     * it applies each accepted gradient alone, on arrival, drops none and reads nothing of θ
     * or of the gradients. */
    bool concurrent;
    /* Reads parameters from spec (never NULL) and starts from the current view, which is not
     * empty when the policy replaces another. Must leave state safe for fini even on failure.
     * May fail with SW_EINVAL and a message. NULL: no parameters, and state starts zeroed. */
    int (*init)(void *state, sw_spec *spec, const sw_engine_view *v, const sw_policy_env *env,
                char *err);
    /* A push arrived; the worker is already marked waiting and its clock advanced. Required. */
    void (*on_push)(void *state, const sw_engine_view *v, const sw_push *p, sw_decision *d);
    /* After the apply that on_push asked for, with the view updated (version, losses): the
     * place for decisions that depend on the new parameters. d is on_push's decision, already
     * applied; add releases or a wake-up to it. NULL: on_push decides everything. */
    void (*on_applied)(void *state, const sw_engine_view *v, const sw_push *p, sw_decision *d);
    /* Worker w joined (already in the table, waiting). NULL: release it at once. */
    void (*on_join)(void *state, const sw_engine_view *v, uint32_t w, sw_decision *d);
    /* Worker w left (already absent). NULL: nothing to do. */
    void (*on_leave)(void *state, const sw_engine_view *v, uint32_t w, sw_decision *d);
    /* A wake-up the policy asked for. NULL: ignored. */
    void (*on_tick)(void *state, const sw_engine_view *v, sw_decision *d);
    /* Releases what init acquired. NULL: nothing to release. */
    void (*fini)(void *state);
    /* What a spec of this policy wants, where its parameters change it (rlswitch's choose=once
     * reads no loss, so it pays no probe and runs on shards); the spec parsed, unchecked. NULL:
     * `wants` for every spec. */
    unsigned (*wants_of)(const sw_spec *spec);
} sw_policy_ops;

/* Parameter defaults: the one copy that the policies and the promise checker
 * (syncwise/check.h) share. */
enum {
    SW_SSP_DEFAULT_S = 3,
    SW_DSSP_DEFAULT_LO = 3,
    SW_DSSP_DEFAULT_HI = 15,
    SW_SYNC_DEFAULT_GRADS = 1,
    SW_EBSP_DEFAULT_R = 15,
};

/* Looks a policy up by name, built-in or registered; NULL if unknown. */
const sw_policy_ops *sw_policy_find(const char *name);

/* The built-in policies, NULL-terminated, in the order --help lists them. */
extern const sw_policy_ops *const sw_policies[];

/* The i-th known policy: the built-in ones, then the registered ones in their order; NULL past
 * the last. */
const sw_policy_ops *sw_policy_at(size_t i);

/* Adds a policy of one's own under ops->name (not taken already; letters, digits, '_', '-' and
 * '.', since specs and lists are split at the others), so that specs name it as they name the
 * built-in ones; ops must outlive every use. At most SW_POLICY_MAX_REGISTERED. Fails
 * with a message. */
#define SW_POLICY_MAX_REGISTERED 32
int sw_policy_register(const sw_policy_ops *ops, char *err);

/* What a plugin defines: a shared object named in SYNCWISE_PLUGINS (paths separated by ':')
 * gives every syncwise command its policies through this function, a NULL-terminated list
 * (examples/custom_policy/half_barrier.c builds as one). */
const sw_policy_ops *const *sw_plugin_policies(void);

/* The plugin interface's version, raised whenever the structs a plugin shares with syncwise
 * change their layout (sw_policy_ops, sw_engine_view, sw_decision, the promises'): a plugin
 * built against other headers would read fields where they are not, so it is refused with a
 * message. A plugin says which it was built against by writing SW_PLUGIN_ABI_HERE once, at file
 * scope. (2: sw_policy_ops.wants_of and sw_engine_view.lr; 3: sw_worker_info.buffered_for,
 * sw_engine_view.live.) */
#define SW_PLUGIN_ABI 3
int sw_plugin_abi(void);
#define SW_PLUGIN_ABI_HERE                                                                         \
    int sw_plugin_abi(void) { return SW_PLUGIN_ABI; }

/* What a spec wants of the engine (SW_WANT_* flags): ops->wants_of's answer, else ops->wants.
 * sw_policy_spec_wants reads a spec's text (0 for one that does not parse or names no policy:
 * the engine refuses those, saying why). */
unsigned sw_policy_wants(const sw_policy_ops *ops, const sw_spec *spec);
unsigned sw_policy_spec_wants(const char *spec);

/* Refuses a key of spec that neither ops's keys nor every spec's lr= name, listing both
 * (sw_spec_finish): the engine's reading of a spec, which the checker shares. */
int sw_policy_spec_finish(const sw_spec *spec, const sw_policy_ops *ops, char *err);

/* Comma-separated names of every policy, for "unknown policy" messages. */
const char *sw_policy_names(void);

/* Helpers shared by policies. */

/* Releases every waiting worker. */
void sw_policy_release_all(const sw_engine_view *v, sw_decision *d);
/* Carries out an action of the RLP action space (an sw_action) after a push of `pusher`. */
void sw_policy_act(const sw_engine_view *v, uint32_t pusher, int action, sw_decision *d);
/* Releases every waiting worker at most `bound` steps ahead of the slowest started worker (the
 * bounded-staleness rule of SSP and DSSP), and every waiting joiner, which starts at that
 * slowest clock. */
void sw_policy_release_within(const sw_engine_view *v, uint64_t bound, sw_decision *d);
/* True when every live worker is waiting (a barrier is complete). */
bool sw_policy_all_waiting(const sw_engine_view *v);
/* True when a gradient of slot w waits in the buffer: pushed by its worker, or by one that
 * left the slot before this one joined it. A joiner into such a slot waits for the apply, or
 * it would put a second gradient of the slot into it. */
bool sw_policy_slot_buffered(const sw_engine_view *v, uint32_t w);

#ifdef __cplusplus
}
#endif

#endif
