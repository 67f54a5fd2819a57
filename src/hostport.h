/*
 * A local address to listen on, HOST:PORT, as lapsed's `listen` key takes
 * it: an IPv4 address in dotted-quad form ("127.0.0.1:9465", "0.0.0.0:9465"
 * for every IPv4 address) or an IPv6 address in brackets ("[::1]:9465",
 * "[::]:9465"), and a port from 1 to 65535. Host names are refused: a
 * lookup at start would block or guess, and an operator who exposes a
 * port means one address. And, for the connections lapsed and lapse
 * make to a host name, what they share: the hints its addresses are
 * looked up with, each address as text, and the reason given once every
 * one failed. No I/O.
 */
#ifndef LAPSE_HOSTPORT_H
#define LAPSE_HOSTPORT_H

#include <sys/socket.h>

#include <netdb.h>
#include <netinet/in.h>
#include <stddef.h>

/* Room for "[" IPv6 "]:" port and the NUL. */
#define HOSTPORT_BUFSIZE (INET6_ADDRSTRLEN + 9)

struct hostport {
	int family; /* AF_INET or AF_INET6 */
	char host[INET6_ADDRSTRLEN]; /* as written, without brackets */
	int port;
};

/*
 * Parse s. Returns 0 with *out filled, or -1 with *cause set (caller
 * frees) and *out untouched. The message reads 'bad address "<s>":
 * <problem>', s quoted escaped (codec.h's escape_bytes).
 */
int hostport_parse(const char *s, struct hostport *out, char **cause);

/* hp as it is written ("127.0.0.1:9465", "[::1]:9465") in buf; returns buf. */
char *hostport_format(const struct hostport *hp, char *buf, size_t len);

/* The socket address of hp in *ss, its length in *len. */
void hostport_sockaddr(
    const struct hostport *hp, struct sockaddr_storage *ss, socklen_t *len);

/*
 * The address of sa (AF_INET or AF_INET6) as text in buf, which holds
 * INET6_ADDRSTRLEN bytes; "?" when it cannot be written. Returns buf.
 */
const char *
hostport_addr_text(const struct sockaddr *sa, char *buf, size_t len);

/*
 * The hints (*hints overwritten) to look up a host name to connect to
 * over TCP: every address of every family, in the resolver's order, each
 * to be tried in turn until one connects.
 */
void hostport_connect_hints(struct addrinfo *hints);

/*
 * Why a connection to host failed once each of its addresses addrs (the
 * resolver's list, borrowed; NULL for an address given as such) was
 * tried, why being the last one's reason: "all N addresses of HOST
 * failed, the last: WHY" (new, caller frees) when there were several, or
 * NULL when there was one, which why says alone.
 */
char *hostport_all_failed(
    const struct addrinfo *addrs, const char *host, const char *why);

#endif
