/* Option tables (opts.h): the parser, --help and the errors all read the same rows. */
#define _POSIX_C_SOURCE 200809L
#include "opts.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define MAX_OPTS 96
#define HELP_COLUMN 25

static bool takes_arg(const sw_opt *o)
{
    return o->type == SW_OPT_CALL ? o->has_arg : o->type != SW_OPT_FLAG;
}

static bool is_option(const sw_opt *o)
{
    return o->type != SW_OPT_SECTION && o->type != SW_OPT_END;
}

/* Every option row of the command's tables, in order; how many. */
static size_t rows_of(const sw_cmd_opts *c, const sw_opt **rows, size_t cap)
{
    size_t n = 0;
    for (size_t t = 0; t < 4 && c->tables[t]; t++)
        for (const sw_opt *o = c->tables[t]; o->type != SW_OPT_END; o++)
            if (n < cap)
                rows[n++] = o;
    return n;
}

static bool choose(const sw_opt *o, const char *cmd, const char *arg, int *out)
{
    for (int i = 0; o->choices[i]; i++)
        if (!strcmp(arg, o->choices[i])) {
            *out = i;
            return true;
        }
    char known[256] = "";
    size_t len = 0;
    for (int i = 0; o->choices[i] && len < sizeof known; i++)
        len += (size_t)snprintf(known + len, sizeof known - len, "%s%s", i ? ", " : "",
                                o->choices[i]);
    sw_cli_error(cmd, "--%s: '%s' is not one of %s", o->name, arg, known);
    return false;
}

/* Stores one option's value into its field; false after printing why it is refused. */
static bool apply(const sw_opt *o, const char *cmd, const char *arg, void *opts)
{
    char *at = (char *)opts + o->at, name[64];
    snprintf(name, sizeof name, "--%s", o->name);
    long l;
    double d;
    uint64_t u;
    switch (o->type) {
    case SW_OPT_FLAG: *(bool *)at = true; return true;
    case SW_OPT_STR:
    case SW_OPT_TEXT:
        if (!*arg) { /* a path, an endpoint, a list: '' is a slip (an unset variable) */
            sw_cli_error(cmd, "%s: an empty value (see --help)", name);
            return false;
        }
        if (o->type == SW_OPT_STR) {
            *(const char **)at = arg;
            return true;
        }
        if (strlen(arg) >= (size_t)o->hi) {
            sw_cli_error(cmd, "%s: longer than %.0f characters", name, o->hi - 1);
            return false;
        }
        strcpy(at, arg);
        return true;
    case SW_OPT_CHOICE: return choose(o, cmd, arg, (int *)at);
    case SW_OPT_CALL: return o->call(opts, cmd, arg);
    case SW_OPT_U32:
    case SW_OPT_LONG:
    case SW_OPT_SIZE:
        if (!sw_cli_long(cmd, name, arg, (long)o->lo, (long)o->hi, &l))
            return false;
        if (o->type == SW_OPT_U32)
            *(uint32_t *)at = (uint32_t)l;
        else if (o->type == SW_OPT_SIZE)
            *(size_t *)at = (size_t)l;
        else
            *(long *)at = l;
        return true;
    case SW_OPT_U64:
        if (!sw_cli_u64(cmd, name, arg, &u))
            return false;
        if (o->hi > 0 && u > (uint64_t)o->hi) { /* in integers: 2^53 + 1 is 2^53 as a double */
            sw_cli_error(cmd, "%s: %llu is above %.0f", name, (unsigned long long)u, o->hi);
            return false;
        }
        *(uint64_t *)at = u;
        return true;
    default: /* F32, F64, MS */
        if (!sw_cli_double(cmd, name, arg, o->lo, o->hi, &d))
            return false;
        if (o->type == SW_OPT_F32)
            *(float *)at = (float)d;
        else
            *(double *)at = o->type == SW_OPT_MS ? d / 1000 : d;
        return true;
    }
}

/* getopt_long's view of the rows: each option's code is its row's index + 256. */
static void getopt_tables(const sw_opt **rows, size_t n, struct option *longs, char *shorts)
{
    size_t k = 0, s = 0;
    shorts[s++] = ':'; /* a missing value is told apart from an unknown option */
    for (size_t i = 0; i < n; i++) {
        if (!is_option(rows[i]))
            continue;
        longs[k++] = (struct option){rows[i]->name, takes_arg(rows[i]), 0, (int)i + 256};
        if (rows[i]->short_name) {
            shorts[s++] = rows[i]->short_name;
            if (takes_arg(rows[i]))
                shorts[s++] = ':';
        }
    }
    longs[k++] = (struct option){"help", 0, 0, 'h'};
    longs[k] = (struct option){0, 0, 0, 0};
    shorts[s++] = 'h';
    shorts[s] = '\0';
}

/* Whether the row named by the len characters of name takes a value. */
static bool takes_arg_named(const sw_opt **rows, size_t n, const char *name, size_t len)
{
    for (size_t k = 0; k < n; k++)
        if (is_option(rows[k]) && strlen(rows[k]->name) == len && !strncmp(rows[k]->name, name, len))
            return takes_arg(rows[k]);
    return false;
}

static const sw_opt *by_short(const sw_opt **rows, size_t n, int c)
{
    for (size_t i = 0; i < n; i++)
        if (is_option(rows[i]) && rows[i]->short_name == c)
            return rows[i];
    return NULL;
}

static int usage_error(const sw_cmd_opts *c, char **argv, int c_opt)
{
    const char *what = argv[optind - 1];
    if (c_opt == ':')
        sw_cli_error(c->cmd, "%s needs a value (see --help)", what);
    else if (optopt && strncmp(what, "--", 2) == 0) /* a flag given a value: --help=1 */
        sw_cli_error(c->cmd, "%.*s takes no value (see --help)", (int)strcspn(what, "="), what);
    else if (optopt && optopt < 256)
        sw_cli_error(c->cmd, "unknown option '-%c' (see --help)", optopt);
    else
        sw_cli_error(c->cmd, "unknown option '%s' (see --help)", what);
    return 2;
}

/* Runs getopt_long over argv with the command's rows, calling on(ctx, row, code, its argument)
 * for each option in turn (row NULL: none of the command's: 'h', or unknown) until one returns
 * nonzero, which it returns; 0 at the end, with optind at the first argument left. */
typedef int (*on_option_fn)(void *ctx, const sw_opt *row, int code, const char *arg);

static int each_option(const sw_cmd_opts *c, int argc, char **argv, on_option_fn on, void *ctx)
{
    const sw_opt *rows[MAX_OPTS];
    size_t n = rows_of(c, rows, MAX_OPTS);
    struct option longs[MAX_OPTS + 2];
    char shorts[2 * MAX_OPTS + 3];
    getopt_tables(rows, n, longs, shorts);
    optind = 1;
    opterr = 0;
    int code, rc = 0;
    while (!rc && (code = getopt_long(argc, argv, shorts, longs, NULL)) != -1)
        rc = on(ctx, code >= 256 ? rows[code - 256] : by_short(rows, n, code), code, optarg);
    return rc;
}

typedef struct parsing {
    const sw_cmd_opts *c;
    char **argv;
    void *opts;
} parsing;

static int parse_one(void *ctx, const sw_opt *o, int code, const char *arg)
{
    parsing *p = ctx;
    if (code == 'h' && !o) {
        sw_cli_help(p->c, p->opts);
        return 1;
    }
    if (!o)
        return usage_error(p->c, p->argv, code);
    return apply(o, p->c->cmd, arg, p->opts) ? 0 : 2;
}

/* getopt_long takes an unambiguous prefix for a whole name, so a habit from another command
 * became another option without a word (compare's --seed for --seeds, --log for --log-dir):
 * only whole names are options here. 2 (said) for the first "--name" that is none. */
static int whole_names_only(const sw_cmd_opts *c, int argc, char **argv)
{
    const sw_opt *rows[MAX_OPTS];
    size_t n = rows_of(c, rows, MAX_OPTS);
    for (int i = 1; i < argc && strcmp(argv[i], "--"); i++) {
        const char *name = argv[i] + 2;
        size_t len = strcspn(name, "=");
        if (argv[i][0] == '-' && argv[i][1] != '-') { /* short ones: -qo DIR takes DIR */
            for (const char *ch = argv[i] + 1; *ch; ch++) {
                const sw_opt *flag = ch[1] == '=' ? by_short(rows, n, *ch) : NULL;
                if (flag && !takes_arg(flag)) { /* getopt would call '=' an unknown option */
                    sw_cli_error(c->cmd, "-%c takes no value (see --help)", *ch);
                    return 2;
                }
                const sw_opt *o = by_short(rows, n, *ch);
                if (o && takes_arg(o)) {
                    i += !ch[1]; /* its value: the rest of the word, else the next word */
                    break;
                }
            }
            continue;
        }
        if (strncmp(argv[i], "--", 2) || (len == 4 && !strncmp(name, "help", 4)))
            continue;
        bool known = false;
        for (size_t k = 0; k < n && !known; k++)
            known = is_option(rows[k]) && strlen(rows[k]->name) == len &&
                    !strncmp(rows[k]->name, name, len);
        if (!known) {
            sw_cli_error(c->cmd, "unknown option '%.*s' (see --help)", (int)len + 2, argv[i]);
            return 2;
        }
        if (takes_arg_named(rows, n, name, len) && !name[len])
            i++; /* its value, whatever it looks like */
    }
    return 0;
}

int sw_cli_parse(const sw_cmd_opts *c, int argc, char **argv, void *opts, int *first)
{
    int rc = whole_names_only(c, argc, argv);
    if (!rc)
        rc = each_option(c, argc, argv, parse_one, &(parsing){c, argv, opts});
    if (rc)
        return rc;
    int left = argc - optind;
    if (c->max_args >= 0 && left > c->max_args) {
        sw_cli_error(c->cmd, "unexpected argument '%s' (see --help)", argv[optind + c->max_args]);
        return 2;
    }
    for (int i = optind; i < argc && !c->args_verbatim; i++)
        if (!*argv[i]) {
            sw_cli_error(c->cmd, "an empty argument (a file's name, a word: see --help)");
            return 2;
        }
    if (first)
        *first = optind;
    return 0;
}

static bool named_in(const char *name, const char *const *names)
{
    for (; names && *names; names++)
        if (!strcmp(name, *names))
            return true;
    return false;
}

static bool in_table(const sw_opt *o, const sw_opt *table)
{
    for (const sw_opt *t = table; t->type != SW_OPT_END; t++)
        if (t == o)
            return true;
    return false;
}

/* The options given, each row's last value: for sw_cli_options_given. */
typedef struct given_options {
    const sw_opt *rows[MAX_OPTS];
    size_t n;
    bool given[MAX_OPTS];
    const char *value[MAX_OPTS];
    char number[MAX_OPTS][32]; /* a number's value as the record spells it */
} given_options;

/* A number as one spelling: .75, 0.75 and 7.5e-1 are one value, and so one record. */
static const char *canonical(const sw_opt *o, const char *arg, char *out, size_t cap)
{
    char *end;
    errno = 0;
    if (o->type == SW_OPT_F32 || o->type == SW_OPT_F64 || o->type == SW_OPT_MS) {
        double d = strtod(arg, &end);
        if (!errno && end != arg && !*end) {
            int digits = 1; /* the fewest that read back, and no exponent on a whole number */
            while (digits < 17 && (snprintf(out, cap, "%.*g", digits, d), strtod(out, NULL) != d))
                digits++;
            int whole = fabs(d) >= 1 && fabs(d) < 1e17 ? (int)floor(log10(fabs(d))) + 1 : 0;
            snprintf(out, cap, "%.*g", digits > whole ? digits : whole, d);
            return out;
        }
    } else if (o->type == SW_OPT_U32 || o->type == SW_OPT_LONG || o->type == SW_OPT_SIZE ||
               o->type == SW_OPT_U64) {
        unsigned long long u = strtoull(arg, &end, 10);
        if (!errno && end != arg && !*end && *arg != '-') {
            snprintf(out, cap, "%llu", u);
            return out;
        }
    }
    return arg;
}

static int note_one(void *ctx, const sw_opt *o, int code, const char *arg)
{
    (void)code;
    given_options *g = ctx;
    for (size_t i = 0; o && i < g->n; i++)
        if (g->rows[i] == o) {
            g->given[i] = true;
            g->value[i] = takes_arg(o) ? canonical(o, arg, g->number[i], sizeof g->number[i])
                                       : NULL;
        }
    return 0;
}

int sw_cli_options_given(const sw_cmd_opts *c, int argc, char **argv, const sw_opt *table,
                         const char *const *skip, char *out, size_t cap)
{
    given_options g = {.given = {false}};
    g.n = rows_of(c, g.rows, MAX_OPTS);
    each_option(c, argc, argv, note_one, &g);
    size_t len = 0;
    out[0] = '\0';
    for (size_t i = 0; i < g.n; i++) {
        if (!g.given[i] || (table && !in_table(g.rows[i], table)) ||
            named_in(g.rows[i]->name, skip))
            continue;
        int w = snprintf(out + len, cap - len, "--%s%s%s\n", g.rows[i]->name, g.value[i] ? " " : "",
                         g.value[i] ? g.value[i] : "");
        if (w < 0 || (size_t)w >= cap - len)
            return -1;
        len += (size_t)w;
    }
    return 0;
}

/* ---- --help -------------------------------------------------------------------------------- */

/* The default of an option as its field holds it, or nothing worth showing. */
static void shown_default(const sw_opt *o, const void *opts, char *out, size_t cap)
{
    const char *at = (const char *)opts + o->at;
    out[0] = '\0';
    if (o->shown) {
        snprintf(out, cap, "%s", o->shown);
        return;
    }
    switch (o->type) {
    case SW_OPT_STR:
        if (*(const char *const *)at)
            snprintf(out, cap, "%s", *(const char *const *)at);
        break;
    case SW_OPT_TEXT: snprintf(out, cap, "%s", at); break;
    case SW_OPT_U32: snprintf(out, cap, "%u", *(const uint32_t *)at); break;
    case SW_OPT_LONG: snprintf(out, cap, "%ld", *(const long *)at); break;
    case SW_OPT_SIZE: snprintf(out, cap, "%zu", *(const size_t *)at); break;
    case SW_OPT_U64: snprintf(out, cap, "%llu", *(const unsigned long long *)at); break;
    case SW_OPT_F32: snprintf(out, cap, "%g", (double)*(const float *)at); break;
    case SW_OPT_F64: snprintf(out, cap, "%g", *(const double *)at); break;
    case SW_OPT_MS: snprintf(out, cap, "%g", *(const double *)at * 1000); break;
    case SW_OPT_CHOICE: snprintf(out, cap, "%s", o->choices[*(const int *)at]); break;
    default: break;
    }
    if (!strcmp(out, "0") && o->type != SW_OPT_CHOICE)
        out[0] = '\0'; /* a limit or target that is off */
}

/* "  -q, --quiet" or "  --lr X", padded to the help column (or on a line of its own). */
static void print_name(const sw_opt *o)
{
    char head[96], shortform[8] = "";
    if (o->short_name)
        snprintf(shortform, sizeof shortform, "-%c, ", o->short_name);
    bool arg = takes_arg(o) && o->arg;
    int len = snprintf(head, sizeof head, "  %s--%s%s%s", shortform, o->name, arg ? " " : "",
                       arg ? o->arg : "");
    if (len >= HELP_COLUMN - 1)
        printf("%s\n%*s", head, HELP_COLUMN, "");
    else
        printf("%-*s", HELP_COLUMN, head);
}

static void print_option(const sw_opt *o, const void *opts)
{
    print_name(o);
    char dflt[128];
    shown_default(o, opts, dflt, sizeof dflt);
    const char *h = o->help ? o->help : "";
    for (const char *line = h;;) {
        const char *nl = strchr(line, '\n');
        int len = nl ? (int)(nl - line) : (int)strlen(line);
        bool last = !nl;
        printf("%.*s", len, line);
        bool fits = HELP_COLUMN + len + 11 + (int)strlen(dflt) < 100;
        if (last && dflt[0] && fits)
            printf(" (default %s)", dflt);
        else if (last && dflt[0]) /* on a line of its own: 100 columns at most */
            printf("\n%*s(default %s)", HELP_COLUMN, "", dflt);
        putchar('\n');
        if (last)
            break;
        line = nl + 1;
        printf("%*s", HELP_COLUMN, "");
    }
}

void sw_cli_help(const sw_cmd_opts *c, const void *opts)
{
    printf("usage: syncwise %s %s\n\n", c->cmd, c->usage ? c->usage : "[OPTIONS]");
    if (c->about)
        printf("%s\n\n", c->about);
    const sw_opt *rows[MAX_OPTS];
    size_t n = rows_of(c, rows, MAX_OPTS);
    printf("options:\n");
    for (size_t i = 0; i < n; i++) {
        if (rows[i]->type == SW_OPT_SECTION)
            printf("%s:\n", rows[i]->name);
        else
            print_option(rows[i], opts);
    }
    printf("  -h, --help             this text\n");
    if (c->epilog) {
        printf("\n");
        c->epilog();
    }
}
