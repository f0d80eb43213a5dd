/* Whole-file I/O shared by the binary formats (checkpoints, RL policies).
 *
 * Writes are atomic: to a temporary file in the same directory, flushed with fsync, renamed over
 * the target and the directory synced, so a crash leaves the old file or the new one, never a
 * mixture. */
#ifndef SYNCWISE_FILE_H
#define SYNCWISE_FILE_H

#include <stddef.h>
#include <stdint.h>

/* Replaces path with the n bytes at b. `what` names the file in errors ("checkpoint"). */
int sw_file_write_atomic(const char *path, const uint8_t *b, size_t n, const char *what, char *err);

/* Reads all of path into a new buffer (the caller frees *out). Fails on files over max bytes. */
int sw_file_read_all(const char *path, size_t max, uint8_t **out, size_t *len, char *err);

#endif
