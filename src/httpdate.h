/*
 * HTTP-dates, as Date and Retry-After carry them: IMF-fixdate ("Sun, 06
 * Nov 1994 08:49:37 GMT") and the two obsolete forms RFC 9110 has every
 * recipient accept, RFC 850 ("Sunday, 06-Nov-94 08:49:37 GMT") and
 * asctime ("Sun Nov  6 08:49:37 1994").
 */
#ifndef LAPSE_HTTPDATE_H
#define LAPSE_HTTPDATE_H

#include <stdint.h>
#include <time.h>

/*
 * Parse s, one of the three forms exactly (names of days and months as
 * the RFC writes them, single spaces, "GMT"), into *ms since the epoch.
 * An RFC 850 two-digit year more than 50 years after now's year is taken
 * in the century before. Days that do not exist (Feb 30), times before
 * 1970 and leap seconds are refused; the day name is not checked against
 * the date. Returns 0, or -1 with *ms untouched.
 */
int httpdate_parse(const char *s, time_t now, int64_t *ms);

#endif
