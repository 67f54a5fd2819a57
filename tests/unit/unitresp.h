/*
 * What the unit tests of Redis reply parsers share: RESP text built up,
 * and the reply hiredis reads from RESP bytes.
 */
#ifndef LAPSE_TESTS_UNITRESP_H
#define LAPSE_TESTS_UNITRESP_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <check.h>
#include <hiredis/hiredis.h>

/* RESP text, built up with resp_add() and resp_str(). */
struct resp {
	char buf[8192];
	size_t len;
};

static inline void __attribute__((format(printf, 2, 3)))
resp_add(struct resp *r, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(r->buf + r->len, sizeof r->buf - r->len, fmt, ap);
	va_end(ap);
	ck_assert_int_lt(n, (int)(sizeof r->buf - r->len));
	r->len += (size_t)n;
}

/* s as a bulk string. */
static inline void
resp_str(struct resp *r, const char *s)
{
	resp_add(r, "$%zu\r\n%s\r\n", strlen(s), s);
}

/* The reply hiredis reads from len RESP bytes at s. Caller frees. */
static inline redisReply *
unit_reply(const char *s, size_t len)
{
	redisReader *reader = redisReaderCreate();
	void *reply = NULL;

	ck_assert_ptr_nonnull(reader);
	ck_assert_int_eq(redisReaderFeed(reader, s, len), REDIS_OK);
	ck_assert_int_eq(redisReaderGetReply(reader, &reply), REDIS_OK);
	ck_assert_ptr_nonnull(reply);
	redisReaderFree(reader);
	return (reply);
}

/* unit_reply() of the string s. */
static inline redisReply *
unit_reply_str(const char *s)
{
	return (unit_reply(s, strlen(s)));
}

/* unit_reply() of the text r built. */
static inline redisReply *
resp_reply(const struct resp *r)
{
	return (unit_reply(r->buf, r->len));
}

#endif
