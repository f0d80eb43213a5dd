/* The benchmarks' command lines (bench_args.h). */
#include "bench_args.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *usage_text; /* what the last bench_usage call was given */

void bench_usage(int argc, char **argv, int max_args, const char *usage)
{
    usage_text = usage;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            printf("usage: %s %s", argv[0], usage);
            exit(0);
        }
    if (argc - 1 > max_args) {
        if (max_args == 0)
            fprintf(stderr, "%s takes no arguments (%s)\n", argv[0], argv[1]);
        else
            fprintf(stderr, "%s: %d arguments, at most %d\n", argv[0], argc - 1, max_args);
        fprintf(stderr, "usage: %s %s", argv[0], usage);
        exit(2);
    }
}

_Noreturn void bench_refuse(const char *program, const char *arg, const char *choices)
{
    fprintf(stderr, "%s: %s: %s\n", program, arg, choices);
    if (usage_text)
        fprintf(stderr, "usage: %s %s", program, usage_text);
    exit(2);
}

long bench_long(const char *program, const char *what, const char *text, long lo, long hi)
{
    char *end, why[96];
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end || v < lo || v > hi) {
        snprintf(why, sizeof why, "%s is a whole number from %ld to %ld", what, lo, hi);
        bench_refuse(program, text, why);
    }
    return v;
}

double bench_double(const char *program, const char *what, const char *text, double lo, double hi)
{
    char *end, why[96];
    errno = 0;
    double v = strtod(text, &end);
    if (errno || end == text || *end || !(v >= lo && v <= hi)) {
        snprintf(why, sizeof why, "%s is a number from %g to %g", what, lo, hi);
        bench_refuse(program, text, why);
    }
    return v;
}
