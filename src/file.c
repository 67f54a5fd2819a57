/*
 * Opening files of a given kind. Invariant: file_open() returns only a
 * descriptor that fstat() found to be of an accepted kind, in blocking
 * mode; when the open itself fails, the path is looked at again (lstat()
 * with O_NOFOLLOW, else stat()) only to word the message, never to decide.
 */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "file.h"
#include "xmalloc.h"

/* What a file of each type is, as the object of "is". */
static const struct file_type {
	mode_t type; /* S_IFMT bits */
	const char *name;
} file_types[] = {
	{ S_IFREG, "a regular file" },
	{ S_IFDIR, "a directory" },
	{ S_IFCHR, "a character device" },
	{ S_IFBLK, "a block device" },
	{ S_IFIFO, "a FIFO" },
	{ S_IFSOCK, "a socket" },
	{ S_IFLNK, "a symbolic link" },
};

static const char *
kind_name(mode_t st_mode)
{
	size_t i;

	for (i = 0; i < sizeof file_types / sizeof file_types[0]; i++) {
		if ((st_mode & S_IFMT) == file_types[i].type)
			return (file_types[i].name);
	}
	return ("a file of an unknown kind");
}

/* Whether st_mode is one of kinds. */
static int
kind_accepted(mode_t st_mode, int kinds)
{
	return (((kinds & FILE_REGULAR) && S_ISREG(st_mode)) ||
	    ((kinds & FILE_CHARDEV) && S_ISCHR(st_mode)));
}

int
file_check_kind(const char *path, mode_t st_mode, int kinds, char **cause)
{
	const char *accepted;

	if (kind_accepted(st_mode, kinds))
		return (0);
	if (kinds == (FILE_REGULAR | FILE_CHARDEV))
		accepted = "a regular file or a character device";
	else if (kinds == FILE_CHARDEV)
		accepted = "a character device";
	else
		accepted = "a regular file";
	xasprintf(
	    cause, "%s: is %s, not %s", path, kind_name(st_mode), accepted);
	return (-1);
}

/* Clear O_NONBLOCK, which file_open() opens with. */
static int
set_blocking(int fd)
{
	int fl;

	fl = fcntl(fd, F_GETFL);
	if (fl == -1)
		return (-1);
	return (fcntl(fd, F_SETFL, fl & ~O_NONBLOCK));
}

/*
 * The message for an open() that failed with error: what the path is, when
 * that is what refused it (EISDIR, ELOOP, ENXIO), else strerror.
 */
static int
open_error(const char *path, int flags, int kinds, int error, char **cause)
{
	struct stat sb;
	int found;

	if (flags & O_NOFOLLOW)
		found = lstat(path, &sb) == 0;
	else
		found = stat(path, &sb) == 0;
	if (found && file_check_kind(path, sb.st_mode, kinds, cause) != 0)
		return (-1);
	xasprintf(cause, "%s: %s", path, strerror(error));
	return (-1);
}

int
file_open(const char *path, int flags, mode_t mode, int kinds, char **cause)
{
	struct stat sb;
	int fd, error;

	fd = open(path, flags | O_CLOEXEC | O_NONBLOCK, mode);
	if (fd == -1)
		return (open_error(path, flags, kinds, errno, cause));
	if (fstat(fd, &sb) == -1 || set_blocking(fd) == -1) {
		error = errno;
		close(fd);
		xasprintf(cause, "%s: %s", path, strerror(error));
		return (-1);
	}
	if (file_check_kind(path, sb.st_mode, kinds, cause) != 0) {
		close(fd);
		return (-1);
	}
	return (fd);
}

/* Overwrite len bytes at p before freeing them: they may hold a secret. */
void
file_clear_free(void *p, size_t len)
{
	volatile unsigned char *v = p;

	if (p == NULL)
		return;
	while (len-- > 0)
		*v++ = 0;
	free(p);
}

/*
 * Read the whole file at path into a new buffer (caller frees; no NUL is
 * added). Returns 0, or -1 with *error set to an errno value: EFBIG when
 * the file holds more than max bytes. A buffer outgrown is
 * cleared before it is freed, so a password read here leaves no copy.
 */
int
file_read(const char *path, size_t max, char **out, size_t *outlen, int *error)
{
	size_t len = 0, size = 4096;
	char *buf, *bigger;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd == -1) {
		*error = errno;
		return (-1);
	}
	buf = xmalloc(size);
	for (;;) {
		if (len == size) {
			if (size > max) {
				*error = EFBIG;
				goto fail;
			}
			bigger = xmalloc(size * 2);
			memcpy(bigger, buf, len);
			file_clear_free(buf, len);
			buf = bigger;
			size *= 2;
		}
		n = read(fd, buf + len, size - len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			*error = errno;
			goto fail;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (len > max) {
		*error = EFBIG;
		goto fail;
	}
	close(fd);
	*out = buf;
	*outlen = len;
	return (0);

fail:
	close(fd);
	file_clear_free(buf, len);
	return (-1);
}
