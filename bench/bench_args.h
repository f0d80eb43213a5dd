/* The benchmarks' command lines: `--help` says what a benchmark measures and what it takes, and
 * an argument it does not take is refused, never read as its default (a benchmark that ran for
 * minutes on a mistyped argument would print figures of a run nobody asked for). */
#ifndef SW_BENCH_ARGS_H
#define SW_BENCH_ARGS_H

/* Prints `usage` (its lines after "usage: PROGRAM ") and exits 0 at -h or --help anywhere in
 * argv; exits 2, with the usage on stderr, when argc - 1 exceeds max_args. */
void bench_usage(int argc, char **argv, int max_args, const char *usage);

/* The whole number `text` in [lo, hi]; exits 2 naming `what` when it is not one. */
long bench_long(const char *program, const char *what, const char *text, long lo, long hi);

/* The number `text` in [lo, hi]; exits 2 naming `what` when it is not one. */
double bench_double(const char *program, const char *what, const char *text, double lo, double hi);

/* Exits 2 saying that `arg` is not among the choices. */
_Noreturn void bench_refuse(const char *program, const char *arg, const char *choices);

#endif
