/*
 * Splitting a command line into words, as words.h describes. Pure: no
 * I/O, no globals. One pass over the input: each quote or backslash is
 * handled by its own function, which consumes it and what it governs;
 * the word under way is built in a buffer as long as the input, since no
 * word can be longer. A word is under way once any of its bytes or an
 * empty pair of quotes has been read, so '' is a word and a run of blanks
 * is not.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "words.h"
#include "xmalloc.h"

#define STRINGIFY(x) #x
#define TO_STRING(x) STRINGIFY(x)
#define TOO_LONG \
	"command too long (more than " TO_STRING(WORDS_MAX_BYTES) " bytes)"
#define TOO_MANY "too many words (more than " TO_STRING(WORDS_MAX) ")"

struct split {
	const char *p; /* the next byte to read */
	char *word; /* the word under way */
	size_t len;
	int inword;
	char **argv; /* room for WORDS_MAX words and the NULL */
	size_t argc;
	const char *error;
};

/* Tab is a blank; every other control byte is refused wherever it is. */
static int
is_control(char c)
{
	unsigned char u = (unsigned char)c;

	return ((u < 0x20 && c != '\t') || u == 0x7f);
}

static int
fail(struct split *sp, const char *error)
{
	sp->error = error;
	return (-1);
}

static void
append(struct split *sp, char c)
{
	sp->word[sp->len++] = c;
	sp->inword = 1;
}

/* The word under way, if any, is complete: keep a copy of it. */
static int
end_word(struct split *sp)
{
	if (!sp->inword)
		return (0);
	if (sp->argc == WORDS_MAX)
		return (fail(sp, TOO_MANY));
	sp->argv[sp->argc++] = xmemdup(sp->word, sp->len);
	sp->len = 0;
	sp->inword = 0;
	return (0);
}

/* 'literal': everything up to the closing quote, as it is. */
static int
split_single(struct split *sp)
{
	sp->p++;
	sp->inword = 1;
	for (;;) {
		if (*sp->p == '\0')
			return (fail(sp, "unterminated single quote"));
		if (*sp->p == '\'')
			break;
		if (is_control(*sp->p))
			return (fail(sp, "control character in command"));
		append(sp, *sp->p++);
	}
	sp->p++;
	return (0);
}

/*
 * "double": a backslash escapes only what sh lets it escape there; before
 * any other byte it is an ordinary byte itself.
 */
static int
split_double(struct split *sp)
{
	sp->p++;
	sp->inword = 1;
	for (;;) {
		if (*sp->p == '\0')
			return (fail(sp, "unterminated double quote"));
		if (*sp->p == '"')
			break;
		if (sp->p[0] == '\\' && sp->p[1] == '\n') {
			sp->p += 2;
			continue;
		}
		if (sp->p[0] == '\\' && sp->p[1] != '\0' &&
		    strchr("\"\\$`", sp->p[1]) != NULL) {
			append(sp, sp->p[1]);
			sp->p += 2;
			continue;
		}
		if (is_control(*sp->p))
			return (fail(sp, "control character in command"));
		append(sp, *sp->p++);
	}
	sp->p++;
	return (0);
}

/*
 * A backslash outside quotes: the next byte is kept as it is, but a
 * newline, which is dropped with it (a continued line, as in sh).
 */
static int
split_backslash(struct split *sp)
{
	char c = sp->p[1];

	if (c == '\0')
		return (fail(sp, "trailing backslash"));
	sp->p += 2;
	if (c == '\n')
		return (0);
	if (is_control(c))
		return (fail(sp, "control character in command"));
	append(sp, c);
	return (0);
}

/* Consume one byte outside quotes, or the quoted or escaped run it opens. */
static int
split_step(struct split *sp)
{
	char c = *sp->p;

	switch (c) {
	case ' ':
	case '\t':
		sp->p++;
		return (end_word(sp));
	case '\'':
		return (split_single(sp));
	case '"':
		return (split_double(sp));
	case '\\':
		return (split_backslash(sp));
	}
	if (is_control(c))
		return (fail(sp, "control character in command"));
	append(sp, c);
	sp->p++;
	return (0);
}

static int
split_all(struct split *sp)
{
	while (*sp->p != '\0') {
		if (split_step(sp) != 0)
			return (-1);
	}
	if (end_word(sp) != 0)
		return (-1);
	if (sp->argc == 0)
		return (fail(sp, "empty command"));
	return (0);
}

int
words_split(const char *s, char ***argv, size_t *argc, char **cause)
{
	struct split sp;
	size_t n;

	n = strnlen(s, WORDS_MAX_BYTES + 1);
	if (n > WORDS_MAX_BYTES) {
		*cause = xstrdup(TOO_LONG);
		return (-1);
	}
	memset(&sp, 0, sizeof sp);
	sp.p = s;
	sp.word = xmalloc(n + 1);
	sp.argv = xcalloc(WORDS_MAX + 1, sizeof *sp.argv);
	if (split_all(&sp) != 0) {
		*cause = xstrdup(sp.error);
		words_free(sp.argv);
		free(sp.word);
		return (-1);
	}
	free(sp.word);
	*argv = xreallocarray(sp.argv, sp.argc + 1, sizeof *sp.argv);
	*argc = sp.argc;
	return (0);
}

void
words_free(char **argv)
{
	size_t i;

	if (argv == NULL)
		return;
	for (i = 0; argv[i] != NULL; i++)
		free(argv[i]);
	free(argv);
}
