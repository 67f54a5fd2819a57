/*
 * Unit tests for conf.c: tables of configuration files, each bad one paired
 * with the exact message lapsed would print after "lapsed: ", each good one
 * with every field of the struct conf it must give; the SPEC's sample
 * verbatim; password-file and $LAPSE_REDIS_PASSWORD through files the tests
 * make in a private directory; and conf_keyspace_merge().
 */
#include "config.h"

#include <sys/stat.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "conf.h"
#include "log.h"
#include "xmalloc.h"

#include "unit.h"

/* Bytes to build long lines: X190 is 190 bytes. */
#define X10 "xxxxxxxxxx"
#define X50 X10 X10 X10 X10 X10
#define X190 X50 X50 X50 X10 X10 X10 X10
#define A64 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

/* Lines of exactly 197 bytes (the most allowed) and 198, without ends. */
#define COMMENT_197 "; " X190 "xxxxx"
#define COMMENT_198 COMMENT_197 "x"
#define LOG_197 "log = /" X190
#define LOG_198 LOG_197 "x"

#define NS "[namespace orders]\n"
#define NO_NS "t.conf: no [namespace NAME] section (lapsed needs at least one)"
#define DEFAULT_URL "redis://127.0.0.1:6379/0"
#define BIG ((uint64_t)1 << 53)

/* The SPEC's sample, verbatim, around its password-file line. */
#define SAMPLE_HEAD \
	"[redis]\n" \
	"url = redis://127.0.0.1:6379/0   ; redis://[[user]:password@]host" \
	"[:port][/db] or unix:///path/redis.sock[?db=N]\n"
#define SAMPLE_PASSWORD \
	"password-file = /etc/lapse/redis.pass   ; or env " \
	"LAPSE_REDIS_PASSWORD\n"
#define SAMPLE_PASSWORD_FMT \
	"password-file = %s   ; or env LAPSE_REDIS_PASSWORD\n"
#define SAMPLE_TAIL \
	"connect-timeout = 2s\n" \
	"command-timeout = 5s\n" \
	"\n" \
	"[lapsed]\n" \
	"sweep-interval = 1s\n" \
	"sweep-batch = 512\n" \
	"log-level = info        ; debug|info|warn|error\n" \
	"log = stderr            ; stderr|syslog|/path/to/file\n" \
	"keyspace-events = auto  ; auto: add the flags lapsed needs to " \
	"notify-keyspace-events (CONFIG SET), never removing any; off: never " \
	"touch it\n" \
	"\n" \
	"[namespace orders]\n" \
	"watch = orders:         ; optional: adopt the application's own TTL " \
	"keys under these prefixes (comma-separated)\n" \
	"sink = stream           ; stream|list (hand-off) or http|exec " \
	"(delivery)\n" \
	"stream-maxlen = 1000000\n"

/* --- bad files ---------------------------------------------------------- */

/* len 0: strlen(text). */
static const struct bad {
	const char *text;
	size_t len;
	const char *cause;
} bad[] = {
	/* Nothing to run. */
	{ "", 0, NO_NS },
	{ "\n\n\n", 0, NO_NS },
	{ "; only\n# comments\n  ; indented\n", 0, NO_NS },
	{ "[redis]\nurl = redis://h\n[lapsed]\nlog = syslog\n", 0, NO_NS },
	{ "\xef\xbb\xbf", 0, NO_NS },

	/* Keys outside any section. */
	{ "url = redis://h\n" NS, 0,
	    "t.conf:1: key \"url\" is not in any section ([redis], [lapsed] "
	    "or [namespace NAME])" },
	{ "; comment\n\nsink = list\n" NS, 0,
	    "t.conf:3: key \"sink\" is not in any section ([redis], [lapsed] "
	    "or [namespace NAME])" },

	/* Section headers. */
	{ NS "[foo]\n", 0, "t.conf:2: unknown section [foo]" },
	{ "[Redis]\n", 0, "t.conf:1: unknown section [Redis]" },
	{ "[LAPSED]\n", 0, "t.conf:1: unknown section [LAPSED]" },
	{ "[]\n", 0, "t.conf:1: unknown section []" },
	{ "[ ]\n", 0, "t.conf:1: unknown section []" },
	{ "[[redis]]\n", 0, "t.conf:1: unexpected text after \"]\"" },
	{ "[\"redis\"]\n", 0, "t.conf:1: unknown section [\\\"redis\\\"]" },
	{ "[namespaceorders]\n", 0,
	    "t.conf:1: unknown section [namespaceorders]" },
	{ "[namespace-orders]\n", 0,
	    "t.conf:1: unknown section [namespace-orders]" },
	{ "[Namespace orders]\n", 0,
	    "t.conf:1: unknown section [Namespace orders]" },
	{ "[redis\n", 0, "t.conf:1: missing \"]\" in section header" },
	{ NS "sink = list\n[lapsed ; comment\n", 0,
	    "t.conf:3: missing \"]\" in section header" },
	{ "[redis] url = redis://h\n", 0,
	    "t.conf:1: unexpected text after \"]\"" },
	{ "[redis]]\n", 0, "t.conf:1: unexpected text after \"]\"" },
	{ "[namespace]\n", 0,
	    "t.conf:1: [namespace] needs a name: [namespace NAME]" },
	{ "[namespace    ]\n", 0,
	    "t.conf:1: [namespace] needs a name: [namespace NAME]" },
	{ "[namespace\t]\n", 0,
	    "t.conf:1: [namespace] needs a name: [namespace NAME]" },
	{ "[lapsed]\n\n\n\n[namespace a{b]\n", 0,
	    "t.conf:5: namespace: bad namespace \"a{b\": only letters, "
	    "digits, '_', '.' and '-' are allowed" },
	{ "[namespace orders carts]\n", 0,
	    "t.conf:1: namespace: bad namespace \"orders carts\": only "
	    "letters, digits, '_', '.' and '-' are allowed" },
	{ "[namespace lapse:x]\n", 0,
	    "t.conf:1: namespace: bad namespace \"lapse:x\": only letters, "
	    "digits, '_', '.' and '-' are allowed" },
	{ "[namespace " A64 "b]\n", 0,
	    "t.conf:1: namespace: bad namespace \"" A64 "...\": longer than "
	    "64 bytes (65)" },
	{ NS "\n[namespace carts]\n\n\n[namespace orders]\n", 0,
	    "t.conf:6: namespace \"orders\" is already defined at line 1" },
	{ "[namespace orders]\n[namespace  orders ]\n", 0,
	    "t.conf:2: namespace \"orders\" is already defined at line 1" },
	{ "[redis]\n[lapsed]\n[redis]\n", 0,
	    "t.conf:3: section [redis] is already defined at line 1" },
	{ "\n[lapsed]\n" NS "[ lapsed ]\n", 0,
	    "t.conf:4: section [lapsed] is already defined at line 2" },

	/* Lines that are not "key = value". */
	{ "[redis]\nurl\n", 0, "t.conf:2: expected \"key = value\"" },
	{ "[redis]\nurl redis://h\n", 0, "t.conf:2: expected \"key = value\"" },
	{ "[redis]\nurl: redis://h\n", 0,
	    "t.conf:2: expected \"key = value\"" },
	{ "[redis]\nurl ; = redis://h\n", 0,
	    "t.conf:2: expected \"key = value\"" },
	{ "[redis]\n= redis://h\n", 0, "t.conf:2: missing key before \"=\"" },
	{ "[redis]\n  = redis://h\n", 0, "t.conf:2: missing key before \"=\"" },
	/* An indented line never continues the value before it. */
	{ "[redis]\nurl = redis://h\n  /1\n" NS, 0,
	    "t.conf:3: expected \"key = value\"" },
	{ NS "watch = orders:,\n    carts:\n", 0,
	    "t.conf:2: watch: empty prefix" },
	/* A byte order mark is skipped on the first line only. */
	{ NS "\xef\xbb\xbfsink = list\n", 0,
	    "t.conf:2: unknown key \"\\xef\\xbb\\xbfsink\" in [namespace "
	    "orders]" },

	/* Unknown and duplicate keys. */
	{ "[lapsed]\n\n\n\n\n\nsweep-intervall = 1s\n", 0,
	    "t.conf:7: unknown key \"sweep-intervall\" in [lapsed]" },
	{ "[redis]\nURL = redis://h\n", 0,
	    "t.conf:2: unknown key \"URL\" in [redis]" },
	{ "[redis]\npassword = secret\n", 0,
	    "t.conf:2: unknown key \"password\" in [redis]" },
	{ "[redis]\nsweep-batch = 10\n", 0,
	    "t.conf:2: unknown key \"sweep-batch\" in [redis]" },
	{ "[lapsed]\nurl = redis://h\n", 0,
	    "t.conf:2: unknown key \"url\" in [lapsed]" },
	{ NS "sinks = list\n", 0,
	    "t.conf:2: unknown key \"sinks\" in [namespace orders]" },
	{ NS "log = syslog\n", 0,
	    "t.conf:2: unknown key \"log\" in [namespace orders]" },
	{ NS "stream maxlen = 5\n", 0,
	    "t.conf:2: unknown key \"stream maxlen\" in [namespace orders]" },
	{ NS "x:y = 5\n", 0,
	    "t.conf:2: unknown key \"x:y\" in [namespace orders]" },
	{ NS A64 "bcd = 1\n", 0,
	    "t.conf:2: unknown key \"" A64 "...\" in [namespace orders]" },
	{ "[redis]\nurl = redis://a\n\nurl = redis://b\n", 0,
	    "t.conf:4: duplicate key \"url\" in [redis] (first at line 2)" },
	{ "[lapsed]\nlog = stderr\nlog=stderr\n", 0,
	    "t.conf:3: duplicate key \"log\" in [lapsed] (first at line 2)" },
	{ NS "sink = list\nstream-maxlen = 0\nsink = list\n", 0,
	    "t.conf:4: duplicate key \"sink\" in [namespace orders] (first at "
	    "line 2)" },
	{ NS "watch = a:\nwatch = b:\n", 0,
	    "t.conf:3: duplicate key \"watch\" in [namespace orders] (first "
	    "at line 2)" },

	/* Values: missing, quoted, bytes. */
	{ "[redis]\nurl =\n", 0, "t.conf:2: url: missing value" },
	{ "[redis]\nurl =   \t \n", 0, "t.conf:2: url: missing value" },
	{ "[redis]\nurl =    ; the default\n", 0,
	    "t.conf:2: url: missing value" },
	{ NS "watch =\n", 0, "t.conf:2: watch: missing value" },
	{ "[redis]\nurl = \"redis://h\"\n", 0,
	    "t.conf:2: url: values are written without quotes" },
	{ "[lapsed]\nlog = 'stderr'\n", 0,
	    "t.conf:2: log: values are written without quotes" },
	{ "[lapsed]\nlog = \"stderr\n", 0,
	    "t.conf:2: log: \"\\\"stderr\" is not an absolute path (use "
	    "stderr, syslog or /path/to/file)" },
	{ "[redis]\nurl = redis://h\x01\n", 0,
	    "t.conf:2: control byte 0x01 in line" },
	{ "[redis]\nurl = redis://h\x7f\n", 0,
	    "t.conf:2: control byte 0x7f in line" },
	{ "[redis]\x1b\n", 0, "t.conf:1: control byte 0x1b in line" },
	{ "[redis]\n\vurl = redis://h\n", 0,
	    "t.conf:2: control byte 0x0b in line" },
	{ "[redis]\nurl = redis://h\rx\n", 0,
	    "t.conf:2: control byte 0x0d in line" },
	/* Old Mac line ends: one line with carriage returns inside. */
	{ "[redis]\rurl = redis://h\r", 0,
	    "t.conf:1: control byte 0x0d in line" },
	{ "[redis]\nurl = redis://h\0x\n", 26, "t.conf:2: NUL byte in line" },
	{ "; a\0b\n", 6, "t.conf:1: NUL byte in line" },

	/* Long lines, never cut short: 197 bytes pass, 198 do not. */
	{ NS COMMENT_198 "\n", 0, "t.conf:2: line longer than 197 bytes" },
	{ NS COMMENT_198 "\r\n", 0, "t.conf:2: line longer than 197 bytes" },
	{ NS COMMENT_198, 0, "t.conf:2: line longer than 197 bytes" },
	{ NS "[lapsed]\n" LOG_198 "\n", 0,
	    "t.conf:3: line longer than 197 bytes" },
	{ "\xef\xbb\xbf" COMMENT_198 "\n" NS, 0,
	    "t.conf:1: line longer than 197 bytes" },
	{ NS COMMENT_197 "\n" COMMENT_197 "xxxxxxxxxxxxxxxxxxxxxx\n", 0,
	    "t.conf:3: line longer than 197 bytes" },

	/* [redis] */
	{ "[redis]\nurl = http://h\n", 0,
	    "t.conf:2: url: bad Redis URL \"http://h\": unknown scheme "
	    "\"http\" "
	    "(use redis://, unix:// or redis-sentinel://)" },
	{ "[redis]\nurl = redis://h:0\n", 0,
	    "t.conf:2: url: bad Redis URL \"redis://h:0\": port must be "
	    "1-65535" },
	/* The password in a bad URL never reaches the message. */
	{ "[redis]\nurl = redis://:secret@h:99999\n", 0,
	    "t.conf:2: url: bad Redis URL \"redis://:***@h:99999\": port must "
	    "be 1-65535" },
	{ "[redis]\nconnect-timeout = 5x\n", 0,
	    "t.conf:2: connect-timeout: bad duration \"5x\": unknown unit "
	    "\"x\" (use ms, s, m, h or d)" },
	{ "[redis]\nconnect-timeout = 2\n", 0,
	    "t.conf:2: connect-timeout: bad duration \"2\": missing unit (use "
	    "ms, s, m, h or d)" },
	{ "[redis]\ncommand-timeout = 0s\n", 0,
	    "t.conf:2: command-timeout: bad duration \"0s\": must be greater "
	    "than zero" },
	{ "[redis]\ncommand-timeout = 1h 30m\n", 0,
	    "t.conf:2: command-timeout: bad duration \"1h 30m\": spaces are "
	    "not allowed" },
	{ "[redis]\ncommand-timeout = -5s\n", 0,
	    "t.conf:2: command-timeout: bad duration \"-5s\": negative "
	    "durations are not allowed" },
	{ "[redis]\npassword-file = redis.pass\n", 0,
	    "t.conf:2: password-file: redis.pass: not an absolute path" },
	{ "[redis]\npassword-file = ./redis.pass\n", 0,
	    "t.conf:2: password-file: ./redis.pass: not an absolute path" },
	{ "[redis]\npassword-file = /nonexistent/lapse/redis.pass\n", 0,
	    "t.conf:2: password-file: /nonexistent/lapse/redis.pass: No such "
	    "file or directory" },
	{ "[redis]\npassword-file = /\n", 0,
	    "t.conf:2: password-file: /: Is a directory" },

	/* [lapsed] */
	{ "[lapsed]\n\n\n\n\n\n\n\nsweep-interval = 5x\n", 0,
	    "t.conf:9: sweep-interval: bad duration \"5x\": unknown unit "
	    "\"x\" (use ms, s, m, h or d)" },
	{ "[lapsed]\nsweep-interval = 5ms\n", 0,
	    "t.conf:2: sweep-interval: 5ms is too short (at least 10ms)" },
	{ "[lapsed]\nsweep-interval = 9ms\n", 0,
	    "t.conf:2: sweep-interval: 9ms is too short (at least 10ms)" },
	{ "[lapsed]\nsweep-interval = 0s\n", 0,
	    "t.conf:2: sweep-interval: bad duration \"0s\": must be greater "
	    "than zero" },
	{ "[lapsed]\nsweep-batch = 0\n", 0,
	    "t.conf:2: sweep-batch: bad value \"0\": expected a number from 1 "
	    "to 4096" },
	{ "[lapsed]\nsweep-batch = 4097\n", 0,
	    "t.conf:2: sweep-batch: bad value \"4097\": expected a number from "
	    "1 to 4096" },
	{ "[lapsed]\nsweep-batch = abc\n", 0,
	    "t.conf:2: sweep-batch: bad value \"abc\": expected a number from "
	    "1 to 4096" },
	{ "[lapsed]\nsweep-batch = -1\n", 0,
	    "t.conf:2: sweep-batch: bad value \"-1\": expected a number from "
	    "1 to 4096" },
	{ "[lapsed]\nsweep-batch = +5\n", 0,
	    "t.conf:2: sweep-batch: bad value \"+5\": expected a number from "
	    "1 to 4096" },
	{ "[lapsed]\nsweep-batch = 5 12\n", 0,
	    "t.conf:2: sweep-batch: bad value \"5 12\": expected a number from "
	    "1 to 4096" },
	{ "[lapsed]\nsweep-batch = 1e3\n", 0,
	    "t.conf:2: sweep-batch: bad value \"1e3\": expected a number from "
	    "1 to 4096" },
	{ "[lapsed]\nsweep-batch = 0x10\n", 0,
	    "t.conf:2: sweep-batch: bad value \"0x10\": expected a number from "
	    "1 to 4096" },
	{ "[lapsed]\nsweep-batch = 512.0\n", 0,
	    "t.conf:2: sweep-batch: bad value \"512.0\": expected a number "
	    "from 1 to 4096" },
	{ "[lapsed]\nsweep-batch = 18446744073709551617\n", 0,
	    "t.conf:2: sweep-batch: bad value \"18446744073709551617\": "
	    "expected a number from 1 to 4096" },
	{ "[lapsed]\nlog-level = verbose\n", 0,
	    "t.conf:2: log-level: unknown level \"verbose\" (use debug, info, "
	    "warn or error)" },
	{ "[lapsed]\nlog-level = INFO\n", 0,
	    "t.conf:2: log-level: unknown level \"INFO\" (use debug, info, "
	    "warn or error)" },
	{ "[lapsed]\nlog-level = warning\n", 0,
	    "t.conf:2: log-level: unknown level \"warning\" (use debug, info, "
	    "warn or error)" },
	{ "[lapsed]\nlog = var/log/lapsed.log\n", 0,
	    "t.conf:2: log: \"var/log/lapsed.log\" is not an absolute path "
	    "(use stderr, syslog or /path/to/file)" },
	{ "[lapsed]\nlog = ./lapsed.log\n", 0,
	    "t.conf:2: log: \"./lapsed.log\" is not an absolute path (use "
	    "stderr, syslog or /path/to/file)" },
	{ "[lapsed]\nlog = Stderr\n", 0,
	    "t.conf:2: log: \"Stderr\" is not an absolute path (use stderr, "
	    "syslog or /path/to/file)" },
	{ "[lapsed]\nkeyspace-events = maybe\n", 0,
	    "t.conf:2: keyspace-events: unknown value \"maybe\" (use auto or "
	    "off)" },
	{ "[lapsed]\nkeyspace-events = on\n", 0,
	    "t.conf:2: keyspace-events: unknown value \"on\" (use auto or "
	    "off)" },
	{ "[lapsed]\nkeyspace-events = Ex\n", 0,
	    "t.conf:2: keyspace-events: unknown value \"Ex\" (use auto or "
	    "off)" },
	{ "[lapsed]\npaths = all\n", 0,
	    "t.conf:2: paths: bad paths \"all\" (use one or more of "
	    "expired, timer, sweep, each once)" },
	{ "[lapsed]\npaths = timer,timer\n", 0,
	    "t.conf:2: paths: bad paths \"timer,timer\" (use one or more of "
	    "expired, timer, sweep, each once)" },
	{ "[lapsed]\npaths = expired,,sweep\n", 0,
	    "t.conf:2: paths: bad paths \"expired,,sweep\" (use one or more of "
	    "expired, timer, sweep, each once)" },
	{ NS "trigger-horizon = 500ms\n", 0,
	    "t.conf:2: trigger-horizon: 500ms is too short (at least 1s, or "
	    "none)" },
	{ NS "trigger-horizon = never\n", 0,
	    "t.conf:2: trigger-horizon: bad value \"never\" (use none or a "
	    "duration such as 1m)" },
	{ NS "trigger-horizon = 0\n", 0,
	    "t.conf:2: trigger-horizon: bad value \"0\" (use none or a "
	    "duration such as 1m)" },
	{ "[lapsed]\npaths = Timer\n", 0,
	    "t.conf:2: paths: bad paths \"Timer\" (use one or more of "
	    "expired, timer, sweep, each once)" },
	{ "[lapsed]\npaths = timer sweep\n", 0,
	    "t.conf:2: paths: bad paths \"timer sweep\" (use one or more of "
	    "expired, timer, sweep, each once)" },
	{ "[lapsed]\npaths = expired,timer,sweep,cron\n", 0,
	    "t.conf:2: paths: bad paths \"expired,timer,sweep,cron\" (use one "
	    "or more of "
	    "expired, timer, sweep, each once)" },

	{ "[lapsed]\nlisten = localhost:9465\n", 0,
	    "t.conf:2: listen: bad address \"localhost:9465\": not an IPv4 "
	    "address (host names are not accepted; write an IPv6 address in "
	    "brackets)" },
	{ "[lapsed]\nlisten = 127.0.0.1:0\n", 0,
	    "t.conf:2: listen: bad address \"127.0.0.1:0\": the port must be "
	    "a number from 1 to 65535" },
	{ "[lapsed]\nlisten = 9465\n", 0,
	    "t.conf:2: listen: bad address \"9465\": missing \":PORT\" (e.g. "
	    "127.0.0.1:9465)" },
	{ "[lapsed]\nlisten = off\n", 0,
	    "t.conf:2: listen: bad address \"off\": missing \":PORT\" (e.g. "
	    "127.0.0.1:9465)" },
	{ "[lapsed]\nlisten = 127.0.0.1:9465\nlisten = 127.0.0.1:9466\n", 0,
	    "t.conf:3: duplicate key \"listen\" in [lapsed] (first at line "
	    "2)" },
	{ NS "listen = 127.0.0.1:9465\n", 0,
	    "t.conf:2: unknown key \"listen\" in [namespace orders]" },

	/* [namespace NAME]: sinks and stream-maxlen. */
	{ NS "\n\n\nsink = kafka\n", 0,
	    "t.conf:5: sink: unknown sink \"kafka\" (use stream, list, http or "
	    "exec)" },
	{ NS "sink = list;\n", 0,
	    "t.conf:2: sink: unknown sink \"list;\" (use stream, list, http or "
	    "exec)" },
	{ NS "sink = Stream\n", 0,
	    "t.conf:2: sink: unknown sink \"Stream\" (use stream, list, http "
	    "or exec)" },
	{ NS "sink = http\n", 0, "t.conf:1: sink http needs url" },
	{ NS "sink = exec\n", 0, "t.conf:1: sink exec needs command" },
	{ NS "sink = exec\ncommand = /bin/cat\n[namespace u]\nurl = "
	     "http://h/\n",
	    0, "t.conf:5: url: only for sink http" },
	{ NS "timeout = 5s\nsink = exec\ncommand = /bin/cat\nlease = 5s\n", 0,
	    "t.conf:5: lease (5s) must be longer than timeout (5s)" },
	{ NS "stream-maxlen = -1\n", 0,
	    "t.conf:2: stream-maxlen: bad value \"-1\": expected a number from "
	    "0 to 9007199254740992" },
	{ NS "stream-maxlen = 1e6\n", 0,
	    "t.conf:2: stream-maxlen: bad value \"1e6\": expected a number "
	    "from 0 to 9007199254740992" },
	{ NS "stream-maxlen = 1,000,000\n", 0,
	    "t.conf:2: stream-maxlen: bad value \"1,000,000\": expected a "
	    "number from 0 to 9007199254740992" },
	{ NS "stream-maxlen = 9007199254740993\n", 0,
	    "t.conf:2: stream-maxlen: bad value \"9007199254740993\": expected "
	    "a number from 0 to 9007199254740992" },
	{ NS "stream-maxlen = 18446744073709551616\n", 0,
	    "t.conf:2: stream-maxlen: bad value \"18446744073709551616\": "
	    "expected a number from 0 to 9007199254740992" },

	/* [namespace NAME]: watch prefixes. */
	{ NS "watch = a:,,b:\n", 0, "t.conf:2: watch: empty prefix" },
	{ NS "watch = a:,\n", 0, "t.conf:2: watch: empty prefix" },
	{ NS "watch = , a:\n", 0, "t.conf:2: watch: empty prefix" },
	{ NS "watch = ,\n", 0, "t.conf:2: watch: empty prefix" },
	{ NS "watch = orders: carts:\n", 0,
	    "t.conf:2: watch: bad prefix \"orders: carts:\": spaces are not "
	    "allowed (separate prefixes with \",\")" },
	{ NS "watch = a:, b\tc:\n", 0,
	    "t.conf:2: watch: bad prefix \"b\\x09c:\": spaces are not allowed "
	    "(separate prefixes with \",\")" },
	{ NS "watch = lapse:\n", 0,
	    "t.conf:2: watch: prefix \"lapse:\" would match lapse's own keys "
	    "(\"lapse:...\")" },
	{ NS "watch = lapse:{orders}:\n", 0,
	    "t.conf:2: watch: prefix \"lapse:{orders}:\" would match lapse's "
	    "own keys (\"lapse:...\")" },
	{ NS "watch = a:, la\n", 0,
	    "t.conf:2: watch: prefix \"la\" would match lapse's own keys "
	    "(\"lapse:...\")" },
	{ NS "watch = l\n", 0,
	    "t.conf:2: watch: prefix \"l\" would match lapse's own keys "
	    "(\"lapse:...\")" },
	{ NS "watch = orders:, orders:\n", 0,
	    "t.conf:2: watch: prefix \"orders:\" is listed twice in namespace "
	    "\"orders\"" },
	{ NS "watch = orders:, orders:x:\n", 0,
	    "t.conf:2: watch: prefixes \"orders:\" and \"orders:x:\" of "
	    "namespace \"orders\" overlap" },
	{ NS "watch = orders:x:, carts:, orders:\n", 0,
	    "t.conf:2: watch: prefixes \"orders:x:\" and \"orders:\" of "
	    "namespace \"orders\" overlap" },
	{ NS "watch = orders:\n[namespace carts]\nwatch = carts:, orders:\n", 0,
	    "t.conf:4: watch: prefix \"orders:\" of namespace \"carts\" is "
	    "already watched by namespace \"orders\" (line 2)" },
	{ NS "watch = orders:\n[namespace carts]\nwatch = orders:9\n", 0,
	    "t.conf:4: watch: prefix \"orders:9\" of namespace \"carts\" "
	    "overlaps prefix \"orders:\" of namespace \"orders\" (line 2)" },
	{ NS "\nwatch = o:a:, o:b:\n[namespace carts]\nsink = list\n"
	     "[namespace x]\nwatch = x:, o:\n",
	    0,
	    "t.conf:7: watch: prefix \"o:\" of namespace \"x\" overlaps prefix "
	    "\"o:a:\" of namespace \"orders\" (line 3)" },

	/* Only the first error is told. */
	{ "[redis]\nurl = http://h\n[foo]\n", 0,
	    "t.conf:2: url: bad Redis URL \"http://h\": unknown scheme "
	    "\"http\" "
	    "(use redis://, unix:// or redis-sentinel://)" },
	{ "[foo]\nurl = http://h\n", 0, "t.conf:1: unknown section [foo]" },
	{ NS "sink = kafka\n" COMMENT_198 "\n", 0,
	    "t.conf:2: sink: unknown sink \"kafka\" (use stream, list, http or "
	    "exec)" },

	/* CRLF line ends do not change the messages. */
	{ "[redis]\r\nurl = redis://h\r\nurl = redis://h\r\n", 0,
	    "t.conf:3: duplicate key \"url\" in [redis] (first at line 2)" },
	{ "[lapsed]\r\nsweep-batch = 0\r\n", 0,
	    "t.conf:2: sweep-batch: bad value \"0\": expected a number from 1 "
	    "to 4096" },
	{ "\xef\xbb\xbf[lapsed]\r\nlog-level = loud\r\n", 0,
	    "t.conf:2: log-level: unknown level \"loud\" (use debug, info, "
	    "warn or error)" },
};

/*
 * conf_parse() refuses text (named name, with env as $LAPSE_REDIS_PASSWORD)
 * with exactly want, and leaves the caller's pointer alone.
 */
static void
assert_parse_refused(const char *text, size_t len, const char *name,
    const char *env, const char *want)
{
	struct conf *conf = (struct conf *)&conf;
	char *cause = NULL;

	ck_assert_int_eq(conf_parse(text, len, name, env, &conf, &cause), -1);
	ck_assert_ptr_nonnull(cause);
	ck_assert_str_eq(cause, want);
	ck_assert_ptr_eq(conf, (struct conf *)&conf);
	free(cause);
}

/* The same for conf_load() of path. */
static void
assert_load_refused(const char *path, const char *want)
{
	struct conf *conf = (struct conf *)&conf;
	char *cause = NULL;

	ck_assert_int_eq(conf_load(path, NULL, &conf, &cause), -1);
	ck_assert_ptr_nonnull(cause);
	ck_assert_str_eq(cause, want);
	ck_assert_ptr_eq(conf, (struct conf *)&conf);
	free(cause);
}

START_TEST(test_bad)
{
	const struct bad *b = &bad[_i];

	assert_parse_refused(b->text, b->len != 0 ? b->len : strlen(b->text),
	    "t.conf", "envpw", b->cause);
}
END_TEST

/* --- good files --------------------------------------------------------- */

struct want_ns {
	const char *name;
	enum conf_sink sink;
	uint64_t stream_maxlen;
	const char *watch; /* prefixes joined with "|" */
	int line;
	int watch_line;
};

/* The defaults of struct conf, from url to keyspace-events. */
#define DEFAULTS DEFAULT_URL, 2000, 5000, 1000, 512, LOG_LEVEL_INFO, "stderr", 1

static const struct good {
	const char *text;
	const char *url;
	uint64_t connect_timeout_ms;
	uint64_t command_timeout_ms;
	uint64_t sweep_interval_ms;
	unsigned int sweep_batch;
	enum log_level log_level;
	const char *log;
	int keyspace_events_auto;
	size_t nns;
	struct want_ns ns[3];
} good[] = {
	/* The least there is: every default. */
	{ NS, DEFAULTS, 1,
	    { { "orders", CONF_SINK_STREAM, 1000000, "", 1, 0 } } },
	{ "[namespace orders]", DEFAULTS, 1,
	    { { "orders", CONF_SINK_STREAM, 1000000, "", 1, 0 } } },
	{ "[redis]\n[lapsed]\n" NS, DEFAULTS, 1,
	    { { "orders", CONF_SINK_STREAM, 1000000, "", 3, 0 } } },

	/* The SPEC's sample without its password-file line. */
	{ SAMPLE_HEAD SAMPLE_TAIL, DEFAULTS, 1,
	    { { "orders", CONF_SINK_STREAM, 1000000, "orders:", 13, 14 } } },

	/* Every field away from its default. */
	{ "[redis]\n"
	  "url = unix:///run/redis/redis.sock?db=3\n"
	  "connect-timeout = 250ms\n"
	  "command-timeout = 1m30s\n"
	  "[lapsed]\n"
	  "sweep-interval = 10ms\n"
	  "sweep-batch = 4096\n"
	  "log-level = debug\n"
	  "log = syslog\n"
	  "keyspace-events = off\n"
	  "[namespace orders]\n"
	  "sink = list\n"
	  "stream-maxlen = 0\n"
	  "watch = orders:close:, orders:remind:\n"
	  "[namespace carts]\n"
	  "stream-maxlen = 9007199254740992\n"
	  "watch = carts:\n"
	  "[namespace a.b-c_9]\n",
	    "unix:///run/redis/redis.sock?db=3", 250, 90000, 10, 4096,
	    LOG_LEVEL_DEBUG, "syslog", 0, 3,
	    { { "orders", CONF_SINK_LIST, 0, "orders:close:|orders:remind:", 11,
	          14 },
	        { "carts", CONF_SINK_STREAM, BIG, "carts:", 15, 17 },
	        { "a.b-c_9", CONF_SINK_STREAM, 1000000, "", 18, 0 } } },

	/* Sections in any order, keys in any order; levels and log files. */
	{ NS "stream-maxlen = 5\nsink = stream\n"
	     "[lapsed]\nlog = /var/log/lapsed.log\nlog-level = warn\n"
	     "[redis]\ncommand-timeout = 1d\nurl = "
	     "redis://app@db.example:6380/2\n",
	    "redis://app@db.example:6380/2", 2000, 86400000, 1000, 512,
	    LOG_LEVEL_WARN, "/var/log/lapsed.log", 1, 1,
	    { { "orders", CONF_SINK_STREAM, 5, "", 1, 0 } } },
	{ "[lapsed]\nlog-level = error\nsweep-interval = 1h30m\n" NS,
	    DEFAULT_URL, 2000, 5000, 5400000, 512, LOG_LEVEL_ERROR, "stderr", 1,
	    1, { { "orders", CONF_SINK_STREAM, 1000000, "", 4, 0 } } },
	{ "[lapsed]\nlog-level = info\nsweep-batch = 1\n"
	  "keyspace-events = auto\n" NS,
	    DEFAULT_URL, 2000, 5000, 1000, 1, LOG_LEVEL_INFO, "stderr", 1, 1,
	    { { "orders", CONF_SINK_STREAM, 1000000, "", 5, 0 } } },

	/* An empty namespace section still defines its namespace. */
	{ "[namespace a]\n[namespace b]\n; nothing\n[namespace c]\nsink = "
	  "list\n",
	    DEFAULTS, 3,
	    { { "a", CONF_SINK_STREAM, 1000000, "", 1, 0 },
	        { "b", CONF_SINK_STREAM, 1000000, "", 2, 0 },
	        { "c", CONF_SINK_LIST, 1000000, "", 4, 0 } } },
	/* The same keys in two namespaces. */
	{ NS "sink = list\n[namespace carts]\nsink = list\n", DEFAULTS, 2,
	    { { "orders", CONF_SINK_LIST, 1000000, "", 1, 0 },
	        { "carts", CONF_SINK_LIST, 1000000, "", 3, 0 } } },
	/* The longest namespace name; no cut to inih's section buffer. */
	{ "[namespace " A64 "]\n", DEFAULTS, 1,
	    { { A64, CONF_SINK_STREAM, 1000000, "", 1, 0 } } },

	/* Layout: blanks, tabs, comments, '=' without spaces. */
	{ "# comment\n"
	  "; comment\n"
	  "\t; indented comment\n"
	  "   \n"
	  "[ redis ]   ; header comment\n"
	  "  url=redis://h:1/1\n"
	  "\tconnect-timeout\t=\t3s\t; tabs\n"
	  "[namespace   orders  ]#comment\n"
	  "watch = a;b:, c#d:   ; ';' and '#' inside values are kept\n"
	  "sink =list\n"
	  "[lapsed];\n"
	  "sweep-batch = 0000512\n",
	    "redis://h:1/1", 3000, 5000, 1000, 512, LOG_LEVEL_INFO, "stderr", 1,
	    1, { { "orders", CONF_SINK_LIST, 1000000, "a;b:|c#d:", 8, 9 } } },

	/* Blanks of every kind around the commas of a watch list. */
	{ NS "watch =orders:\t,\tcarts: ,users:,x\n", DEFAULTS, 1,
	    { { "orders", CONF_SINK_STREAM, 1000000, "orders:|carts:|users:|x",
	        1, 2 } } },
	/* Prefixes close to each other, and to "lapse:", but disjoint. */
	{ NS "watch = ab:, ac:, a:b, lapsed:, lapsx\n[namespace b]\n"
	     "watch = orders2:, orders:, ab;\n",
	    DEFAULTS, 2,
	    { { "orders", CONF_SINK_STREAM, 1000000,
	          "ab:|ac:|a:b|lapsed:|lapsx", 1, 2 },
	        { "b", CONF_SINK_STREAM, 1000000, "orders2:|orders:|ab;", 3,
	            4 } } },
	/* Bytes 0x80-0xff are allowed in a prefix. */
	{ NS "watch = caf\xc3\xa9:\n", DEFAULTS, 1,
	    { { "orders", CONF_SINK_STREAM, 1000000, "caf\xc3\xa9:", 1, 2 } } },

	/* Line ends: CRLF, none at the end, a byte order mark. */
	{ "[lapsed]\r\nsweep-batch = 7\r\n\r\n[namespace orders]\r\n"
	  "sink = list\r\n",
	    DEFAULT_URL, 2000, 5000, 1000, 7, LOG_LEVEL_INFO, "stderr", 1, 1,
	    { { "orders", CONF_SINK_LIST, 1000000, "", 4, 0 } } },
	{ "[namespace orders]\nsink = list", DEFAULTS, 1,
	    { { "orders", CONF_SINK_LIST, 1000000, "", 1, 0 } } },
	{ "[namespace orders]\r\nsink = list\r", DEFAULTS, 1,
	    { { "orders", CONF_SINK_LIST, 1000000, "", 1, 0 } } },
	{ "\xef\xbb\xbf[namespace orders]\nsink = list\n", DEFAULTS, 1,
	    { { "orders", CONF_SINK_LIST, 1000000, "", 1, 0 } } },
	{ "\xef\xbb\xbf" SAMPLE_HEAD SAMPLE_TAIL, DEFAULTS, 1,
	    { { "orders", CONF_SINK_STREAM, 1000000, "orders:", 13, 14 } } },

	/* 197-byte lines pass, with either line end. */
	{ COMMENT_197 "\n" NS COMMENT_197 "\r\n[lapsed]\n" LOG_197 "\r\n",
	    DEFAULT_URL, 2000, 5000, 1000, 512, LOG_LEVEL_INFO, "/" X190, 1, 1,
	    { { "orders", CONF_SINK_STREAM, 1000000, "", 2, 0 } } },
	{ NS "[lapsed]\n" LOG_197, DEFAULT_URL, 2000, 5000, 1000, 512,
	    LOG_LEVEL_INFO, "/" X190, 1, 1,
	    { { "orders", CONF_SINK_STREAM, 1000000, "", 1, 0 } } },
	{ "\xef\xbb\xbf" COMMENT_197 "\n" NS, DEFAULTS, 1,
	    { { "orders", CONF_SINK_STREAM, 1000000, "", 2, 0 } } },
};

/* The prefixes of ns joined with "|". Caller frees. */
static char *
join_watch(const struct conf_ns *ns)
{
	size_t i, len = 1;
	char *out;

	for (i = 0; i < ns->nwatch; i++)
		len += strlen(ns->watch[i]) + 1;
	out = xcalloc(1, len);
	for (i = 0; i < ns->nwatch; i++) {
		if (i > 0)
			strcat(out, "|");
		strcat(out, ns->watch[i]);
	}
	return (out);
}

START_TEST(test_good)
{
	const struct good *g = &good[_i];
	struct conf *conf = NULL;
	char *cause = NULL, *watch;
	size_t i;

	ck_assert_msg(conf_parse(g->text, strlen(g->text), "t.conf", NULL,
	                  &conf, &cause) == 0,
	    "refused: %s", cause);
	ck_assert_ptr_null(cause);
	ck_assert_str_eq(conf->path, "t.conf");
	ck_assert_str_eq(conf->url, g->url);
	ck_assert_ptr_nonnull(conf->redis);
	ck_assert_ptr_null(conf->password);
	ck_assert_uint_eq(conf->connect_timeout_ms, g->connect_timeout_ms);
	ck_assert_uint_eq(conf->command_timeout_ms, g->command_timeout_ms);
	ck_assert_uint_eq(conf->sweep_interval_ms, g->sweep_interval_ms);
	ck_assert_uint_eq(conf->sweep_batch, g->sweep_batch);
	ck_assert_int_eq(conf->log_level, g->log_level);
	ck_assert_str_eq(conf->log, g->log);
	ck_assert_int_eq(conf->keyspace_events_auto, g->keyspace_events_auto);
	ck_assert_uint_eq(conf->nns, g->nns);
	for (i = 0; i < g->nns; i++) {
		ck_assert_str_eq(conf->ns[i].name, g->ns[i].name);
		ck_assert_int_eq(conf->ns[i].sink, g->ns[i].sink);
		ck_assert_uint_eq(
		    conf->ns[i].stream_maxlen, g->ns[i].stream_maxlen);
		ck_assert_int_eq(conf->ns[i].line, g->ns[i].line);
		ck_assert_int_eq(conf->ns[i].watch_line, g->ns[i].watch_line);
		watch = join_watch(&conf->ns[i]);
		ck_assert_str_eq(watch, g->ns[i].watch);
		ck_assert_uint_eq(
		    conf->ns[i].nwatch == 0, g->ns[i].watch[0] == 0);
		free(watch);
	}
	conf_free(conf);
}
END_TEST

/* paths: any non-empty subset of the three, blanks around commas. */
static const struct paths {
	const char *value;
	unsigned int bits;
} paths[] = {
	{ "expired", CONF_PATH_EXPIRED },
	{ "timer", CONF_PATH_TIMER },
	{ "sweep", CONF_PATH_SWEEP },
	{ "expired,timer", CONF_PATH_EXPIRED | CONF_PATH_TIMER },
	{ "sweep , expired", CONF_PATH_EXPIRED | CONF_PATH_SWEEP },
	{ "expired, timer, sweep", CONF_PATHS_ALL },
	{ "sweep,timer,expired", CONF_PATHS_ALL },
};

START_TEST(test_paths)
{
	struct conf *conf = NULL;
	char *text, *cause = NULL;

	xasprintf(&text, "[lapsed]\npaths = %s\n" NS, paths[_i].value);
	ck_assert_msg(
	    conf_parse(text, strlen(text), "t.conf", NULL, &conf, &cause) == 0,
	    "refused: %s", cause);
	ck_assert_uint_eq(conf->paths, paths[_i].bits);
	conf_free(conf);
	free(text);
}
END_TEST

START_TEST(test_paths_default)
{
	struct conf *conf = NULL;
	char *cause = NULL;

	ck_assert_int_eq(
	    conf_parse(NS, strlen(NS), "t.conf", NULL, &conf, &cause), 0);
	ck_assert_uint_eq(conf->paths, CONF_PATHS_ALL);
	conf_free(conf);
}
END_TEST

/* listen: off by default; an IPv4 or bracketed IPv6 address and a port. */
START_TEST(test_listen)
{
	struct conf *conf = NULL;
	char *cause = NULL;
	const char *text = "[lapsed]\nlisten = [::1]:9465\n" NS;

	ck_assert_int_eq(
	    conf_parse(NS, strlen(NS), "t.conf", NULL, &conf, &cause), 0);
	ck_assert_int_eq(conf->listen_set, 0);
	conf_free(conf);
	ck_assert_msg(
	    conf_parse(text, strlen(text), "t.conf", NULL, &conf, &cause) == 0,
	    "refused: %s", cause);
	ck_assert_int_eq(conf->listen_set, 1);
	ck_assert_str_eq(conf->listen.host, "::1");
	ck_assert_int_eq(conf->listen.port, 9465);
	conf_free(conf);
}
END_TEST

/* trigger-horizon: none, or a duration of at least 1s. */
static const struct horizon {
	const char *text;
	int set;
	uint64_t ms;
} horizons[] = {
	{ NS, 0, 0 },
	{ NS "trigger-horizon = none\n", 1, 0 },
	{ NS "trigger-horizon = 1s\n", 1, 1000 },
	{ NS "trigger-horizon = 1h30m\n", 1, 5400000 },
};

START_TEST(test_horizon)
{
	const struct horizon *h = &horizons[_i];
	struct conf *conf = NULL;
	char *cause = NULL;

	ck_assert_msg(conf_parse(h->text, strlen(h->text), "t.conf", NULL,
	                  &conf, &cause) == 0,
	    "refused: %s", cause);
	ck_assert_int_eq(conf->ns[0].trigger_horizon_set, h->set);
	ck_assert_uint_eq(conf->ns[0].trigger_horizon_ms, h->ms);
	conf_free(conf);
}
END_TEST

/* The default URL and a parsed one, field by field. */
/* The delivery keys: defaults, values, and keys given before sink. */
START_TEST(test_delivery)
{
	static const char text[] = "[namespace h]\n"
	                           "url = https://a.example/x\n"
	                           "retry = 5s, 10s, 15s\n"
	                           "max-attempts = 4\n"
	                           "sink = http\n"
	                           "allow-url = https://b.example/, "
	                           "http://c.example:8080/cb/\n"
	                           "dead-status = 410, 422\n"
	                           "[namespace x]\n"
	                           "sink = exec\n"
	                           "command = cat -u 'a b'\n"
	                           "timeout = 2s\n"
	                           "lease = 3s\n"
	                           "concurrency = 64\n"
	                           "dead-maxlen = 0\n";
	const struct conf_delivery *h, *x;
	struct conf *conf;
	char *cause = NULL;

	ck_assert_msg(conf_parse(text, sizeof text - 1, "t.conf", NULL, &conf,
	                  &cause) == 0,
	    "%s", cause);
	ck_assert_int_eq(conf->ns[0].sink, CONF_SINK_HTTP);
	h = &conf->ns[0].delivery;
	ck_assert_str_eq(h->url, "https://a.example/x");
	ck_assert_uint_eq(h->retry.ndelays, 3);
	ck_assert_uint_eq(h->retry.delays_ms[2], 15000);
	ck_assert_uint_eq(h->max_attempts, 4);
	ck_assert_uint_eq(h->nallow, 2);
	ck_assert_str_eq(h->allow_url[1], "http://c.example:8080/cb/");
	ck_assert_int_eq(delivconf_dead_code(h, 422), 1);
	ck_assert_int_eq(delivconf_dead_code(h, 500), 0);
	/* The defaults. */
	ck_assert_uint_eq(h->timeout_ms, 10000);
	ck_assert_uint_eq(h->lease_ms, 60000);
	ck_assert_uint_eq(h->concurrency, 16);
	ck_assert_uint_eq(h->dead_maxlen, 100000);
	ck_assert_ptr_null(h->signing_key);

	ck_assert_int_eq(conf->ns[1].sink, CONF_SINK_EXEC);
	x = &conf->ns[1].delivery;
	/* Looked up in PATH at start; the words as written. */
	ck_assert_int_eq(x->command[0][0], '/');
	ck_assert_str_eq(x->command[1], "-u");
	ck_assert_str_eq(x->command[2], "a b");
	ck_assert_ptr_null(x->command[3]);
	ck_assert_uint_eq(x->concurrency, 64);
	ck_assert_uint_eq(x->dead_maxlen, 0);
	ck_assert_uint_eq(x->retry.exponential, 1);
	ck_assert_uint_eq(x->max_attempts, 10);
	/* dead-exit's default for exec, dead-status's for http. */
	ck_assert_int_eq(delivconf_dead_code(x, 65), 1);
	ck_assert_int_eq(delivconf_dead_code(x, 410), 0);
	conf_free(conf);
}
END_TEST

START_TEST(test_url_fields)
{
	struct conf *conf = NULL;
	char *cause = NULL;
	const char *text;

	text = NS;
	ck_assert_int_eq(
	    conf_parse(text, strlen(text), "t.conf", NULL, &conf, &cause), 0);
	ck_assert_int_eq(conf->redis->is_unix, 0);
	ck_assert_str_eq(conf->redis->host, "127.0.0.1");
	ck_assert_int_eq(conf->redis->port, 6379);
	ck_assert_int_eq(conf->redis->db, 0);
	ck_assert_ptr_null(conf->redis->password);
	conf_free(conf);

	/* The URL's own password stays in the URL, hidden in url. */
	text = "[redis]\nurl = redis://app:s3cret@[::1]:6380/4\n" NS;
	ck_assert_int_eq(
	    conf_parse(text, strlen(text), "t.conf", NULL, &conf, &cause), 0);
	ck_assert_str_eq(conf->url, "redis://app:***@[::1]:6380/4");
	ck_assert_str_eq(conf->redis->host, "::1");
	ck_assert_int_eq(conf->redis->port, 6380);
	ck_assert_int_eq(conf->redis->db, 4);
	ck_assert_str_eq(conf->redis->user, "app");
	ck_assert_str_eq(conf->redis->password, "s3cret");
	ck_assert_ptr_null(conf->password);
	conf_free(conf);

	/* A Cluster's seeds: lapsed asks them in turn. */
	text = "[redis]\nurl = redis://h1:7000,h2:7001,h3\n" NS;
	ck_assert_int_eq(
	    conf_parse(text, strlen(text), "t.conf", NULL, &conf, &cause), 0);
	ck_assert_str_eq(conf->redis->host, "h1");
	ck_assert_int_eq(conf->redis->port, 7000);
	ck_assert_uint_eq(conf->redis->nseeds, 2);
	ck_assert_str_eq(conf->redis->seeds[0].host, "h2");
	ck_assert_int_eq(conf->redis->seeds[1].port, 6379);
	conf_free(conf);

	text = "[redis]\nurl = unix:///tmp/r.sock\n" NS;
	ck_assert_int_eq(
	    conf_parse(text, strlen(text), "t.conf", NULL, &conf, &cause), 0);
	ck_assert_int_eq(conf->redis->is_unix, 1);
	ck_assert_str_eq(conf->redis->path, "/tmp/r.sock");
	ck_assert_str_eq(conf->url, "unix:///tmp/r.sock");
	conf_free(conf);
}
END_TEST

/* The SPEC's sample as printed names a file this machine lacks. */
START_TEST(test_sample_verbatim)
{
	static const char text[] = SAMPLE_HEAD SAMPLE_PASSWORD SAMPLE_TAIL;
	struct conf *conf = NULL;
	char *cause = NULL;

	if (access("/etc/lapse/redis.pass", F_OK) == 0) {
		ck_assert_int_eq(conf_parse(text, strlen(text), "lapsed.conf",
		                     NULL, &conf, &cause),
		    0);
		conf_free(conf);
		return;
	}
	assert_parse_refused(text, strlen(text), "lapsed.conf", NULL,
	    "lapsed.conf:3: password-file: /etc/lapse/redis.pass: No such "
	    "file or directory");
}
END_TEST

/* The test lines are the lengths their names say. */
START_TEST(test_line_lengths)
{
	ck_assert_uint_eq(strlen(COMMENT_197), 197);
	ck_assert_uint_eq(strlen(COMMENT_198), 198);
	ck_assert_uint_eq(strlen(LOG_197), 197);
	ck_assert_uint_eq(strlen(LOG_198), 198);
	ck_assert_uint_eq(CONF_LINE_MAX, 197);
}
END_TEST

/* --- files on disk ------------------------------------------------------ */

/* A private directory for one test's files, and files in it. */
static char *tmpdir;

static void
tmp_setup(void)
{
	tmpdir = unit_tmpdir_new("check_conf");
}

static void
tmp_teardown(void)
{
	unit_tmpdir_remove(tmpdir);
	free(tmpdir);
	tmpdir = NULL;
}

/* Write len bytes to name in the private directory. Caller frees the path. */
static char *
tmp_file(const char *name, const void *data, size_t len)
{
	char *path;
	FILE *f;

	xasprintf(&path, "%s/%s", tmpdir, name);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(data, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
	return (path);
}

/* The password as conf_parse() gives it for a password file and env. */
static const struct password {
	const char *file; /* contents; NULL: no password-file line */
	size_t len; /* 0: strlen(file) */
	const char *env;
	const char *password; /* NULL: none */
} passwords[] = {
	{ "s3cret\n", 0, NULL, "s3cret" },
	{ "s3cret", 0, NULL, "s3cret" },
	{ "s3cret\r\n", 0, NULL, "s3cret" },
	{ "s3cret\nsecond line\n", 0, NULL, "s3cret" },
	{ "s3cret\r\nsecond line", 0, NULL, "s3cret" },
	/* Only the line end is removed: blanks belong to the password. */
	{ " pass word \t\n", 0, NULL, " pass word \t" },
	{ "p;w #x = y\n", 0, NULL, "p;w #x = y" },
	{ "a\rb\n", 0, NULL, "a\rb" },
	{ "s3cret\n", 0, "fromenv", "s3cret" },
	{ NULL, 0, "fromenv", "fromenv" },
	{ NULL, 0, "", NULL },
	{ NULL, 0, NULL, NULL },
	{ X190 X190 X190 "\n", 0, NULL, X190 X190 X190 },
	{ "\xc3\xa9t\xc3\xa9\n", 0, NULL, "\xc3\xa9t\xc3\xa9" },
};

START_TEST(test_password)
{
	const struct password *pw = &passwords[_i];
	struct conf *conf = NULL;
	char *cause = NULL, *path = NULL, *text;

	tmp_setup();
	if (pw->file != NULL) {
		path = tmp_file("redis.pass", pw->file,
		    pw->len != 0 ? pw->len : strlen(pw->file));
		xasprintf(&text, "[redis]\npassword-file = %s\n" NS, path);
	} else
		text = xstrdup("[redis]\nurl = redis://app@h\n" NS);
	ck_assert_msg(conf_parse(text, strlen(text), "t.conf", pw->env, &conf,
	                  &cause) == 0,
	    "refused: %s", cause);
	if (pw->password == NULL)
		ck_assert_ptr_null(conf->password);
	else
		ck_assert_str_eq(conf->password, pw->password);
	conf_free(conf);
	free(text);
	free(path);
	tmp_teardown();
}
END_TEST

/* Password files that are refused, and the message naming each. */
static const struct bad_password {
	const char *file; /* contents; NULL: a directory */
	size_t len;
	const char *why; /* after "t.conf:2: password-file: PATH: " */
} bad_passwords[] = {
	{ "", 0, "no password on its first line" },
	{ "\n", 0, "no password on its first line" },
	{ "\r\n", 0, "no password on its first line" },
	{ "\nsecond line\n", 0, "no password on its first line" },
	{ "a\0b\n", 4, "NUL byte in the password" },
	{ NULL, 0, "Is a directory" },
};

START_TEST(test_password_bad)
{
	const struct bad_password *b = &bad_passwords[_i];
	char *path, *text, *want;

	tmp_setup();
	if (b->file != NULL)
		path = tmp_file("redis.pass", b->file,
		    b->len != 0 ? b->len : strlen(b->file));
	else {
		xasprintf(&path, "%s/dir", tmpdir);
		ck_assert_int_eq(mkdir(path, 0700), 0);
	}
	xasprintf(&text, "[redis]\npassword-file = %s\n" NS, path);
	xasprintf(&want, "t.conf:2: password-file: %s: %s", path, b->why);
	assert_parse_refused(text, strlen(text), "t.conf", "env", want);
	free(want);
	free(text);
	free(path);
	tmp_teardown();
}
END_TEST

/* An unreadable password file names strerror (not as root: it reads all). */
START_TEST(test_password_unreadable)
{
	char *path, *text, *want;

	if (geteuid() == 0)
		return;
	tmp_setup();
	path = tmp_file("redis.pass", "s3cret\n", 7);
	ck_assert_int_eq(chmod(path, 0), 0);
	xasprintf(&text, "[redis]\npassword-file = %s\n" NS, path);
	xasprintf(
	    &want, "t.conf:2: password-file: %s: Permission denied", path);
	assert_parse_refused(text, strlen(text), "t.conf", NULL, want);
	free(want);
	free(text);
	free(path);
	tmp_teardown();
}
END_TEST

/* The SPEC's sample with its password-file made real: every field. */
START_TEST(test_load_sample)
{
	struct conf *conf = NULL;
	char *cause = NULL, *pass, *text, *path;

	tmp_setup();
	pass = tmp_file("redis.pass", "hunter2\n", 8);
	xasprintf(&text, SAMPLE_HEAD SAMPLE_PASSWORD_FMT SAMPLE_TAIL, pass);
	path = tmp_file("lapsed.conf", text, strlen(text));
	ck_assert_msg(conf_load(path, "fromenv", &conf, &cause) == 0,
	    "refused: %s", cause);
	ck_assert_str_eq(conf->path, path);
	ck_assert_str_eq(conf->url, DEFAULT_URL);
	ck_assert_str_eq(conf->password, "hunter2");
	ck_assert_uint_eq(conf->connect_timeout_ms, 2000);
	ck_assert_uint_eq(conf->command_timeout_ms, 5000);
	ck_assert_uint_eq(conf->sweep_interval_ms, 1000);
	ck_assert_uint_eq(conf->sweep_batch, 512);
	ck_assert_int_eq(conf->log_level, LOG_LEVEL_INFO);
	ck_assert_str_eq(conf->log, "stderr");
	ck_assert_int_eq(conf->keyspace_events_auto, 1);
	ck_assert_uint_eq(conf->nns, 1);
	ck_assert_str_eq(conf->ns[0].name, "orders");
	ck_assert_int_eq(conf->ns[0].sink, CONF_SINK_STREAM);
	ck_assert_uint_eq(conf->ns[0].stream_maxlen, 1000000);
	ck_assert_uint_eq(conf->ns[0].nwatch, 1);
	ck_assert_str_eq(conf->ns[0].watch[0], "orders:");
	ck_assert_int_eq(conf->ns[0].line, 14);
	ck_assert_int_eq(conf->ns[0].watch_line, 15);
	conf_free(conf);
	free(text);
	free(pass);
	free(path);
	tmp_teardown();
}
END_TEST

/* conf_load() names the file it was given in every message. */
START_TEST(test_load_errors)
{
	struct conf *conf = NULL;
	char *cause = NULL, *path, *want, *big;
	size_t len;

	assert_load_refused("/nonexistent/lapsed.conf",
	    "/nonexistent/lapsed.conf: No such file or directory");

	tmp_setup();
	xasprintf(&want, "%s: Is a directory", tmpdir);
	assert_load_refused(tmpdir, want);
	free(want);

	path = tmp_file("a.conf", "[lapsed]\nsweep-batch = 0\n", 25);
	xasprintf(&want,
	    "%s:2: sweep-batch: bad value \"0\": expected a number from 1 "
	    "to 4096",
	    path);
	assert_load_refused(path, want);
	free(want);
	free(path);

	path = tmp_file("empty.conf", "", 0);
	xasprintf(&want,
	    "%s: no [namespace NAME] section (lapsed needs at least one)",
	    path);
	assert_load_refused(path, want);
	free(want);
	free(path);

	/* One byte too many: refused before it is parsed. */
	len = CONF_FILE_MAX + 1;
	big = xmalloc(len);
	memset(big, '\n', len);
	path = tmp_file("big.conf", big, len);
	xasprintf(&want, "%s: larger than 1048576 bytes", path);
	assert_load_refused(path, want);
	free(want);
	free(path);

	/* ... but CONF_FILE_MAX bytes are parsed. */
	memcpy(big, NS, strlen(NS));
	path = tmp_file("max.conf", big, len - 1);
	ck_assert_msg(
	    conf_load(path, NULL, &conf, &cause) == 0, "refused: %s", cause);
	ck_assert_uint_eq(conf->nns, 1);
	conf_free(conf);
	free(path);
	free(big);
	tmp_teardown();
}
END_TEST

/* Parsing twice gives the same result: no state is left behind. */
START_TEST(test_parse_twice)
{
	static const char text[] = NS "watch = orders:\nsink = list\n";
	struct conf *a = NULL, *b = NULL;
	char *cause = NULL;

	ck_assert_int_eq(
	    conf_parse(text, strlen(text), "t.conf", NULL, &a, &cause), 0);
	ck_assert_int_eq(
	    conf_parse(text, strlen(text), "t.conf", NULL, &b, &cause), 0);
	ck_assert_str_eq(a->ns[0].watch[0], b->ns[0].watch[0]);
	ck_assert_int_eq(b->ns[0].sink, CONF_SINK_LIST);
	conf_free(a);
	conf_free(b);
	conf_free(NULL);
}
END_TEST

/* Only the text's len bytes are read: no NUL is needed after them. */
START_TEST(test_parse_len)
{
	static const char text[] = NS "sink = list\nsink = list\n";
	struct conf *conf = NULL;
	char *cause = NULL, *copy;
	size_t len = strlen(NS "sink = list\n");

	copy = xmalloc(len);
	memcpy(copy, text, len);
	ck_assert_int_eq(
	    conf_parse(copy, len, "t.conf", NULL, &conf, &cause), 0);
	ck_assert_int_eq(conf->ns[0].sink, CONF_SINK_LIST);
	conf_free(conf);
	free(copy);
}
END_TEST

/* --- conf_keyspace_merge() ---------------------------------------------- */

static const struct merge {
	const char *current;
	const char *needed;
	const char *out; /* NULL: nothing to add */
} merges[] = {
	{ "", "Ex", "Ex" },
	{ NULL, "Ex", "Ex" },
	{ "KA", "Ex", "KAE" },
	{ "Ex", "Ex", NULL },
	{ "xE", "Ex", NULL },
	{ "AE", "Ex", NULL },
	{ "KEA", "Ex", NULL },
	{ "Kg", "Ex", "KgEx" },
	{ "E", "Ex", "Ex" },
	{ "x", "Ex", "xE" },
	{ "K", "Ex", "KEx" },
	{ "A", "Ex", "AE" },
	{ "Klg$", "Ex", "Klg$Ex" },
	{ "Km", "Ex", "KmEx" },
	{ "gxE", "Ex", NULL },
	/* 'A' stands for g$lshzxetd, not for K, E, m or n. */
	{ "A", "gt$d", NULL },
	{ "A", "Km", "AKm" },
	{ "AE", "Exn", "AEn" },
	/* needed may repeat a flag; it is added once. */
	{ "g", "ExEx", "gEx" },
	{ "Ex", "", NULL },
	{ "Ex", NULL, NULL },
	{ "", "", NULL },
	{ NULL, NULL, NULL },
};

START_TEST(test_merge)
{
	const struct merge *m = &merges[_i];
	char *out;

	out = conf_keyspace_merge(m->current, m->needed);
	if (m->out == NULL)
		ck_assert_ptr_null(out);
	else {
		ck_assert_ptr_nonnull(out);
		ck_assert_str_eq(out, m->out);
	}
	free(out);
}
END_TEST

static Suite *
conf_suite(void)
{
	Suite *s;
	TCase *tc;

	s = suite_create("conf");

	tc = tcase_create("bad");
	tcase_add_loop_test(tc, test_bad, 0, NITEMS(bad));
	suite_add_tcase(s, tc);

	tc = tcase_create("good");
	tcase_add_loop_test(tc, test_good, 0, NITEMS(good));
	tcase_add_loop_test(tc, test_paths, 0, NITEMS(paths));
	tcase_add_test(tc, test_paths_default);
	tcase_add_test(tc, test_listen);
	tcase_add_loop_test(tc, test_horizon, 0, NITEMS(horizons));
	tcase_add_test(tc, test_url_fields);
	tcase_add_test(tc, test_delivery);
	tcase_add_test(tc, test_sample_verbatim);
	tcase_add_test(tc, test_line_lengths);
	tcase_add_test(tc, test_parse_twice);
	tcase_add_test(tc, test_parse_len);
	suite_add_tcase(s, tc);

	tc = tcase_create("files");
	tcase_add_loop_test(tc, test_password, 0, NITEMS(passwords));
	tcase_add_loop_test(tc, test_password_bad, 0, NITEMS(bad_passwords));
	tcase_add_test(tc, test_password_unreadable);
	tcase_add_test(tc, test_load_sample);
	tcase_add_test(tc, test_load_errors);
	suite_add_tcase(s, tc);

	tc = tcase_create("keyspace");
	tcase_add_loop_test(tc, test_merge, 0, NITEMS(merges));
	suite_add_tcase(s, tc);

	return (s);
}

int
main(void)
{
	return (unit_run(conf_suite()));
}
