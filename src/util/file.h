/* Reading whole inputs into memory; writing files so that nothing is lost. */
#ifndef GPUOP_UTIL_FILE_H
#define GPUOP_UTIL_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "util/error.h"

/* Reads all of `path` ("-" for standard input) into a malloc'd buffer that
 * the caller frees. The buffer has a '\0' after the last byte, which is not
 * counted in *len. Returns NULL and fills err when the file cannot be read. */
char *gp_read_file(const char *path, size_t *len, gp_error *err);

/* The same for an open stream; `name` is used in error messages. */
char *gp_read_stream(FILE *f, const char *name, size_t *len, gp_error *err);

/* mkdir -p `dir` with `mode` for what it creates; an existing directory
 * is fine, anything else of that name is an error. */
int gp_mkdirs(const char *dir, mode_t mode, gp_error *err);

/* Writes `path` atomically: a temporary file beside it, given `mode`,
 * fsync'd and renamed over it, then the directory synced. A reader, or a
 * crash, sees the old file or the new one, never a mix. */
int gp_write_atomic(const char *path, const char *text, size_t len, mode_t mode, gp_error *err);

/* Creates `path` holding `text` unless a file of that name exists, which
 * stays untouched even if it appears while this runs. Returns 0 created, 1
 * already there, -1 with err. */
int gp_create_new(const char *path, const char *text, size_t len, mode_t mode, gp_error *err);

/* Copies `text` (a file's old bytes) to PATH.gpuop-backup-<UTC time>
 * (-2, -3, ... when two fall in the same second), created exclusively with
 * `mode`, fsync'd. Returns the backup's name (malloc'd), or NULL with err. */
char *gp_write_backup(const char *path, const char *text, size_t len, mode_t mode, gp_error *err);

/* The same three for a file `name` (no '/') of the directory open as
 * `dirfd`; `shown` is its path in messages (and, for the backup, the name
 * returned is `shown` with the backup's suffix). Nothing is written
 * through a symbolic link: new files are created with O_EXCL|O_NOFOLLOW,
 * and a rename replaces a link named `name` itself, not what it names. */
int gp_write_atomic_at(int dirfd, const char *name, const char *shown, const char *text, size_t len,
                       mode_t mode, gp_error *err);
int gp_create_new_at(int dirfd, const char *name, const char *shown, const char *text, size_t len,
                     mode_t mode, gp_error *err);
char *gp_write_backup_at(int dirfd, const char *name, const char *shown, const char *text,
                         size_t len, mode_t mode, gp_error *err);

/* The directory ROOT/REL open (a descriptor the caller closes), walked one
 * part at a time with O_NOFOLLOW, so that no symbolic link inside ROOT
 * leads out of it; ROOT itself is opened with O_NOFOLLOW too (the caller
 * gives its real path). With `create`, missing parts are made with `mode`.
 * A '.' or '..' part is refused. -1 with err. */
int gp_open_beneath(const char *root, const char *rel, bool create, mode_t mode, gp_error *err);

#endif
