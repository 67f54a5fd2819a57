/*
 * Opening a file that must be of a given kind. A daemon that writes to a
 * path from its configuration or its command line must not block on a
 * FIFO nobody reads, write its pid into a device, or append its log to a
 * directory entry it did not mean: the path is opened without blocking,
 * the descriptor is checked with fstat(), and anything of another kind is
 * refused with a message that names what the path is.
 */
#ifndef LAPSE_FILE_H
#define LAPSE_FILE_H

#include <sys/types.h>

#include <stddef.h>

/* The kinds of file a caller accepts, or'ed together. */
#define FILE_REGULAR 0x1
#define FILE_CHARDEV 0x2 /* /dev/null, /dev/console, a terminal */

/*
 * Open path with open(2)'s flags (O_CLOEXEC is added) and, with O_CREAT,
 * mode. The open never blocks: it is done with O_NONBLOCK, which is
 * cleared again before the descriptor is returned. A file of another kind
 * than kinds is closed again. Returns the descriptor (caller closes), or
 * -1 with *cause set (caller frees) to "PATH: is a directory, not a
 * regular file" (and so on, see file_check_kind()) or "PATH: <strerror>".
 * With O_NOFOLLOW, a symbolic link is "PATH: is a symbolic link, not ...".
 */
int
file_open(const char *path, int flags, mode_t mode, int kinds, char **cause);

/*
 * Whether st_mode, the mode of the file at path, is of one of kinds.
 * Returns 0, or -1 with *cause set (caller frees) to "PATH: is WHAT, not
 * ACCEPTED", where WHAT is "a directory", "a FIFO", "a socket", "a block
 * device", "a character device", "a symbolic link" or "a regular file", and
 * ACCEPTED names kinds ("a regular file", "a regular file or a character
 * device").
 */
int file_check_kind(const char *path, mode_t st_mode, int kinds, char **cause);

/*
 * Read the whole file at path into a new buffer (caller frees, with
 * file_clear_free() when it may hold a secret; no NUL is added). Returns
 * 0, or -1 with *error set to an errno value: EFBIG when the file holds
 * more than max bytes. A buffer outgrown is cleared before it is freed,
 * so a secret read here leaves no copy behind.
 */
int
file_read(const char *path, size_t max, char **out, size_t *outlen, int *error);

/* Overwrite len bytes at p, then free them; NULL is fine. */
void file_clear_free(void *p, size_t len);

#endif
