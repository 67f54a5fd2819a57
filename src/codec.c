/*
 * Byte codecs: UTF-8 validation (RFC 3629), base64 (RFC 4648, standard
 * alphabet, '=' padding) and a printable rendering of arbitrary bytes for
 * logs and error messages.
 *
 * Everything here is pure: no I/O, no global state, and every input is a
 * pointer plus a length, so NUL bytes are data, never terminators. Outputs
 * are always NUL-terminated buffers from xmalloc that the caller frees.
 *
 * The base64 decoder accepts exactly what base64_encode() produces: the
 * length is a multiple of four, '=' appears only as the last one or two
 * characters, and the bits that padding leaves over must be zero (RFC 4648
 * section 3.5). So every byte string has one encoding and no other text
 * decodes to it; whitespace, line breaks and the URL-safe alphabet are
 * rejected.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "xmalloc.h"

static const char b64_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static const char hex_digits[] = "0123456789abcdef";

int
utf8_valid(const void *p, size_t len)
{
	const unsigned char *s = p;
	size_t i = 0, need, k;
	unsigned char lo, hi;

	while (i < len) {
		if (s[i] < 0x80) {
			i++;
			continue;
		}
		/*
		 * The lead byte fixes the number of continuation bytes and
		 * the range of the first one, which is where overlong forms,
		 * surrogates and code points above U+10FFFF are excluded
		 * (RFC 3629 section 4). The later ones are 80..BF.
		 */
		lo = 0x80;
		hi = 0xbf;
		if (s[i] >= 0xc2 && s[i] <= 0xdf)
			need = 1;
		else if (s[i] == 0xe0) {
			need = 2;
			lo = 0xa0;
		} else if (s[i] == 0xed) {
			need = 2;
			hi = 0x9f;
		} else if (s[i] >= 0xe1 && s[i] <= 0xef)
			need = 2;
		else if (s[i] == 0xf0) {
			need = 3;
			lo = 0x90;
		} else if (s[i] == 0xf4) {
			need = 3;
			hi = 0x8f;
		} else if (s[i] >= 0xf1 && s[i] <= 0xf3)
			need = 3;
		else
			return (0); /* 80..C1 or F5..FF */
		if (len - i - 1 < need)
			return (0);
		if (s[i + 1] < lo || s[i + 1] > hi)
			return (0);
		for (k = 2; k <= need; k++) {
			if (s[i + k] < 0x80 || s[i + k] > 0xbf)
				return (0);
		}
		i += need + 1;
	}
	return (1);
}

char *
base64_encode(const void *p, size_t len)
{
	const unsigned char *s = p;
	size_t groups = len / 3 + (len % 3 != 0), i;
	uint32_t v;
	char *out, *o;

	/* One spare group covers the NUL; xreallocarray checks overflow. */
	out = xreallocarray(NULL, groups + 1, 4);
	o = out;
	for (i = 0; i + 3 <= len; i += 3) {
		v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8 | s[i + 2];
		*o++ = b64_alphabet[v >> 18 & 0x3f];
		*o++ = b64_alphabet[v >> 12 & 0x3f];
		*o++ = b64_alphabet[v >> 6 & 0x3f];
		*o++ = b64_alphabet[v & 0x3f];
	}
	if (len - i == 1) {
		v = (uint32_t)s[i] << 16;
		*o++ = b64_alphabet[v >> 18 & 0x3f];
		*o++ = b64_alphabet[v >> 12 & 0x3f];
		*o++ = '=';
		*o++ = '=';
	} else if (len - i == 2) {
		v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8;
		*o++ = b64_alphabet[v >> 18 & 0x3f];
		*o++ = b64_alphabet[v >> 12 & 0x3f];
		*o++ = b64_alphabet[v >> 6 & 0x3f];
		*o++ = '=';
	}
	*o = '\0';
	return (out);
}

/* The value of one base64 character, or -1 if it is not in the alphabet. */
static int
b64_value(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return (c - 'A');
	if (c >= 'a' && c <= 'z')
		return (c - 'a' + 26);
	if (c >= '0' && c <= '9')
		return (c - '0' + 52);
	if (c == '+')
		return (62);
	if (c == '/')
		return (63);
	return (-1);
}

int
base64_decode(const char *s, size_t len, char **out, size_t *outlen)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i, k, pad = 0, n = 0;
	uint32_t v;
	char *buf;
	int d;

	if (len % 4 != 0)
		return (-1);
	if (len != 0 && u[len - 1] == '=') {
		pad = 1;
		if (u[len - 2] == '=')
			pad = 2;
	}

	/* Validate everything before allocating, so failure leaks nothing. */
	for (i = 0; i < len - pad; i++) {
		if (b64_value(u[i]) == -1)
			return (-1);
	}
	if (pad == 2 && (b64_value(u[len - 3]) & 0x0f) != 0)
		return (-1);
	if (pad == 1 && (b64_value(u[len - 2]) & 0x03) != 0)
		return (-1);

	buf = xmalloc(len / 4 * 3 + 1);
	for (i = 0; i < len; i += 4) {
		v = 0;
		for (k = 0; k < 4; k++) {
			d = (i + k < len - pad) ? b64_value(u[i + k]) : 0;
			v = v << 6 | (uint32_t)d;
		}
		buf[n++] = (char)(v >> 16 & 0xff);
		if (i + 4 < len || pad < 2)
			buf[n++] = (char)(v >> 8 & 0xff);
		if (i + 4 < len || pad < 1)
			buf[n++] = (char)(v & 0xff);
	}
	buf[n] = '\0';
	*out = buf;
	*outlen = n;
	return (0);
}

char *
escape_bytes(const void *p, size_t len, size_t max)
{
	const unsigned char *s = p;
	size_t n = len < max ? len : max, i;
	char *out, *o;

	/* Four characters per byte at most, plus "..." and the NUL. */
	out = xreallocarray(NULL, n + 1, 4);
	o = out;
	for (i = 0; i < n; i++) {
		if (s[i] == '\\' || s[i] == '"') {
			*o++ = '\\';
			*o++ = (char)s[i];
		} else if (s[i] >= 0x20 && s[i] <= 0x7e)
			*o++ = (char)s[i];
		else {
			*o++ = '\\';
			*o++ = 'x';
			*o++ = hex_digits[s[i] >> 4];
			*o++ = hex_digits[s[i] & 0x0f];
		}
	}
	if (len > max) {
		memcpy(o, "...", 3);
		o += 3;
	}
	*o = '\0';
	return (out);
}

int
escape_cause(
    char **cause, const char *head, const void *p, size_t len, const char *tail)
{
	char *q;

	q = escape_bytes(p, len, ESCAPE_CAUSE_MAX);
	xasprintf(cause, "%s%s%s", head, q, tail);
	free(q);
	return (-1);
}

size_t
decimal_u64(uint64_t v, char *buf)
{
	char tmp[DECIMAL_U64_MAX];
	size_t n = sizeof tmp;

	do {
		tmp[--n] = (char)('0' + v % 10);
		v /= 10;
	} while (v > 0);
	memcpy(buf, tmp + n, sizeof tmp - n);
	return (sizeof tmp - n);
}
