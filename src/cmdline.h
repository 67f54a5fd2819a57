/*
 * What the command-line parsers of lapse and lapsed share: the message for
 * an option getopt_long() refused, naming the option as the user typed it.
 */
#ifndef LAPSE_CMDLINE_H
#define LAPSE_CMDLINE_H

#include <getopt.h>
#include <stddef.h>

/*
 * After getopt_long() returned ch ('?' or ':', with ":" leading the short
 * options), write into buf the reason: `unknown option "-x"`, `option
 * "--in" needs a value` or `option "--check-config" takes no value`.
 * argv and optind are getopt's. Returns buf.
 */
char *cmdline_option_error(int ch, char *const *argv, int optind,
    const struct option *opts, char *buf, size_t len);

#endif
