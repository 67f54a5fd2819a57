/*
 * Replies of Redis to the commands that read a stream (XREAD, XRANGE,
 * XREVRANGE), checked before anything in them is used: `lapse tail`
 * follows the fired stream with them, and every entry it prints or
 * continues from has been through here.
 *
 * `lapse dead` lists the dead stream with them too.
 *
 * An entry is [ID, [FIELD, VALUE, ...]]: ID a stream id "MS-SEQ" (two
 * decimal numbers below 2^64, so it fits STREAMREPLY_ID_BUFSIZE), FIELD
 * and VALUE strings. Nothing here does I/O.
 */
#ifndef LAPSE_STREAMREPLY_H
#define LAPSE_STREAMREPLY_H

#include <hiredis/hiredis.h>

#include "event.h"

/* Room for the longest stream id, "18446744073709551615-...", and a NUL. */
#define STREAMREPLY_ID_BUFSIZE 42

/*
 * Check that r is an array of entries, as XRANGE and XREVRANGE answer.
 * Returns 0, or -1 with *cause (caller frees) naming the first thing that
 * is not as it should be.
 */
int streamreply_check_entries(const redisReply *r, char **cause);

/*
 * The entries of a reply to XREAD for one stream, [[KEY, ENTRIES]],
 * checked as by streamreply_check_entries(). Returns ENTRIES (borrowed
 * from r), or NULL with *cause (caller frees). A nil reply (XREAD BLOCK
 * timed out) is the caller's to handle before.
 */
const redisReply *streamreply_xread(const redisReply *r, char **cause);

/* The id of a checked entry (borrowed), shorter than STREAMREPLY_ID_BUFSIZE. */
const char *streamreply_id(const redisReply *entry);

/*
 * Set ev's fields from those of a checked entry with
 * lapse_event_set_field(). Returns 0, or -1 with *cause (caller frees)
 * naming each field it refused, "; " between; ev then has every other
 * field.
 */
int streamreply_event(
    const redisReply *entry, struct lapse_event *ev, char **cause);

/*
 * The JSON line `lapse dead` prints for a checked entry of a dead stream
 * (lapse:{NS}:dead): its fields id, payload, due, attempts, error, failed
 * and url, in that order, those it has; due, attempts and failed as
 * integers, the others as strings (name_b64, base64, when not valid UTF-8
 * or holding a NUL); a field given twice is its last value, as the
 * library reads it. Other fields are left out. Sets *json (caller frees),
 * NULL when the entry has no id field. Returns 0, or -1 with *cause
 * (caller frees) naming each number it left out (not decimal digits, or
 * above 2^53), "; " between; *json then has every other field.
 */
int streamreply_dead(const redisReply *entry, char **json, char **cause);

#endif
