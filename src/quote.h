/*
 * Quoting what a user typed in a parser's message, as duration_parse() and
 * timestamp_parse() word theirs: 'bad duration "1h30": missing unit'. The
 * input is quoted byte for byte, cut to a length a message can carry;
 * a cut never splits a UTF-8 sequence and is followed by "...".
 */
#ifndef LAPSE_QUOTE_H
#define LAPSE_QUOTE_H

#include <stddef.h>

/* The longest quote of the whole input in a quote_error() message. */
#define QUOTE_INPUT_MAX 80

/*
 * How many of the n bytes at s to quote when at most max (at least 4) may
 * be shown, for printf's "%.*s%s": n with *more set to "" when n <= max,
 * else at most max - 3, fewer where the cut would split a UTF-8 sequence,
 * with *more set to "...". Pure.
 */
int quote_len(const char *s, size_t n, size_t max, const char **more);

/*
 * Set *cause (caller frees) to 'WHAT "INPUT": WHY': what as it is, INPUT
 * the string s quoted up to QUOTE_INPUT_MAX bytes as quote_len() cuts it,
 * WHY formatted from fmt. Returns -1, for a parser to return at once.
 */
int quote_error(char **cause, const char *what, const char *s, const char *fmt,
    ...) __attribute__((format(printf, 4, 5)));

#endif
