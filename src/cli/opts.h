/* Option tables: every command's options written once (name, short form, type, target field,
 * range, help), from which come its parser, its --help, its range errors and its check for
 * stray arguments.
 *
 * A table is an array of sw_opt ending with SW_OPT_END; a command may chain several (its own,
 * then shared ones: the scenario of sim and compare). Values go into one options struct of the
 * command's, at each option's offset; --help shows each option's default from that struct as the
 * command filled it before parsing, so a default is written in one place only.
 */
#ifndef SW_CLI_OPTS_H
#define SW_CLI_OPTS_H

#include <stdbool.h>
#include <stddef.h>

typedef enum sw_opt_type {
    SW_OPT_END,     /* the end of a table */
    SW_OPT_SECTION, /* a heading in --help (name: its text) */
    SW_OPT_FLAG,    /* bool, set true */
    SW_OPT_STR,     /* const char *, the argument itself */
    SW_OPT_TEXT,    /* char[hi], a copy of the argument (shorter than hi) */
    SW_OPT_U32,     /* uint32_t in [lo, hi] */
    SW_OPT_LONG,    /* long in [lo, hi] */
    SW_OPT_U64,     /* uint64_t (hi 0: any) */
    SW_OPT_SIZE,    /* size_t in [lo, hi] */
    SW_OPT_F32,     /* float in [lo, hi] */
    SW_OPT_F64,     /* double in [lo, hi] */
    SW_OPT_MS,      /* double seconds, written in milliseconds in [lo, hi] */
    SW_OPT_CHOICE,  /* int: the index of the argument among `choices` */
    SW_OPT_CALL,    /* call(opts, arg): for what a field cannot say */
} sw_opt_type;

typedef struct sw_opt {
    sw_opt_type type;
    const char *name; /* the long form, without dashes */
    char short_name;  /* 0: none */
    size_t at;        /* the field's offset in the options struct */
    double lo, hi;
    const char *arg;  /* the value's name in --help: N, X, SPEC, FILE */
    const char *help; /* '\n' starts another line of it */
    const char *const *choices;
    /* SW_OPT_CALL: applies the argument (NULL for an option without one); false after printing
     * why it is refused. */
    bool (*call)(void *opts, const char *cmd, const char *arg);
    bool has_arg;     /* SW_OPT_CALL: whether it takes one */
    /* The default --help shows instead of the field's value; "" shows none. */
    const char *shown;
} sw_opt;

/* A row: {SW_OPT_ROW(type, name, short, offset, lo, hi, arg, help), .shown = ...}. */
#define SW_OPT_ROW(type_, name_, short_, at_, lo_, hi_, arg_, help_)                      \
    .type = (type_), .name = (name_), .short_name = (short_), .at = (at_), .lo = (lo_),       \
    .hi = (hi_), .arg = (arg_), .help = (help_)
#define SW_OPT_HEADING(text) {.type = SW_OPT_SECTION, .name = (text)}
#define SW_OPT_END_ROW {.type = SW_OPT_END}
/* The log-level flags of the long-running processes (server's workers, peers, shards). */
#define SW_OPT_LOG_ROWS(quiet_at, verbose_at)                                                   \
    {SW_OPT_ROW(SW_OPT_FLAG, "quiet", 'q', (quiet_at), 0, 0, NULL,                            \
                "warnings, errors and the closing summary only")},                              \
    {SW_OPT_ROW(SW_OPT_FLAG, "verbose", 'v', (verbose_at), 0, 0, NULL, "debug messages too")}
/* --cpus of the long-running networked processes (server, shard, worker, peer):
 * sw_cli_pin_cpus. */
#define SW_OPT_CPUS_ROW(at_)                                                                    \
    {SW_OPT_ROW(SW_OPT_STR, "cpus", 0, (at_), 0, 0, "LIST",                                     \
                "run every thread on these CPUs only (0, 2-3, 0,4-7;\n"                          \
                "as taskset -c): on a machine shared by several\n"                               \
                "processes, give each its own cores (docs/guide.md)")}

typedef struct sw_cmd_opts {
    const char *cmd;       /* as it is typed after syncwise: "sim", "rl train" */
    const char *usage;     /* what follows the command in the usage line */
    const char *about;     /* what it does, before the options */
    const sw_opt *tables[4]; /* NULL after the last */
    void (*epilog)(void);  /* printed after the options (lists of policies, data, models) */
    int max_args;          /* arguments allowed after the options (-1: any number) */
    /* The arguments are a command line of another program's, passed on as they are (launch's
     * rank command): an empty one is that program's business. Otherwise '' is refused. */
    bool args_verbatim;
} sw_cmd_opts;

/* Parses argv into opts. Returns 0 with the arguments left at argv[*first .. argc) (first may
 * be NULL when the command takes none), 1 after printing --help (exit 0), or 2 after printing
 * a usage error (exit 2). */
int sw_cli_parse(const sw_cmd_opts *c, int argc, char **argv, void *opts, int *first);

/* The options of `table` (one of c's tables; NULL: all of them) that argv sets, after
 * sw_cli_parse accepted it (options it does not know are passed over):
 * one line "--name VALUE" (or "--name" for a flag) each, with the last value given, in the
 * table's order whatever argv's, leaving out the names in `skip` (NULL-ended); a number in its
 * shortest spelling (.75 and 0.750 are 0.75). So two command lines give the same text when they
 * set those options alike. 0, or -1 when cap is too small. */
int sw_cli_options_given(const sw_cmd_opts *c, int argc, char **argv, const sw_opt *table,
                         const char *const *skip, char *out, size_t cap);

/* Prints the command's --help, defaults taken from opts. */
void sw_cli_help(const sw_cmd_opts *c, const void *opts);

#endif
