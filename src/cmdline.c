/*
 * getopt_long() reports a refused option through optopt (the short option
 * or the val of a long one; 0 for an unknown long option) and optind
 * (just past the argument it was reading). The argument itself says
 * whether the user typed a long or a short form.
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cmdline.h"

char *
cmdline_option_error(int ch, char *const *argv, int optind,
    const struct option *opts, char *buf, size_t len)
{
	const char *arg = optind > 0 ? argv[optind - 1] : "";
	const struct option *o;
	int is_long = strncmp(arg, "--", 2) == 0;
	size_t n;

	if (is_long && (optopt == 0 || ch == '?')) {
		n = strcspn(arg, "=");
		for (o = opts; o->name != NULL; o++) {
			if (optopt != 0 && o->val == optopt &&
			    strlen(o->name) == n - 2 &&
			    strncmp(o->name, arg + 2, n - 2) == 0)
				break;
		}
		if (optopt != 0 && o->name != NULL && arg[n] == '=')
			snprintf(buf, len, "option \"--%s\" takes no value",
			    o->name);
		else
			snprintf(
			    buf, len, "unknown option \"%.*s\"", (int)n, arg);
		return (buf);
	}
	if (ch == ':') {
		if (is_long)
			snprintf(buf, len, "option \"%.*s\" needs a value",
			    (int)strcspn(arg, "="), arg);
		else
			snprintf(
			    buf, len, "option \"-%c\" needs a value", optopt);
		return (buf);
	}
	snprintf(buf, len, "unknown option \"-%c\"", optopt);
	return (buf);
}
