/*
 * Byte codecs with no Debian package behind them, kept small: UTF-8
 * validation, base64 (RFC 4648, with padding), escaping of arbitrary
 * bytes for logs and terminals, and whole numbers in decimal.
 */
#ifndef LAPSE_CODEC_H
#define LAPSE_CODEC_H

#include <stddef.h>
#include <stdint.h>

/* The most digits decimal_u64() writes. */
#define DECIMAL_U64_MAX 20

/*
 * v in decimal at buf (at least DECIMAL_U64_MAX bytes, not NUL-terminated):
 * returns the number of digits. What snprintf("%llu") makes, without
 * printf's cost, for the numbers formatted per event.
 */
size_t decimal_u64(uint64_t v, char *buf);

/*
 * True when the len bytes at p are well-formed UTF-8 (RFC 3629: no
 * overlong forms, no surrogates, nothing above U+10FFFF). NUL bytes are
 * valid UTF-8.
 */
int utf8_valid(const void *p, size_t len);

/* Base64 of len bytes, NUL-terminated. Caller frees. */
char *base64_encode(const void *p, size_t len);

/*
 * Decode len characters of padded base64. Returns 0 with a new buffer in
 * *out (NUL-terminated, not counted in *outlen; caller frees), or -1 on
 * malformed input with *out untouched. Only the canonical form is
 * accepted: a length that is a multiple of 4, '=' only as the last one or
 * two characters, zero bits left over by the padding, no whitespace.
 */
int base64_decode(const char *s, size_t len, char **out, size_t *outlen);

/*
 * A printable rendering of len bytes, fit to stand between double quotes
 * in a message: printable ASCII (0x20..0x7e) as is but backslash and '"'
 * behind a backslash, anything else as "\xHH" with lower-case hex digits.
 * At most max input bytes are rendered; a longer input ends in "...".
 * Caller frees.
 */
char *escape_bytes(const void *p, size_t len, size_t max);

/* How many bytes of a reply escape_cause() quotes. */
#define ESCAPE_CAUSE_MAX 64

/*
 * Set *cause (caller frees) to head, the len bytes at p as escape_bytes()
 * renders at most ESCAPE_CAUSE_MAX of them, and tail. Returns -1, for a
 * reader of replies to return at once.
 */
int escape_cause(char **cause, const char *head, const void *p, size_t len,
    const char *tail);

#endif
