/*
 * The Prometheus text exposition format, version 0.0.4, written into an
 * evbuffer: metric families (a # HELP and a # TYPE line, then samples),
 * label values escaped, histograms as their _bucket, _sum and _count
 * samples. A family's HELP and TYPE are written with its first sample, so
 * that a family with nothing to show (no delivery namespace, a gauge not
 * read) leaves no trace. No I/O beyond the buffer.
 *
 * Label values are escaped as the format says (backslash, double quote
 * and line feed behind a backslash); a value that is not valid UTF-8,
 * which the format does not allow, has each byte above 0x7f replaced by
 * '?'. HELP texts have backslash and line feed escaped. Metric and label
 * names are the caller's constants.
 */
#ifndef LAPSE_PROMTEXT_H
#define LAPSE_PROMTEXT_H

#include <stddef.h>
#include <stdint.h>

#include <event2/buffer.h>

#include "histogram.h"

#define PROMTEXT_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

enum promtext_type {
	PROMTEXT_COUNTER,
	PROMTEXT_GAUGE,
	PROMTEXT_HISTOGRAM,
};

struct promtext_label {
	const char *name;
	const char *value; /* any bytes up to a NUL */
};

struct promtext {
	struct evbuffer *out; /* borrowed */
	const char *name; /* the current family; borrowed */
	const char *help;
	enum promtext_type type;
	int said; /* its HELP and TYPE are written */
};

/* Write families into out (borrowed). */
void promtext_init(struct promtext *, struct evbuffer *out);

/*
 * The family the next samples belong to (name and help are borrowed
 * until the next call).
 */
void promtext_family(struct promtext *, const char *name,
    enum promtext_type type, const char *help);

/* A sample of the family with nlabels labels and an integer value. */
void promtext_uint(struct promtext *, const struct promtext_label *labels,
    size_t nlabels, uint64_t value);
void promtext_int(struct promtext *, const struct promtext_label *labels,
    size_t nlabels, int64_t value);

/* A sample whose value is us microseconds, written in seconds. */
void promtext_seconds(struct promtext *, const struct promtext_label *labels,
    size_t nlabels, int64_t us);

/*
 * The samples of a histogram of microseconds, in seconds: a _bucket for
 * every bound and +Inf (labels and le), _sum and _count.
 */
void promtext_histogram(struct promtext *, const struct promtext_label *labels,
    size_t nlabels, const struct histogram *h);

/* us as seconds in decimal, exact ("0.0025", "-1.5", "300") into buf. */
#define PROMTEXT_SECONDS_BUFSIZE 32
char *promtext_format_seconds(int64_t us, char *buf, size_t len);

#endif
