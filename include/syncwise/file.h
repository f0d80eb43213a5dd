/* Whole-file I/O shared by the binary formats (checkpoints, RL policies).
 *
 * Writes are atomic: to a temporary file in the same directory, flushed with fsync, renamed over
 * the target and the directory synced, so a crash leaves the old file or the new one, never a
 * mixture. */
#ifndef SYNCWISE_FILE_H
#define SYNCWISE_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Replaces path with the n bytes at b (a symbolic link: the file it names, the link kept).
 * `what` names the file in errors ("checkpoint"). The temporary file is PATH.tmp.PID; first, those that processes no longer running left behind
 * (killed mid-write) are removed. */
int sw_file_write_atomic(const char *path, const uint8_t *b, size_t n, const char *what, char *err);

/* sw_file_write_atomic of a new file only its owner may read (mode 0600 from its making: a
 * secret key), never over one that is there, even one made while this one was written
 * (SW_ESTATE then). */
int sw_file_write_private(const char *path, const uint8_t *b, size_t n, const char *what,
                          char *err);

/* sw_file_write_atomic of one line of text (its newline added): written whole or not at all, so
 * that whoever waits for the file (an endpoint a server bound) never reads half of it. */
int sw_file_write_line(const char *path, const char *text, const char *what, char *err);

/* Whether a save may rename a file over path: nothing is there, or a regular file (not a
 * FIFO, a device or a socket, which it would replace). */
bool sw_file_replaceable(const char *path);

/* Keeps path's content as `as` too (what a save is about to replace: the checkpoint before),
 * path staying where it is: a second name (a hard link, as AS.tmp.PID) renamed over `as`, so
 * that at every moment each of the two names holds a whole file. A file system without hard
 * links gets path renamed to `as` instead (path missing until the save that follows).
 * 1 when kept, 0 when path is not there, -1 with errno on failure. */
int sw_file_keep_as(const char *path, const char *as);

/* Whether sw_file_write_atomic could write path: its temporary file is made and removed, so
 * that a run learns of a directory that is missing or not writable when it starts, not at its
 * first save. `what` names the option in the error ("--checkpoint"). */
int sw_file_check_writable(const char *path, const char *what, char *err);

/* Claims path for this process's writes, from start to end of a run: checks it can be written
 * (as above) and locks PATH.lock (made if missing, left behind empty), so that a second process
 * given the same file fails at its start, naming the option, instead of both overwriting each
 * other's saves. The lock is beside the file the path names in the end, through symbolic
 * links (a hard link is another name the lock cannot know). *lock_fd holds the lock until
 * sw_file_release or the process ends (a crash frees it too); -1 when nothing was claimed. */
int sw_file_claim(const char *path, const char *what, int *lock_fd, char *err);
/* Opens a file written in place and appended to (an event log) for reading and appending,
 * locked for this process (the file's own lock, by whatever path: a second writer fails,
 * naming `what`), and emptied unless `keep` (a resumed run appends; a caller that must not lose
 * the old contents before it knows it runs empties it later). A FIFO or device is opened as it
 * is. NULL with err set on failure; fclose releases the lock. */
FILE *sw_file_open_log(const char *path, bool keep, const char *what, char *err);

/* Whether another process holds path's own lock: a running server's or simulation's log
 * (sw_file_open_log), which no other output may replace or empty. */
bool sw_file_in_use(const char *path);

/* Creates (or empties) path for writing, as fopen "w" does, unless another process holds its
 * lock (sw_file_in_use): NULL with err set, naming `what`, on either failure. */
FILE *sw_file_create(const char *path, const char *what, char *err);

/* Closes a file written through f (NULL: nothing to do), and fails with SW_EIO naming path if
 * any write to it failed: a full disk, a removed directory. A line-buffered log's failed writes
 * leave fclose nothing to fail on, so the stream's error flag is read first. */
int sw_file_close(FILE *f, const char *path, char *err);
/* Cuts a text file open as fd (for reading and writing) back to its last newline: a line a crash left half-written goes,
 * so that what is appended next begins a line of its own. 1 when it cut, 0 when the file
 * ended on a whole line (or was empty), -1 on error (errno). */
int sw_file_drop_torn_line(int fd);

/* Whether two paths name one file: the same file when both exist (links and other spellings
 * included), else the same place once their directories are resolved. */
bool sw_file_same(const char *a, const char *b);
void sw_file_release(int lock_fd);

/* Claims a --checkpoint path (sw_file_claim, what "--checkpoint") for a run that may resume
 * from it (*resume). A resume finds one of three things there: a save (PATH or PATH.prev), which
 * it goes on from; a claim never saved (PATH.lock alone: the `who` before it, "run" or "shard",
 * was killed before its first save), and then *resume turns false and the run starts afresh,
 * saying so; or nothing, refused as a mistyped path would be, as is a claim whose lock says a
 * save was made (sw_file_note_saved) where none is left (a file moved or deleted). *made says whether this claim made
 * PATH.lock, for sw_file_release_claim. */
int sw_file_claim_checkpoint(const char *path, const char *who, bool *resume, int *lock_fd,
                             bool *made, char *err);
/* A start afresh (no --resume) over saved work is refused, so that it is not lost to a
 * forgotten option: SW_ESTATE, naming the file, when path (or, with prev_too, the FILE.prev
 * kept beside the file it names) is not empty; `earlier` says what it may hold ("an earlier
 * run's checkpoint"), `who` what would start ("run"). 0 otherwise. */
int sw_file_refuse_fresh_start(const char *path, bool prev_too, const char *earlier,
                               const char *who, char *err);
/* sw_file_claim of an output saved now and then (a training's --out); *made says whether this
 * claim made PATH.lock, for sw_file_release_claim, which removes it when nothing was saved. */
int sw_file_claim_output(const char *path, const char *what, int *lock_fd, bool *made, char *err);
/* The file path names in the end, through symbolic links (to a file that may not exist yet),
 * its directory resolved, into out; false for a loop or a name too long. */
bool sw_file_final_name(const char *path, char out[4096]);

/* Marks the claim's PATH.lock (once) as one under which a save was made: called after each
 * save, so that a resume that finds the file gone knows it was not a start killed early. */
void sw_file_note_saved(int lock_fd);
/* sw_file_release, and when this process made PATH.lock (made) and nothing was saved at path,
 * the lock's file removed too: a start refused before its first save leaves no sign of a claim
 * (a killed one does, which is how a resume knows it). */
void sw_file_release_claim(const char *path, int lock_fd, bool made);
/* sw_file_release with PATH.lock removed first, while still held: for a claim on a file that
 * means nothing once its process has ended (an endpoint file), so that a run leaves no lock
 * behind, which in a shared directory another user could not open. A process that opened the
 * old lock just before may still lock it once removed: at worst two share the file, as before
 * any claim. Nothing for lock_fd -1. */
void sw_file_release_removing(const char *path, int lock_fd);

/* Whether the text is a process id whose process is gone (what a killed writer left behind,
 * named by its pid, may be removed). */
bool sw_file_pid_gone(const char *pid_text);

/* Removes PATH.tmp.PID files whose process is gone; returns how many. */
int sw_file_remove_stale(const char *path);

/* Reads all of path into a new buffer (the caller frees *out). Fails on files over max bytes and
 * on anything but a regular file (a FIFO would block, a device never end). */
int sw_file_read_all(const char *path, size_t max, uint8_t **out, size_t *len, char *err);

#ifdef __cplusplus
}
#endif

#endif
