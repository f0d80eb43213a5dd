/* `syncwise check LOG...`: holds event logs (the simulator's or a server's) to the promises of
 * the policies that ran (syncwise/check.h, docs/promises.md). */
#include <stddef.h>
#include <stdio.h>

#include "cli.h"
#include "opts.h"
#include "syncwise/check.h"
#include "syncwise/err.h"
#include "syncwise/policy.h"

#define CMD "check"

typedef struct check_opts {
    bool quiet;
} check_opts;

static const sw_opt table[] = {
    {SW_OPT_ROW(SW_OPT_FLAG, "quiet", 'q', offsetof(check_opts, quiet), 0, 0, NULL,
                "print only the broken promises")},
    SW_OPT_END_ROW,
};

static const sw_cmd_opts command = {
    .cmd = CMD,
    .usage = "[OPTIONS] LOG...",
    .about = "Replays JSONL event logs (written by 'syncwise sim --log' or 'syncwise server\n"
             "--log') and checks that every policy that ran kept its promise: ssp never let a\n"
             "worker more than s steps ahead of the slowest, bsp applied one gradient per live\n"
             "worker, every run's version counts its applies, and so on (docs/promises.md).\n"
             "A plugin's policy (SYNCWISE_PLUGINS) is held to the promise the plugin brings\n"
             "(sw_plugin_promises), if any, and to the rules every run keeps.\n"
             "Prints one line per log; exits 1 if any promise was broken, 2 on a log it cannot\n"
             "read or a report it cannot write (2 wins: the judgement is incomplete, though each\n"
             "log's line says what was found in it).",
    .tables = {table},
    .max_args = -1,
};

/* 0: kept; 1: broken; 2: not a log. */
static int check_one(const char *path, bool quiet)
{
    sw_check_summary s;
    char err[SW_ERR_LEN];
    int rc = sw_check_log(path, &s, err);
    if (rc && rc != SW_EPROMISE) {
        sw_cli_error(CMD, "%s", err);
        return 2;
    }
    if (rc) {
        printf("%s: BROKEN: %s\n", path, err);
        return 1;
    }
    if (quiet)
        return 0;
    char runs[48] = "";
    if (s.segments > 1)
        snprintf(runs, sizeof runs, " in %u runs (restarts)", s.segments);
    char kept[192] = "every promise kept";
    if (s.unknown_policy[0]) /* the checker knows no promise of it: which kind is it? */
        snprintf(kept, sizeof kept, "the rules every run keeps hold (%s '%s' has no promise the "
                 "checker knows)", sw_policy_find(s.unknown_policy) ? "the policy of one's own"
                 : "policy", s.unknown_policy);
    printf("%s: %.*s: %llu events%s (%llu pushes, %llu applies, %llu switches): %s%s%s\n", path,
           sw_cli_spec_shown(s.policy), s.policy, (unsigned long long)s.events, runs,
           (unsigned long long)s.pushes, (unsigned long long)s.applies, (unsigned long long)s.switches, kept,
           s.unknown_policy[0] && !sw_policy_find(s.unknown_policy)
               ? "; it is neither built in nor loaded from SYNCWISE_PLUGINS: a typo, or a "
                 "program's own policy?"
               : "",
           s.cut ? "; the log stops without its end line (killed, or still running), so its "
                   "last engine call was not judged"
                 : "");
    return 0;
}

int sw_cli_check(int argc, char **argv)
{
    check_opts o = {0};
    int first_file;
    int prc = sw_cli_parse(&command, argc, argv, &o, &first_file);
    if (prc)
        return prc == 1 ? 0 : prc;
    bool quiet = o.quiet;
    if (first_file == argc) {
        sw_cli_error(CMD, "name at least one log to check");
        return 2;
    }
    int worst = 0;
    for (int i = first_file; i < argc; i++) {
        int rc = check_one(argv[i], quiet);
        worst = rc > worst ? rc : worst;
    }
    return worst;
}
