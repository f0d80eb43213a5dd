/* A comparison's record in its --log-dir, kept as it runs, so that a comparison stopped, killed
 * or crashed keeps every run it finished and `compare --resume` runs only the others.
 *
 * DIR/compare.scenario holds the scenario's options as given (one "--name VALUE" a line, in
 * the option table's order, a number in its shortest spelling): a resume must give the same, or
 * its runs would not be the ones kept. DIR/results.csv holds a row per finished run, appended (and synced) as each ends, and
 * rewritten in the comparison's order when it is done. A row keeps every figure the table
 * reads at full precision, so a resumed table is the table an uninterrupted run prints.
 */
#ifndef SW_CLI_COMPARE_JOURNAL_H
#define SW_CLI_COMPARE_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "syncwise/compare.h"
#include "syncwise/sim.h"

typedef struct sw__cmp_journal {
    char csv[4096]; /* DIR/results.csv */
    int lock_fd;    /* DIR/results.csv.lock, held from start to free: one comparison a DIR */
    size_t unread;  /* a resume: lines of the file that are no row (torn, edited) */
    char **old;     /* a resume: the rows the file held, NULL once taken */
    struct sw__cmp_row *facts; /* what each of them says, read once */
    size_t n_old, cap_old;
    FILE *f; /* open for appending, locked, while the runs go */
} sw__cmp_journal;

/* What a row says of its run, as the table reads it. */
typedef struct sw__cmp_row {
    char policy[1024];
    uint64_t seed;
    sw_trial trial;
    double diverged_t; /* -1: it did not diverge */
    size_t line;       /* where results.csv holds it, from 1 (set by the reader, not the parse) */
} sw__cmp_row;

/* A finished run's row (no newline; the spec quoted as CSV quotes), or NULL out of memory. */
char *sw__cmp_row_format(const char *spec, uint64_t seed, const sw_sim_result *r);
/* Reads a row as sw__cmp_row_format writes it; false for anything else. */
bool sw__cmp_row_parse(const char *line, sw__cmp_row *out);

/* What a kept record reads as now (its numbers spelled as `scenario` spells them: an earlier
 * version kept them as given), into out; false when it does not read. */
typedef bool (*sw__cmp_scenario_fn)(const char *kept, char *out, size_t cap);

/* Claims DIR for this comparison (another running there is refused), then checks
 * DIR/compare.scenario, as `canon` reads it, against `scenario` when resuming and reads the rows
 * kept (a DIR with neither file has nothing to resume: every run runs), or, when not, writes it
 * and keeps an earlier comparison's rows as results.csv.prev. */
int sw__cmp_journal_start(sw__cmp_journal *j, const char *dir, const char *scenario, bool resume,
                          sw__cmp_scenario_fn canon, char *err);
/* The row kept for this run (one a run: a file holding two that differ was refused), which the
 * caller now owns; NULL when there is none. */
char *sw__cmp_journal_take(sw__cmp_journal *j, const char *policy, uint64_t seed);
/* How many rows kept no run of this comparison claimed (another seed count or policy list). */
size_t sw__cmp_journal_unclaimed(const sw__cmp_journal *j);
/* Writes the rows kept (n of them; then those no run claimed, which stay at the end of the file
 * through finish) as the file, and opens it for the rows to come. */
int sw__cmp_journal_open(sw__cmp_journal *j, char *const *rows, size_t n, char *err);
/* Appends a finished run's row and syncs it to disk. */
int sw__cmp_journal_add(sw__cmp_journal *j, const char *row, char *err);
/* Closes the file and writes it again with every row, in order (rows[i] NULL: none). */
int sw__cmp_journal_finish(sw__cmp_journal *j, char *const *rows, size_t n, char *err);
/* Frees what is left (the file is closed if open). */
void sw__cmp_journal_free(sw__cmp_journal *j);

/* The files the texts (the policies, the cluster, the events, the data) name, and the plugins
 * their policies come from, their sizes and CRC-32Cs kept in DIR/compare.files
 * (compare_files.c): a resume (resume) whose files changed since is refused, naming the file;
 * those it no longer names are kept for a later resume. */
int sw__cmp_files_check(const char *dir, const char *const *texts, size_t n_texts, bool resume,
                        char *err);

#endif
