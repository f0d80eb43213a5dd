/* What a thread was running when the process crashed: a policy of one's own runs inside the
 * command, unisolated, and one that dereferences NULL ends the whole comparison. Of the runs
 * going at once, the crash names the one that crashed, on stderr, before it takes its default
 * course (a core, exit status 128 + the signal), so that the user knows which to leave out.
 * Under AddressSanitizer its own report is better, and its handler is left in place. */
#define _DEFAULT_SOURCE /* sigaltstack */
#include <assert.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* The stack a crashing thread's handler runs on: a thread that overflowed its own (a policy
 * recursing for ever) has none left to run it. */
#define NOTE_STACK (64 * 1024)

static const char *command;
static _Thread_local const char *volatile doing; /* a policy's spec; NULL: nothing of note */
static _Thread_local volatile uint64_t doing_seed;
static _Thread_local void *note_stack;
/* Two threads may crash at once (two runs of one bad policy): the first says so and ends the
 * process, the other waits for that, so that the note is whole. */
static atomic_int crashing;
static_assert(ATOMIC_INT_LOCK_FREE == 2, "a signal handler's flag must be lock-free");

static void say(const char *s) { (void)!write(STDERR_FILENO, s, strlen(s)); }

/* n in decimal, as a signal handler may write it (no stdio). */
static void say_number(uint64_t n)
{
    char digits[24], *at = digits + sizeof digits;
    *--at = '\0';
    do
        *--at = (char)('0' + n % 10);
    while ((n /= 10) > 0);
    say(at);
}

static void on_crash(int sig)
{
    if (atomic_exchange(&crashing, 1))
        for (;;)
            pause(); /* the first to crash ends the process */
    if (doing) {
        say("\nsyncwise ");
        say(command);
        say(": crashed (signal ");
        say_number((uint64_t)sig);
        say(") running ");
        say(doing);
        say(" seed ");
        say_number(doing_seed);
        say(": a policy of one's own (a plugin) that crashed? leave it out, or mend it\n");
    }
    signal(sig, SIG_DFL);
    raise(sig); /* the default action: the process ends (a core, 128 + sig) */
}

#ifdef __SANITIZE_ADDRESS__
enum { SANITIZED = 1 };
#else
enum { SANITIZED = 0 };
#endif

void sw_cli_crash_note_install(const char *cmd)
{
    if (SANITIZED)
        return;
    command = cmd;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_crash;
    sa.sa_flags = SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    static const int crashes[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
    for (size_t i = 0; i < sizeof crashes / sizeof *crashes; i++)
        sigaction(crashes[i], &sa, NULL);
}

void sw_cli_crash_note_doing(const char *spec, uint64_t seed)
{
    if (!SANITIZED && spec && !note_stack && (note_stack = malloc(NOTE_STACK))) {
        stack_t ss = {.ss_sp = note_stack, .ss_size = NOTE_STACK};
        if (sigaltstack(&ss, NULL)) {
            free(note_stack);
            note_stack = NULL;
        }
    }
    doing = spec;
    doing_seed = seed;
}

void sw_cli_crash_note_done(void)
{
    doing = NULL;
    if (!note_stack)
        return;
    stack_t off = {.ss_flags = SS_DISABLE};
    sigaltstack(&off, NULL);
    free(note_stack);
    note_stack = NULL;
}
