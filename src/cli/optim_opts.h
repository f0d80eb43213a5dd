/* The optimizer options `sim`, `compare` and `server` share: --optimizer, --momentum and
 * --nesterov, as rows any command's option table can hold at the offset of its sw_cli_optim. */
#ifndef SW_CLI_OPTIM_OPTS_H
#define SW_CLI_OPTIM_OPTS_H

#include <stdbool.h>
#include <stddef.h>

#include "opts.h"
#include "syncwise/optim.h"

typedef struct sw_cli_optim {
    const char *spec; /* syncwise/optim.h */
    float momentum;   /* 0: what the spec says */
    bool nesterov;
} sw_cli_optim;

#define SW_CLI_OPTIM_ROWS(base)                                                                \
    {SW_OPT_ROW(SW_OPT_STR, "optimizer", 0, (base) + offsetof(sw_cli_optim, spec), 0, 0,       \
                "SPEC",                                                                        \
                "the server's update: sgd, sgd:momentum=MU[,nesterov=1] or\n"                 \
                "adam[:beta1=B1,beta2=B2,eps=E] (the papers use plain sgd)")},                 \
    {SW_OPT_ROW(SW_OPT_F32, "momentum", 0, (base) + offsetof(sw_cli_optim, momentum), 0,       \
                0.9999, "MU", "heavy-ball momentum: --optimizer sgd:momentum=MU")},            \
    {SW_OPT_ROW(SW_OPT_FLAG, "nesterov", 0, (base) + offsetof(sw_cli_optim, nesterov), 0, 0,   \
                NULL, "Nesterov momentum (with --momentum)")}

/* The parameters the three options give together; SW_EINVAL (a usage error) with the reason
 * when they contradict each other. */
int sw_cli_optim_resolve(const sw_cli_optim *o, sw_optim_params *out, char *err);

#endif
