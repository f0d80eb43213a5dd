/* A command line kept in a file: cmdline.h. */
#include "cmdline.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* Whether a word needs no quotes in a shell. */
static bool plain_word(const char *w)
{
    return *w && strspn(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                           "_@%+=:,./-") == strlen(w);
}

void sw_cli_cmdline_write(char *out, size_t cap, const char *head, int argc, char **argv)
{
    size_t off = (size_t)snprintf(out, cap, "%s", head);
    for (int i = 1; i < argc && off < cap; i++) {
        bool plain = plain_word(argv[i]);
        off += (size_t)snprintf(out + off, cap - off, plain ? " %s" : " '", argv[i]);
        for (const char *c = argv[i]; !plain && *c && off < cap; c++) /* it's: 'it'\''s' */
            off += (size_t)snprintf(out + off, cap - off, *c == '\'' ? "'\\''" : "%c", *c);
        if (!plain && off < cap)
            off += (size_t)snprintf(out + off, cap - off, "'");
    }
}

/* The next word of a line as a shell reads it (quotes and backslashes), into out; the text
 * after it, or NULL at the end. */
static const char *next_word(const char *at, char *out)
{
    at += strspn(at, " ");
    if (!*at)
        return NULL;
    bool quoted = false;
    for (; *at && (quoted || *at != ' '); at++) {
        if (*at == '\'')
            quoted = !quoted;
        else if (*at == '\\' && !quoted && at[1])
            *out++ = *++at;
        else
            *out++ = *at;
    }
    *out = '\0';
    return at;
}

int sw_cli_cmdline_read(const char *line, const char *head, const char *argv0, char *words,
                        char **argv, int max)
{
    size_t len = strlen(head);
    if (strncmp(line, head, len) != 0 || max < 2)
        return -1;
    int argc = 0;
    argv[argc++] = (char *)argv0;
    for (const char *at = line + len; (at = next_word(at, words)); words += strlen(words) + 1) {
        if (argc == max - 1)
            return -1;
        argv[argc++] = words;
    }
    argv[argc] = NULL;
    return argc;
}

void sw_cli_print_both(const char *cmd, const char *was_heading, const char *was, size_t was_len,
                       const char *now_heading, const char *now)
{
    fprintf(stderr, "syncwise %s: %s\n%.*s%s%s\n%s%s", cmd, was_heading, (int)was_len, was,
            was_len ? "" : "  (no option)\n", now_heading, now, *now ? "" : "  (no option)\n");
}
