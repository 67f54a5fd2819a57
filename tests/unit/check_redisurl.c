/*
 * Unit tests for redisurl.c: every form of URL lapse accepts, the exact
 * message for each mistake a user makes typing one, and the promise that
 * neither a message nor the display form ever holds the password. The
 * password in these tables is always "s3cret", so a leak is a substring
 * search away.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "redisurl.h"
#include "xmalloc.h"

#include "unit.h"

#define PASSWORD "s3cret"

/* Never a valid result: marks out-parameters that must stay untouched. */
static char sentinel_byte;
#define SENTINEL ((void *)&sentinel_byte)

static const struct {
	const char *in;
	int is_unix;
	const char *host;
	int port;
	const char *path;
	const char *user;
	const char *password;
	int db;
	const char *display;
} good[] = {
	{ REDIS_URL_DEFAULT, 0, "127.0.0.1", 6379, NULL, NULL, NULL, 0,
	    "redis://127.0.0.1:6379/0" },
	{ "redis://localhost", 0, "localhost", 6379, NULL, NULL, NULL, 0,
	    "redis://localhost:6379/0" },
	{ "redis://h/", 0, "h", 6379, NULL, NULL, NULL, 0, "redis://h:6379/0" },
	{ "redis://h:6379", 0, "h", 6379, NULL, NULL, NULL, 0,
	    "redis://h:6379/0" },
	{ "redis://h:6380/3", 0, "h", 6380, NULL, NULL, NULL, 3,
	    "redis://h:6380/3" },
	{ "redis://h:1", 0, "h", 1, NULL, NULL, NULL, 0, "redis://h:1/0" },
	{ "redis://h:65535", 0, "h", 65535, NULL, NULL, NULL, 0,
	    "redis://h:65535/0" },
	{ "redis://h:06379/007", 0, "h", 6379, NULL, NULL, NULL, 7,
	    "redis://h:6379/7" },
	{ "redis://h/2147483647", 0, "h", 6379, NULL, NULL, NULL, 2147483647,
	    "redis://h:6379/2147483647" },
	{ "REDIS://Cache.Example.COM:7000/15", 0, "Cache.Example.COM", 7000,
	    NULL, NULL, NULL, 15, "redis://Cache.Example.COM:7000/15" },
	{ "redis://redis_1", 0, "redis_1", 6379, NULL, NULL, NULL, 0,
	    "redis://redis_1:6379/0" },
	{ "redis://10.0.0.5:7000/1", 0, "10.0.0.5", 7000, NULL, NULL, NULL, 1,
	    "redis://10.0.0.5:7000/1" },
	{ "redis://[::1]:6380", 0, "::1", 6380, NULL, NULL, NULL, 0,
	    "redis://[::1]:6380/0" },
	{ "redis://[::1]", 0, "::1", 6379, NULL, NULL, NULL, 0,
	    "redis://[::1]:6379/0" },
	{ "redis://[2001:db8::7]/4", 0, "2001:db8::7", 6379, NULL, NULL, NULL,
	    4, "redis://[2001:db8::7]:6379/4" },
	{ "redis://[::ffff:192.0.2.1]:6379/0", 0, "::ffff:192.0.2.1", 6379,
	    NULL, NULL, NULL, 0, "redis://[::ffff:192.0.2.1]:6379/0" },
	{ "redis://:" PASSWORD "@h", 0, "h", 6379, NULL, NULL, PASSWORD, 0,
	    "redis://:***@h:6379/0" },
	{ "redis://alice:" PASSWORD "@h:6379/2", 0, "h", 6379, NULL, "alice",
	    PASSWORD, 2, "redis://alice:***@h:6379/2" },
	{ "redis://alice@h", 0, "h", 6379, NULL, "alice", NULL, 0,
	    "redis://alice@h:6379/0" },
	{ "redis://:p%40ss%3Aw0rd@h", 0, "h", 6379, NULL, NULL, "p@ss:w0rd", 0,
	    "redis://:***@h:6379/0" },
	{ "redis://:a%2Fb%3fc%23d%25@h", 0, "h", 6379, NULL, NULL, "a/b?c#d%",
	    0, "redis://:***@h:6379/0" },
	{ "redis://:a:b:c@h", 0, "h", 6379, NULL, NULL, "a:b:c", 0,
	    "redis://:***@h:6379/0" },
	{ "redis://:Zm9v+YmFy=@h", 0, "h", 6379, NULL, NULL, "Zm9v+YmFy=", 0,
	    "redis://:***@h:6379/0" },
	{ "redis://:two words@h", 0, "h", 6379, NULL, NULL, "two words", 0,
	    "redis://:***@h:6379/0" },
	{ "redis://:%0A@h", 0, "h", 6379, NULL, NULL, "\n", 0,
	    "redis://:***@h:6379/0" },
	{ "redis://us%3Aer:pw@h", 0, "h", 6379, NULL, "us:er", "pw", 0,
	    "redis://us%3Aer:***@h:6379/0" },
	{ "redis://caf%C3%A9@h", 0, "h", 6379, NULL, "caf\xc3\xa9", NULL, 0,
	    "redis://caf%C3%A9@h:6379/0" },
	{ "redis://app.v1-x@[::1]:7000/9", 0, "::1", 7000, NULL, "app.v1-x",
	    NULL, 9, "redis://app.v1-x@[::1]:7000/9" },
	{ "unix:///run/redis/redis.sock", 1, NULL, 0, "/run/redis/redis.sock",
	    NULL, NULL, 0, "unix:///run/redis/redis.sock" },
	{ "UNIX:///tmp/r.sock", 1, NULL, 0, "/tmp/r.sock", NULL, NULL, 0,
	    "unix:///tmp/r.sock" },
	{ "unix:///tmp/r.sock?db=3", 1, NULL, 0, "/tmp/r.sock", NULL, NULL, 3,
	    "unix:///tmp/r.sock?db=3" },
	{ "unix:///tmp/r.sock?db=0", 1, NULL, 0, "/tmp/r.sock", NULL, NULL, 0,
	    "unix:///tmp/r.sock" },
	{ "unix:///tmp/r.sock?", 1, NULL, 0, "/tmp/r.sock", NULL, NULL, 0,
	    "unix:///tmp/r.sock" },
	{ "unix://:" PASSWORD "@/tmp/r.sock?db=1", 1, NULL, 0, "/tmp/r.sock",
	    NULL, PASSWORD, 1, "unix://:***@/tmp/r.sock?db=1" },
	{ "unix://alice:" PASSWORD "@/tmp/r.sock", 1, NULL, 0, "/tmp/r.sock",
	    "alice", PASSWORD, 0, "unix://alice:***@/tmp/r.sock" },
	{ "unix://alice@/tmp/r.sock", 1, NULL, 0, "/tmp/r.sock", "alice", NULL,
	    0, "unix://alice@/tmp/r.sock" },
	{ "unix:///tmp/my%20dir/r%3F.sock", 1, NULL, 0, "/tmp/my dir/r?.sock",
	    NULL, NULL, 0, "unix:///tmp/my%20dir/r%3F.sock" },
	{ "unix:///tmp/a@b:c.sock", 1, NULL, 0, "/tmp/a@b:c.sock", NULL, NULL,
	    0, "unix:///tmp/a@b:c.sock" },
	{ "unix:///", 1, NULL, 0, "/", NULL, NULL, 0, "unix:///" },
};

/* The problems, as parse errors name them after the quoted URL. */
#define SCHEMES "redis://, unix:// or redis-sentinel://"
#define NO_SCHEME "missing scheme (use " SCHEMES ")"
#define NO_MASTER \
	"missing the master's name after '#', as in " \
	"redis-sentinel://host:26379#mymaster"
#define BAD_HOST "only letters, digits, '.', '-' and '_' are allowed"
#define IPV6_BRACKETS \
	"an IPv6 address must be in brackets, as in redis://[::1]:6379"
#define PORT_RANGE "port must be 1-65535"
#define PORT_NAN "port is not a number 1-65535"
#define DB_RANGE "db must be a number 0-2147483647"
#define NO_QUERY \
	"a query is only allowed in unix:// URLs (put the db in the path: " \
	"redis://host/N)"
#define NEEDS_ENCODING \
	"'@' after the host (percent-encode '/', '?', '#' and '@' in a user " \
	"name or password)"
#define BAD_PCT(what) \
	"bad percent-encoding in the " what " (write a '%' as %25)"
#define CONTROL(what) "the " what " contains a control byte (percent-encode it)"
#define NOT_ABSOLUTE \
	"the socket path must be absolute, as in unix:///run/redis.sock"
#define CREDS_NO_PATH \
	"expected \"@/\" after the user name and password (percent-encode " \
	"'/', '?', '#' and '@' in them)"

/*
 * Each message must read exactly: bad Redis URL "<shown>": <problem>,
 * where shown is the input (when NULL) or the input as it must appear:
 * escaped, and with anything that may be a password replaced by "***".
 */
static const struct {
	const char *in;
	const char *shown;
	const char *problem;
} bad[] = {
	{ "", NULL, "empty" },
	{ "localhost:6379", NULL, NO_SCHEME },
	{ "127.0.0.1:6379", NULL, NO_SCHEME },
	{ "/run/redis.sock", NULL, NO_SCHEME },
	{ "redis:localhost", NULL, "expected \"//\" after \"redis:\"" },
	{ "unix:/run/redis.sock", NULL, "expected \"//\" after \"unix:\"" },
	{ "http://h", NULL, "unknown scheme \"http\" (use " SCHEMES ")" },
	{ "redis+tls://h", NULL,
	    "unknown scheme \"redis+tls\" (use " SCHEMES ")" },
	{ "rediss://h:6380", NULL, "rediss:// (TLS) is not supported" },
	{ "rediss://:" PASSWORD "@h", "rediss://:***@h",
	    "rediss:// (TLS) is not supported" },

	/* Hosts. */
	{ "redis://", NULL, "missing host" },
	{ "redis://:7000", NULL, "missing host" },
	{ "redis:///0", NULL, "missing host" },
	{ "redis://:" PASSWORD "@", "redis://:***@", "missing host" },
	{ "redis://:" PASSWORD "@:6379/0", "redis://:***@:6379/0",
	    "missing host" },
	{ "redis://ho st", NULL, "bad host \"ho st\": " BAD_HOST },
	{ "redis://h\x01", "redis://h\\x01", "bad host \"h\\x01\": " BAD_HOST },
	{ "redis://h%41", NULL, "bad host \"h%41\": " BAD_HOST },
	{ "redis://256.1.1.1", NULL, "bad IPv4 address \"256.1.1.1\"" },
	{ "redis://127.1", NULL, "bad IPv4 address \"127.1\"" },
	{ "redis://::1", NULL, IPV6_BRACKETS },
	{ "redis://2001:db8::1:6379/0", NULL, IPV6_BRACKETS },
	{ "redis://fe80::abcd", "redis://fe80::***", IPV6_BRACKETS },
	{ "redis://[::1", NULL, "missing ']' after the IPv6 address" },
	{ "redis://[]:6379", NULL, "missing host" },
	{ "redis://[zz::1]", NULL, "bad IPv6 address \"zz::1\"" },
	{ "redis://[127.0.0.1]", NULL, "bad IPv6 address \"127.0.0.1\"" },
	{ "redis://[fe80::1%25eth0]", NULL,
	    "bad IPv6 address \"fe80::1%25eth0\"" },
	{ "redis://[::1]x", NULL, "unexpected \"x\" after the IPv6 address" },

	/* Ports. One that is not a number is hidden: it may be a password. */
	{ "redis://h:0/0", NULL, PORT_RANGE },
	{ "redis://h:65536", NULL, PORT_RANGE },
	{ "redis://h:70000", NULL, PORT_RANGE },
	{ "redis://h:99999999999999999999999", NULL, PORT_RANGE },
	{ "redis://[::1]:0", NULL, PORT_RANGE },
	{ "redis://h:-1", "redis://h:***", PORT_RANGE },
	{ "redis://h:abc", "redis://h:***", PORT_NAN },
	{ "redis://h:6379x/0", "redis://h:***/0", PORT_NAN },
	{ "redis://h:+6379", "redis://h:***", PORT_NAN },
	{ "redis://h: 6379", "redis://h:***", PORT_NAN },
	{ "redis://:pw@h:abc", "redis://:***@h:abc", PORT_NAN },
	{ "redis://h:", NULL, "missing port after ':'" },
	{ "redis://h:/0", NULL, "missing port after ':'" },

	/* A password typed without "@host" reads as a port: hidden as one. */
	{ "redis://:" PASSWORD, "redis://:***", "missing host" },
	{ "redis://alice:" PASSWORD "/0", "redis://alice:***/0", PORT_NAN },
	{ "unix://:" PASSWORD, "unix://:***", NOT_ABSOLUTE },

	/* Databases. */
	{ "redis://h/-1", NULL, DB_RANGE },
	{ "redis://h/2147483648", NULL, DB_RANGE },
	{ "redis://h/99999999999999999999", NULL, DB_RANGE },
	{ "redis://h/x", NULL, DB_RANGE },
	{ "redis://h/0x", NULL, DB_RANGE },
	{ "redis://h/1/2", NULL, "unexpected \"/2\" after the db" },
	{ "redis://h/0/", NULL, "unexpected \"/\" after the db" },
	{ "redis://h?db=1", NULL, NO_QUERY },
	{ "redis://h/0?db=1", NULL, NO_QUERY },
	{ "redis://h/0#x", NULL, "a fragment (\"#...\") is not allowed" },

	/* User names and passwords. */
	{ "redis://@h", NULL, "empty user name and password before '@'" },
	{ "redis://alice:@h", NULL, "empty password after ':'" },
	{ "redis://:@h", NULL, "empty password after ':'" },
	{ "redis://:s3@cret@h", "redis://:***@h",
	    "an '@' in a user name or password must be percent-encoded as "
	    "%40" },
	{ "redis://:s3/cret@h", "redis://:***@h", NEEDS_ENCODING },
	{ "redis://:s3?cret@h", "redis://:***@h", NEEDS_ENCODING },
	{ "redis://:s3#cret@h", "redis://:***@h", NEEDS_ENCODING },
	{ "redis://alice:s3cr/et@h:6379/0", "redis://alice:***@h:6379/0",
	    NEEDS_ENCODING },
	{ "redis://:" PASSWORD "%@h", "redis://:***@h", BAD_PCT("password") },
	{ "redis://:" PASSWORD "%4@h", "redis://:***@h", BAD_PCT("password") },
	{ "redis://:" PASSWORD "%zz@h", "redis://:***@h", BAD_PCT("password") },
	{ "redis://:" PASSWORD "%00@h", "redis://:***@h",
	    "the password contains a NUL byte (%00)" },
	{ "redis://:s3\tcret@h", "redis://:***@h", CONTROL("password") },
	{ "redis://al%ice:" PASSWORD "@h", "redis://al%ice:***@h",
	    BAD_PCT("user name") },
	{ "redis://al%00ice@h", NULL,
	    "the user name contains a NUL byte (%00)" },
	{ "redis://al\x7f"
	  "ice@h",
	    "redis://al\\x7fice@h", CONTROL("user name") },

	/* Unix sockets. */
	{ "unix://", NULL, "missing socket path" },
	{ "unix://?db=1", NULL, "missing socket path" },
	{ "unix://:" PASSWORD "@", "unix://:***@", "missing socket path" },
	{ "unix://run/redis.sock", NULL, NOT_ABSOLUTE },
	{ "unix://./redis.sock", NULL, NOT_ABSOLUTE },
	{ "unix://redis.sock", NULL, NOT_ABSOLUTE },
	{ "unix://localhost/run/redis.sock", NULL, NOT_ABSOLUTE },
	{ "unix://:" PASSWORD "@run/redis.sock", "unix://:***@run/redis.sock",
	    CREDS_NO_PATH },
	{ "unix://:s3/cret@/run/redis.sock", "unix://:***@/run/redis.sock",
	    CREDS_NO_PATH },
	{ "unix://@/run/redis.sock", NULL,
	    "empty user name and password before '@'" },
	{ "unix:///run/r%zz.sock", NULL, BAD_PCT("socket path") },
	{ "unix:///run/r%00.sock", NULL,
	    "the socket path contains a NUL byte (%00)" },
	{ "unix:///run/r\n.sock", "unix:///run/r\\x0a.sock",
	    CONTROL("socket path") },
	{ "unix:///r.sock?db=x", NULL, DB_RANGE },
	{ "unix:///r.sock?db=", NULL, DB_RANGE },
	{ "unix:///r.sock?db", NULL, DB_RANGE },
	{ "unix:///r.sock?db=-1", NULL, DB_RANGE },
	{ "unix:///r.sock?db=2147483648", NULL, DB_RANGE },
	{ "unix:///r.sock?db=1&db=2", NULL, "db is given twice" },
	{ "unix:///r.sock?password=x", NULL,
	    "unknown query parameter \"password\" (only db=N is allowed)" },
	{ "unix:///r.sock?db=1&timeout=5", NULL,
	    "unknown query parameter \"timeout\" (only db=N is allowed)" },
	{ "unix:///r.sock?DB=1", NULL,
	    "unknown query parameter \"DB\" (only db=N is allowed)" },
	{ "unix:///r.sock?db=1#x", NULL,
	    "a fragment (\"#...\") is not allowed" },

	/* Sentinels. */
	{ "redis-sentinel:h#m", NULL,
	    "expected \"//\" after \"redis-sentinel:\"" },
	{ "redis-sentinel://h", NULL, NO_MASTER },
	{ "redis-sentinel://h/0", NULL, NO_MASTER },
	{ "redis-sentinel://h#", NULL, NO_MASTER },
	{ "redis-sentinel://h:26379/1#", NULL, NO_MASTER },
	{ "redis-sentinel://#m", NULL, "missing host" },
	{ "redis-sentinel://h1,#m", NULL, "missing host" },
	{ "redis-sentinel://h1,,h2#m", NULL, "missing host" },
	{ "redis-sentinel://,h1#m", NULL, "missing host" },
	{ "redis-sentinel://h1:0,h2#m", "redis-sentinel://h1:***#m",
	    PORT_RANGE },
	{ "redis-sentinel://h1,h2:x#m", "redis-sentinel://h1,h2:***#m",
	    PORT_NAN },
	{ "redis-sentinel://h1,ho st#m", NULL,
	    "bad host \"ho st\": " BAD_HOST },
	{ "redis-sentinel://h1,::1#m", NULL, IPV6_BRACKETS },
	{ "redis-sentinel://h/x#m", NULL, DB_RANGE },
	{ "redis-sentinel://h/0/1#m", NULL, "unexpected \"/1\" after the db" },
	{ "redis-sentinel://h?db=1#m", NULL,
	    "a query is not allowed (put the db in the path: "
	    "redis-sentinel://host/N#MASTER)" },
	{ "redis-sentinel://h#my master", NULL,
	    "the master name contains a space" },
	{ "redis-sentinel://h#my%20master", NULL,
	    "the master name contains a space" },
	{ "redis-sentinel://h#m%0A", NULL,
	    "the master name contains a control byte" },
	{ "redis-sentinel://h#m\t", "redis-sentinel://h#m\\x09",
	    CONTROL("master name") },
	{ "redis-sentinel://h#m%zz", NULL, BAD_PCT("master name") },
	{ "redis-sentinel://h#m%00", NULL,
	    "the master name contains a NUL byte (%00)" },
	{ "redis-sentinel://" PASSWORD "@#m", "redis-sentinel://***@#m",
	    "missing host" },
	{ "redis-sentinel://s3@cret@h#m", "redis-sentinel://***@h#m",
	    "an '@' in a user name or password must be percent-encoded as "
	    "%40" },
	{ "redis-sentinel://" PASSWORD "%zz@h#m", "redis-sentinel://***@h#m",
	    BAD_PCT("password") },
	{ "redis-sentinel://:@h#m", NULL, "empty password after ':'" },
	{ "redis-sentinel://@h#m", NULL,
	    "empty user name and password before '@'" },
	{ "redis-sentinel://h/" PASSWORD "@x#m", "redis-sentinel://***@x#m",
	    NEEDS_ENCODING },

};

START_TEST(test_good)
{
	struct redis_url *u = SENTINEL;
	char *cause = SENTINEL, *display;

	ck_assert_msg(redis_url_parse(good[_i].in, &u, &cause) == 0,
	    "\"%s\" refused: %s", good[_i].in, cause == SENTINEL ? "" : cause);
	ck_assert_ptr_eq(cause, SENTINEL);
	ck_assert_ptr_ne(u, SENTINEL);
	ck_assert_int_eq(u->is_unix, good[_i].is_unix);
	ck_assert_pstr_eq(u->host, good[_i].host);
	if (!good[_i].is_unix)
		ck_assert_int_eq(u->port, good[_i].port);
	ck_assert_pstr_eq(u->path, good[_i].path);
	ck_assert_pstr_eq(u->user, good[_i].user);
	ck_assert_pstr_eq(u->password, good[_i].password);
	ck_assert_int_eq(u->db, good[_i].db);

	display = redis_url_display(u);
	ck_assert_str_eq(display, good[_i].display);
	free(display);
	redis_url_free(u);
}
END_TEST

/*
 * The display form parses back to the same URL, but for a password, which
 * comes back as "***".
 */
START_TEST(test_display_parses)
{
	struct redis_url *u, *again;
	char *cause = NULL, *display, *display2;

	ck_assert_int_eq(redis_url_parse(good[_i].in, &u, &cause), 0);
	display = redis_url_display(u);
	ck_assert_msg(redis_url_parse(display, &again, &cause) == 0,
	    "display \"%s\" refused: %s", display, cause);
	ck_assert_int_eq(again->is_unix, u->is_unix);
	ck_assert_pstr_eq(again->host, u->host);
	ck_assert_int_eq(again->port, u->port);
	ck_assert_pstr_eq(again->path, u->path);
	ck_assert_pstr_eq(again->user, u->user);
	ck_assert_pstr_eq(again->password, u->password == NULL ? NULL : "***");
	ck_assert_int_eq(again->db, u->db);
	display2 = redis_url_display(again);
	ck_assert_str_eq(display2, display);
	free(display2);
	free(display);
	redis_url_free(again);
	redis_url_free(u);
}
END_TEST

START_TEST(test_bad)
{
	struct redis_url *u = SENTINEL;
	char *cause = NULL, want[512];

	snprintf(want, sizeof want, "bad Redis URL \"%s\": %s",
	    bad[_i].shown == NULL ? bad[_i].in : bad[_i].shown,
	    bad[_i].problem);
	ck_assert_msg(redis_url_parse(bad[_i].in, &u, &cause) == -1,
	    "\"%s\" accepted", bad[_i].in);
	ck_assert_ptr_eq(u, SENTINEL);
	ck_assert_ptr_nonnull(cause);
	ck_assert_str_eq(cause, want);
	ck_assert_msg(
	    strstr(cause, PASSWORD) == NULL, "password in \"%s\"", cause);
	free(cause);
}
END_TEST

/*
 * A socket path fills sun_path but for its NUL (107 bytes on Linux, 103 on
 * the BSDs); one byte more is refused.
 */
START_TEST(test_unix_path_length)
{
	struct sockaddr_un sun;
	struct redis_url *u = SENTINEL;
	char url[sizeof "unix://" + sizeof sun.sun_path], *cause = SENTINEL;
	char want[512];
	size_t max = sizeof sun.sun_path - 1;

	memcpy(url, "unix://", 7);
	memset(url + 7, 'p', max + 1);
	url[7] = '/';

	url[7 + max] = '\0';
	ck_assert_int_eq(redis_url_parse(url, &u, &cause), 0);
	ck_assert_ptr_eq(cause, SENTINEL);
	ck_assert_uint_eq(strlen(u->path), max);
	redis_url_free(u);

	u = SENTINEL;
	url[7 + max] = 'p';
	url[7 + max + 1] = '\0';
	ck_assert_int_eq(redis_url_parse(url, &u, &cause), -1);
	ck_assert_ptr_eq(u, SENTINEL);
	snprintf(want, sizeof want,
	    "bad Redis URL \"%s\": the socket path is longer than %zu bytes "
	    "(%zu)",
	    url, max, max + 1);
	ck_assert_str_eq(cause, want);
	free(cause);
}
END_TEST

/*
 * Host names are at most 253 bytes; the message about a longer one cuts
 * the URL it quotes at 256 bytes.
 */
START_TEST(test_host_length)
{
	struct redis_url *u = SENTINEL;
	char url[8 + 254 + 1], *cause = SENTINEL, want[512];

	memcpy(url, "redis://", 8);
	memset(url + 8, 'h', 254);
	url[8 + 253] = '\0';
	ck_assert_int_eq(redis_url_parse(url, &u, &cause), 0);
	ck_assert_uint_eq(strlen(u->host), 253);
	redis_url_free(u);

	u = SENTINEL;
	url[8 + 253] = 'h';
	url[8 + 254] = '\0';
	ck_assert_int_eq(redis_url_parse(url, &u, &cause), -1);
	ck_assert_ptr_eq(u, SENTINEL);
	snprintf(want, sizeof want,
	    "bad Redis URL \"%.256s...\": host is longer than 253 bytes (254)",
	    url);
	ck_assert_str_eq(cause, want);
	free(cause);
}
END_TEST

/* Display builds from the struct alone, whatever was parsed. */
START_TEST(test_display_struct)
{
	struct redis_url u;
	char *s;

	memset(&u, 0, sizeof u);
	u.host = (char *)"::1";
	u.port = 6380;
	u.user = (char *)"a b@c";
	u.password = (char *)PASSWORD;
	u.db = 2;
	s = redis_url_display(&u);
	ck_assert_str_eq(s, "redis://a%20b%40c:***@[::1]:6380/2");
	free(s);

	memset(&u, 0, sizeof u);
	u.is_unix = 1;
	u.path = (char *)"/tmp/100%/r?#\x01.sock";
	s = redis_url_display(&u);
	ck_assert_str_eq(s, "unix:///tmp/100%25/r%3F%23%01.sock");
	free(s);
}
END_TEST

/* Which URLs name a host that must be resolved before a connect. */
static const struct {
	const char *in;
	int names_host;
} hosts[] = {
	{ "redis://localhost", 1 },
	{ "redis://redis.example.net:6380/2", 1 },
	{ "redis://h", 1 },
	{ "redis://my_host-1.internal", 1 },
	{ REDIS_URL_DEFAULT, 0 },
	{ "redis://10.0.0.7:6380", 0 },
	{ "redis://[::1]", 0 },
	{ "redis://[2001:db8::7]:6380/1", 0 },
	{ "redis://[::ffff:10.0.0.7]", 0 },
	{ "unix:///tmp/r.sock", 0 },
	{ "unix:///run/redis/localhost", 0 },
	{ "redis-sentinel://10.0.0.1,[::1]#m", 0 },
	{ "redis-sentinel://10.0.0.1,sentinel-2#m", 1 },
	{ "redis://10.0.0.1:7000,[::1]:7001", 0 },
	{ "redis://10.0.0.1:7000,node-2:7001", 1 },
};

START_TEST(test_names_host)
{
	struct redis_url *u;
	char *cause = NULL;

	ck_assert_msg(redis_url_parse(hosts[_i].in, &u, &cause) == 0,
	    "\"%s\" refused: %s", hosts[_i].in, cause);
	ck_assert_msg(redis_url_names_host(u) == hosts[_i].names_host,
	    "\"%s\": names_host is not %d", hosts[_i].in, hosts[_i].names_host);
	redis_url_free(u);
}
END_TEST

/* Sentinel URLs: the sentinels as "host:port,...", and the rest. */
static const struct {
	const char *in;
	const char *sentinels;
	const char *user;
	const char *password;
	int db;
	const char *master;
	const char *display;
} good_sentinel[] = {
	{ "redis-sentinel://h#m", "h:26379", NULL, NULL, 0, "m",
	    "redis-sentinel://h:26379/0#m" },
	{ "REDIS-SENTINEL://10.0.0.1:5000,10.0.0.2,[::1]:26380/3#mymaster",
	    "10.0.0.1:5000,10.0.0.2:26379,::1:26380", NULL, NULL, 3, "mymaster",
	    "redis-sentinel://10.0.0.1:5000,10.0.0.2:26379,[::1]:26380/3"
	    "#mymaster" },
	{ "redis-sentinel://" PASSWORD "@h1,h2:1/#m", "h1:26379,h2:1", NULL,
	    PASSWORD, 0, "m", "redis-sentinel://:***@h1:26379,h2:1/0#m" },
	{ "redis-sentinel://:" PASSWORD "@h#m", "h:26379", NULL, PASSWORD, 0,
	    "m", "redis-sentinel://:***@h:26379/0#m" },
	{ "redis-sentinel://sentinel-user:" PASSWORD "@h#m", "h:26379",
	    "sentinel-user", PASSWORD, 0, "m",
	    "redis-sentinel://sentinel-user:***@h:26379/0#m" },
	{ "redis-sentinel://p%40ss@h#m", "h:26379", NULL, "p@ss", 0, "m",
	    "redis-sentinel://:***@h:26379/0#m" },
	{ "redis-sentinel://h#a%23b@c.d", "h:26379", NULL, NULL, 0, "a#b@c.d",
	    "redis-sentinel://h:26379/0#a%23b%40c.d" },
	{ "redis-sentinel://h#a/b?c", "h:26379", NULL, NULL, 0, "a/b?c",
	    "redis-sentinel://h:26379/0#a%2Fb%3Fc" },
};

/* s (freed) followed by ",host:port" for each of the n nodes. */
static char *
nodes_str(char *s, const struct redis_node *nodes, size_t n)
{
	char *next;
	size_t i;

	for (i = 0; i < n; i++) {
		xasprintf(&next, "%s%s%s:%d", s, s[0] == '\0' ? "" : ",",
		    nodes[i].host, nodes[i].port);
		free(s);
		s = next;
	}
	return (s);
}

static char *
sentinels_str(const struct redis_url *u)
{
	return (nodes_str(xstrdup(""), u->sentinels, u->nsentinels));
}

/*
 * u displays as want, the display parses back to a URL that displays the
 * same, and a copy displays the same, with the password, once u (freed
 * here) is gone.
 */
static void
check_display_copy(struct redis_url *u, const char *want, const char *password)
{
	struct redis_url *again, *copy;
	char *cause = NULL, *display;

	display = redis_url_display(u);
	ck_assert_str_eq(display, want);
	ck_assert_msg(redis_url_parse(display, &again, &cause) == 0,
	    "display \"%s\" refused: %s", display, cause);
	free(display);
	display = redis_url_display(again);
	ck_assert_str_eq(display, want);
	free(display);
	redis_url_free(again);

	copy = redis_url_copy(u);
	redis_url_free(u);
	display = redis_url_display(copy);
	ck_assert_str_eq(display, want);
	ck_assert_pstr_eq(copy->password, password);
	free(display);
	redis_url_free(copy);
}

START_TEST(test_good_sentinel)
{
	struct redis_url *u = SENTINEL;
	char *cause = SENTINEL, *list;

	ck_assert_msg(redis_url_parse(good_sentinel[_i].in, &u, &cause) == 0,
	    "\"%s\" refused: %s", good_sentinel[_i].in,
	    cause == SENTINEL ? "" : cause);
	ck_assert_int_eq(u->is_sentinel, 1);
	ck_assert_int_eq(u->is_unix, 0);
	ck_assert_ptr_null(u->host);
	list = sentinels_str(u);
	ck_assert_str_eq(list, good_sentinel[_i].sentinels);
	free(list);
	ck_assert_pstr_eq(u->user, good_sentinel[_i].user);
	ck_assert_pstr_eq(u->password, good_sentinel[_i].password);
	ck_assert_int_eq(u->db, good_sentinel[_i].db);
	ck_assert_str_eq(u->master, good_sentinel[_i].master);
	check_display_copy(
	    u, good_sentinel[_i].display, good_sentinel[_i].password);
}
END_TEST

/* In url: head, then the n hosts h0,h1,... and tail. */
static void
list_url(char *url, size_t size, const char *head, int n, const char *tail)
{
	int i;

	snprintf(url, size, "%sh0", head);
	for (i = 1; i < n; i++)
		snprintf(url + strlen(url), size - strlen(url), ",h%d", i);
	snprintf(url + strlen(url), size - strlen(url), "%s", tail);
}

/* At most 16 sentinels. */
START_TEST(test_sentinels_max)
{
	struct redis_url *u;
	char url[512], *cause = NULL;

	list_url(url, sizeof url, "redis-sentinel://", 16, "#m");
	ck_assert_int_eq(redis_url_parse(url, &u, &cause), 0);
	ck_assert_uint_eq(u->nsentinels, REDIS_URL_SENTINELS_MAX);
	redis_url_free(u);
	list_url(url, sizeof url, "redis-sentinel://", 17, "#m");
	ck_assert_int_eq(redis_url_parse(url, &u, &cause), -1);
	ck_assert(strstr(cause, ": more than 16 sentinels") != NULL);
	free(cause);
}
END_TEST

/*
 * redis:// URLs listing the seeds of a Cluster: the nodes as
 * "host:port,..." (the first is host and port), and the rest; each node
 * alone (redis_url_node()) has the credentials and database.
 */
static const struct {
	const char *in;
	const char *nodes;
	const char *user;
	const char *password;
	int db;
	const char *display;
	const char *node1;
} good_seeds[] = {
	{ "redis://h1,h2", "h1:6379,h2:6379", NULL, NULL, 0,
	    "redis://h1:6379,h2:6379/0", "redis://h2:6379/0" },
	{ "REDIS://10.0.0.1:7000,[::1]:7001,node-3/0",
	    "10.0.0.1:7000,::1:7001,node-3:6379", NULL, NULL, 0,
	    "redis://10.0.0.1:7000,[::1]:7001,node-3:6379/0",
	    "redis://[::1]:7001/0" },
	{ "redis://app:" PASSWORD "@h1:7000,h2:7001/2", "h1:7000,h2:7001",
	    "app", PASSWORD, 2, "redis://app:***@h1:7000,h2:7001/2",
	    "redis://app:***@h2:7001/2" },
	{ "redis://us,er:p%40ss@h1,h2/", "h1:6379,h2:6379", "us,er", "p@ss", 0,
	    "redis://us,er:***@h1:6379,h2:6379/0",
	    "redis://us,er:***@h2:6379/0" },
};

START_TEST(test_good_seeds)
{
	struct redis_url *u = SENTINEL, *node;
	char *cause = SENTINEL, *display, *list;

	ck_assert_msg(redis_url_parse(good_seeds[_i].in, &u, &cause) == 0,
	    "\"%s\" refused: %s", good_seeds[_i].in,
	    cause == SENTINEL ? "" : cause);
	ck_assert_int_eq(u->is_sentinel, 0);
	ck_assert_int_eq(u->is_unix, 0);
	xasprintf(&list, "%s:%d", u->host, u->port);
	list = nodes_str(list, u->seeds, u->nseeds);
	ck_assert_str_eq(list, good_seeds[_i].nodes);
	free(list);
	ck_assert_pstr_eq(u->user, good_seeds[_i].user);
	ck_assert_pstr_eq(u->password, good_seeds[_i].password);
	ck_assert_int_eq(u->db, good_seeds[_i].db);

	/* The second node alone. */
	node = redis_url_node(u, 1);
	ck_assert_uint_eq(node->nseeds, 0);
	display = redis_url_display(node);
	ck_assert_str_eq(display, good_seeds[_i].node1);
	ck_assert_pstr_eq(node->password, good_seeds[_i].password);
	free(display);
	redis_url_free(node);
	check_display_copy(u, good_seeds[_i].display, good_seeds[_i].password);
}
END_TEST

/* At most 16 nodes; an empty one is refused. */
START_TEST(test_seeds_max)
{
	struct redis_url *u;
	char url[512], *cause = NULL;

	list_url(url, sizeof url, "redis://", 16, "");
	ck_assert_int_eq(redis_url_parse(url, &u, &cause), 0);
	ck_assert_uint_eq(u->nseeds, REDIS_URL_NODES_MAX - 1);
	redis_url_free(u);
	list_url(url, sizeof url, "redis://", 17, "");
	ck_assert_int_eq(redis_url_parse(url, &u, &cause), -1);
	ck_assert(strstr(cause, "\": more than 16 nodes") != NULL);
	free(cause);
	ck_assert_int_eq(redis_url_parse("redis://h1,/0", &u, &cause), -1);
	ck_assert_str_eq(
	    cause, "bad Redis URL \"redis://h1,/0\": missing host");
	free(cause);
	ck_assert_int_eq(redis_url_parse("redis://h1,h2:0", &u, &cause), -1);
	ck_assert_str_eq(
	    cause, "bad Redis URL \"redis://h1,h2:0\": port must be 1-65535");
	free(cause);
}
END_TEST

START_TEST(test_free_null)
{
	redis_url_free(NULL);
}
END_TEST

static Suite *
redisurl_suite(void)
{
	Suite *s;
	TCase *tc;

	s = suite_create("redisurl");

	tc = tcase_create("good");
	tcase_add_loop_test(tc, test_good, 0, NITEMS(good));
	tcase_add_loop_test(tc, test_display_parses, 0, NITEMS(good));
	tcase_add_test(tc, test_display_struct);
	tcase_add_loop_test(tc, test_names_host, 0, NITEMS(hosts));
	tcase_add_test(tc, test_free_null);
	tcase_add_loop_test(tc, test_good_sentinel, 0, NITEMS(good_sentinel));
	tcase_add_test(tc, test_sentinels_max);
	tcase_add_loop_test(tc, test_good_seeds, 0, NITEMS(good_seeds));
	tcase_add_test(tc, test_seeds_max);
	suite_add_tcase(s, tc);

	tc = tcase_create("bad");
	tcase_add_loop_test(tc, test_bad, 0, NITEMS(bad));
	tcase_add_test(tc, test_unix_path_length);
	tcase_add_test(tc, test_host_length);
	suite_add_tcase(s, tc);

	return (s);
}

int
main(void)
{
	return (unit_run(redisurl_suite()));
}
