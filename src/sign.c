/*
 * Standard Webhooks signatures: HMAC-SHA256 through OpenSSL's EVP_DigestSign
 * interface (present in every OpenSSL lapse builds with, 1.1.1 and 3.x),
 * base64 through codec.c, the project's one base64 (strict: a secret with
 * stray characters or padding is refused, never half decoded).
 *
 * The MAC is fed in pieces (id, ".", timestamp, ".", body) so that a
 * payload of a mebibyte is never copied to be signed.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "codec.h"
#include "log.h"
#include "sign.h"
#include "xmalloc.h"

#define SIGN_PREFIX "whsec_"
#define SIGN_MAC_LEN 32 /* SHA-256 */
#define SIGN_BOM "\xef\xbb\xbf"

int
sign_key_parse(const char *text, size_t len, unsigned char **key,
    size_t *keylen, char **cause)
{
	const char *nl;
	size_t n, plen = strlen(SIGN_PREFIX);
	char *decoded;
	size_t dlen;

	/*
	 * An editor's byte order mark, skipped as the configuration's is: kept,
	 * it would hide the prefix or become part of a raw key, and every
	 * signature would be wrong with the file called valid.
	 */
	if (len >= 3 && memcmp(text, SIGN_BOM, 3) == 0) {
		text += 3;
		len -= 3;
	}
	nl = memchr(text, '\n', len);
	n = nl != NULL ? (size_t)(nl - text) : len;
	if (n > 0 && text[n - 1] == '\r')
		n--;

	if (n >= plen && memcmp(text, SIGN_PREFIX, plen) == 0) {
		if (base64_decode(text + plen, n - plen, &decoded, &dlen) !=
		    0) {
			*cause = xstrdup("bad base64 after " SIGN_PREFIX);
			return (-1);
		}
		if (dlen == 0) {
			free(decoded);
			*cause = xstrdup("empty signing secret");
			return (-1);
		}
		*key = (unsigned char *)decoded;
		*keylen = dlen;
		return (0);
	}
	if (n == 0) {
		*cause = xstrdup("empty signing secret");
		return (-1);
	}
	*key = (unsigned char *)xmemdup(text, n);
	*keylen = n;
	return (0);
}

void
sign_key_free(unsigned char *key, size_t keylen)
{
	if (key == NULL)
		return;
	OPENSSL_cleanse(key, keylen);
	free(key);
}

char *
sign_v1(const unsigned char *key, size_t keylen, const char *msgid,
    int64_t ts_seconds, const void *body, size_t bodylen)
{
	unsigned char mac[SIGN_MAC_LEN];
	size_t maclen = sizeof mac;
	EVP_MD_CTX *ctx;
	EVP_PKEY *pkey;
	char ts[32], *b64, *out;
	int ok;

	snprintf(ts, sizeof ts, "%" PRId64, ts_seconds);

	/*
	 * These fail only when OpenSSL cannot allocate: lapse treats that as
	 * it treats xmalloc() failing.
	 */
	pkey = EVP_PKEY_new_raw_private_key(EVP_PKEY_HMAC, NULL, key, keylen);
	ctx = EVP_MD_CTX_new();
	if (pkey == NULL || ctx == NULL)
		fatalx("HMAC-SHA256: cannot set up the key");
	ok = EVP_DigestSignInit(ctx, NULL, EVP_sha256(), NULL, pkey) == 1 &&
	    EVP_DigestSignUpdate(ctx, msgid, strlen(msgid)) == 1 &&
	    EVP_DigestSignUpdate(ctx, ".", 1) == 1 &&
	    EVP_DigestSignUpdate(ctx, ts, strlen(ts)) == 1 &&
	    EVP_DigestSignUpdate(ctx, ".", 1) == 1 &&
	    EVP_DigestSignUpdate(ctx, body, bodylen) == 1 &&
	    EVP_DigestSignFinal(ctx, mac, &maclen) == 1 &&
	    maclen == SIGN_MAC_LEN;
	EVP_MD_CTX_free(ctx);
	EVP_PKEY_free(pkey);
	if (!ok)
		fatalx("HMAC-SHA256 failed");

	b64 = base64_encode(mac, maclen);
	xasprintf(&out, "v1,%s", b64);
	free(b64);
	return (out);
}
