/*
 * Standard Webhooks signatures (https://www.standardwebhooks.com): the
 * http sink signs each attempt with HMAC-SHA256 over
 * "webhook-id.webhook-timestamp.body" and sends "v1," followed by the MAC
 * in base64 as the webhook-signature header, so that a receiver can check
 * the request came from a holder of the secret and was not replayed
 * later with another body or time.
 *
 * The secret is kept as raw bytes; it is cleared from memory when freed.
 */
#ifndef LAPSE_SIGN_H
#define LAPSE_SIGN_H

#include <stddef.h>
#include <stdint.h>

/*
 * Read a signing secret from the len bytes at text (no NUL needed), the
 * contents of a signing-secret-file: only its first line counts, without
 * "\n" or "\r\n" (and without a UTF-8 byte order mark before it). A line "whsec_" + base64 (the form Standard Webhooks
 * libraries and services hand out) gives the decoded bytes; any other line
 * is the key itself, byte for byte. Returns 0 with a new key in *key and
 * its length in *keylen (free with sign_key_free()), or -1 with *cause set
 * (caller frees) to "empty signing secret" or "bad base64 after whsec_";
 * the messages never quote the secret.
 */
int sign_key_parse(const char *text, size_t len, unsigned char **key,
    size_t *keylen, char **cause);

/* Clear the keylen bytes of key and free it; NULL is fine. */
void sign_key_free(unsigned char *key, size_t keylen);

/*
 * The webhook-signature value for message msgid sent at ts_seconds (the
 * webhook-timestamp value, seconds since the epoch) with bodylen bytes of
 * body: "v1," + base64(HMAC-SHA256(key, msgid "." ts_seconds "." body)).
 * key (keylen > 0), msgid and body are borrowed. Returns a new string
 * (caller frees).
 */
char *sign_v1(const unsigned char *key, size_t keylen, const char *msgid,
    int64_t ts_seconds, const void *body, size_t bodylen);

#endif
