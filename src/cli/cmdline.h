/* A command line kept in a file, to be made again and compared: written as a shell's words
 * (quoted where a shell needs quotes), read back as a shell reads them, and two records of a
 * command's options (sw_cli_options_given) shown side by side when they differ. */
#ifndef SW_CLI_CMDLINE_H
#define SW_CLI_CMDLINE_H

#include <stddef.h>

/* "HEAD ARG1 ARG2 ..." from argv[1..argc) into out (cut at cap). */
void sw_cli_cmdline_write(char *out, size_t cap, const char *head, int argc, char **argv);

/* The words of such a line after its head, into argv[1..] (argv[0] = argv0), their text into
 * words (at least as large as the line); the count with argv[0], or -1 when the line does not
 * begin with head or has more than max - 2 words. argv[count] is NULL. */
int sw_cli_cmdline_read(const char *line, const char *head, const char *argv0, char *words,
                        char **argv, int max);

/* Prints both records on standard error, each under its heading ("(no option)" for an empty
 * one): their difference is too long for an error message. */
void sw_cli_print_both(const char *cmd, const char *was_heading, const char *was, size_t was_len,
                       const char *now_heading, const char *now);

#endif
