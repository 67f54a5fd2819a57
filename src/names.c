/*
 * Names and limits: the checks every namespace, id and payload passes
 * before it reaches Redis, and the key names built from them. Keys are
 * built only from checked parts, so a key name never holds a byte a check
 * would refuse, and names_split_trigger_key() can be strict: it accepts
 * exactly the keys names_trigger_key() makes.
 *
 * Messages quote the offending name with its bytes escaped, so a control
 * byte in an id cannot reach a terminal or a log line as is.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "names.h"
#include "xmalloc.h"

/* Bytes of a name quoted in a message before it is cut short with "...". */
#define NAMES_QUOTE_MAX 64

#define KEY_PREFIX "lapse:{"
#define KEY_TRIGGER "}:t:"

static int
ns_byte_ok(unsigned char c)
{
	return ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-');
}

static int
id_byte_ok(unsigned char c)
{
	return (c > 0x20 && c != 0x7f);
}

/* Like names_check_ns() for the len bytes at ns. */
static int
check_ns(const char *ns, size_t len, char **cause)
{
	char *quoted;
	size_t i;

	if (len == 0) {
		if (cause != NULL)
			xasprintf(cause, "bad namespace \"\": empty");
		return (-1);
	}
	if (len > NS_MAX_LEN) {
		if (cause != NULL) {
			quoted = escape_bytes(ns, len, NAMES_QUOTE_MAX);
			xasprintf(cause,
			    "bad namespace \"%s\": longer than %d bytes (%zu)",
			    quoted, NS_MAX_LEN, len);
			free(quoted);
		}
		return (-1);
	}
	for (i = 0; i < len; i++) {
		if (ns_byte_ok((unsigned char)ns[i]))
			continue;
		if (cause != NULL) {
			quoted = escape_bytes(ns, len, NAMES_QUOTE_MAX);
			xasprintf(cause,
			    "bad namespace \"%s\": only letters, digits, "
			    "'_', '.' and '-' are allowed",
			    quoted);
			free(quoted);
		}
		return (-1);
	}
	return (0);
}

int
names_check_ns(const char *ns, char **cause)
{
	return (check_ns(ns, strlen(ns), cause));
}

/* Like names_check_id(); cause may be NULL when no message is wanted. */
static int
check_id(const unsigned char *id, size_t len, char **cause)
{
	char *quoted;
	size_t i;

	if (len == 0) {
		if (cause != NULL)
			xasprintf(cause, "bad id: empty");
		return (-1);
	}
	if (len > ID_MAX_LEN) {
		if (cause != NULL)
			xasprintf(cause, "bad id: longer than %d bytes (%zu)",
			    ID_MAX_LEN, len);
		return (-1);
	}
	for (i = 0; i < len; i++) {
		if (id_byte_ok(id[i]))
			continue;
		if (cause != NULL) {
			quoted = escape_bytes(id, len, NAMES_QUOTE_MAX);
			xasprintf(cause,
			    "bad id \"%s\": byte 0x%02x at offset %zu is not "
			    "allowed (ids are bytes 0x21-0x7e and 0x80-0xff)",
			    quoted, id[i], i);
			free(quoted);
		}
		return (-1);
	}
	return (0);
}

int
names_check_id(const void *id, size_t len, char **cause)
{
	return (check_id(id, len, cause));
}

int
names_check_payload(size_t len, size_t max, char **cause)
{
	if (len <= max)
		return (0);
	xasprintf(cause, "payload too large: %zu bytes (max-payload is %zu)",
	    len, max);
	return (-1);
}

int
names_check_url(const char *url, char **cause)
{
	size_t i, len = strlen(url);
	char *quoted;

	if (len == 0) {
		xasprintf(cause, "bad url: empty");
		return (-1);
	}
	if (len > URL_MAX_LEN) {
		xasprintf(cause, "bad url: longer than %d bytes (%zu)",
		    URL_MAX_LEN, len);
		return (-1);
	}
	for (i = 0; i < len; i++) {
		if (id_byte_ok((unsigned char)url[i]))
			continue;
		quoted = escape_bytes(url, len, NAMES_QUOTE_MAX);
		xasprintf(cause,
		    "bad url \"%s\": byte 0x%02x at offset %zu is not allowed",
		    quoted, (unsigned char)url[i], i);
		free(quoted);
		return (-1);
	}
	if (strncmp(url, "http://", 7) != 0 &&
	    strncmp(url, "https://", 8) != 0) {
		quoted = escape_bytes(url, len, NAMES_QUOTE_MAX);
		xasprintf(cause,
		    "bad url \"%s\": must start with http:// or https://",
		    quoted);
		free(quoted);
		return (-1);
	}
	return (0);
}

char *
names_key(const char *ns, const char *suffix)
{
	char *key;

	xasprintf(&key, KEY_PREFIX "%s}:%s", ns, suffix);
	return (key);
}

char *
names_trigger_key(const char *ns, const void *id, size_t idlen)
{
	size_t nslen, plen, tlen;
	char *key;

	nslen = strlen(ns);
	plen = strlen(KEY_PREFIX);
	tlen = strlen(KEY_TRIGGER);
	key = xmalloc(plen + nslen + tlen + idlen + 1);
	memcpy(key, KEY_PREFIX, plen);
	memcpy(key + plen, ns, nslen);
	memcpy(key + plen + nslen, KEY_TRIGGER, tlen);
	if (idlen != 0)
		memcpy(key + plen + nslen + tlen, id, idlen);
	key[plen + nslen + tlen + idlen] = '\0';
	return (key);
}

int
names_split_trigger_key(const char *key, size_t len, const char **ns,
    size_t *nslen, const char **id, size_t *idlen)
{
	const char *p, *end, *close;
	size_t plen, tlen;

	plen = strlen(KEY_PREFIX);
	tlen = strlen(KEY_TRIGGER);
	if (len < plen || memcmp(key, KEY_PREFIX, plen) != 0)
		return (-1);
	p = key + plen;
	end = key + len;

	/* A valid namespace holds no '}', so the first one closes it. */
	close = memchr(p, '}', end - p);
	if (close == NULL || check_ns(p, close - p, NULL) != 0)
		return (-1);
	if ((size_t)(end - close) < tlen ||
	    memcmp(close, KEY_TRIGGER, tlen) != 0)
		return (-1);
	if (check_id((const unsigned char *)close + tlen, end - close - tlen,
	        NULL) != 0)
		return (-1);

	*ns = p;
	*nslen = close - p;
	*id = close + tlen;
	*idlen = end - close - tlen;
	return (0);
}

int
names_key_ns(const char *key, size_t len, const char **ns, size_t *nslen)
{
	size_t plen = strlen(KEY_PREFIX);
	const char *p, *end, *close;

	if (len < plen || memcmp(key, KEY_PREFIX, plen) != 0)
		return (-1);
	p = key + plen;
	end = key + len;
	/* A valid namespace holds no '}', so the first one closes it. */
	close = memchr(p, '}', end - p);
	if (close == NULL || end - close < 3 || close[1] != ':' ||
	    check_ns(p, close - p, NULL) != 0)
		return (-1);
	*ns = p;
	*nslen = close - p;
	return (0);
}

char *
names_prefix_pattern(const char *prefix, size_t len)
{
	char *out, *p;
	size_t i;

	out = xreallocarray(NULL, len + 1, 2);
	p = out;
	for (i = 0; i < len; i++) {
		if (strchr("*?[]\\", prefix[i]) != NULL && prefix[i] != '\0')
			*p++ = '\\';
		*p++ = prefix[i];
	}
	*p++ = '*';
	*p = '\0';
	return (out);
}
