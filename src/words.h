/*
 * Splitting a command line from the configuration into words, the way a
 * POSIX shell splits them, without running or expanding anything: the
 * exec sink runs its command directly, never through a shell, so what the
 * user quoted is what the program receives.
 *
 * Blanks (space, tab) separate words. 'Single quotes' keep everything
 * between them. "Double quotes" keep everything but a backslash before ",
 * \, $, ` or a newline, as sh does: the backslash is dropped and the
 * character kept (a backslash-newline is dropped whole); before any other
 * byte the backslash stays. Outside quotes a backslash keeps the next byte
 * as it is (a backslash-newline is dropped, as in sh). Quotes may join
 * pieces into one word (a'b'"c" is "abc"); '' and "" are empty words.
 *
 * $, `, *, ?, ~, ;, |, &, <, >, (, ), # and = are ordinary bytes: there
 * is no expansion of variables or commands, no globbing, no tilde, no
 * redirection, no pipeline, no comment. A command line that needs any of
 * them must name a script (or "/bin/sh -c '...'" explicitly).
 */
#ifndef LAPSE_WORDS_H
#define LAPSE_WORDS_H

#include <stddef.h>

/* The longest command line accepted, in bytes, and the most words. */
#define WORDS_MAX_BYTES 4096
#define WORDS_MAX 256

/*
 * Split the command line s (a C string) into words. Returns 0 with *argv
 * set to a new NULL-terminated array of *argc words (caller frees with
 * words_free()), or -1 with *cause set (caller frees) and *argv and *argc
 * untouched. The messages: "unterminated single quote", "unterminated
 * double quote", "trailing backslash", "empty command" (no word at all),
 * "control character in command" (any byte below 0x20 but tab, or 0x7f,
 * outside a backslash-newline), "command too long (more than 4096
 * bytes)" and "too many words (more than 256)".
 */
int words_split(const char *s, char ***argv, size_t *argc, char **cause);

/* Free an array from words_split() and its words. Accepts NULL. */
void words_free(char **argv);

#endif
