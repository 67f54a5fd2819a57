/*
 * Unit tests for file.c: a table of what may stand at a path (nothing, a
 * regular file, a directory, a FIFO, a socket, a symbolic link to a file,
 * a dangling one), each opened as the pidfile and the log file are, paired
 * with the exact message it must be refused with or the kind it is
 * accepted as; links are never followed with O_NOFOLLOW, their targets
 * left as they were; a FIFO never blocks; /dev/null as a character device;
 * and the messages of file_check_kind() for every kind.
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "file.h"
#include "xmalloc.h"

#include "unit.h"

#define PIDFILE_FLAGS (O_RDWR | O_CREAT | O_NOFOLLOW)
#define LOG_FLAGS (O_WRONLY | O_APPEND | O_CREAT)
#define LOG_KINDS (FILE_REGULAR | FILE_CHARDEV)

/* What a test puts at the path "f" of its private directory. */
enum what {
	NOTHING,
	REGULAR,
	DIRECTORY,
	FIFO,
	SOCKET,
	LINK, /* to "target", a regular file holding TARGET_TEXT */
	DANGLING, /* to "target", which does not exist */
};

#define TARGET_TEXT "not a pid\n"

static const struct open_case {
	const char *name;
	enum what what;
	int flags;
	int kinds;
	const char *why; /* after "DIR/f: "; NULL: accepted */
} open_cases[] = {
	{ "a new pidfile", NOTHING, PIDFILE_FLAGS, FILE_REGULAR, NULL },
	{ "an old pidfile", REGULAR, PIDFILE_FLAGS, FILE_REGULAR, NULL },
	{ "a new log file", NOTHING, LOG_FLAGS, LOG_KINDS, NULL },
	{ "an old log file", REGULAR, LOG_FLAGS, LOG_KINDS, NULL },
	{ "a log file behind a link", LINK, LOG_FLAGS, LOG_KINDS, NULL },
	{ "nothing, not created", NOTHING, O_RDONLY, FILE_REGULAR,
	    "No such file or directory" },
	{ "a directory as pidfile", DIRECTORY, PIDFILE_FLAGS, FILE_REGULAR,
	    "is a directory, not a regular file" },
	{ "a directory as log", DIRECTORY, LOG_FLAGS, LOG_KINDS,
	    "is a directory, not a regular file or a character device" },
	{ "a directory, read-only", DIRECTORY, O_RDONLY, FILE_REGULAR,
	    "is a directory, not a regular file" },
	{ "a FIFO as pidfile", FIFO, PIDFILE_FLAGS, FILE_REGULAR,
	    "is a FIFO, not a regular file" },
	{ "a FIFO as log, no reader", FIFO, LOG_FLAGS, LOG_KINDS,
	    "is a FIFO, not a regular file or a character device" },
	{ "a socket as pidfile", SOCKET, PIDFILE_FLAGS, FILE_REGULAR,
	    "is a socket, not a regular file" },
	{ "a socket as log", SOCKET, LOG_FLAGS, LOG_KINDS,
	    "is a socket, not a regular file or a character device" },
	{ "a link as pidfile", LINK, PIDFILE_FLAGS, FILE_REGULAR,
	    "is a symbolic link, not a regular file" },
	{ "a dangling link as pidfile", DANGLING, PIDFILE_FLAGS, FILE_REGULAR,
	    "is a symbolic link, not a regular file" },
};

/* Make what at path; a link points at dir/target. */
static void
make(const char *dir, const char *path, enum what what)
{
	struct sockaddr_un sun;
	char *target;
	int fd;

	xasprintf(&target, "%s/target", dir);
	switch (what) {
	case NOTHING:
		break;
	case REGULAR:
	case LINK:
		fd = open(
		    what == LINK ? target : path, O_WRONLY | O_CREAT, 0600);
		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(write(fd, TARGET_TEXT, strlen(TARGET_TEXT)),
		    (int)strlen(TARGET_TEXT));
		close(fd);
		if (what == LINK)
			ck_assert_int_eq(symlink(target, path), 0);
		break;
	case DIRECTORY:
		ck_assert_int_eq(mkdir(path, 0700), 0);
		break;
	case FIFO:
		ck_assert_int_eq(mkfifo(path, 0600), 0);
		break;
	case SOCKET:
		memset(&sun, 0, sizeof sun);
		sun.sun_family = AF_UNIX;
		ck_assert_uint_lt(strlen(path), sizeof sun.sun_path);
		strcpy(sun.sun_path, path);
		fd = socket(AF_UNIX, SOCK_STREAM, 0);
		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(
		    bind(fd, (struct sockaddr *)&sun, sizeof sun), 0);
		close(fd);
		break;
	case DANGLING:
		ck_assert_int_eq(symlink(target, path), 0);
		break;
	}
	free(target);
}

/* The link's target holds what it held, or is still missing. */
static void
assert_target_untouched(const char *dir, enum what what)
{
	char *target, buf[64];
	ssize_t n;
	int fd;

	xasprintf(&target, "%s/target", dir);
	fd = open(target, O_RDONLY);
	if (what == DANGLING)
		ck_assert_int_eq(fd, -1);
	else if (what == LINK) {
		ck_assert_int_ge(fd, 0);
		n = read(fd, buf, sizeof buf - 1);
		ck_assert_int_ge(n, 0);
		buf[n] = '\0';
		ck_assert_str_eq(buf, TARGET_TEXT);
	}
	if (fd != -1)
		close(fd);
	free(target);
}

START_TEST(test_open)
{
	const struct open_case *c = &open_cases[_i];
	char *dir, *path, *cause = NULL, *want;
	struct stat sb;
	int fd;

	dir = unit_tmpdir_new("check_file");
	xasprintf(&path, "%s/f", dir);
	make(dir, path, c->what);
	fd = file_open(path, c->flags, 0600, c->kinds, &cause);
	if (c->why == NULL) {
		ck_assert_msg(fd >= 0, "%s refused: %s", c->name, cause);
		ck_assert_int_eq(fstat(fd, &sb), 0);
		ck_assert(S_ISREG(sb.st_mode));
		ck_assert_int_eq(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
		ck_assert_int_eq(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
		close(fd);
	} else {
		xasprintf(&want, "%s: %s", path, c->why);
		ck_assert_msg(fd == -1, "%s accepted", c->name);
		ck_assert_str_eq(cause, want);
		free(want);
		free(cause);
		if (c->what == LINK || c->what == DANGLING)
			assert_target_untouched(dir, c->what);
	}
	free(path);
	unit_tmpdir_remove(dir);
	free(dir);
}
END_TEST

/* A log file may be a character device, a pidfile may not. */
START_TEST(test_dev_null)
{
	char *cause = NULL;
	int fd;

	fd = file_open("/dev/null", LOG_FLAGS, 0600, LOG_KINDS, &cause);
	ck_assert_msg(fd >= 0, "/dev/null refused: %s", cause);
	ck_assert_int_eq(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
	close(fd);
	fd = file_open("/dev/null", PIDFILE_FLAGS, 0600, FILE_REGULAR, &cause);
	ck_assert_int_eq(fd, -1);
	ck_assert_str_eq(
	    cause, "/dev/null: is a character device, not a regular file");
	free(cause);
}
END_TEST

static const struct kind_case {
	mode_t mode;
	int kinds;
	const char *why; /* after "p: "; NULL: accepted */
} kind_cases[] = {
	{ S_IFREG | 0644, FILE_REGULAR, NULL },
	{ S_IFREG | 0644, LOG_KINDS, NULL },
	{ S_IFCHR | 0666, LOG_KINDS, NULL },
	{ S_IFCHR | 0666, FILE_CHARDEV, NULL },
	{ S_IFCHR | 0666, FILE_REGULAR,
	    "is a character device, not a regular file" },
	{ S_IFREG | 0644, FILE_CHARDEV,
	    "is a regular file, not a character device" },
	{ S_IFDIR | 0755, FILE_REGULAR, "is a directory, not a regular file" },
	{ S_IFBLK | 0660, LOG_KINDS,
	    "is a block device, not a regular file or a character device" },
	{ S_IFIFO | 0600, LOG_KINDS,
	    "is a FIFO, not a regular file or a character device" },
	{ S_IFSOCK | 0600, FILE_REGULAR, "is a socket, not a regular file" },
	{ S_IFLNK | 0777, FILE_REGULAR,
	    "is a symbolic link, not a regular file" },
	{ 0, FILE_REGULAR, "is a file of an unknown kind, not a regular file" },
};

START_TEST(test_check_kind)
{
	const struct kind_case *c = &kind_cases[_i];
	char *cause = NULL;
	int rc;

	rc = file_check_kind("p", c->mode, c->kinds, &cause);
	if (c->why == NULL) {
		ck_assert_int_eq(rc, 0);
		ck_assert_ptr_null(cause);
		return;
	}
	ck_assert_int_eq(rc, -1);
	ck_assert_ptr_nonnull(cause);
	ck_assert_str_eq(cause + strlen("p: "), c->why);
	ck_assert_int_eq(strncmp(cause, "p: ", 3), 0);
	free(cause);
}
END_TEST

static Suite *
file_suite(void)
{
	Suite *s;
	TCase *tc;

	s = suite_create("file");

	tc = tcase_create("open");
	tcase_add_loop_test(tc, test_open, 0, NITEMS(open_cases));
	tcase_add_test(tc, test_dev_null);
	suite_add_tcase(s, tc);

	tc = tcase_create("kind");
	tcase_add_loop_test(tc, test_check_kind, 0, NITEMS(kind_cases));
	suite_add_tcase(s, tc);

	return (s);
}

int
main(void)
{
	return (unit_run(file_suite()));
}
