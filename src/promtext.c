/*
 * Prometheus text. Every line is written whole by one helper, so that the
 * output is a sequence of complete lines whatever the caller does: the
 * family's comments, then "name{label="value",...} value\n".
 */
#include "config.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <event2/buffer.h>

#include "codec.h"
#include "histogram.h"
#include "promtext.h"

static const char *type_names[] = { "counter", "gauge", "histogram" };

void
promtext_init(struct promtext *p, struct evbuffer *out)
{
	memset(p, 0, sizeof *p);
	p->out = out;
}

void
promtext_family(struct promtext *p, const char *name, enum promtext_type type,
    const char *help)
{
	p->name = name;
	p->type = type;
	p->help = help;
	p->said = 0;
}

/* s with backslash and line feed escaped (and, in a label, '"'). */
static void
put_escaped(struct evbuffer *out, const char *s, int label)
{
	size_t run, len = strlen(s);
	int ascii_only = !utf8_valid(s, len);
	unsigned char c;

	while (*s != '\0') {
		for (run = 0; s[run] != '\0'; run++) {
			c = (unsigned char)s[run];
			if (c == '\\' || c == '\n' || (label && c == '"') ||
			    (ascii_only && c > 0x7f))
				break;
		}
		evbuffer_add(out, s, run);
		s += run;
		if (*s == '\0')
			break;
		c = (unsigned char)*s++;
		if (c == '\n')
			evbuffer_add(out, "\\n", 2);
		else if (c > 0x7f)
			evbuffer_add(out, "?", 1);
		else
			evbuffer_add_printf(out, "\\%c", c);
	}
}

/* The family's HELP and TYPE, before its first sample. */
static void
put_family(struct promtext *p)
{
	if (p->said)
		return;
	p->said = 1;
	evbuffer_add_printf(p->out, "# HELP %s ", p->name);
	put_escaped(p->out, p->help, 0);
	evbuffer_add_printf(
	    p->out, "\n# TYPE %s %s\n", p->name, type_names[p->type]);
}

/* "name[suffix]{labels[,le="le"]} " of a sample. */
static void
put_head(struct promtext *p, const char *suffix,
    const struct promtext_label *labels, size_t nlabels, const char *le)
{
	size_t i;

	put_family(p);
	evbuffer_add_printf(p->out, "%s%s", p->name, suffix);
	if (nlabels == 0 && le == NULL) {
		evbuffer_add(p->out, " ", 1);
		return;
	}
	for (i = 0; i < nlabels; i++) {
		evbuffer_add_printf(
		    p->out, "%s%s=\"", i == 0 ? "{" : ",", labels[i].name);
		put_escaped(p->out, labels[i].value, 1);
		evbuffer_add(p->out, "\"", 1);
	}
	if (le != NULL)
		evbuffer_add_printf(
		    p->out, "%sle=\"%s\"", nlabels == 0 ? "{" : ",", le);
	evbuffer_add(p->out, "} ", 2);
}

void
promtext_uint(struct promtext *p, const struct promtext_label *labels,
    size_t nlabels, uint64_t value)
{
	put_head(p, "", labels, nlabels, NULL);
	evbuffer_add_printf(p->out, "%" PRIu64 "\n", value);
}

void
promtext_int(struct promtext *p, const struct promtext_label *labels,
    size_t nlabels, int64_t value)
{
	put_head(p, "", labels, nlabels, NULL);
	evbuffer_add_printf(p->out, "%" PRId64 "\n", value);
}

char *
promtext_format_seconds(int64_t us, char *buf, size_t len)
{
	uint64_t mag = us < 0 ? (uint64_t)0 - (uint64_t)us : (uint64_t)us;
	char frac[8];
	size_t n;

	snprintf(frac, sizeof frac, "%06" PRIu64, mag % 1000000);
	for (n = 6; n > 0 && frac[n - 1] == '0'; n--)
		frac[n - 1] = '\0';
	snprintf(buf, len, "%s%" PRIu64 "%s%s", us < 0 ? "-" : "",
	    mag / 1000000, n > 0 ? "." : "", frac);
	return (buf);
}

void
promtext_seconds(struct promtext *p, const struct promtext_label *labels,
    size_t nlabels, int64_t us)
{
	char buf[PROMTEXT_SECONDS_BUFSIZE];

	put_head(p, "", labels, nlabels, NULL);
	evbuffer_add_printf(
	    p->out, "%s\n", promtext_format_seconds(us, buf, sizeof buf));
}

void
promtext_histogram(struct promtext *p, const struct promtext_label *labels,
    size_t nlabels, const struct histogram *h)
{
	char le[PROMTEXT_SECONDS_BUFSIZE], sum[PROMTEXT_SECONDS_BUFSIZE];
	size_t i;

	for (i = 0; i < h->bounds->n; i++) {
		promtext_format_seconds(
		    (int64_t)h->bounds->le[i], le, sizeof le);
		put_head(p, "_bucket", labels, nlabels, le);
		evbuffer_add_printf(p->out, "%" PRIu64 "\n", h->le[i]);
	}
	put_head(p, "_bucket", labels, nlabels, "+Inf");
	evbuffer_add_printf(p->out, "%" PRIu64 "\n", h->count);
	put_head(p, "_sum", labels, nlabels, NULL);
	evbuffer_add_printf(p->out, "%s\n",
	    promtext_format_seconds((int64_t)h->sum_us, sum, sizeof sum));
	put_head(p, "_count", labels, nlabels, NULL);
	evbuffer_add_printf(p->out, "%" PRIu64 "\n", h->count);
}
