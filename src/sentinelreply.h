/*
 * What Redis Sentinel and a data node answer, read and checked: the reply
 * to SENTINEL get-master-addr-by-name, the reply to ROLE, a
 * +switch-master message, and a READONLY error. No I/O: lapsed's
 * asynchronous discovery (sentinel.c) and the blocking one of the lapse
 * command (rconn.c) share these, so both take the same replies the same
 * way. Every address and port is input from the network and is checked
 * before use.
 */
#ifndef LAPSE_SENTINELREPLY_H
#define LAPSE_SENTINELREPLY_H

#include <stddef.h>

#include <hiredis/hiredis.h>

/*
 * Read the reply to SENTINEL get-master-addr-by-name master: an array of
 * two strings, an address (IPv4, IPv6 without brackets, or a host name)
 * and a port 1..65535. Returns 0 with *host (new, caller frees) and
 * *port, or -1 with *cause (caller frees): no such master (a nil reply),
 * an error reply, or a reply that is not a valid address.
 */
int sentinelreply_master_addr(const redisReply *r, const char *master,
    char **host, int *port, char **cause);

/*
 * Read the reply to ROLE: 1 when its first element is "master", 0 with
 * *cause (caller frees) saying what the node is or what it answered.
 */
int sentinelreply_is_master(const redisReply *r, char **cause);

/*
 * True when msg (len bytes, a message on +switch-master: "NAME OLDIP
 * OLDPORT NEWIP NEWPORT") is about the master named master.
 */
int
sentinelreply_switch_master(const char *msg, size_t len, const char *master);

/*
 * True when r is a READONLY error: the node became a replica, so the
 * master must be found again.
 */
int sentinelreply_readonly(const redisReply *r);

/*
 * True when the len bytes at s (NUL-terminated at len) are a host as a
 * node announces it: an IPv4 or IPv6 address, or a host name of letters,
 * digits, '.', '-' and '_' not starting with '-' or '.'. Cluster replies
 * are checked with it too.
 */
int sentinelreply_valid_host(const char *s, size_t len);

/*
 * True when the len bytes at s are a port 1..65535 in decimal digits
 * only; *port is then set.
 */
int sentinelreply_valid_port(const char *s, size_t len, int *port);

#endif
