#!lua name=lapse
--[[
lapse: the Redis-side half of lapse, a Redis Functions library (Redis >= 7.0).

Every operation that touches lapse's keys is here, so that the reactor, the
`lapse` command and applications in any language share one implementation
and one set of atomic guarantees. Due times are milliseconds since the
epoch on this server's clock (TIME); no client clock is trusted.

Keys of namespace NS (all share the hash tag {NS}, hence one cluster slot):

  lapse:{NS}:due      ZSET    id -> due ms; the source of truth
  lapse:{NS}:jobs     HASH    id -> event record (below)
  lapse:{NS}:t:<id>   STRING  trigger key, expires at the due time
  lapse:{NS}:wake     channel PUBLISHed with the due ms when a schedule
                              makes a new earliest event
  lapse:{NS}:fired    STREAM  sink "stream"
  lapse:{NS}:ready    LIST    sink "list"
  lapse:{NS}:horizon  HASH    ms = the trigger-key horizon (absent: the
                              default; 0: none), mark = the due time up to
                              which trigger keys exist
  lapse:{NS}:gone     ZSET    id -> ms: adopted events fired in the last
                              GONE_MS, so that the `expired` notifications
                              of their keys fire nothing more
  lapse:{NS}:inflight ZSET    sinks "http" and "exec": id -> lease deadline
                              (ms) of the events leased to a reactor
  lapse:{NS}:dead     STREAM  sinks "http" and "exec": the events that
                              exhausted their attempts (fields id, payload,
                              due, attempts, error, failed, url)
  lapse:{NS}:counts   HASH    what the calls did, counted by the call that
                              did it: expired, timer, sweep (events fired
                              by each path), acked, retried, released,
                              lease_expired, dead, missed (occurrences of
                              recurring events coalesced into a firing)
  lapse:{NS}:reactors ZSET    reactor id -> when it last said hello (ms):
                              the reactors attached (lapse_hello)
  lapse:{NS}:reactor-info HASH reactor id -> what it said of itself
                              (MessagePack: host, pid, version, start,
                              listen address)
  lapse:{NS}:migrating        never written: in a Redis Cluster, the
                              functions that write ask for it to learn
                              whether the slot migrates (check_settled)

Adopted events: an application key under a prefix a namespace watches
(`SET orders:close:9 v EX 60` with watch = orders:) is adopted as event
`close:9` of that namespace by lapse_adopt: its due time is the key's
PEXPIRETIME and its payload the key's value. The key itself plays the part
of the trigger key. In a Redis Cluster, a function may touch only keys
of one slot: the application key must hash to the namespace's slot (a
prefix carrying the hash tag, {NS}); elsewhere it may be any key.

An adopted event fires exactly once however late Redis deletes its key
(with many TTL keys, or only when the key is accessed): the call that
fires it also deletes the key if its TTL is up (PEXPIRETIME equal to the
due time fired, so in [0, now]), publishing del, after which lapse_adopt
finds neither key nor event; or its access makes Redis expire the key
there and then, publishing expired, which finds the id in gone, written
in the same call. Either way no notification of that key is published
after gone has forgotten the id (GONE_MS), and the guarantee does not
depend on how fast Redis expires keys; it does depend on every reactor
handling a notification within GONE_MS of its publication (a reactor
stopped for longer with notifications buffered could fire such an id
again). A key whose TTL is not up, or which has none (set anew in the
meantime), is left alone: lapse_adopt follows its new state. Every call
that adds to gone prunes it.

The event record is a MessagePack map: p = payload (bytes), a = number of
times the event has fired (been leased) so far, c = creation time (ms),
and for adopted events k = the application key, t = its type when it is
not a string and x = why the payload is empty when the value was too
large. Events of the delivery sinks may also have u = their own URL
(lapse_schedule's url option), d = the due time (ms) of the occurrence
being delivered (set at its first lease, kept across its retries and
releases: the idempotency key is NS/id/d; a record scheduled anew has
none) and e = the last error (set by lapse_retry and by the recovery of an
expired lease). A recurring event has its rule (r, see Recurrences) and,
with a delivery sink, w = the due times of its occurrences under way and
v = how many w held after its last pruning (see under_way), and while it waits for a zone or an expression this library
does not know, l = the due time of its last occurrence fired (see
recurring.cron); an occurrence delivered as an event of its own has o = its
event's id and m = the occurrences it coalesced. Readers ignore keys they
do not know, and read fields of the wrong type as absent; a record is
rewritten whole, unknown keys included.

Delivery (sinks http and exec, at least once): lapse_sweep leases each
due event to the calling reactor: it moves from due to inflight, scored by
its lease deadline (now + LEASE on this server's clock), with its attempt
counted in its record, which stays in jobs; the reply carries the records.
The reactor then delivers it and calls lapse_ack (done), lapse_retry
(failed: back to due after a delay, or to dead after the last attempt),
lapse_extend (still running: a later deadline) or lapse_release (not
attempted after all: back to due, the attempt not counted). Each is fenced
by (d, a): it acts only while the id is in flight with that occurrence and
attempt, else it changes nothing and answers 0, so a late call for an
attempt that is over (its lease expired, the event was rescheduled or
cancelled) is harmless. A lease that expires counts as a failed attempt:
the next sweep of any reactor recovers it, to due or, at the last attempt,
to dead. lapse_requeue puts dead events back as new ones, lapse_purge
empties the dead stream.

Firing is "claiming": reading the id from the due ZSET with a due time
not after this server's clock (and, for lapse_claim, the expected one),
then removing it, is the compare-and-set; it succeeds for exactly one
caller, and the hand-off to the sink happens in the same atomic call, so
every event is handed off exactly once. Every function that fires goes
through one claim core (claim_batch) and a table of sinks (SINKS), each
with its key, its key type and its hand-off; the functions that fire
answer the due times of what they fired (dues), so that the caller can
count lateness. A sweep takes at most BATCH events and stops once their
records reach MAXBYTES, so that large payloads cannot block Redis for
long.

A namespace may limit trigger keys to events due within a horizon
(lapse:{NS}:horizon ms, set by lapsed's trigger-horizon; by default there
is none and every event has its trigger key): an event due further ahead
costs no TTL
key (about a third of an event's memory, and work for Redis's expiry
cycle) until a sweep "promotes" it, creating the trigger keys of the
events that have come within the horizon since the last promotion. The
timer and sweep paths fire every event; the trigger key is only the
low-latency hint.

Callers pass every key they name in KEYS; each function checks that KEYS
are the names of the namespace in ARGV and refuses anything else before it
writes. The exceptions the design forces: lapse_sweep, lapse_expired and
lapse_adopt delete (and lapse_sweep, with a horizon, creates) trigger keys
of events that cannot be known before the call; lapse_claim and
lapse_sweep write lapse:{NS}:gone when they fire an adopted event;
lapse_schedule and lapse_sweep read lapse:{NS}:horizon; lapse_schedule and
lapse_cancel read lapse:{NS}:inflight and remove an id in flight from it
(and the occurrences of a recurring event they end, ID<space>DUE, with
their trigger keys), and lapse_get, lapse_stats and lapse_requeue read
it; lapse_stats reads lapse:{NS}:dead and lapse:{NS}:counts, which every
function that counts writes. All of these share the {NS} hash tag and so
the slot of KEYS[1] (they were added to functions whose KEYS applications
already pass). The other exception is an adopted event's application
key, read and deleted by the functions that fire it and deleted by
lapse_cancel (its name is in the event's record).

The occurrences of cron expressions in IANA time zones are computed here
too, by pure functions on numbers (see "Cron expressions and time zones"
below): lapse_next answers the next occurrences of one (or of a fixed
rate), and the zone rules they need are part of the library's text,
generated from tzdata at build time.

Redis does not roll back a function that fails half-way, so each function
checks everything that can fail before its first write: its arguments, the
types of its keys, and whether its user may write the keys and channels
that are not in KEYS (FCALL checks those in KEYS before the call). A
refused call changes nothing. In a Redis Cluster, while the namespace's
slot migrates from this node, every function that writes is refused with
TRYAGAIN before it touches a key (see check_settled). What cannot be
checked, a sink refusing a hand-off, is ordered so that it loses nothing
(see claim_batch). A caller
who may not publish the wake channel publishes nothing: the event is
written all the same, and the reactors' timers and sweeps fire it.
]]

local VERSION = 24

-- Limits, mirrored by src/names.h, src/duration.h and src/timestamp.h.
local NS_MAX = 64
local ID_MAX = 512
local PAYLOAD_MAX_DEFAULT = 1048576
local DURATION_MAX = 100 * 365 * 86400 * 1000
local TIME_MAX = 253402300799999
local BATCH_MAX = 4096
-- A sweep takes no more events once their records reach this many bytes
-- (ARGV MAXBYTES, this when absent), and reads records in chunks of as
-- many as the rest of that holds at RECORD_BYTES each (see take_due).
-- Measured on Redis 7.0.15: a sweep of 8 MiB of 1 MiB payloads into a
-- stream takes about 40 ms (512 such events in one call took 7.4 s), and
-- the chunks of 8 small records this allows cost under 1% of a sweep's
-- per-event time (4 MiB: chunks of 4, about 5%).
local MAXBYTES_DEFAULT = 8 * 1048576
local RECORD_BYTES = PAYLOAD_MAX_DEFAULT
-- How long an adopted event's firing is remembered (lapse:{NS}:gone).
local GONE_MS = 10000
-- Delivery (sinks http and exec): the longest lease, the most attempts,
-- the expired leases one sweep recovers, the bytes of an error kept, the
-- longest event URL, the (id, due, attempt) triples of one extend or
-- release, and the dead entries one requeue takes (and reads at a time).
local LEASE_MAX = 86400000
local ATTEMPTS_MAX = 1000
local ATTEMPT_MAX = 1e15
local RECOVER_MAX = 1000
local RECOVER_MAX_TEXT = '1000'
local ERROR_MAX = 4096
local URL_MAX = 2048
local TRIPLES_MAX = 1000
local REQUEUE_MAX = 10000
local DEAD_CHUNK = 100
local LEASE_EXPIRED = 'lease expired'
-- Trigger keys exist for events due within this (see the header); 0: for
-- every event, as SPEC describes. lapsed sets it per namespace.
local HORIZON_MS = 0
-- A sweep promotes when the horizon has moved this far since the last
-- time, at most PROMOTE_MAX events per call.
local PROMOTE_STEP_MS = 1000
local PROMOTE_MAX = 1000

--[[
Builtins. Redis runs a library's body with no globals but a restricted
redis table, and in a function a global lookup costs far more than a
local one: binding the builtins a sweep uses per event to locals took 3%
off its per-event cost (callgrind). So the builtins the functions use are
bound to these locals by api() at the first call of the loaded library;
builtins() is declared before them, so that its names are the globals.
]]
local function builtins()
	return type, tonumber, tostring, pcall, error, unpack, ipairs,
	    string.format, string.byte, string.match, string.find,
	    math.floor, math.ceil, table.concat, redis.call, redis.pcall,
	    redis.acl_check_cmd, redis.error_reply, cmsgpack.pack,
	    cmsgpack.unpack, cjson.encode
end
local type, tonumber, tostring, pcall, error, unpack, ipairs
local format, byte, match, find, floor, ceil, concat
local redis_call, redis_pcall, acl_check, error_reply
local msgpack_pack, msgpack_unpack, json_encode

-- Refuse a call: raise an error that api() turns into a plain error reply
-- (without the script location Redis adds to errors raised by scripts).
local function fail(fmt, ...)
	error({ lapse = 'ERR ' .. format(fmt, ...) })
end

--[[
A Redis Cluster slot that migrates. Redis checks each command a function
runs, not only the keys the FCALL declares: on the node the slot migrates
from (MIGRATING), a command touching a key that is not there (not created
yet, migrated already, or deleted earlier by the same call when it
emptied it) is refused, "Script attempted to access a non local key in a
cluster node", after whatever the call wrote before it. The keys a
function touches outside KEYS (inflight, gone, horizon, counts, the
trigger keys of the events it finds, an adopted event's application key)
and those it empties and touches again cannot all be known before the
call, so a function that writes first asks whether its namespace's slot
is migrating from this node: EXISTS of lapse:{NS}:migrating, a name
lapse never writes, is refused there (the key is absent) and nowhere
else. Then the call writes nothing and answers TRYAGAIN, as Redis answers
a command of several keys that it cannot serve until the slot is
settled: the caller calls again, and reaches the new node once the slot
has moved. On the node the slot migrates to (IMPORTING, reached after
ASK), Redis refuses only a command of several keys of which one is
absent, and no function sends such a command after its first write.
A caller that may not read lapse:{NS}:migrating (ACL) is not asked.
The question costs one command per call (callgrind: 9,000 instructions,
4-5% of a lapse_claim; nothing per event of a sweep), so it is asked of
Cluster nodes only: a server that answers CLUSTER MYID "cluster support
disabled" is not one, and cannot become one without a restart, which
loads the library anew (clustered, remembered by the loaded library; a
server that does not let the caller ask is taken for a Cluster node).
]]
local clustered
local function check_settled(keys, args)
	if clustered == nil then
		local r = redis_pcall('CLUSTER', 'MYID')
		clustered = not (type(r) == 'table' and r.err and
		    find(r.err, 'cluster support disabled', 1, true))
	end
	local ns, key = args[1], keys[1]
	if not clustered or type(ns) ~= 'string' or
	    type(key) ~= 'string' or ns == '' or #ns > NS_MAX or
	    find(ns, '[^A-Za-z0-9_.%-]') then
		-- Not a Cluster node, or the function refuses the call
		-- before writing.
		return
	end
	local p = 'lapse:{' .. ns .. '}:'
	if key:sub(1, #p) ~= p then
		return
	end
	local r = redis_pcall('EXISTS', p .. 'migrating')
	if type(r) ~= 'table' or not r.err then
		return
	end
	if find(r.err, 'non local key', 1, true) then
		error({ lapse = format('TRYAGAIN the slot of namespace "%s" ' ..
		    'is migrating from this node: nothing was written; call ' ..
		    'again once it has moved', ns) })
	elseif find(r.err, 'cluster is down', 1, true) then
		error({ lapse = format('CLUSTERDOWN the slot of namespace ' ..
		    '"%s" cannot be served: nothing was written', ns) })
	end
end

-- The callback of a function: fn with the builtins bound, its refusals
-- as plain error replies; for a function that writes (writes), refused
-- first while its namespace's slot migrates from this node.
local function api(fn, writes)
	return function(keys, args)
		if not redis_call then
			type, tonumber, tostring, pcall, error, unpack, ipairs,
			    format, byte, match, find, floor, ceil, concat,
			    redis_call, redis_pcall, acl_check, error_reply,
			    msgpack_pack, msgpack_unpack,
			    json_encode = builtins()
		end
		local ok, r = true, nil
		if writes then
			ok, r = pcall(check_settled, keys, args)
		end
		if ok then
			ok, r = pcall(fn, keys, args)
		end
		if ok then
			return r
		end
		if type(r) == 'table' and r.lapse then
			return error_reply(r.lapse)
		end
		error(r)
	end
end

-- A whole number in decimal. Commands get numbers as text: Redis 7.0
-- formats a number passed to redis.call() with snprintf("%.17g"), several
-- times the cost of this (callgrind: 4,000 instructions a number).
local function decimal(n)
	return format('%d', n)
end

local function now_ms()
	local t = redis_call('TIME')
	return tonumber(t[1]) * 1000 + floor(tonumber(t[2]) / 1000)
end

-- A whole number written in decimal digits only (no sign, exponent or
-- spaces), at most max. Returns the number or nil.
local function whole(s, max)
	if type(s) ~= 'string' or not s:match('^%d+$') or #s > 16 then
		return nil
	end
	local n = tonumber(s)
	if n > max then
		return nil
	end
	return n
end

-- The bytes show() escapes: all but printable ASCII (0x20-0x7e), and of
-- those the backslash and the double quote. (In a Lua set, ']' must come
-- first: '\93' anywhere else would end the set.)
local SHOW_ESCAPED = '[^\93-\126\32\33\35-\91]'
local SHOW_AS = { ['\\'] = '\\\\', ['"'] = '\\"' }

-- Render bytes for an error message, fit to stand between double quotes,
-- exactly as the C side's escape_bytes (src/codec.h): printable ASCII as
-- is but backslash and '"' behind a backslash, any other byte as \xHH
-- (lower-case hex); at most 64 input bytes, then "...".
local function show(s)
	local cut = #s > 64
	if cut then
		s = s:sub(1, 64)
	end
	s = s:gsub(SHOW_ESCAPED, function(c)
		return SHOW_AS[c] or format('\\x%02x', c:byte())
	end)
	if cut then
		s = s .. '...'
	end
	return s
end

local function check_ns(ns)
	if ns == nil or ns == '' then
		fail('bad namespace "": empty')
	end
	if #ns > NS_MAX then
		fail('bad namespace "%s": longer than %d bytes', show(ns),
		    NS_MAX)
	end
	if ns:find('[^A-Za-z0-9_.%-]') then
		fail('bad namespace "%s": only letters, digits, \'_\', ' ..
		    '\'.\' and \'-\' are allowed', show(ns))
	end
end

-- What is wrong with id, or nil when it is a valid id: for the functions
-- that must skip what they cannot use rather than refuse the call.
local function bad_id(id)
	if id == nil or id == '' then
		return 'bad id: empty'
	end
	if #id > ID_MAX then
		return format('bad id: longer than %d bytes (%d)', ID_MAX, #id)
	end
	local at = id:find('[%z\1-\32\127]')
	if at then
		return format('bad id "%s": byte 0x%02x at offset %d is not ' ..
		    'allowed (ids are bytes 0x21-0x7e and 0x80-0xff)', show(id),
		    id:byte(at), at - 1)
	end
	return nil
end

local function check_id(id)
	local why = bad_id(id)
	if why then
		fail('%s', why)
	end
end

--[[
What is wrong with an event's own URL (lapse_schedule's url option), or
nil: 1 to URL_MAX bytes, http:// or https://, and none of the bytes an id
may not hold either (spaces, controls, DEL), so that it goes into an HTTP
request line and a log line as it is. Whether the namespace allows it
(allow-url) is the reactor's to check at delivery, when its configuration
is known; src/names.c checks the same for the lapse command.
]]
local function bad_url(url)
	if url == nil or url == '' then
		return 'bad url: empty'
	end
	if #url > URL_MAX then
		return format('bad url: longer than %d bytes (%d)', URL_MAX,
		    #url)
	end
	local at = url:find('[%z\1-\32\127]')
	if at then
		return format('bad url "%s": byte 0x%02x at offset %d is ' ..
		    'not allowed', show(url), url:byte(at), at - 1)
	end
	if url:sub(1, 7) ~= 'http://' and url:sub(1, 8) ~= 'https://' then
		return format('bad url "%s": must start with http:// or ' ..
		    'https://', show(url))
	end
	return nil
end

local function prefix(ns)
	return 'lapse:{' .. ns .. '}:'
end

-- Check that the caller passed the key names of namespace ns, in order.
local function check_keys(keys, want)
	for i, name in ipairs(want) do
		if keys[i] ~= name then
			fail('KEYS[%d] must be %s', i, show(name))
		end
	end
	if #keys ~= #want then
		fail('expected %d keys, got %d', #want, #keys)
	end
end

-- Refuse the call unless its user may run cmd with these arguments: for
-- the keys and channels a function writes that are not in KEYS (FCALL
-- checks KEYS itself, before the call), so that the command is not
-- refused by ACL half-way through the call.
local function check_acl(cmd, key, ...)
	if not acl_check(cmd, key, ...) then
		fail('no permission to %s %s', cmd, show(key))
	end
end

-- Refuse keys of the wrong type before anything is written: Redis does not
-- roll back a function that fails half-way.
local function check_type(key, want)
	local r = redis_pcall('TYPE', key)
	if r.err then
		check_acl('TYPE', key)
		error(r)
	end
	local t = r.ok
	if t ~= 'none' and t ~= want then
		fail('%s holds a %s, not a %s', show(key), t, want)
	end
end

-- Run a command that reads key, which must be of type want or absent, and
-- return its reply. A key of another type gets check_type's message: the
-- type is checked by the command itself, with no TYPE call of its own;
-- likewise a key outside KEYS that the user may not read gets
-- check_acl's.
local function read_typed(want, cmd, key, ...)
	local r = redis_pcall(cmd, key, ...)
	if type(r) == 'table' and r.err then
		if r.err:find('^WRONGTYPE') then
			check_type(key, want)
		end
		check_acl(cmd, key, ...)
		error(r)
	end
	return r
end

-- check_acl for DEL of each of keys, in one call when all are allowed.
local function check_acl_del(keys)
	if acl_check('DEL', unpack(keys)) then
		return
	end
	for _, key in ipairs(keys) do
		check_acl('DEL', key)
	end
end

-- A whole number of ms in [0, TIME_MAX]: NaN and anything below 0
-- become 0, anything above TIME_MAX (+inf included) TIME_MAX.
local function clamp_ms(d)
	if d ~= d or d < 0 then
		return 0
	elseif d > TIME_MAX then
		return TIME_MAX
	end
	return d
end

--[[
A due time as the due ZSET holds it (the score's text), as the number of ms
and the decimal text a hand-off records. lapse writes whole numbers of ms
in [0, TIME_MAX], and Redis answers those scores in plain decimal, so the
text is used as it is; a score written behind lapse's back (a fraction, a
negative number, +-inf) is floored and clamped into that range, so that
nothing downstream (stream fields, JSON, replies) fails on it or records
garbage.
]]
local function due_of(score)
	local d = tonumber(score)
	if d > 0 and d <= TIME_MAX and d % 1 == 0 then
		return d, score
	end
	d = clamp_ms(floor(d))
	return d, decimal(d)
end

-- The earliest due time left, -1 when none: the first whole ms at which
-- it is due (a fractional score counts from the next ms; +-inf are
-- clamped as by due_of), so that next <= now means "due".
local function head(due_key)
	local h = redis_call('ZRANGE', due_key, '0', '0', 'WITHSCORES')
	if h[1] == nil then
		return -1
	end
	return clamp_ms(ceil(tonumber(h[2])))
end

--[[
Encodings of the list sink. An id or payload goes into the JSON object as
a string when it is JSON text: valid UTF-8 (RFC 3629: no overlong forms,
surrogates or code points above U+10FFFF) without NUL, which C readers
would cut the string at; else base64-encoded (id_b64, payload_b64). Both
run in Lua over up to max-payload bytes per event, so both are written for
speed. Measured in Redis 7.0.15 (EVAL, per MiB): the check takes 3-4 ms
for ASCII, 40 ms for 2- or 3-byte characters; base64 60 ms. The
byte-at-a-time versions before them took 24, 100 and 630-770 ms.
]]

-- Whether s is JSON text. Runs of ASCII are skipped by one anchored
-- pattern match, in C; only multibyte sequences are checked in Lua, each
-- read by one string.byte.
local function json_safe(s)
	local i, n = match(s, '^[\1-\127]*()'), #s
	while i <= n do
		local c, d, e, f = byte(s, i, i + 3)
		if c < 0x80 then
			if c == 0 then
				return false
			end
			i = match(s, '^[\1-\127]*()', i)
		elseif c >= 0xc2 and c <= 0xdf then
			if not d or d < 0x80 or d > 0xbf then
				return false
			end
			i = i + 2
		elseif c >= 0xe0 and c <= 0xef then
			-- No overlong forms (e0 a0..), no surrogates (ed ..9f).
			local lo, hi = c == 0xe0 and 0xa0 or 0x80,
			    c == 0xed and 0x9f or 0xbf
			if not e or d < lo or d > hi or e < 0x80 or
			    e > 0xbf then
				return false
			end
			i = i + 3
		elseif c >= 0xf0 and c <= 0xf4 then
			-- No overlong forms (f0 90..), nothing above U+10FFFF
			-- (f4 ..8f).
			local lo, hi = c == 0xf0 and 0x90 or 0x80,
			    c == 0xf4 and 0x8f or 0xbf
			if not f or d < lo or d > hi or e < 0x80 or e > 0xbf or
			    f < 0x80 or f > 0xbf then
				return false
			end
			i = i + 4
		else
			return false
		end
	end
	return true
end

local B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'

-- b64_pairs()[v + 1]: the two base64 characters of the 12-bit value v,
-- so that three bytes cost two table lookups. Built at the first use: the
-- garbage collector walks a table of 4096 strings in every call that
-- allocates, which costs a sweep 0.5% per event, so that only a server
-- whose list sinks get payloads that need base64 pays for it.
local B64_PAIRS
local function b64_pairs()
	if not B64_PAIRS then
		B64_PAIRS = {}
		for v = 0, 4095 do
			local hi, lo = (v - v % 64) / 64, v % 64
			B64_PAIRS[v + 1] = B64:sub(hi + 1, hi + 1) ..
			    B64:sub(lo + 1, lo + 1)
		end
	end
	return B64_PAIRS
end

-- Standard base64, padded. Twelve bytes are read per string.byte call and
-- become one string of sixteen characters.
local function base64(s)
	local p, out, n, len = b64_pairs(), {}, 0, #s
	local full = len - len % 3
	local i = 1
	while i + 11 <= full do
		local a1, b1, c1, a2, b2, c2, a3, b3, c3, a4, b4, c4 =
		    byte(s, i, i + 11)
		local m1, m2, m3, m4 = b1 % 16, b2 % 16, b3 % 16, b4 % 16
		n = n + 1
		out[n] = p[a1 * 16 + (b1 - m1) / 16 + 1] ..
		    p[m1 * 256 + c1 + 1] ..
		    p[a2 * 16 + (b2 - m2) / 16 + 1] ..
		    p[m2 * 256 + c2 + 1] ..
		    p[a3 * 16 + (b3 - m3) / 16 + 1] ..
		    p[m3 * 256 + c3 + 1] ..
		    p[a4 * 16 + (b4 - m4) / 16 + 1] ..
		    p[m4 * 256 + c4 + 1]
		i = i + 12
	end
	while i <= full do
		local a, b, c = byte(s, i, i + 2)
		local m = b % 16
		n = n + 1
		out[n] = p[a * 16 + (b - m) / 16 + 1] .. p[m * 256 + c + 1]
		i = i + 3
	end
	local a, b = byte(s, i, i + 1)
	if b then
		-- Two bytes left: 16 bits, three characters and '='.
		local m = b % 16
		out[n + 1] = p[a * 16 + (b - m) / 16 + 1] ..
		    B64:sub(m * 4 + 1, m * 4 + 1) .. '='
	elseif a then
		-- One byte left: 8 bits, two characters and '=='.
		out[n + 1] = p[a * 16 + 1] .. '=='
	end
	return concat(out)
end

-- A record as the jobs hash holds it: rec packed whole, so that the fields
-- a newer library writes survive an older one's updates.
local function record_pack(rec)
	return msgpack_pack(rec)
end

-- A whole number of ms in [0, TIME_MAX], or nil.
local function ms_or_nil(v)
	if type(v) ~= 'number' or v < 0 or v > TIME_MAX or v % 1 ~= 0 then
		return nil
	end
	return v
end

--[[
Recurrences. The record of a recurring event holds its rule as r =
{ k = 'every', e = the period (ms), s = the anchor (its start: from when
given, else the creation time), f = from when given, u = until (nil:
none) }: occurrences at s, s + e, s + 2e, ... up to u, on this server's
clock; or r = { k = 'cron', x = the expression, q = true for Quartz's
days of the week, z = the zone's name, f, u }: the expression's matches
in that zone from f (when given) up to u, computed by the engine below
(tz, cron), which parses x again when it needs it (it keeps the last
expressions parsed). The claim that fires an occurrence schedules the
next one in the same call (claim_batch), so that no crash between the
two can lose the recurrence; occurrences missed while no reactor ran
fire once, coalesced, and the next is the first after now.
]]
local tz, cron, recurrence -- the engine, defined with lapse_next below

-- The most occurrences of a cron rule one claim counts as missed: past
-- it, missed says at least that many (a claim must stay short).
local MISSED_MAX = 1000

-- The most steps of the cron engine (each the next match of an
-- expression, about 2.5 us) one call spends on the recurring events it
-- fires: an event costs its missed occurrences and 2. Past it, the call
-- fires no more events (it fires at least one), and leaves the rest due:
-- its reply's next <= now makes its caller call again. 512 events of an
-- every-second expression after a day's outage held Redis 1.2 s in one
-- sweep, and 4,096 10 s.
local RECUR_STEPS_MAX = 10000

local function recur_valid(r)
	if type(r) ~= 'table' or (r.u ~= nil and not ms_or_nil(r.u)) or
	    (r.f ~= nil and not ms_or_nil(r.f)) then
		return false
	end
	if r.k == 'cron' then
		return type(r.x) == 'string' and type(r.z) == 'string' and
		    (r.q == nil or r.q == true)
	end
	local e = r.k == 'every' and r.e
	if type(e) ~= 'number' or e < 1 or e > DURATION_MAX or e % 1 ~= 0 then
		return false
	end
	return ms_or_nil(r.s) ~= nil
end

-- Whether two rules are the same recurrence as their callers gave them
-- (an anchor that is the creation time is not compared).
local function recur_same(a, b)
	return a.k == b.k and a.e == b.e and a.f == b.f and a.u == b.u and
	    a.x == b.x and a.q == b.q and a.z == b.z
end

-- The helpers of the recurrences' claims, in a table: the library's main
-- function has Lua 5.1's 200 locals but one (tests/tzcheck.c adds one).
local recurring = { WAIT_MS = 60000 }

--[[
A cron rule's parsed expression and zone; or nil, nil and why, when this
library does not know one of them: a zone its zone table lacks (a library
of an older tzdata, or lua/lapse.lua as written, UTC only, loaded in its
place; a record written behind lapse's back), or an expression it does
not read. The recurrence is not ended for it, since loading the library
that knows them makes sense of it again: the occurrence due fires, as it
was computed when its rule made sense, and the recurrence waits, its
record kept with e = why and l = the due time of that occurrence, looked
at again every minute (WAIT_MS, firing nothing) until its rule makes sense,
and then goes on as after an outage from l (see plan_recurrences).
]]
function recurring.cron(r)
	local ok, c = pcall(cron.parse, r.x, r.q)
	if not ok then
		local why = type(c) == 'table' and c.lapse or tostring(c)
		return nil, nil, format('%s: the recurrence waits for a ' ..
		    'library that reads it', (why:gsub('^ERR ', '')))
	end
	local z = tz.find(r.z)
	if not z then
		local release = tz.release()
		return nil, nil, format('unknown time zone "%s" (%s): the ' ..
		    'recurrence waits for a library that knows it', show(r.z),
		    release and 'not in tzdata ' .. release or
		    'this library has no zone table but UTC')
	end
	return c, z
end

-- The first occurrence of rule r after ms (strictly after), nil when the
-- recurrence has none left; c and z: r's parsed cron expression and zone
-- when the caller has them.
local function recur_next(r, ms, c, z)
	local t
	if r.k == 'cron' then
		if not c then
			c, z = recurring.cron(r)
			if not c then
				return nil
			end
		end
		if r.f and ms < r.f - 1 then
			ms = r.f - 1
		end
		t = cron.next(c, z, ms)
		if t == nil then
			return nil
		end
	else
		t = r.s
		if ms >= t then
			t = t + (floor((ms - t) / r.e) + 1) * r.e
		end
	end
	if (r.u and t > r.u) or t > TIME_MAX then
		return nil
	end
	return t
end

-- Firing the occurrence of r due at due at now: the next occurrence (the
-- first after now; nil: the recurrence ends), how many occurrences
-- between the two were missed (fired by this one, coalesced), the steps
-- of the cron engine that took (RECUR_STEPS_MAX; 1 for every), and why
-- the recurrence waits when its rule makes no sense here (recurring.cron).
local function recur_advance(r, due, now)
	local last = r.u and r.u < now and r.u or now
	local missed = 0
	if r.k == 'cron' then
		local c, z, why = recurring.cron(r)
		if not c then
			return nil, 0, 1, why
		end
		local t = recur_next(r, due, c, z)
		while t and t <= last and missed < MISSED_MAX do
			missed = missed + 1
			t = recur_next(r, t, c, z)
		end
		return recur_next(r, now > due and now or due, c, z), missed,
		    missed + 2
	end
	if last > due and due >= r.s then
		missed = floor((last - r.s) / r.e) - floor((due - r.s) / r.e)
	end
	return recur_next(r, now > due and now or due), missed, 1
end

-- A list of due times (ms) as a record's w holds it, or nil.
local function dues_or_nil(w)
	if type(w) ~= 'table' then
		return nil
	end
	for i = 1, #w do
		if not ms_or_nil(w[i]) then
			return nil
		end
	end
	return w
end

-- An event's record, unpacked. A record written behind lapse's back is
-- read as far as it makes sense: a field that is missing or of the wrong
-- type gets its default (no payload, never fired, not adopted), so that
-- no hand-off fails on it half-way through a call.
local function record_unpack(raw)
	if not raw then
		return { p = '', a = 0 }
	end
	local ok, rec = pcall(msgpack_unpack, raw)
	if not ok or type(rec) ~= 'table' then
		return { p = '', a = 0 }
	end
	local a = rec.a
	if type(rec.p) ~= 'string' then
		rec.p = ''
	end
	-- a is 0 in every record lapse writes: the common case costs one
	-- comparison.
	if a ~= 0 and (type(a) ~= 'number' or a < 0 or a > TIME_MAX or
	    a % 1 ~= 0) then
		rec.a = 0
	end
	if rec.k ~= nil and type(rec.k) ~= 'string' then
		rec.k = nil
	end
	if rec.t ~= nil and type(rec.t) ~= 'string' then
		rec.t = nil
	end
	-- The delivery fields, present only in records of the delivery
	-- sinks' events: the common case costs three comparisons.
	if rec.u ~= nil and type(rec.u) ~= 'string' then
		rec.u = nil
	end
	if rec.d ~= nil then
		rec.d = ms_or_nil(rec.d)
	end
	if rec.e ~= nil and type(rec.e) ~= 'string' then
		rec.e = nil
	end
	-- Recurring events: the rule (r); an occurrence of one in flight
	-- (sinks http and exec) has the id of its event (o) instead.
	if rec.r ~= nil and not recur_valid(rec.r) then
		rec.r = nil
	end
	if rec.o ~= nil and type(rec.o) ~= 'string' then
		rec.o = nil
	end
	if rec.m ~= nil and (type(rec.m) ~= 'number' or rec.m < 0 or
	    rec.m % 1 ~= 0) then
		rec.m = nil
	end
	if rec.w ~= nil and not rec.r then
		rec.w = nil
	elseif rec.w ~= nil then
		rec.w = dues_or_nil(rec.w)
	end
	if rec.v ~= nil and not (rec.w and ms_or_nil(rec.v)) then
		rec.v = nil
	end
	if rec.l ~= nil then
		rec.l = rec.r and ms_or_nil(rec.l)
	end
	return rec
end

--[[
Sinks: what happens to a claimed event. Each entry names its key
(lapse:{NS}:<suffix>), the type that key holds, and handoff(c, id, rec,
due, text), which hands one claimed event over: rec is its record (rec.a
already counts this firing), due its due time in ms and text the same in
decimal. It returns nil, or the error message of a refusal: it runs its
commands with redis.pcall and raises nothing, because the claim core
(claim_batch, below), which calls it once per event in firing order, must
still remove the events handed off before the refused one.

The delivery sinks http and exec share one entry shape, flagged lease:
their hand-off leases the event into lapse:{NS}:inflight and writes its
updated record back to jobs (so remove_claimed leaves it there), and the
sweep returns the claimed records to the reactor, which delivers them.
Recurring events will schedule their next occurrence where the claim core
removes a fired event.
]]

-- XADD to the stream sink, trimmed as the call's MAXLEN says. The fields
-- are passed to XADD directly: building an argument table per event costs
-- about as much as the XADD itself.
local function xadd(c, ...)
	if c.smax then
		return redis_pcall('XADD', c.skey, 'MAXLEN', '~', c.smax, '*',
		    ...)
	end
	return redis_pcall('XADD', c.skey, '*', ...)
end

-- Sink stream: one entry, fields id, payload, due, fired, attempt, via
-- (and type, for an adopted key that is not a string; missed, for an
-- occurrence of a recurring event).
local function to_stream(c, id, rec, due, text)
	local a, r = rec.a == 1 and '1' or decimal(rec.a), nil
	if rec.m then
		r = xadd(c, 'id', id, 'payload', rec.p, 'due', text, 'fired',
		    c.fired, 'attempt', a, 'via', c.via, 'missed',
		    decimal(rec.m))
	elseif rec.t then
		r = xadd(c, 'id', id, 'payload', rec.p, 'due', text, 'fired',
		    c.fired, 'attempt', a, 'via', c.via, 'type', rec.t)
	else
		r = xadd(c, 'id', id, 'payload', rec.p, 'due', text, 'fired',
		    c.fired, 'attempt', a, 'via', c.via)
	end
	if type(r) == 'table' then
		return r.err
	end
end

-- Sink list: the JSON object of the stream entry's fields and ns, RPUSHed;
-- an id or payload that is not JSON text goes base64-encoded as id_b64 or
-- payload_b64.
local function to_list(c, id, rec, due, text)
	local obj = { ns = c.ns, due = due, fired = c.now, attempt = rec.a,
	    via = c.via, type = rec.t, missed = rec.m }
	if json_safe(id) then
		obj.id = id
	else
		obj.id_b64 = base64(id)
	end
	if json_safe(rec.p) then
		obj.payload = rec.p
	else
		obj.payload_b64 = base64(rec.p)
	end
	local ok, json = pcall(json_encode, obj)
	if not ok then
		return 'cannot encode the event as JSON: ' .. tostring(json)
	end
	local r = redis_pcall('RPUSH', c.skey, json)
	if type(r) == 'table' then
		return r.err
	end
end

-- Sinks http and exec: lease the events of b, in inflight until
-- c.deadline, and write back their records: the attempt counted (rec.a)
-- and, at an event's first lease, the due time of the occurrence (d, the
-- idempotency key's), which retries and releases keep. The reactor
-- delivers them from the sweep's reply. One ZADD and one HSET per
-- LEASE_CHUNK events, not one of each per event: a command called from
-- Lua costs about 1 us more than it does itself. A chunk's ZADD comes
-- first and is undone if its HSET is refused (an expired lease that
-- lease_again took gets its old score back), so that the events of a
-- refused chunk are left as they were and those before it handed off.
-- Returns how many were handed off, and the error of the refusal.
local LEASE_CHUNK = 1000
local function to_inflight(c, b)
	local n, ids, recs, due, member = b.n, b.id, b.rec, b.due, b.member
	-- The deadline in decimal once: Redis 7.0 formats a number passed
	-- to a command with snprintf("%.17g"), 1 us a time.
	local deadline, done = decimal(c.deadline), 0
	while done < n do
		local last = done + LEASE_CHUNK < n and done + LEASE_CHUNK or n
		local scores, fields, k = {}, {}, 0
		for i = done + 1, last do
			local rec, m = recs[i], member and member[i] or ids[i]
			rec.a = rec.a + 1
			if not rec.d then
				rec.d = due[i]
			end
			scores[k + 1], scores[k + 2] = deadline, m
			fields[k + 1], fields[k + 2] = m, record_pack(rec)
			k = k + 2
		end
		local r = redis_pcall('ZADD', c.skey, unpack(scores, 1, k))
		if type(r) ~= 'table' then
			r = redis_pcall('HSET', c.jobs, unpack(fields, 1, k))
			if type(r) == 'table' then
				-- Undone: an expired lease taken to lease again
				-- gets its old score back, others leave.
				local added, back, na, nb = {}, {}, 0, 0
				for i = done + 1, last do
					local m = member and member[i] or ids[i]
					local was = b.leased and b.leased[i]
					if was then
						back[nb + 1], back[nb + 2] = was, m
						nb = nb + 2
					else
						na = na + 1
						added[na] = m
					end
				end
				if na > 0 then
					redis_pcall('ZREM', c.skey, unpack(added))
				end
				if nb > 0 then
					redis_pcall('ZADD', c.skey, unpack(back))
				end
			end
		end
		if type(r) == 'table' then
			for i = done + 1, last do
				recs[i].a = recs[i].a - 1
			end
			return done, r.err
		end
		done = last
	end
	return n, nil
end

-- weight: how many bytes of a sweep's budget (MAXBYTES) each byte of a
-- record costs. A list element is JSON, and a payload that is not JSON
-- text goes in base64: about 60 ms per MiB in Lua, where XADD takes 5 to
-- 7 ms, so a list sweep of binary payloads would hold Redis eight times as
-- long as a stream sweep of the same budget (0.41 s for 8 MiB).
-- lease: a delivery sink, whose events stay in jobs while in flight and
-- which only lapse_sweep fires (lapse_claim, lapse_expired and lapse_adopt
-- refuse it).
local SINKS = {
	stream = { suffix = 'fired', type = 'stream', handoff = to_stream,
	    weight = 1 },
	list = { suffix = 'ready', type = 'list', handoff = to_list,
	    weight = 8 },
	http = { suffix = 'inflight', type = 'zset', handoff_all = to_inflight,
	    weight = 1, lease = true },
	exec = { suffix = 'inflight', type = 'zset', handoff_all = to_inflight,
	    weight = 1, lease = true },
}

local function check_via(via)
	if via ~= 'expired' and via ~= 'timer' and via ~= 'sweep' then
		fail('bad via "%s" (use expired, timer or sweep)',
		    show(via or ''))
	end
end

--[[
The context of a call that fires events: ns, p (the key prefix), the keys
due, jobs, gone and dead, via, the sink (its SINKS entry), skey (its key)
and smax (the trim length of the stream the call adds to, as XADD wants
it, nil: never trim, formatted once per call rather than by every XADD):
the fired stream's for sink stream, the dead stream's for the delivery
sinks; once the arguments are checked, start() adds now (this server's
time) and fired (the same in decimal, formatted once per call).
]]
local function firing(ns, via, sink, maxlen)
	local s = SINKS[sink]
	if s == nil then
		fail('bad sink "%s" (use stream, list, http or exec)',
		    show(sink or ''))
	end
	local n = whole(maxlen, 1e15)
	if n == nil then
		fail('bad %s "%s"',
		    s.lease and 'dead-maxlen' or 'stream-maxlen',
		    show(maxlen or ''))
	end
	local p = prefix(ns)
	return { ns = ns, p = p, due = p .. 'due', jobs = p .. 'jobs',
	    gone = p .. 'gone', inflight = p .. 'inflight', dead = p .. 'dead',
	    via = via, sink = s, skey = p .. s.suffix,
	    smax = n > 0 and decimal(n) or nil }
end

-- Refuse a delivery sink in the functions that fire one event at a time
-- (lapse_claim, lapse_expired, lapse_adopt): a reactor delivers what its
-- sweeps lease, and watching keys with a delivery sink is not supported.
local function check_not_leasing(c, sink)
	if c.sink.lease then
		fail('sink %s is delivered by lapse_sweep only', sink)
	end
end

local function start(c)
	c.now = now_ms()
	c.fired = decimal(c.now)
end

-- The types of the keys a claim writes, checked up front.
local function check_claim_keys(c)
	check_type(c.due, 'zset')
	check_type(c.jobs, 'hash')
	check_type(c.skey, c.sink.type)
end

--[[
A batch of events to claim, in firing order, as parallel arrays (a table
per event would cost an allocation per event on the sweep's hot path):
id, due (ms), text (the due time in decimal), rec (the unpacked record);
n the count; adopted whether any of them is an adopted event; appkey[i]
the application key to delete with event i (see find_app_keys); bytes
what a sweep's records weigh in its budget (see take_due).
]]
local function new_batch()
	return { n = 0, id = {}, due = {}, text = {}, rec = {},
	    adopted = false, appkey = {}, at = {}, bytes = 0 }
end

-- Add an event read in this call: its id, its due ZSET score and record.
local function batch_add(b, id, score, rec)
	local n = b.n + 1
	b.n = n
	b.id[n], b.rec[n] = id, rec
	b.due[n], b.text[n] = due_of(score)
	if rec.k then
		b.adopted = true
	end
end

-- Cut b to its first n events, the rest left as they are (due), before
-- the claim writes anything; cut tells the claim that events due before
-- now were left (see lease_sweep). Only the sweeps cut (c.may_cut):
-- every event they take was read from due, and stays there; a batch of
-- lapse_expired may hold events that are in no key, only in its call.
local function batch_cut(b, n)
	for i = n + 1, b.n do
		b.id[i], b.due[i], b.text[i], b.rec[i] = nil, nil, nil, nil
		b.appkey[i], b.at[i] = nil, nil
	end
	b.n, b.cut = n, true
end

-- Whether the firing of event i of b is remembered in gone (see
-- lapse_expired): when an expired notification of its key may still come
-- or be on its way. That is everything lapse_expired fires (c.watched),
-- and an adopted event whose key is gone (-2), out of reach (nil), or due
-- and not deleted by this call. A key this call deletes publishes del, and
-- a key set anew (another PEXPIRETIME, or -1) is another occurrence, whose
-- expiry must not be taken for this one's.
local function remembered(c, b, i)
	if c.watched then
		return true
	end
	if not b.rec[i].k or b.appkey[i] then
		return false
	end
	local at = b.at[i]
	return at == nil or at == -2 or at == b.due[i]
end

-- redis.call(cmd, key, ...) with the elements of list, in calls of at most
-- UNPACK_MAX of them: Lua 5.1's unpack stops at its C stack (about 8,000
-- values), which two per event of a 4,096-event sweep would pass.
local UNPACK_MAX = 2000
local function call_list(cmd, key, list)
	for i = 1, #list, UNPACK_MAX do
		local last = i + UNPACK_MAX - 1
		redis_call(cmd, key, unpack(list, i, last < #list and last or
		    #list))
	end
end

--[[
The application keys of the adopted events in b whose TTL is up: appkey[i]
is the key of event i when its PEXPIRETIME is the due time of the
occurrence being fired (so in [0, now]): Redis just has not deleted the
key yet. Left there, it would be deleted whenever Redis gets to it (with
many TTL keys, or only when it is accessed), maybe more than GONE_MS
later, and its expired notification would then find neither the event nor
its gone entry and fire the id again. So the claim deletes it (DEL
publishes del: the lapse_adopt that follows finds neither key nor event).
Reading PEXPIRETIME may itself make Redis expire the key, publishing
expired: then at[i] is -2, and the firing is remembered in gone, written
in the same call (see remembered). A key with another PEXPIRETIME (later,
-1: set anew in the meantime) is another occurrence: lapse_adopt handles
its new state. A key out of reach is left alone (at[i] nil). Read before
any write; nothing here raises.
]]
local function find_app_keys(b)
	for i = 1, b.n do
		local key = b.rec[i].k
		if key then
			-- A key out of reach (no permission, another slot in
			-- a cluster) must not stop the namespace: its event
			-- fires, and gone covers its notification.
			local at = redis_pcall('PEXPIRETIME', key)
			if type(at) ~= 'number' then
				at = nil
			elseif at == b.due[i] and acl_check('DEL', key) then
				b.appkey[i] = key
			end
			b.at[i] = at
		end
	end
end

-- Delete the trigger keys of the events of b. They are not all in KEYS:
-- the DEL is the claim's first write, so that its refusal by ACL changes
-- nothing; it is then reported as check_acl does.
local function trigger_keys(c, b)
	if not b.triggers then
		local ids, triggers, p = b.id, {}, c.p
		for i = 1, b.n do
			triggers[i] = p .. 't:' .. ids[i]
		end
		b.triggers = triggers
	end
	return b.triggers
end

local function delete_triggers(c, b)
	if b.untriggered then
		return
	end
	b.untriggered = true
	local triggers = trigger_keys(c, b)
	local r = redis_pcall('DEL', unpack(triggers))
	if type(r) == 'table' then
		check_acl_del(triggers)
		error(r)
	end
end

-- Hand the events of b to the sink in firing order, each counted as an
-- attempt in its record. Returns how many were handed off, and the error
-- of the refusal that stopped it.
local function handoff_all(c, b)
	if c.sink.handoff_all then
		return c.sink.handoff_all(c, b)
	end
	local handoff, ids, due, text, recs = c.sink.handoff, b.id, b.due,
	    b.text, b.rec
	local member = b.member
	for i = 1, b.n do
		local rec = recs[i]
		rec.a = rec.a + 1
		local err = handoff(c, member and member[i] or ids[i], rec,
		    due[i], text[i])
		if err then
			rec.a = rec.a - 1
			return i - 1, err
		end
	end
	return b.n, nil
end

-- Remove the first n events of b, which the sink has taken: from due, and
-- from jobs unless the sink leases them (a record stays while its event is
-- in flight); adopted ones also remembered in gone (pruned of entries older
-- than GONE_MS whenever it is added to, so that it stays small even when
-- no expired notification arrives), and their application keys deleted.
local function remove_claimed(c, b, n)
	if n == 0 then
		return
	end
	local ids = b.id
	redis_call('ZREM', c.due, unpack(ids, 1, n))
	if not c.sink.lease then
		redis_call('HDEL', c.jobs, unpack(ids, 1, n))
	end
	if not (b.adopted or c.watched) then
		return
	end
	local gone = {}
	for i = 1, n do
		if remembered(c, b, i) then
			gone[#gone + 1] = c.now
			gone[#gone + 1] = ids[i]
		end
		if b.appkey[i] then
			-- One DEL per key, as find_app_keys read them.
			redis_call('DEL', b.appkey[i])
		end
	end
	-- Pruned by every call that fires adopted events (checked in
	-- claim_batch), also when it remembers none of them.
	redis_call('ZREMRANGEBYSCORE', c.gone, '-inf', c.now - GONE_MS)
	if #gone > 0 then
		call_list('ZADD', c.gone, gone)
	end
end

--[[
The claim core, shared by every function that fires. The events of batch b
were read in this call and found due at this server's time c.now: that
read (ZRANGE BYSCORE or ZSCORE) is the compare-and-set on id and due time,
since a function runs atomically and no other caller can claim them in
between. claim_batch counts each event's attempt in its record (rec.a),
hands it to the sink (SINKS), and removes it: from due and jobs, its
trigger key, and for an adopted event its gone entry and, when its TTL is
up, its application key. On return b holds the claimed events with their
records, for the caller's reply.

Redis does not roll back a function that fails half-way, so the order of
the writes is what makes a failure lose nothing:
  1. what can be checked is checked first: the gone key's type, whether
     the user may write it (it is not in every function's KEYS), and the
     application keys to delete (find_app_keys);
  2. the trigger keys are deleted: a due event's trigger key has had its
     expiry, its only use, so this loses nothing even if the event is
     then left pending;
  3. the events are handed to the sink in firing order until one is
     refused (a stream whose ids are exhausted refuses XADD);
  4. the events handed off are removed (remove_claimed), in one ZREM and
     one HDEL;
  5. a refusal is raised last, naming the event: it and every event
     after it are still pending, every event before it has fired.

The delivery sinks (http, exec) go through the same steps: their
hand-off (step 3) leases the event into lapse:{NS}:inflight and writes its
record back with the attempt counted, step 4 leaves that record in jobs,
and lapse_sweep answers the claimed records (b.rec) to the reactor. What
happens to a leased event afterwards (ack, retry, extend, release, the
recovery of an expired lease) is fenced by the occurrence's due time and
the attempt: see fenced(). A recurring event will schedule its next
occurrence after step 4 (ZADD due, HSET jobs: after the ZREM, which would
remove it otherwise), in the same call.
]]
-- Count n in field of lapse:{NS}:counts, in the same atomic call as what
-- it counts: a reactor that loses a reply cannot know what that call did,
-- Redis can. A statistic must never fail a call: a counts key the user
-- may not write, or of another type, is left as it is.
local function count(p, field, n)
	if n > 0 then
		redis_pcall('HINCRBY', p .. 'counts', field, decimal(n))
	end
end

-- Count n events fired by the call's path (field expired, timer or sweep).
local function tally(c, n)
	count(c.p, c.via, n)
end

-- The trigger-key horizon of a namespace: ms (0: none) and mark (nil: no
-- promotion yet). Fields that are not whole numbers in range (written
-- behind lapse's back) count as absent.
local function horizon(p)
	local h = read_typed('hash', 'HMGET', p .. 'horizon', 'ms', 'mark')
	return whole(h[1], DURATION_MAX) or HORIZON_MS, whole(h[2], TIME_MAX)
end

--[[
Occurrences under way. With a delivery sink, the occurrence a claim fires
becomes an event of its own, ID<space>DUE (see plan_recurrences), which
lives on while it is delivered: in inflight, then in due for a retry (or
after a requeue), until it is acked or dead. The record of its recurring
event lists their due times in w, so that lapse_cancel and a
lapse_schedule that replaces the recurrence end them, as they end an event
in flight, exactly and without scanning inflight or due. Each claim of an
occurrence adds it; and once w has grown to twice what it held after its
last pruning (v; or to PRUNE_MIN), the claim prunes it: drops those no
longer in inflight or due (two ZMSCOREs of w's members, no record read).
So w holds the occurrences under way and, finished since, at most as many
as were under way at the last pruning (or PRUNE_MIN); and the pruning,
about 2 us an entry, costs a claim O(1) amortized however many are under
way, where pruning at every claim cost it O(w): the retries of an
every-second rule with many attempts can keep 100,000 under way, and each
claim took 220 ms (the record alone, read and written whole, costs about
15). A recurrence that ends by itself deletes its record, and with it w:
its last occurrences go on to their end.
]]
recurring.PRUNE_MIN = 8

-- The member of occurrence due of recurring event id.
local function occurrence(id, due)
	return id .. ' ' .. decimal(due)
end

-- The members of the occurrences of id listed in w.
local function occurrences(id, w)
	local members = {}
	for i, due in ipairs(w) do
		members[i] = occurrence(id, due)
	end
	return members
end

-- redis.call(cmd, key, list...) as call_list, gathering the replies.
local function read_list(cmd, key, list)
	local out = {}
	for i = 1, #list, UNPACK_MAX do
		local last = i + UNPACK_MAX - 1
		local r = redis_call(cmd, key, unpack(list, i,
		    last < #list and last or #list))
		for j = 1, #r do
			out[#out + 1] = r[j]
		end
	end
	return out
end

-- w of recurring event id (record rec) once the claim of its occurrence
-- due (with sink c, a delivery sink) is done: w and this one, or, when w
-- has grown to twice its size at its last pruning (rec.v), the
-- occurrences of w still in inflight or due, then this one, rec.v their
-- number. Read before the claim writes anything.
local function under_way(c, id, rec, due)
	local w = rec.w or {}
	local n = #w
	if n < recurring.PRUNE_MIN or n < 2 * (rec.v or 0) then
		w[n + 1] = due
		return w
	end
	local left = {}
	local members = occurrences(id, w)
	local leased = read_list('ZMSCORE', c.inflight, members)
	local waiting = read_list('ZMSCORE', c.due, members)
	for i = 1, n do
		if (leased[i] or waiting[i]) and w[i] ~= due then
			left[#left + 1] = w[i]
		end
	end
	left[#left + 1] = due
	rec.v = #left
	return left
end

--[[
Ending the occurrences under way of recurring event id (its record's w),
for lapse_cancel and a replacing lapse_schedule: nil when there are none,
else what ends them, checked before the caller's first write: inflight
(read by name) holds a sorted set, and the user may remove its members
and delete their trigger keys (a sweep with a horizon may have made one).
end_occurrences() then removes each from inflight and due, with its
record and trigger key: it gets no more attempts; an attempt under way
may still reach its receiver, and its ack, retry, extend or release is
then stale and changes nothing.
]]
local function occurrences_to_end(p, id, w)
	if not w or #w == 0 then
		return nil
	end
	local e = { inflight = p .. 'inflight', members = occurrences(id, w),
	    triggers = {} }
	check_type(e.inflight, 'zset')
	check_acl('ZREM', e.inflight, e.members[1])
	check_acl('ZREM', p .. 'due', e.members[1])
	check_acl('HDEL', p .. 'jobs', e.members[1])
	for i, m in ipairs(e.members) do
		e.triggers[i] = p .. 't:' .. m
		check_acl('DEL', e.triggers[i])
	end
	return e
end

local function end_occurrences(e, due, jobs)
	if not e then
		return
	end
	call_list('ZREM', e.inflight, e.members)
	call_list('ZREM', due, e.members)
	call_list('HDEL', jobs, e.members)
	-- One DEL per key: on the node a slot migrates to, Redis refuses
	-- a command of several keys when one is absent (an occurrence's
	-- trigger key mostly is), and this comes after the first write.
	for _, key in ipairs(e.triggers) do
		redis_call('DEL', key)
	end
end

-- plan_recurrences of event i of b, a recurrence that fires (hms: the
-- horizon): the steps of the cron engine it took.
function recurring.fire(c, b, i, hms)
	local rec = b.rec[i]
	local id, nxt, missed, cost, why = b.id[i], recur_advance(rec.r,
	    b.due[i], c.now)
	b.nxt[i], b.orec[i] = nxt or false, rec
	b.missed[i], b.wait[i] = missed, why
	if c.sink.lease then
		b.member[i] = id .. ' ' .. b.text[i]
		b.rec[i] = { p = rec.p, u = rec.u, c = rec.c, a = 0, o = id,
		    d = b.due[i], m = missed }
		rec.w = under_way(c, id, rec, b.due[i])
	else
		rec.m = missed
	end
	if nxt and (hms == 0 or nxt <= c.now + hms) then
		check_acl('SET', c.p .. 't:' .. id, '', 'PXAT', nxt)
		b.trig[i] = true
	end
	return cost
end

--[[
What becomes of event i of b, a recurrence that waits for its rule to make
sense (its record's l, see recurring.cron), instead of its firing: nil when it
makes sense again and its next occurrence after l is due, which event i
then fires as (b.due[i] is that occurrence; l and e are cleared); else
{ at = the next occurrence after l, or, while its rule still makes no
sense, now + WAIT_MS with e = why; nil: the recurrence ended
meanwhile (until) }, its record updated.
]]
function recurring.waiting(c, b, i)
	local rec = b.rec[i]
	local r, parsed, z, why = rec.r, nil, nil, nil
	if r.k == 'cron' then
		parsed, z, why = recurring.cron(r)
		if why then
			rec.e = why
			return { at = c.now + recurring.WAIT_MS }
		end
	end
	local t = recur_next(r, rec.l, parsed, z)
	rec.l, rec.e = nil, nil
	if t and t <= c.now then
		b.due[i], b.text[i] = t, decimal(t)
		return nil
	end
	return { at = t }
end

-- The parallel arrays of a batch, as new_batch, claim_check and
-- plan_recurrences make them.
recurring.ARRAYS = { 'id', 'due', 'text', 'rec', 'appkey', 'at', 'nxt',
    'orec', 'trig', 'member', 'missed', 'wait' }

-- Take the events i of b with drop[i] out of it, before the claim writes
-- anything, keeping the others in order.
function recurring.drop(b, drop)
	local k = 0
	for i = 1, b.n do
		if not drop[i] then
			k = k + 1
			for _, name in ipairs(recurring.ARRAYS) do
				local a = b[name]
				if a then
					a[k] = a[i]
				end
			end
		end
	end
	for i = k + 1, b.n do
		for _, name in ipairs(recurring.ARRAYS) do
			local a = b[name]
			if a then
				a[i] = nil
			end
		end
	end
	b.n = k
end

-- Event i of b, a recurrence that waits and fires nothing (see
-- recurring.waiting): out of the batch (drop[i]), put back by put_back()
-- as later says, whatever that does checked now.
function recurring.again(c, b, i, later, hms, drop)
	local id = b.id[i]
	later.id, later.rec = id, b.rec[i]
	-- (ZADD due, HSET and HDEL jobs: checked by plan_recurrences for
	-- every recurrence of the batch.)
	if later.at then
		if not later.rec.l and (hms == 0 or later.at <= c.now + hms) then
			check_acl('SET', c.p .. 't:' .. id, '', 'PXAT',
			    later.at)
			later.trig = true
		end
	else
		check_acl('ZREM', c.due, id)
	end
	b.later = b.later or {}
	b.later[#b.later + 1] = later
	drop[i] = true
end

-- Write what recurring.again planned: each waiting recurrence back in
-- due, at its next look or occurrence, with its record (and trigger key),
-- or gone. Those that still wait (l kept) are counted in
-- recurrence_waits, once a look.
function recurring.put_back(c, b)
	if not b.later or b.put then
		return
	end
	b.put = true
	local waits = 0
	for _, later in ipairs(b.later) do
		if later.rec.l then
			waits = waits + 1
		end
		if later.at then
			redis_call('HSET', c.jobs, later.id,
			    record_pack(later.rec))
			redis_call('ZADD', c.due, later.at, later.id)
			if later.trig then
				redis_call('SET', c.p .. 't:' .. later.id, '',
				    'PXAT', later.at)
			end
		else
			redis_call('ZREM', c.due, later.id)
			redis_call('HDEL', c.jobs, later.id)
		end
	end
	count(c.p, 'recurrence_waits', waits)
end

--[[
The recurring events of b, before the claim writes anything: for each,
the next occurrence (b.nxt[i], false when the recurrence ends or waits),
its rule's record (b.orec[i]), how many occurrences this firing coalesces
(rec.m, in the hand-off) and why the recurrence waits, if it does
(b.wait[i], see recurring.cron); and the trigger keys of the next
occurrences, checked (b.trig[i]: set it). For a delivery sink, the
occurrence fired becomes an event of its own, so that the next one never
waits for a delivery: its member ID<space>DUE (an id holds no space) in
inflight, its record the payload and url, o = ID and d = its due time
(b.member[i], b.rec[i]), while ID itself goes on to its next occurrence,
its record listing the occurrence among those under way (w, above). A
recurrence that waits and whose next occurrence is not due fires nothing:
it leaves b (see recurring.waiting and recurring.again).
]]
local function plan_recurrences(c, b)
	if b.planned then
		return
	end
	b.planned = true
	local hms, steps, drop, cut = nil, 0, nil, nil
	for i = 1, b.n do
		local rec = b.rec[i]
		if steps >= RECUR_STEPS_MAX and c.may_cut then
			cut = i - 1
			break
		end
		if rec.r then
			if not b.nxt then
				b.nxt, b.orec, b.trig, b.member = {}, {}, {}, {}
				b.missed, b.wait = {}, {}
				hms = horizon(c.p)
				-- restore_recurrences' commands, run after the
				-- hand-off: refused there, the recurrence would
				-- be left out of due, never to fire again.
				check_acl('ZADD', c.due, '0', 'x')
				check_acl('HSET', c.jobs, 'x', 'x')
				check_acl('HDEL', c.jobs, 'x')
			end
			local later = rec.l and recurring.waiting(c, b, i)
			if later then
				drop = drop or {}
				recurring.again(c, b, i, later, hms, drop)
				steps = steps + 1
			else
				steps = steps + recurring.fire(c, b, i, hms)
			end
		end
	end
	if cut then
		batch_cut(b, cut)
	end
	if drop then
		recurring.drop(b, drop)
	end
end

-- After the first n events of b are removed: the recurring ones among
-- them back in due at their next occurrence, with their rule's record
-- (attempt 0) and trigger key; when their rule makes no sense here,
-- waiting (see recurring.cron) with l and e, looked at again a minute from
-- now; or, when their recurrence has ended, gone. The occurrences
-- their firings coalesced are counted (missed), and so are those that
-- start waiting (recurrence_waits).
local function restore_recurrences(c, b, n)
	if not b.nxt then
		return
	end
	local missed, waits = 0, 0
	for i = 1, n do
		local rec, nxt, id = b.orec[i], b.nxt[i], b.id[i]
		missed = missed + (b.missed[i] or 0)
		if rec and b.wait[i] then
			waits = waits + 1
			rec.a, rec.m, rec.d, rec.e = 0, nil, nil, b.wait[i]
			rec.l = b.due[i]
			redis_call('HSET', c.jobs, id, record_pack(rec))
			redis_call('ZADD', c.due, c.now + recurring.WAIT_MS, id)
		elseif rec and nxt then
			rec.a, rec.m, rec.d, rec.e = 0, nil, nil, nil
			redis_call('HSET', c.jobs, id, record_pack(rec))
			redis_call('ZADD', c.due, nxt, id)
			if b.trig[i] then
				redis_call('SET', c.p .. 't:' .. id, '', 'PXAT',
				    nxt)
			end
		elseif rec and c.sink.lease then
			redis_call('HDEL', c.jobs, id)
		end
	end
	count(c.p, 'missed', missed)
	count(c.p, 'recurrence_waits', waits)
end

-- Step 1 of claim_batch: what its writes need, read and checked. A
-- delivery sweep that acks runs it before its acks' writes.
local function claim_check(c, b)
	if b.n == 0 or b.checked then
		return
	end
	b.checked = true
	-- The commands of steps 3 and 4, on keys FCALL has checked but not
	-- with them: a user may run FCALL on these keys and not ZREM or HDEL
	-- (a stream's XADD, and an inflight's ZADD and HSET, are run
	-- protected: a refusal there stops the claim cleanly).
	check_acl('ZREM', c.due, b.id[1])
	if not c.sink.lease then
		check_acl('HDEL', c.jobs, b.id[1])
	end
	if b.adopted or c.watched then
		check_type(c.gone, 'zset')
		check_acl('ZADD', c.gone, c.now, b.id[1])
		check_acl('ZREMRANGEBYSCORE', c.gone, '-inf', c.now - GONE_MS)
		find_app_keys(b)
	end
	plan_recurrences(c, b)
end

local function claim_batch(c, b)
	if b.n == 0 and not b.later then
		return b
	end
	claim_check(c, b)
	if b.n > 0 then
		delete_triggers(c, b)
	end
	-- Recurrences that wait fire nothing, and may leave b empty.
	recurring.put_back(c, b)
	if b.n == 0 then
		return b
	end
	local n, err = handoff_all(c, b)
	remove_claimed(c, b, n)
	restore_recurrences(c, b, n)
	if n > 0 then
		tally(c, n)
	end
	if err then
		fail('%s refused event "%s" (%d fired before it): %s',
		    show(c.skey), show(b.id[n + 1]), n, (err:gsub('^ERR ', '')))
	end
	return b
end

-- Publish the wake channel: a new earliest event, due at due. A caller
-- who may not publish there (Redis 7's acl-pubsub-default resetchannels,
-- for one) publishes nothing: the event is written, and the reactors'
-- timers and sweeps find it; the wake only makes that sooner.
local function wake(p, due)
	local channel, message = p .. 'wake', decimal(due)
	if acl_check('PUBLISH', channel, message) then
		redis_call('PUBLISH', channel, message)
	end
end

-- Publish the wake channel if id, due at due, is now the earliest event.
-- It is asked after the call's writes: a caller who may not ZRANGE the
-- due ZSET is not asked, and publishes nothing (as wake() when it may not
-- publish), where the refused read used to fail the call after it wrote.
local function wake_if_first(p, id, due)
	local key = p .. 'due'
	if acl_check('ZRANGE', key, '0', '0') and
	    redis_call('ZRANGE', key, '0', '0')[1] == id then
		wake(p, due)
	end
end

-- The promotion a sweep makes after it fires: the trigger keys of the
-- events that came within the horizon since the last one (keys and their
-- dues), and the new mark; nil when none is due. Read and checked before
-- the sweep writes anything (the keys are not in KEYS), written by
-- promote() after.
local function promotion(c, ms, mark)
	if ms == 0 then
		return nil
	end
	mark = mark or c.now
	local upto = c.now + ms
	if upto - mark < PROMOTE_STEP_MS then
		return nil
	end
	local r = redis_call('ZRANGE', c.due, '(' .. decimal(mark), upto,
	    'BYSCORE', 'LIMIT', 0, PROMOTE_MAX, 'WITHSCORES')
	local n = #r / 2
	local plan = { keys = {}, dues = {} }
	for i = 1, n do
		local due = tonumber(r[2 * i])
		-- Only whole numbers of ms make a trigger key (PXAT): a score
		-- written behind lapse's back must not fail the SET after the
		-- sweep has fired; such an event fires by timer and sweep.
		if due > c.now and due % 1 == 0 then
			local key = c.p .. 't:' .. r[2 * i - 1]
			check_acl('SET', key, '', 'PXAT', due)
			plan.keys[#plan.keys + 1] = key
			plan.dues[#plan.dues + 1] = due
		end
	end
	if n == PROMOTE_MAX then
		-- More may share the last score: take it again next time,
		-- unless the whole batch had one score (then move on).
		local first, last = tonumber(r[2]), floor(tonumber(r[2 * n]))
		upto = last > first and last - 1 or last
	end
	plan.horizon, plan.mark = c.p .. 'horizon', upto
	check_acl('HSET', plan.horizon, 'mark', upto)
	return plan
end

local function promote(plan)
	if plan == nil then
		return
	end
	for i, key in ipairs(plan.keys) do
		redis_call('SET', key, '', 'PXAT', plan.dues[i])
	end
	redis_call('HSET', plan.horizon, 'mark', plan.mark)
end

-- lapse_schedule's time, checked: MS from now (how = in) or since the
-- epoch (at).
local function schedule_time(how, ms)
	if how == 'in' then
		local n = whole(ms, DURATION_MAX)
		if n == nil or n == 0 then
			fail('bad delay "%s": must be 1 to %d milliseconds',
			    show(ms or ''), DURATION_MAX)
		end
		return n
	elseif how == 'at' then
		local n = whole(ms, TIME_MAX)
		if n == nil then
			fail('bad time "%s": must be 0 to %d milliseconds ' ..
			    'since the epoch', show(ms or ''), TIME_MAX)
		end
		return n
	elseif how == 'cron' then
		return ms -- checked with its dialect (schedule_rule)
	elseif how == 'every' then
		local n = whole(ms, DURATION_MAX)
		if n == nil or n == 0 then
			fail('bad period "%s": must be 1 to %d milliseconds',
			    show(ms or ''), DURATION_MAX)
		end
		return n
	end
	fail('bad schedule "%s" (use in MS, at MS, every MS or cron EXPR)',
	    show(how or ''))
end

-- A time option's value: 0 .. TIME_MAX ms since the epoch.
local function option_time(name, v)
	local n = whole(v, TIME_MAX)
	if n == nil then
		fail('bad %s "%s": must be 0 to %d milliseconds since the epoch',
		    name, show(v or ''), TIME_MAX)
	end
	return n
end

-- lapse_schedule's options after PAYLOAD, checked: nx, maxpayload BYTES,
-- url URL, and into o.from and o.until, from MS and until MS.
local function schedule_options(args, o)
	local nx, maxpayload, url, i = false, PAYLOAD_MAX_DEFAULT, nil, 6
	local seen = {}
	while args[i] ~= nil do
		local opt = args[i]
		if seen[opt] then
			fail('option "%s" given twice', show(opt))
		end
		seen[opt] = true
		if opt == 'from' or opt == 'until' then
			o[opt] = option_time(opt, args[i + 1])
			i = i + 2
		elseif opt == 'tz' or opt == 'dialect' then
			if args[i + 1] == nil then
				fail('missing value after "%s"', opt)
			end
			o[opt] = args[i + 1]
			i = i + 2
		elseif opt == 'nx' then
			nx = true
			i = i + 1
		elseif opt == 'maxpayload' then
			maxpayload = whole(args[i + 1], 1e15)
			if maxpayload == nil then
				fail('bad maxpayload "%s"',
				    show(args[i + 1] or ''))
			end
			i = i + 2
		elseif opt == 'url' then
			url = args[i + 1]
			local why = bad_url(url)
			if why then
				fail('%s', why)
			end
			i = i + 2
		else
			fail('unknown option "%s" (use nx, maxpayload, url, ' ..
			    'from, until, tz or dialect)', show(opt))
		end
	end
	return nx, maxpayload, url
end

-- lapse_schedule's cron EXPR with its options o (tz, dialect, from,
-- until), checked as lapse_next checks them: the rule for the record and
-- the first occurrence at or after now.
local function schedule_cron(expr, o, now)
	local d = o.dialect
	if d ~= nil and d ~= 'quartz' then
		fail('bad dialect "%s" (use quartz)', show(d))
	end
	local c = cron.parse(expr, d == 'quartz')
	local zone = o.tz or 'UTC'
	local z = recurrence.zone(zone)
	recurrence.check_window(o.from, o['until'])
	local rule = { k = 'cron', x = expr, q = d == 'quartz' or nil, z = zone,
	    f = o.from, u = o['until'] }
	local due = recur_next(rule, now - 1, c, z)
	if due == nil then
		if rule.u then
			fail('empty window: no occurrence of "%s" from %s ' ..
			    'until %s', show(expr), decimal(rule.f or now),
			    decimal(rule.u))
		end
		fail('no occurrence of "%s" after now', show(expr))
	end
	return rule, due
end

-- The in-flight state of id, which lapse_schedule replaces: nil when it
-- is not in flight, else { key = lapse:{NS}:inflight, read by name like
-- the horizon; d = the due time of the occurrence under way (its lease
-- deadline if its record lacks one) }.
local function schedule_inflight(p, jobs, id)
	local inflight = p .. 'inflight'
	local lease = read_typed('zset', 'ZSCORE', inflight, id)
	if not lease then
		return nil
	end
	local rec = record_unpack(read_typed('hash', 'HGET', jobs, id))
	return { key = inflight, d = rec.d or (due_of(lease)), a = rec.a }
end

--[[
lapse_schedule: schedule an event, or reschedule it if the id exists.

KEYS: lapse:{NS}:due lapse:{NS}:jobs lapse:{NS}:t:<id>
ARGV: NS ID (in MS | at MS | every MS | cron EXPR) PAYLOAD [nx]
      [maxpayload BYTES] [url URL] [from MS] [until MS] [tz ZONE]
      [dialect quartz]
  in MS   due MS milliseconds from now (1 .. 100 years)
  at MS   due at MS milliseconds since the epoch (0 .. 9999-12-31)
  every MS  a recurring event: an occurrence every MS milliseconds (1 ..
          100 years) from its start (from MS, else now), up to until MS
          when given; due is the first occurrence at or after now (a
          window with none is refused: "empty window"). Scheduling the
          same recurrence again (every, from and until all the same)
          keeps its next occurrence: status 0 when the payload and url
          are the same too, else 2 with them replaced. Any other schedule
          replaces it. Each occurrence fires as an event due at its time;
          the claim that fires it schedules the next in the same call;
          occurrences missed while nothing fired are coalesced into the
          next firing (its missed field counts them)
  cron EXPR  a recurring event whose occurrences are the matches of the
          cron expression EXPR (5, 6 or 7 fields, as lapse_next reads
          it) in the zone tz ZONE (default UTC; dialect quartz: Quartz's
          numbers for the days of the week), from from MS up to until MS
          when given; validated as lapse_next validates it, and otherwise
          as every (the same rule again keeps its next occurrence; the
          missed ones counted, at most 1,000 per firing)
  nx      leave an existing event as it is
  maxpayload BYTES   the payload limit (default 1 MiB)
  url URL  the event's own URL, for sink http (1 .. 2048 bytes, http://
           or https://, no byte below 0x21 nor 0x7f); the reactor delivers
           to it only when it starts with one of the namespace's allow-url
Reply: { due, status } where status is 1 scheduled (new), 2 rescheduled
(replaced), 0 not changed (nx and the event exists; due is the existing
one's: for an event in flight, the due time of the occurrence under way).
An event in flight (sinks http and exec) is replaced too: it leaves
lapse:{NS}:inflight (read and written by name, like the horizon), so the
attempt under way is stale (its ack changes nothing), and the new record
starts a new occurrence (no d, attempt count 0), but at the due time of
the occurrence under way: that is the same occurrence for receivers (the
same idempotency key), and its attempts go on counting (d and a kept), so
that the attempt under way stays stale. Likewise a recurring
event replaced (by another recurrence, or in/at) ends its occurrences
under way (ID<space>DUE, in flight or waiting in due for a retry; see
occurrences_to_end): they get no more attempts. The same recurrence
again leaves them alone.
]]
local function schedule(keys, args)
	local ns, id, how, ms, payload = args[1], args[2], args[3], args[4],
	    args[5]
	check_ns(ns)
	check_id(id)
	local p = prefix(ns)
	check_keys(keys, { p .. 'due', p .. 'jobs', p .. 't:' .. id })
	local n = schedule_time(how, ms)
	if payload == nil then
		fail('missing payload (pass an empty string for none)')
	end
	local o = {}
	local nx, maxpayload, url = schedule_options(args, o)
	if how ~= 'every' and how ~= 'cron' and (o.from or o['until']) then
		fail('from and until are for recurring events (every MS, ' ..
		    'cron EXPR)')
	end
	if how ~= 'cron' and (o.tz or o.dialect) then
		fail('%s applies to cron only', o.tz and 'tz' or 'dialect')
	end
	-- Each key's type is checked by the first command that touches it,
	-- and every one is checked before the first write: ZSCORE reads due
	-- (and inflight), HMGET the horizon, and HSET, the first write, fails
	-- on a jobs key of another type before it changes anything.
	local old = read_typed('zset', 'ZSCORE', keys[1], id)
	local flying = not old and schedule_inflight(p, keys[2], id)
	local hms = horizon(p)
	if #payload > maxpayload then
		fail('payload too large: %d bytes (max-payload is %d)',
		    #payload, maxpayload)
	end

	local now = now_ms()
	local due = how == 'in' and now + n or n
	local rule
	if how == 'every' then
		rule = { k = 'every', e = n, s = o.from or now, f = o.from,
		    u = o['until'] }
		due = recur_next(rule, now - 1)
		if due == nil then
			fail('empty window: the first occurrence from %s would ' ..
			    'come after until %s', decimal(rule.s),
			    decimal(rule.u))
		end
	elseif how == 'cron' then
		rule, due = schedule_cron(n, o, now)
	end
	if nx and (old or flying) then
		read_typed('hash', 'HEXISTS', keys[2], id)
		return { old and (due_of(old)) or flying.d, 0 }
	end
	local rec = old and record_unpack(read_typed('hash', 'HGET', keys[2],
	    id))
	if rule and old then
		-- The same recurrence again ("ensure" at every start): its
		-- next occurrence is kept, and its payload and url updated;
		-- its occurrences under way go on.
		if rec.r and recur_same(rec.r, rule) then
			if rec.p == payload and rec.u == url then
				return { (due_of(old)), 0 }
			end
			rec.p, rec.u = payload, url
			redis_call('HSET', keys[2], id, record_pack(rec))
			return { (due_of(old)), 2 }
		end
	end
	if flying then
		-- Not in KEYS: checked before the first write.
		check_acl('ZREM', flying.key, id)
	end
	-- The commands after the first write (HSET), on keys FCALL has
	-- checked but not with them: the trigger key's SET or DEL, the one
	-- that runs.
	local trigger = due > now and (hms == 0 or due <= now + hms)
	check_acl('ZADD', keys[1], due, id)
	if trigger then
		check_acl('SET', keys[3], '', 'PXAT', due)
	else
		check_acl('DEL', keys[3])
	end
	-- A recurrence replaced ends its occurrences under way, as the
	-- event in flight is replaced.
	local ending = rec and occurrences_to_end(p, id, rec.w)
	-- At the due time of the occurrence in flight, it is that occurrence
	-- again (its idempotency key, NS/id/due, is the same): its attempts
	-- go on counting, or the next lease would carry the fence of the
	-- attempt under way, whose late ack would end the new one.
	local again = flying and not rule and due == flying.d
	local r = redis_pcall('HSET', keys[2], id,
	    record_pack({ p = payload, a = again and flying.a or 0, c = now,
	    u = url, r = rule, d = again and due or nil }))
	if type(r) == 'table' and r.err then
		check_type(keys[2], 'hash')
		error(r)
	end
	if flying then
		redis_call('ZREM', flying.key, id)
	end
	end_occurrences(ending, keys[1], keys[2])
	redis_call('ZADD', keys[1], due, id)
	if trigger then
		redis_call('SET', keys[3], '', 'PXAT', due)
	else
		redis_call('DEL', keys[3])
	end
	wake_if_first(p, id, due)
	return { due, (old or flying) and 2 or 1 }
end

--[[
What cancelling adopted event rec (due at due) does with its application
key, read before the first write: { del = the key is still this
occurrence's (its PEXPIRETIME is the due time): delete it, which publishes
del, not expired; remember = its expired notification may be on its way
(the key is gone, or out of reach): the id goes to gone, so that it fires
nothing }. A key set anew is another occurrence and is left alone.
]]
local function cancel_key(p, rec, due, now)
	-- A key out of reach refuses the cancel: left there, it would fire
	-- the cancelled event when it expires.
	check_acl('DEL', rec.k)
	local at = redis_pcall('PEXPIRETIME', rec.k)
	if type(at) ~= 'number' then
		error(at)
	end
	if at == due then
		return { del = true }
	end
	if at ~= -2 then
		return {}
	end
	check_type(p .. 'gone', 'zset')
	check_acl('ZADD', p .. 'gone', now, rec.k)
	check_acl('ZREMRANGEBYSCORE', p .. 'gone', '-inf', now - GONE_MS)
	return { remember = true }
end

-- lapse_cancel of an event that is not pending: 1 when it was in flight
-- (now out of inflight, its record and trigger key deleted), else 0.
local function cancel_inflight(p, keys, id)
	local inflight = p .. 'inflight'
	if not read_typed('zset', 'ZSCORE', inflight, id) then
		return 0
	end
	check_acl('ZREM', inflight, id)
	check_acl('HDEL', keys[2], id)
	check_acl('DEL', keys[3])
	redis_call('ZREM', inflight, id)
	redis_call('HDEL', keys[2], id)
	redis_call('DEL', keys[3])
	return 1
end

--[[
lapse_cancel: remove an event so that it never fires.

KEYS: lapse:{NS}:due lapse:{NS}:jobs lapse:{NS}:t:<id>
ARGV: NS ID
Reply: 1 cancelled, 0 no such event (already fired, cancelled, or never
scheduled). Cancelling an adopted event also deletes the application's key
while it is the key of that occurrence (DEL: no `expired` follows); if the
key has expired already, its notification finds the id in gone and fires
nothing (see cancel_key). Cancelling an event in flight (sinks http and
exec) removes it from lapse:{NS}:inflight (read and written by name, like
the horizon) and deletes its record: it gets no more attempts, but the
attempt under way is not stopped and may still reach its receiver (its
ack, retry or extend is then stale and changes nothing). Cancelling a
recurring event does the same to its occurrences under way (ID<space>DUE,
in flight or waiting in due for a retry; see occurrences_to_end), with
their trigger keys.
]]
local function cancel(keys, args)
	local ns, id = args[1], args[2]
	check_ns(ns)
	check_id(id)
	local p = prefix(ns)
	check_keys(keys, { p .. 'due', p .. 'jobs', p .. 't:' .. id })
	check_type(keys[2], 'hash')
	local score = read_typed('zset', 'ZSCORE', keys[1], id)
	if not score then
		return cancel_inflight(p, keys, id)
	end
	local rec = record_unpack(redis_call('HGET', keys[2], id))
	local now, key = now_ms(), {}
	if rec.k then
		key = cancel_key(p, rec, due_of(score), now)
	end
	local ending = occurrences_to_end(p, id, rec.w)
	check_acl('HDEL', keys[2], id)
	check_acl('DEL', keys[3])
	redis_call('ZREM', keys[1], id)
	redis_call('HDEL', keys[2], id)
	redis_call('DEL', keys[3])
	end_occurrences(ending, keys[1], keys[2])
	if key.del then
		redis_call('DEL', rec.k)
	elseif key.remember then
		redis_call('ZREMRANGEBYSCORE', p .. 'gone', '-inf', now - GONE_MS)
		redis_call('ZADD', p .. 'gone', now, id)
	end
	return 1
end

--[[
lapse_claim: fire one event if it is due: compare-and-set on its id and,
if given, its due time; hand it off to the sink in the same call.

KEYS: lapse:{NS}:due lapse:{NS}:jobs lapse:{NS}:t:<id> SINK-KEY
  SINK-KEY is lapse:{NS}:fired for sink stream, lapse:{NS}:ready for list
ARGV: NS ID VIA SINK MAXLEN [DUE]
  VIA     expired | timer | sweep: the path that claims
  SINK    stream | list
  MAXLEN  approximate stream trim length; 0 never trims
  DUE     claim only if the event is still due at exactly this time
Reply: { claimed, next, now, dues } where claimed is 1 when this call
fired the event, 0 when it was absent, not yet due, or due at another
time; next is the earliest due time left in the namespace, -1 when none;
now is this server's time of the call; dues is the array of the due times
(ms) of the events this call fired, { due } or empty, so that the caller
can count their lateness (now - due).
]]
local function claim(keys, args)
	local ns, id, via, sink, maxlen, want = args[1], args[2], args[3],
	    args[4], args[5], args[6]
	check_ns(ns)
	check_id(id)
	check_via(via)
	local c = firing(ns, via, sink, maxlen)
	check_not_leasing(c, sink)
	check_keys(keys, { c.due, c.jobs, c.p .. 't:' .. id, c.skey })
	check_claim_keys(c)
	-- The reply's next due time (head) is read after the writes: a user
	-- who may not ZRANGE had the event fired and the call fail.
	check_acl('ZRANGE', c.due, '0', '0', 'WITHSCORES')
	local wanted
	if want ~= nil and want ~= '' then
		wanted = whole(want, TIME_MAX)
		if wanted == nil then
			fail('bad due "%s"', show(want))
		end
	end

	start(c)
	local b = new_batch()
	local score = redis_call('ZSCORE', c.due, id)
	if score then
		local due = tonumber(score)
		if due <= c.now and (not wanted or wanted == due) then
			batch_add(b, id, score,
			    record_unpack(redis_call('HGET', c.jobs, id)))
			claim_batch(c, b)
		end
	end
	return { b.n, head(c.due), c.now, b.due }
end

-- Read the records of ids[from .. to] into b (due times from the ZRANGE
-- reply r), up to the first whose bytes bring the total to maxbytes.
-- Returns how many it took and the total.
local function take_records(c, b, r, from, to, bytes, maxbytes)
	local ids, due, text, recs = b.id, b.due, b.text, b.rec
	local weight = c.sink.weight
	local raws
	if from == 1 then
		-- The first read checks the jobs key's type (read_typed).
		raws = read_typed('hash', 'HMGET', c.jobs, unpack(ids, 1, to))
	else
		raws = redis_call('HMGET', c.jobs, unpack(ids, from, to))
	end
	for i = from, to do
		local raw, score = raws[i - from + 1], r[2 * i]
		local rec, d = record_unpack(raw), tonumber(score)
		-- batch_add() inlined, due_of()'s common case too: this loop
		-- is the sweep's hot path.
		if d > 0 and d <= TIME_MAX and d % 1 == 0 then
			due[i], text[i] = d, score
		else
			due[i], text[i] = due_of(score)
		end
		recs[i] = rec
		if rec.k then
			b.adopted = true
		end
		bytes = bytes + (raw and #raw or 0) * weight
		if bytes >= maxbytes then
			return i, bytes
		end
	end
	return to, bytes
end

--[[
The due events a sweep takes: earliest first, at most max, and no more
once their records reach maxbytes (at least one). Records are read in
chunks of as many as the rest of the budget holds at the default
max-payload each (RECORD_BYTES), at least one: a sweep reads no record it
will not fire unless records are larger than that (or, for a sink whose
bytes weigh more than one, a few it leaves for the next call: reading is
cheap, encoding is not), and records are still read many to an HMGET
while the budget is far from spent.
]]
local function take_due(c, max, maxbytes)
	local r = read_typed('zset', 'ZRANGE', c.due, '-inf', c.fired,
	    'BYSCORE', 'LIMIT', '0', decimal(max), 'WITHSCORES')
	local b = new_batch()
	local count = #r / 2
	if count == 0 then
		-- A jobs key of the wrong type is refused whether or not
		-- anything is due.
		check_type(c.jobs, 'hash')
		return b
	end
	local ids = b.id
	for i = 1, count do
		ids[i] = r[2 * i - 1]
	end
	local n, bytes = 0, 0
	repeat
		local chunk = (maxbytes - bytes) / RECORD_BYTES
		chunk = chunk - chunk % 1
		local to = n + (chunk < 1 and 1 or chunk)
		n, bytes = take_records(c, b, r, n + 1,
		    to < count and to or count, bytes, maxbytes)
	until n == count or bytes >= maxbytes
	for i = n + 1, count do
		ids[i] = nil
	end
	b.n, b.bytes = n, bytes
	return b
end

-- lapse_sweep's BATCH, checked: at least min (1; 0 for a delivery sink,
-- whose sweeps may only recover leases).
local function sweep_batch(batch, min)
	local n = whole(batch, BATCH_MAX)
	if n == nil or n < min then
		fail('bad batch "%s": must be %d to %d', show(batch or ''), min,
		    BATCH_MAX)
	end
	return n
end

local function sweep_maxbytes(maxbytes)
	local m = whole(maxbytes, 1e15)
	if m == nil or m == 0 then
		fail('bad maxbytes "%s": must be 1 to %d', show(maxbytes or ''),
		    1e15)
	end
	return m
end

local function check_lease(lease)
	local n = whole(lease, LEASE_MAX)
	if n == nil or n == 0 then
		fail('bad lease "%s": must be 1 to %d milliseconds',
		    show(lease or ''), LEASE_MAX)
	end
	return n
end

local function check_maxattempts(max)
	local n = whole(max, ATTEMPTS_MAX)
	if n == nil or n == 0 then
		fail('bad max-attempts "%s": must be 1 to %d', show(max or ''),
		    ATTEMPTS_MAX)
	end
	return n
end

-- An error to record (e, and the dead entry's error): at most ERROR_MAX
-- bytes, cut before a UTF-8 sequence that would not fit whole, so that a
-- text error stays text.
local function cut_error(e)
	if #e <= ERROR_MAX then
		return e
	end
	local cut, after = ERROR_MAX, byte(e, ERROR_MAX + 1)
	if after >= 0x80 and after < 0xc0 then
		local j = cut
		while j > cut - 3 and byte(e, j) >= 0x80 and
		    byte(e, j) < 0xc0 do
			j = j - 1
		end
		if byte(e, j) >= 0xc0 then
			cut = j - 1
		end
	end
	return e:sub(1, cut)
end

--[[
The dead entry of event id, in flight with record rec, added to the dead
stream c.dead (trimmed to about c.smax entries when set) with the error
err: fields id, payload, due (the occurrence's, d), attempts, error,
failed (now) and url when it has one. It is the one write of a burial
that may be refused (a stream whose entry ids are exhausted): run
protected, it returns nil, or the refusal as a message naming the event;
the caller writes it before anything else, and then removes the event
from inflight and jobs (ZREM, HDEL).
]]
local function bury(c, id, rec, err)
	local f = { 'id', rec.o or id, 'payload', rec.p, 'due',
	    decimal(rec.d or 0),
	    'attempts', decimal(rec.a), 'error', err, 'failed', c.fired }
	if rec.u then
		f[#f + 1], f[#f + 2] = 'url', rec.u
	end
	if rec.o then
		f[#f + 1], f[#f + 2] = 'occurrence', id
	end
	local r
	if c.smax then
		r = redis_pcall('XADD', c.dead, 'MAXLEN', '~', c.smax, '*',
		    unpack(f))
	else
		r = redis_pcall('XADD', c.dead, '*', unpack(f))
	end
	if type(r) == 'table' and r.err then
		return format('%s refused the dead entry of "%s": %s',
		    show(c.dead), show(id), (r.err:gsub('^ERR ', '')))
	end
	return nil
end

--[[
Delivery: what a reactor does with the events a sweep leased to it. Each
call names the attempt it speaks for by (ID, DUE, ATTEMPT), the
occurrence's due time (d) and the attempt number (a) the sweep answered,
and acts only while that attempt is still the event's current one: the id
in flight and its record with d == DUE and a == ATTEMPT. Otherwise (its
lease expired and was recovered, it was released, rescheduled, cancelled,
acked or retried already) the call is stale: it changes nothing and
answers 0, so that a reactor that was slow, or lost a reply, never acts
for an attempt that is over.
]]

-- The keys of namespace ns that the delivery functions use.
local function delivering(ns)
	check_ns(ns)
	local p = prefix(ns)
	return { ns = ns, p = p, due = p .. 'due', jobs = p .. 'jobs',
	    inflight = p .. 'inflight', dead = p .. 'dead' }
end

-- Refuse a call without exactly n arguments; shape names them.
local function check_nargs(args, n, shape)
	if #args ~= n then
		fail('expected %d argument%s (%s), got %d', n,
		    n == 1 and '' or 's', shape, #args)
	end
end

-- The fence ID DUE ATTEMPT at args[i], checked: id, due and attempt. ID
-- is the member in inflight: an event's id or, for an occurrence of a
-- recurring event, ID<space>DUE (see plan_recurrences). An id with none
-- of the bytes bad_id() refuses is one, at the cost of one find.
local function check_fence(args, i)
	local id, due, attempt = args[i], args[i + 1], args[i + 2]
	if type(id) ~= 'string' or id == '' or #id > ID_MAX or
	    find(id, '[%z\1-\32\127]') then
		local own = type(id) == 'string' and match(id, '^([^ ]+) %d+$')
		if not own or #id > ID_MAX + 17 or bad_id(own) then
			check_id(id)
		end
	end
	local d = whole(due, TIME_MAX)
	if d == nil then
		fail('bad due "%s": must be 0 to %d milliseconds since the ' ..
		    'epoch', show(due or ''), TIME_MAX)
	end
	local a = whole(attempt, ATTEMPT_MAX)
	if a == nil or a == 0 then
		fail('bad attempt "%s": must be 1 to %d', show(attempt or ''),
		    ATTEMPT_MAX)
	end
	return id, d, a
end

-- The fences of args[from ..]: 1 to TRIPLES_MAX triples, all checked,
-- as three arrays (a table per fence would cost an allocation each):
-- ids, dues and attempts. after names the argument before them.
local function check_fences(args, from, after)
	local n = #args - from + 1
	if n < 3 or n % 3 ~= 0 or n > 3 * TRIPLES_MAX then
		fail('expected 1 to %d triples ID DUE ATTEMPT, got %d ' ..
		    'arguments after %s', TRIPLES_MAX, n, after)
	end
	local ids, dues, attempts, k = {}, {}, {}, 0
	for i = from, #args, 3 do
		k = k + 1
		ids[k], dues[k], attempts[k] = check_fence(args, i)
	end
	return ids, dues, attempts
end

-- The record of the event of fence (id, due, attempt) if that is its
-- current attempt, nil if the call is stale. Both reads always run, each
-- checking its key's type (read_typed), so that a key of another type is
-- refused whatever the event's state, before the first write.
local function fenced(c, id, due, attempt)
	local lease = read_typed('zset', 'ZSCORE', c.inflight, id)
	local raw = read_typed('hash', 'HGET', c.jobs, id)
	if not lease or not raw then
		return nil
	end
	local rec = record_unpack(raw)
	if rec.d ~= due or rec.a ~= attempt then
		return nil
	end
	return rec
end

-- Whether raw, a record, is of the attempt (due, attempt): its d and a
-- compared as they are, without the rest of record_unpack(), which reads
-- a d or an a of the wrong type as absent or 0, never equal to a checked
-- fence's.
local function fence_holds(raw, due, attempt)
	local ok, rec = pcall(msgpack_unpack, raw)
	return ok and type(rec) == 'table' and rec.d == due and
	    rec.a == attempt
end

--[[
The fences of want (with dues and attempts) that hold, each once, in an
array that also maps each id to true: two reads for all of them (as
fenced() makes for one), both always run, so that a key of another type
is refused. lapse_ack and a lapse_sweep that acks read them so before
their first write, and then write them with acks_write().
]]
local function acks_holding(c, want, dues, attempts)
	local leases = read_typed('zset', 'ZMSCORE', c.inflight, unpack(want))
	local raws = read_typed('hash', 'HMGET', c.jobs, unpack(want))
	local ids, n = {}, 0
	for i = 1, #want do
		local id, raw = want[i], raws[i]
		if leases[i] and raw and not ids[id] and
		    fence_holds(raw, dues[i], attempts[i]) then
			n = n + 1
			ids[n] = id
			ids[id] = true
		end
	end
	return ids
end

-- The commands of an ack (acks_write), and of a retry or a recovered
-- lease (back to due with its record rewritten, or to dead), checked
-- before a call's first write: FCALL checks the keys of KEYS, not the
-- commands run on them, and Redis does not undo what a refused call wrote.
local function check_ack_acl(c)
	check_acl('ZREM', c.inflight, 'x')
	check_acl('HDEL', c.jobs, 'x')
end

local function check_retry_acl(c)
	check_ack_acl(c)
	check_acl('ZADD', c.due, '0', 'x')
	check_acl('HSET', c.jobs, 'x', 'x')
	check_acl('XADD', c.dead, '*', 'x', 'x')
end

-- The acks of ids (acks_holding's): out of inflight and jobs, counted in
-- acked. Returns how many.
local function acks_write(c, ids)
	local n = #ids
	if n == 0 then
		return 0
	end
	call_list('ZREM', c.inflight, ids)
	call_list('HDEL', c.jobs, ids)
	count(c.p, 'acked', n)
	return n
end

-- The leases a delivery sweep recovers: ids in flight whose deadline is
-- not after now, earliest first, at most RECOVER_MAX, and no more once
-- their records reach budget bytes (at least one: a sweep recovers what
-- it reads, and rewrites each record it reads, in jobs or in dead), and
-- their raw records (false: none), but for the ids the same call acks
-- (acked[id]: an attempt that succeeded is done, however late its ack).
-- Records are read in chunks as take_due reads them. taken[i]: leased
-- again by this call.
local function expired_leases(c, acked, budget)
	local r = redis_call('ZRANGE', c.inflight, '-inf', c.fired,
	    'BYSCORE', 'LIMIT', '0', RECOVER_MAX_TEXT, 'WITHSCORES')
	local ids, scores, k = {}, {}, 0
	for i = 1, #r / 2 do
		local id = r[2 * i - 1]
		if not acked[id] then
			k = k + 1
			ids[k], scores[k] = id, r[2 * i]
		end
	end
	local lost = { id = ids, score = scores, raw = {}, rec = {},
	    taken = {} }
	local raw, n, bytes = lost.raw, 0, 0
	while n < k and (n == 0 or bytes < budget) do
		local chunk = (budget - bytes) / RECORD_BYTES
		chunk = chunk - chunk % 1
		local to = n + (chunk < 1 and 1 or chunk)
		to = to < k and to or k
		local from = n + 1
		local got = redis_call('HMGET', c.jobs, unpack(ids, from, to))
		for i = from, to do
			raw[i] = got[i - from + 1]
			if raw[i] then
				lost.rec[i] = record_unpack(raw[i])
				bytes = bytes + #raw[i]
			end
			n = i
			if bytes >= budget then
				break
			end
		end
	end
	for i = n + 1, k do
		ids[i], scores[i] = nil, nil
	end
	return lost
end

--[[
Add to b the recovered events that may be leased again at once: each is
back in due at now, and so comes after the events b holds (due before or
at now), within the same BATCH and MAXBYTES. Its record says why
(e = "lease expired"); its attempt is counted again by the claim.
]]
local function lease_again(c, b, lost, max, maxbytes)
	for i = 1, #lost.id do
		local rec = lost.rec[i]
		if b.n >= max or b.bytes >= maxbytes then
			return
		end
		if rec and rec.a < c.maxattempts then
			rec.e = LEASE_EXPIRED
			batch_add(b, lost.id[i], c.fired, rec)
			-- Its lease, restored should its hand-off be refused.
			b.leased = b.leased or {}
			b.leased[b.n] = lost.score[i]
			b.bytes = b.bytes + #lost.raw[i]
			lost.taken[i] = true
		end
	end
end

-- Recover the expired leases that lease_again did not take: an event at
-- its last attempt (lost.dying[i]) goes to dead (its entry written first
-- by lease_sweep, lost.buried[i]; one whose entry was refused stays in
-- flight as it was, for the next sweep, and is not counted), any
-- other back to due at now, its record saying why; an id without a record
-- leaves inflight. Returns how many leases were recovered (those taken
-- included) and how many went to dead.
local function recover(c, lost)
	local expired, dead = 0, 0
	for i = 1, #lost.id do
		local id, rec = lost.id[i], lost.rec[i]
		if rec and not (lost.dying[i] and not lost.buried[i]) then
			expired = expired + 1
		end
		if lost.taken[i] then
			-- Leased again by this call's claim.
		elseif not rec then
			redis_call('ZREM', c.inflight, id)
		elseif lost.dying[i] then
			if lost.buried[i] then
				redis_call('ZREM', c.inflight, id)
				redis_call('HDEL', c.jobs, id)
				dead = dead + 1
			end
		else
			rec.e = LEASE_EXPIRED
			redis_call('ZREM', c.inflight, id)
			redis_call('ZADD', c.due, c.now, id)
			redis_call('HSET', c.jobs, id, record_pack(rec))
		end
	end
	count(c.p, 'lease_expired', expired)
	count(c.p, 'dead', dead)
	return expired, dead
end

-- The records a delivery sweep answers: id, due (the occurrence's, d),
-- attempt (this one), payload, url ('' when none), the member that fences
-- the attempt (the id, or ID<space>DUE for an occurrence of a recurring
-- event) and missed (the occurrences it coalesced; -1 for an event that
-- does not recur) of each event it leased, in firing order.
local function leased_records(b)
	local out, k, member = {}, 0, b.member
	for i = 1, b.n do
		local rec, id = b.rec[i], b.id[i]
		local m = member and member[i] or id
		out[k + 1], out[k + 2], out[k + 3] = rec.o or id, rec.d, rec.a
		out[k + 4], out[k + 5], out[k + 6] = rec.p, rec.u or '', m
		out[k + 7] = rec.m or -1
		k = k + 7
	end
	return out
end

--[[
lapse_sweep with a delivery sink (see sweep below). Everything that can
refuse the call is checked before its first write: the arguments, the
types of the four keys (inflight and dead by TYPE, due and jobs by their
first reads), and, in claim_batch, what the claim writes outside KEYS. The
one write that cannot be checked, the XADD of a dead entry (a stream whose
entry ids are exhausted refuses it), is the first: the dead entries of
the leases recovered to dead, then the acks, the claim, and the rest of
the recovery of the leases it does not take.
]]
local NONE = {}
local function lease_sweep(c, keys, args)
	check_keys(keys, { c.due, c.jobs, c.inflight, c.dead })
	if #args < 8 then
		fail('expected 8 arguments for sink %s, got %d', args[3], #args)
	end
	local n = sweep_batch(args[5], 0)
	local m = sweep_maxbytes(args[6])
	c.lease = check_lease(args[7])
	c.maxattempts = check_maxattempts(args[8])
	local want, dues, attempts
	if #args > 8 then
		want, dues, attempts = check_fences(args, 9, 'MAXATTEMPTS')
	end
	check_type(c.inflight, 'zset')
	check_type(c.dead, 'stream')
	local hms, hmark = horizon(c.p)

	start(c)
	c.deadline = c.now + c.lease
	local plan = promotion(c, hms, hmark)
	local b = take_due(c, n, m)
	-- Before the recovered leases join b: it may cut b short (then
	-- events due before now are left, and those go after them).
	c.may_cut = true
	plan_recurrences(c, b)
	local acked = want and acks_holding(c, want, dues, attempts) or NONE
	local lost = expired_leases(c, acked, m - b.bytes)
	if not b.cut then
		lease_again(c, b, lost, n, m)
	end
	-- The leases to dead: dying is the first of them, nil when none.
	local dying
	lost.dying = {}
	for i = #lost.id, 1, -1 do
		local rec = lost.rec[i]
		if rec and not lost.taken[i] and rec.a >= c.maxattempts then
			lost.dying[i] = true
			dying = i
		end
	end
	-- Whatever a later step could refuse is checked before the first
	-- write: the claim's after the acks or the dead entries (its
	-- hand-off's ZADD and HSET included: a user may run FCALL on the
	-- keys and not those commands), the recovery's after either.
	if #acked > 0 or dying then
		check_ack_acl(c)
		if b.n > 0 then
			-- (The claim's DEL goes first, below: refused, it
			-- is refused whole.)
			claim_check(c, b)
			check_acl('ZADD', c.skey, '0', 'x')
			check_acl('HSET', c.jobs, 'x', 'x')
		end
	end
	if #lost.id > 0 then
		check_retry_acl(c)
	end
	if (#acked > 0 or dying) and b.n > 0 then
		-- The claim's DEL of several trigger keys before the acks: on
		-- the node a slot migrates to, Redis refuses a command of
		-- several keys when one is absent (these mostly are), and the
		-- DEL loses nothing (see claim_batch).
		delete_triggers(c, b)
	end
	-- The dead entries of the leases recovered to dead, before the
	-- acks: XADD may be refused (a stream whose entry ids are
	-- exhausted), and a sweep that claimed before it was refused
	-- answered none of the records it had leased. The first refused
	-- refuses the call with nothing written but the trigger keys' DEL
	-- above (keys of events due by now, past their time: the DEL goes
	-- first because a slot's migration may refuse it, and a dead entry
	-- written before a refused DEL would be written again by the next
	-- sweep); a later one (the ids ran out in this call) leaves its
	-- event and those after it in flight.
	lost.buried = {}
	for i = 1, dying and #lost.id or 0 do
		if lost.dying[i] then
			local err = bury(c, lost.id[i], lost.rec[i],
			    LEASE_EXPIRED)
			if err and i == dying then
				fail('%s', err)
			elseif err then
				break
			end
			lost.buried[i] = true
		end
	end
	local nacked = acks_write(c, acked)
	claim_batch(c, b)
	local expired, dead = recover(c, lost)
	promote(plan)
	return { b.n, head(c.due), c.now, b.due, leased_records(b), expired,
	    dead, nacked }
end

--[[
lapse_sweep: fire every due event of a namespace, earliest first, up to a
batch size.

Sinks stream and list:
KEYS: lapse:{NS}:due lapse:{NS}:jobs SINK-KEY
ARGV: NS VIA SINK MAXLEN BATCH [MAXBYTES]
  BATCH     at most this many events (1 .. 4096)
  MAXBYTES  no more events once their records reach this many bytes, at
            least one (1 .. 10^15, default 8 MiB): bounds the time one call
            blocks Redis when payloads are large
A call also fires no more events once counting the missed occurrences of
the recurring ones it fired took RECUR_STEPS_MAX steps (at least one).
Reply: { fired, next, now, dues } where fired is how many events this call
handed off, next the earliest due time left (-1 when none), now this
server's time of the call, and dues the array of the due times (ms) of
the events fired, in firing order (the reactor counts lateness = now -
due for each); next <= now means more are due: call again.

Sinks http and exec (delivery: the events are leased to the caller, which
delivers them and then calls lapse_ack, lapse_retry, lapse_extend or
lapse_release):
KEYS: lapse:{NS}:due lapse:{NS}:jobs lapse:{NS}:inflight lapse:{NS}:dead
ARGV: NS VIA SINK DEADMAXLEN BATCH MAXBYTES LEASE MAXATTEMPTS
      [ID1 DUE1 ATTEMPT1 ...]
  DEADMAXLEN   approximate trim length of the dead stream; 0 never trims
  BATCH        at most this many events (0 .. 4096; 0 leases none and only
               recovers expired leases: the reactor passes its free slots)
  MAXBYTES     as above, required
  LEASE        each event is leased until now + LEASE ms (1 .. 1 day)
  MAXATTEMPTS  attempts before an event goes to dead (1 .. 1000)
  ID DUE ATTEMPT  0 to 1000 triples: acks, as lapse_ack's, so that a
               reactor acks and refills its slots in one call
The acks come first: each current fence's id leaves inflight and jobs,
counted in acked, a stale one changes nothing (an expired lease not yet
recovered is current: the attempt succeeded). They are written after
everything else that could refuse the call has been checked, the user's
permission to run the hand-off's ZADD and HSET included, and after the
dead entries of the leases it recovers to dead: a dead stream that
refuses XADD (its entry ids exhausted) refuses the call, nothing
written but the DEL of the claimed events' trigger keys, past their
time ("lapse:{NS}:dead refused the dead entry of ID: ..."; should
the ids run out within the call, the events left are left in flight
for the next sweep). Then it recovers the expired leases
(inflight score <= now, at most 1000, earliest first, and no more once
their records reach what MAXBYTES leaves after the claim, at least one):
an event whose
attempts so far reach MAXATTEMPTS goes to dead with the error "lease
expired"; any other goes back to due at now
with e = "lease expired", and is leased again by this same call if BATCH
and MAXBYTES leave room (after the events due before it). An id in
inflight without a record is only removed from inflight. Then each event
claimed moves from due to inflight (score: now + LEASE), with its attempt
counted (a) and, at its first lease, the occurrence's due time recorded
(d, kept across retries and releases: the idempotency key is NS/id/d).
Reply: { fired, next, now, dues, records, expired, dead, acked }: the
first four as above (dues: the due scores the events were claimed at; an event
leased again after its lease expired counts as due at now); records a
flat array of seven elements per event leased, in firing order: id, due
(d), attempt (a after this lease), payload, url ('' when none), the
member of inflight that fences the attempt (the id, or ID<space>DUE for
an occurrence of a recurring event) and missed (-1 for an event that
does not recur); expired
the leases this call recovered (to due, leased again, or to dead); dead
how many of them went to dead; acked how many of the acks held (0
without any). lapse:{NS}:counts gets lease_expired and
dead besides the path's count.
]]
local function sweep(keys, args)
	local ns, via, sink, maxlen, batch, maxbytes = args[1], args[2],
	    args[3], args[4], args[5], args[6]
	check_ns(ns)
	check_via(via)
	local c = firing(ns, via, sink, maxlen)
	if c.sink.lease then
		return lease_sweep(c, keys, args)
	end
	check_keys(keys, { c.due, c.jobs, c.skey })
	local n = sweep_batch(batch, 1)
	local m = MAXBYTES_DEFAULT
	if maxbytes ~= nil then
		m = sweep_maxbytes(maxbytes)
	end
	-- Types as in schedule: each checked by its first read, all before
	-- the first write; only the sink needs a TYPE of its own.
	check_type(c.skey, c.sink.type)
	local hms, hmark = horizon(c.p)

	start(c)
	local plan = promotion(c, hms, hmark)
	local b = take_due(c, n, m)
	c.may_cut = true -- what is cut stays due, for the next call
	claim_batch(c, b)
	promote(plan)
	return { b.n, head(c.due), c.now, b.due }
end

-- lapse_adopt's arguments, checked: the call's context, the number of keys
-- and the payload limit.
local function adopt_args(keys, args)
	local ns, sink, maxlen = args[1], args[2], args[3]
	local maxpayload = whole(args[4], 1e15)
	check_ns(ns)
	local c = firing(ns, 'expired', sink, maxlen)
	check_not_leasing(c, sink)
	if maxpayload == nil then
		fail('bad maxpayload "%s"', show(args[4] or ''))
	end
	local n = #keys - 4
	for i, name in ipairs({ c.due, c.jobs, c.skey, c.gone }) do
		if keys[i] ~= name then
			fail('KEYS[%d] must be %s', i, show(name))
		end
	end
	if n < 1 or n > 1000 or #args ~= n + 4 then
		fail('expected 1 to 1000 keys and as many ids, got %d keys ' ..
		    'and %d ids', n, #args - 4)
	end
	for i = 1, n do
		local key, id = keys[4 + i], args[4 + i]
		check_id(id)
		if #key <= #id or key:sub(-#id) ~= id then
			fail('KEYS[%d] "%s" does not end with its id "%s"',
			    4 + i, show(key), show(id))
		end
		if key:sub(1, 6) == 'lapse:' then
			fail('KEYS[%d] "%s" is one of lapse\'s own keys, never ' ..
			    'an application key', 4 + i, show(key))
		end
	end
	check_claim_keys(c)
	check_type(c.gone, 'zset')
	-- Adopting a key, or firing its occurrence, deletes the trigger key of
	-- its id, which is not in KEYS: checked before the first key's writes.
	local triggers = {}
	for i = 1, n do
		triggers[i] = c.p .. 't:' .. args[4 + i]
	end
	check_acl_del(triggers)
	return c, n, maxpayload
end

-- The pending event of id if it is the adoption of key: { due, score,
-- rec }; nil when there is none, or it is an API event or the adoption of
-- another key.
local function adoption_of(c, key, id)
	local raw = redis_call('HGET', c.jobs, id)
	local rec = raw and record_unpack(raw)
	if not rec or rec.k ~= key then
		return nil
	end
	local score = redis_call('ZSCORE', c.due, id)
	if not score then
		return nil
	end
	return { due = tonumber(score), score = score, rec = rec }
end

-- A key's value as a payload, its type when it is not a string (the
-- payload is then empty), and why the payload is empty when the value is
-- longer than maxpayload.
local function key_payload(key, maxpayload)
	-- STRLEN answers WRONGTYPE for other types (TYPE only for those),
	-- and spares reading a value too large to be a payload.
	local len = redis_pcall('STRLEN', key)
	if type(len) == 'table' then
		return '', redis_call('TYPE', key).ok, nil
	end
	if len > maxpayload then
		return '', nil, 'payload too large'
	end
	return redis_call('GET', key), nil, nil
end

-- Fire the occurrence ev of adopted event id, whose expiry came (its key
-- is gone or was set anew): via expired, before anything else of the key.
local function fire_occurrence(c, totals, id, ev)
	local b = new_batch()
	batch_add(b, id, ev.score, ev.rec)
	claim_batch(c, b)
	totals.dues[#totals.dues + 1] = b.due[1]
end

-- Cancel the adoption of a key deleted, or left without a TTL, before its
-- expiry came.
local function cancel_adoption(c, totals, id)
	redis_call('ZREM', c.due, id)
	redis_call('HDEL', c.jobs, id)
	totals.cancelled = totals.cancelled + 1
end

-- Adopt key's current state, a TTL ending at at: event id due then, its
-- value the payload. Nothing is written when ev, its pending adoption,
-- already says so.
local function adopt_state(c, totals, key, id, at, ev, maxpayload)
	local payload, ktype, why = key_payload(key, maxpayload)
	if ev and ev.due == at and ev.rec.p == payload then
		return
	end
	redis_call('ZADD', c.due, at, id)
	redis_call('HSET', c.jobs, id, record_pack({ p = payload, a = 0,
	    c = c.now, k = key, t = ktype, x = why }))
	redis_call('DEL', c.p .. 't:' .. id)
	redis_call('ZREM', c.gone, id)
	totals.adopted = totals.adopted + 1
	if not totals.earliest or at < totals.earliest then
		totals.earliest = at
	end
end

-- Make event id follow the state of key: fire its occurrence if its expiry
-- came, then adopt the key's TTL, or cancel the event if the key has none.
local function adopt_key(c, totals, key, id, maxpayload)
	local ev = adoption_of(c, key, id)
	local at = redis_call('PEXPIRETIME', key)
	if ev and ev.due <= c.now and at ~= ev.due then
		fire_occurrence(c, totals, id, ev)
		ev = nil
	end
	if at >= 0 then
		adopt_state(c, totals, key, id, at, ev, maxpayload)
	elseif ev then
		cancel_adoption(c, totals, id)
	end
end

--[[
lapse_adopt: make the events of watched application keys follow the keys'
current state. For each key: with a TTL, it becomes (or stays) event ID
due at its PEXPIRETIME with its value as payload; deleted, or without a
TTL, before its event fell due, the event is cancelled. An adopted event
already due when its key is found gone or set anew has had its expiry:
it is fired first (via expired), then the key's new state is adopted.
Idempotent: any number of reactors adopting the same keys leave one event
each, and nothing is written when nothing changed. An event scheduled
through lapse_schedule with the same id is replaced.

KEYS: lapse:{NS}:due lapse:{NS}:jobs SINK-KEY lapse:{NS}:gone KEY1 .. KEYn
      (1 <= n <= 1000)
ARGV: NS SINK MAXLEN MAXPAYLOAD ID1 .. IDn   (KEYi ends with IDi)
  MAXPAYLOAD  a string value longer than this is adopted with an empty
              payload (its record says why: x = "payload too large")
Reply: { adopted, cancelled, fired, dues }: events created or moved,
cancelled, and fired because they were due; dues the array of the due
times (ms) of the occurrences fired, in firing order.
]]
local function adopt(keys, args)
	local c, n, maxpayload = adopt_args(keys, args)
	start(c)
	local totals = { adopted = 0, cancelled = 0, dues = {} }
	for i = 1, n do
		adopt_key(c, totals, keys[4 + i], args[4 + i], maxpayload)
	end
	-- (ZRANGE as in wake_if_first.)
	if totals.earliest and
	    acl_check('ZRANGE', c.due, '0', '0', 'WITHSCORES') and
	    head(c.due) == totals.earliest then
		wake(c.p, totals.earliest)
	end
	return { totals.adopted, totals.cancelled, #totals.dues, totals.dues }
end

-- Add to b what the expiry of id's key fires: its pending event if it is
-- due, or if it is adopted and its key is gone; if there is none and id did not fire within GONE_MS (its key
-- expired unadopted), an event due now with an empty payload.
local function add_expired(c, b, id)
	local score = redis_call('ZSCORE', c.due, id)
	if score then
		local rec = record_unpack(redis_call('HGET', c.jobs, id))
		if tonumber(score) <= c.now then
			batch_add(b, id, score, rec)
		elseif rec.k and redis_pcall('PEXPIRETIME', rec.k) == -2 then
			-- Its key expired before its recorded due time: the
			-- application shortened the TTL, and this notification
			-- came before the adoption of that. Its expiry is now.
			batch_add(b, id, c.fired, rec)
		end
	else
		-- An entry older than GONE_MS counts as none (the claim
		-- prunes it when it adds).
		local fired = redis_call('ZSCORE', c.gone, id)
		if not fired or tonumber(fired) <= c.now - GONE_MS then
			batch_add(b, id, c.fired, { p = '', a = 0 })
		end
	end
end

--[[
lapse_expired: the `expired` notifications of watched keys. An id whose
event is pending and due is claimed (via expired); an id with no event
(its key expired before any reactor adopted it) fires once across all
reactors with an empty payload, due at the time of this call; an id
fired within the last GONE_MS fires nothing more.

KEYS: lapse:{NS}:due lapse:{NS}:jobs SINK-KEY lapse:{NS}:gone
ARGV: NS SINK MAXLEN ID1 .. IDn (at most 1000)
Reply: { fired, next, now, dues } as lapse_sweep (an unadopted expiry is
due at now).
]]
local function expired(keys, args)
	local ns, sink, maxlen = args[1], args[2], args[3]
	check_ns(ns)
	local c = firing(ns, 'expired', sink, maxlen)
	check_not_leasing(c, sink)
	check_keys(keys, { c.due, c.jobs, c.skey, c.gone })
	check_claim_keys(c)
	check_type(c.gone, 'zset')
	-- (The reply's next due time, as in lapse_claim.)
	check_acl('ZRANGE', c.due, '0', '0', 'WITHSCORES')
	if #args < 4 or #args > 1003 then
		fail('expected 1 to 1000 ids, got %d', #args - 3)
	end
	for i = 4, #args do
		check_id(args[i])
	end

	start(c)
	c.watched = true
	local b, seen = new_batch(), {}
	for i = 4, #args do
		local id = args[i]
		if not seen[id] then
			seen[id] = true
			add_expired(c, b, id)
		end
	end
	claim_batch(c, b)
	return { b.n, head(c.due), c.now, b.due }
end

--[[
lapse_ack: attempts succeeded; their events are done.

KEYS: lapse:{NS}:jobs lapse:{NS}:inflight
ARGV: NS ID1 DUE1 ATTEMPT1 [ID2 DUE2 ATTEMPT2 ...]   (1 to 1000 triples)
Reply: the number acked (with one triple, 1 acked or 0 stale): each
current fence's id leaves inflight and its record is deleted, counted in
acked; a stale fence (or a repeated one) changes nothing. Every fence is
read before the first write.
]]
local function ack(keys, args)
	local c = delivering(args[1])
	check_keys(keys, { c.jobs, c.inflight })
	local ids = acks_holding(c, check_fences(args, 2, 'NS'))
	if #ids > 0 then
		check_ack_acl(c)
	end
	return acks_write(c, ids)
end

-- lapse_retry's arguments after the fence, checked into c: delay, max
-- attempts, dead-maxlen (c.smax, as bury() wants it), error, dead.
local function retry_args(c, args)
	c.delay = whole(args[5], DURATION_MAX)
	if c.delay == nil then
		fail('bad delay "%s": must be 0 to %d milliseconds',
		    show(args[5]), DURATION_MAX)
	end
	c.maxattempts = check_maxattempts(args[6])
	local n = whole(args[7], 1e15)
	if n == nil then
		fail('bad dead-maxlen "%s"', show(args[7]))
	end
	c.smax = n > 0 and decimal(n) or nil
	c.error = cut_error(args[8])
	if args[9] ~= nil and args[9] ~= 'dead' then
		fail('unknown option "%s" (use dead)', show(args[9]))
	end
	c.bury = args[9] == 'dead'
end

--[[
lapse_retry: the attempt failed; try again after DELAY, or give up.

KEYS: lapse:{NS}:due lapse:{NS}:jobs lapse:{NS}:inflight lapse:{NS}:dead
ARGV: NS ID DUE ATTEMPT DELAY MAXATTEMPTS DEADMAXLEN ERROR [dead]
  DELAY        ms before the next attempt, from now (0 .. 100 years)
  MAXATTEMPTS  the attempts an event gets (1 .. 1000)
  DEADMAXLEN   approximate trim length of the dead stream; 0 never trims
  ERROR        why it failed: at most 4096 bytes are kept (a longer one is
               cut, before a UTF-8 sequence that would not fit whole)
  dead         give up now, whatever the attempt count
Reply: { 2, -1 } gone to dead (with `dead`, or ATTEMPT >= MAXATTEMPTS):
an entry in lapse:{NS}:dead (fields id, payload, due, attempts, error,
failed and url when the event has one), the event out of inflight and
jobs, counted in dead (a dead stream that refuses the entry, its ids
exhausted, refuses the call: nothing changed); { 1, retry_due } back in
due at retry_due = now + DELAY with e = ERROR, its d and a kept, counted
in retried, the wake published if it is now the earliest event;
{ 0, -1 } stale.
]]
local function retry(keys, args)
	local c = delivering(args[1])
	check_keys(keys, { c.due, c.jobs, c.inflight, c.dead })
	if #args ~= 8 and #args ~= 9 then
		fail('expected 8 or 9 arguments (NS ID DUE ATTEMPT DELAY ' ..
		    'MAXATTEMPTS DEADMAXLEN ERROR [dead]), got %d', #args)
	end
	local id, due, attempt = check_fence(args, 2)
	retry_args(c, args)
	check_type(c.due, 'zset')
	check_type(c.dead, 'stream')
	local rec = fenced(c, id, due, attempt)
	if not rec then
		return { 0, -1 }
	end
	check_retry_acl(c)
	start(c)
	if c.bury or attempt >= c.maxattempts then
		local err = bury(c, id, rec, c.error)
		if err then
			fail('%s', err)
		end
		redis_call('ZREM', c.inflight, id)
		redis_call('HDEL', c.jobs, id)
		count(c.p, 'dead', 1)
		return { 2, -1 }
	end
	local at = c.now + c.delay
	rec.e = c.error
	redis_call('ZREM', c.inflight, id)
	redis_call('ZADD', c.due, at, id)
	redis_call('HSET', c.jobs, id, record_pack(rec))
	count(c.p, 'retried', 1)
	wake_if_first(c.p, id, at)
	return { 1, at }
end

--[[
lapse_extend: the attempts are still running; push their leases back.

KEYS: lapse:{NS}:jobs lapse:{NS}:inflight
ARGV: NS LEASE ID1 DUE1 ATTEMPT1 [ID2 DUE2 ATTEMPT2 ...]
  LEASE  each lease now ends at now + LEASE ms (1 .. 1 day)
  1 to 1000 triples, each fenced on its own
Reply: an array of 1 (extended) or 0 (stale), one per triple.
]]
local function extend(keys, args)
	local c = delivering(args[1])
	check_keys(keys, { c.jobs, c.inflight })
	local lease = check_lease(args[2])
	local ids, dues, attempts = check_fences(args, 3, 'LEASE')
	local deadline = now_ms() + lease
	local out = {}
	for i = 1, #ids do
		out[i] = 0
		if fenced(c, ids[i], dues[i], attempts[i]) then
			redis_call('ZADD', c.inflight, 'XX', deadline, ids[i])
			out[i] = 1
		end
	end
	return out
end

--[[
lapse_release: give attempts back without counting them (a reactor that
stops): each event goes back to due at now for any reactor to take.

KEYS: lapse:{NS}:due lapse:{NS}:jobs lapse:{NS}:inflight
ARGV: NS ID1 DUE1 ATTEMPT1 [ID2 DUE2 ATTEMPT2 ...]   (1 to 1000 triples)
Reply: an array of 1 (released: out of inflight, in due at now, its a one
less, its d kept, counted in released) or 0 (stale), one per triple. The
wake is published when a released event is the earliest.
]]
local function release(keys, args)
	local c = delivering(args[1])
	check_keys(keys, { c.due, c.jobs, c.inflight })
	local ids, dues, attempts = check_fences(args, 2, 'NS')
	check_type(c.due, 'zset')
	local now, out, released, n = now_ms(), {}, {}, 0
	for i = 1, #ids do
		local id = ids[i]
		local rec = fenced(c, id, dues[i], attempts[i])
		out[i] = 0
		if rec and n == 0 then
			-- Before the first write: the commands of the others.
			check_acl('ZREM', c.inflight, id)
			check_acl('ZADD', c.due, now, id)
			check_acl('HSET', c.jobs, id, 'x')
		end
		if rec then
			rec.a = rec.a - 1
			redis_call('ZREM', c.inflight, id)
			redis_call('ZADD', c.due, now, id)
			redis_call('HSET', c.jobs, id, record_pack(rec))
			released[id] = true
			n = n + 1
			out[i] = 1
		end
	end
	count(c.p, 'released', n)
	-- (ZRANGE as in wake_if_first.)
	if n > 0 and acl_check('ZRANGE', c.due, '0', '0') and
	    released[redis_call('ZRANGE', c.due, '0', '0')[1]] then
		wake(c.p, now)
	end
	return out
end

-- The fields of a stream entry, { name, value, ... }, by name.
local function entry_fields(list)
	local f = {}
	for i = 1, #list - 1, 2 do
		f[list[i]] = list[i + 1]
	end
	return f
end

-- 'pending' or 'in flight' when id is an event of c's namespace, else nil.
local function whereabouts(c, id)
	if redis_call('ZSCORE', c.due, id) then
		return 'pending'
	end
	if redis_call('ZSCORE', c.inflight, id) then
		return 'in flight'
	end
	return nil
end

-- The member a dead entry f is requeued as, and the delivery it is of
-- (its entries are one event that died again). The member is its
-- occurrence (ID<space>DUE) while its event is still a recurring event
-- (pending with its next occurrence, which the event's id stands for),
-- so that the event's record lists it under way; else its id. An
-- occurrence of a recurrence that is gone (cancelled, replaced by an
-- event that does not recur, or ended by itself) comes back as the event
-- ID itself: no record would list an ID<space>DUE, and no id a user can
-- name would reach it, so it could not be cancelled. Its delivery is
-- still the occurrence: the other occurrences of ID, each a delivery of
-- its own, wait in dead while ID is pending or in flight, and are
-- requeued one at a time, not merged into one. recurs caches, by id,
-- whether id recurs.
local function dead_member(c, f, recurs)
	local o, id = f.occurrence, f.id
	if not o or not id or match(o, '^([^ ]+) %d+$') ~= id then
		return id, id
	end
	if recurs[id] == nil then
		recurs[id] = record_unpack(redis_call('HGET', c.jobs,
		    id)).r ~= nil
	end
	return recurs[id] and o or id, o
end

-- List occurrence member of recurring event id among those under way in
-- its record (w), so that a cancel or a replace of id ends it (dead_member
-- made it an occurrence only because id recurs).
local function requeued_occurrence(c, id, member)
	local rec = record_unpack(redis_call('HGET', c.jobs, id))
	if not rec.r then
		return
	end
	local text = match(member, ' (%d+)$')
	local due, w = ms_or_nil(tonumber(text)), rec.w or {}
	if not due or decimal(due) ~= text then
		-- Not a member a claim makes (written behind lapse's back).
		return
	end
	for _, d in ipairs(w) do
		if d == due then
			return
		end
	end
	w[#w + 1] = due
	rec.w = w
	redis_call('HSET', c.jobs, id, record_pack(rec))
end

-- Schedule member anew from its dead entry f, due now: a new occurrence
-- (no d, attempt count 0) with the entry's payload and url (and, for an
-- occurrence of a recurring event, o its event's id, whose record lists it
-- under way); then delete its dead entries (stream ids sids), last, so
-- that nothing is lost should a write be refused. Before the call's first
-- write, the user's permission to run each of these commands is checked:
-- FCALL checks the keys, not the commands, and a requeue refused its XDEL
-- after its HSET and ZADD left the event both pending and dead; so is the
-- XLEN of its reply.
local function requeue_event(c, member, f, sids)
	if not c.checked then
		check_acl('HSET', c.jobs, member, 'x')
		check_acl('ZADD', c.due, '0', member)
		check_acl('XDEL', c.dead, '0-1')
		check_acl('XLEN', c.dead)
		c.checked = true
	end
	local o = member ~= f.id and f.id or nil
	redis_call('HSET', c.jobs, member, record_pack({ p = f.payload or '',
	    a = 0, c = c.now, u = f.url, o = o }))
	redis_call('ZADD', c.due, c.now, member)
	if o then
		requeued_occurrence(c, o, member)
	end
	call_list('XDEL', c.dead, sids)
end

-- The dead entries of id, oldest first, by the delivery each is of
-- (dead_member): { order = the deliveries in the order of their oldest
-- entry, by[delivery] = { member, sids, newest } }. The stream has no
-- index by id: it is read whole, in chunks.
local function dead_entries_of(c, id)
	local g, from, recurs = { order = {}, by = {} }, '-', {}
	while true do
		local r = redis_call('XRANGE', c.dead, from, '+', 'COUNT',
		    DEAD_CHUNK)
		for _, e in ipairs(r) do
			local f = entry_fields(e[2])
			if f.id == id then
				local m, d = dead_member(c, f, recurs)
				if not g.by[d] then
					g.by[d] = { member = m, sids = {} }
					g.order[#g.order + 1] = d
				end
				local sids = g.by[d].sids
				sids[#sids + 1] = e[1]
				g.by[d].newest = f
			end
		end
		if #r < DEAD_CHUNK then
			return g
		end
		from = '(' .. r[#r][1]
	end
end

local function requeue_id(c, id)
	local g = dead_entries_of(c, id)
	if #g.order == 0 then
		local where = whereabouts(c, id)
		if where then
			fail('cannot requeue "%s": it is %s', show(id), where)
		end
		return { 0, redis_call('XLEN', c.dead) }
	end
	for _, d in ipairs(g.order) do
		local m = g.by[d].member
		local where, url = whereabouts(c, m), g.by[d].newest.url
		if where then
			fail('cannot requeue "%s": %s', show(id), m == id and
			    'it is ' .. where or format('its occurrence "%s" ' ..
			    'is %s', show(m), where))
		end
		if url and bad_url(url) then
			fail('cannot requeue "%s": its dead entry has a %s',
			    show(id), bad_url(url))
		end
	end
	-- One delivery a member: the oldest (see dead_member).
	local n, taken = 0, {}
	for _, d in ipairs(g.order) do
		local m = g.by[d].member
		if not taken[m] then
			taken[m] = true
			requeue_event(c, m, g.by[d].newest, g.by[d].sids)
			wake_if_first(c.p, m, c.now)
			n = n + 1
		end
	end
	return { n, redis_call('XLEN', c.dead) }
end

-- The requeue of the oldest max dead entries: { order = the members to
-- requeue, in the order of their oldest entry, by[member] = { sids,
-- newest }, skipped = the entries left in dead }. An entry is skipped
-- when its member is pending or in flight, when another delivery among
-- them is requeued as its member (see dead_member), or when it cannot be
-- an event (no valid id or url: written behind lapse's back).
local function requeue_plan(c, max)
	local r = redis_call('XRANGE', c.dead, '-', '+', 'COUNT', max)
	local plan, busy = { order = {}, by = {}, skipped = 0 }, {}
	local recurs = {}
	for _, e in ipairs(r) do
		local f = entry_fields(e[2])
		local id, d = dead_member(c, f, recurs)
		local ok = not bad_id(f.id) and not (f.url and bad_url(f.url))
		if ok and busy[id] == nil then
			busy[id] = whereabouts(c, id) ~= nil
		end
		local g = plan.by[id]
		if not ok or busy[id] or (g and g.delivery ~= d) then
			plan.skipped = plan.skipped + 1
		else
			if not g then
				g = { sids = {}, delivery = d }
				plan.by[id] = g
				plan.order[#plan.order + 1] = id
			end
			g.sids[#g.sids + 1] = e[1]
			g.newest = f
		end
	end
	return plan
end

local function requeue_all(c, max)
	local plan = requeue_plan(c, max)
	for _, id in ipairs(plan.order) do
		requeue_event(c, id, plan.by[id].newest, plan.by[id].sids)
	end
	-- (ZRANGE as in wake_if_first.)
	local first = acl_check('ZRANGE', c.due, '0', '0') and
	    redis_call('ZRANGE', c.due, '0', '0')[1]
	if first and plan.by[first] then
		wake(c.p, c.now)
	end
	return { #plan.order, plan.skipped, redis_call('XLEN', c.dead) }
end

--[[
lapse_requeue: put dead events back, as new: each is scheduled anew, due
now, with its attempt count 0 (its next attempt is 1), its payload and url;
its occurrence's due time is cleared (a new occurrence, a new idempotency
key). Requeued events are due at once: they get no trigger key, and the
wake is published when one is the earliest event. A dead occurrence of a
recurring event (an entry with an occurrence field, ID<space>DUE) is
requeued as that member, an event of its own, while its event goes on
with its next occurrence, listing it among its occurrences under way (w),
so that cancelling or replacing the event ends it. Once the recurrence is
gone (cancelled, replaced by an event that does not recur, or ended by
itself), its dead occurrences are requeued as the event ID itself, so
that cancelling ID ends it: one occurrence at a time, the oldest, from its
newest entry, the others left in dead (each a delivery of its own, none
merged into another), refused or skipped while ID is pending or in
flight.

KEYS: lapse:{NS}:due lapse:{NS}:jobs lapse:{NS}:dead
ARGV: NS id ID | NS all MAX
  id ID    every dead entry of event ID is removed and the newest of them
           requeued (for a recurring event, the newest of each of its
           dead occurrences; for one that is gone, of its oldest, the
           others left); refused (nothing changed) while ID, or an
           occurrence to requeue, is pending or in flight. The dead stream
           has no index by id: the call reads it whole, so its time grows
           with the stream's length.
  all MAX  the oldest MAX (1 .. 10000) entries: each id among them is
           requeued like that from its newest entry among them; an entry
           whose id is pending or in flight (or that has no valid id or
           url) is left in dead and counted as skipped
Reply: id: { requeued (events: 1, 0 when ID has no dead entry, or its
dead occurrences), left }; all:
{ requeued (events), skipped (entries), left }; left is the dead
stream's length after the call. To requeue everything, call `all` again
while requeued > 0 and left > skipped.
]]
local function requeue(keys, args)
	local ns, how, what = args[1], args[2], args[3]
	local c = delivering(ns)
	check_keys(keys, { c.due, c.jobs, c.dead })
	if how ~= 'id' and how ~= 'all' then
		fail('bad requeue "%s" (use id ID or all MAX)', show(how or ''))
	end
	check_nargs(args, 3, how == 'id' and 'NS id ID' or 'NS all MAX')
	local max
	if how == 'id' then
		check_id(what)
	else
		max = whole(what, REQUEUE_MAX)
		if max == nil or max == 0 then
			fail('bad max "%s": must be 1 to %d', show(what),
			    REQUEUE_MAX)
		end
	end
	check_type(c.due, 'zset')
	check_type(c.jobs, 'hash')
	check_type(c.dead, 'stream')
	check_type(c.inflight, 'zset')
	start(c)
	if how == 'id' then
		return requeue_id(c, what)
	end
	return requeue_all(c, max)
end

--[[
lapse_purge: empty the dead stream; a user who may not DEL it is refused
("no permission to DEL ..."), nothing changed.

KEYS: lapse:{NS}:dead
ARGV: NS
Reply: the number of entries removed.
]]
local function purge(keys, args)
	local c = delivering(args[1])
	check_keys(keys, { c.dead })
	check_nargs(args, 1, 'NS')
	local n = read_typed('stream', 'XLEN', c.dead)
	if n > 0 then
		-- Refused by name, as every write a user may not make.
		check_acl('DEL', c.dead)
		redis_call('DEL', c.dead)
	end
	return n
end

--[[
lapse_get: one event, pending or in flight.

KEYS: lapse:{NS}:due lapse:{NS}:jobs
ARGV: NS ID
Reply: nil when there is no such event (an id in flight without a record,
which the next sweep drops, counts as none), else { due, payload,
attempts, state, lease, url, error, every, start, until, cron, tz,
dialect }: state 'pending' (due is its due
score: for a retry, the time of its next attempt; lease -1) or 'inflight'
(due is the occurrence's, d; lease the deadline of its lease, ms);
attempts how many times it was leased or fired so far; url and error ''
when it has none; every, start and until the recurrence of a recurring
event (its period, its anchor or from, and its end, ms; -1 when it has
none: every is -1 but for a fixed rate, until -1 when it never ends), and
cron, tz and dialect a cron recurrence's expression, zone and dialect
('quartz'; '' when it has none).
lapse:{NS}:inflight is read by name, in the same slot, like the horizon.
]]
local function get(keys, args)
	local ns, id = args[1], args[2]
	check_ns(ns)
	check_id(id)
	local p = prefix(ns)
	check_keys(keys, { p .. 'due', p .. 'jobs' })
	-- Every read always runs, so that a key of another type is refused
	-- by name whether or not the event exists.
	local score = read_typed('zset', 'ZSCORE', keys[1], id)
	local raw = read_typed('hash', 'HGET', keys[2], id)
	local lease = read_typed('zset', 'ZSCORE', p .. 'inflight', id)
	local rec = record_unpack(raw)
	local r = rec.r or {}
	if score then
		return { (due_of(score)), rec.p, rec.a, 'pending', -1,
		    rec.u or '', rec.e or '', r.e or -1, r.s or r.f or -1,
		    r.u or -1, r.x or '', r.x and r.z or '',
		    r.q and 'quartz' or '' }
	elseif lease and raw then
		return { rec.d or 0, rec.p, rec.a, 'inflight', (due_of(lease)),
		    rec.u or '', rec.e or '', -1, -1, -1, '', '', '' }
	end
	return nil
end

--[[
lapse_list: pending events, earliest first.

KEYS: lapse:{NS}:due
ARGV: NS LIMIT
  LIMIT   at most this many (1 .. 100000)
Reply: { id1, due1, id2, due2, ... }
]]
local function list(keys, args)
	local ns, limit = args[1], args[2]
	check_ns(ns)
	check_keys(keys, { prefix(ns) .. 'due' })
	local n = whole(limit, 100000)
	if n == nil or n == 0 then
		fail('bad limit "%s": must be 1 to 100000', show(limit or ''))
	end
	local r = read_typed('zset', 'ZRANGE', keys[1], 0, n - 1, 'WITHSCORES')
	for i = 2, #r, 2 do
		r[i] = due_of(r[i])
	end
	return r
end

-- A count read from lapse:{NS}:counts as an integer a reply can carry:
-- what is not a count (written behind lapse's back) reads as 0, and a
-- count beyond 2^53 as 2^53.
local function count_of(v)
	local n = tonumber(v)
	if not n or n < 0 or n ~= n then
		return 0
	end
	return n < 2 ^ 53 and floor(n) or 2 ^ 53
end

--[[
lapse_stats: counters of a namespace.

KEYS: lapse:{NS}:due lapse:{NS}:fired lapse:{NS}:ready
ARGV: NS
Reply: { 'pending', n, 'overdue', n, 'next_due', ms or -1, 'now', ms,
'fired', n, 'ready', n, 'fired_expired', n, 'fired_timer', n,
'fired_sweep', n, 'inflight', n, 'dead', n, 'acked', n, 'retried', n,
'dead_total', n, 'lease_expired', n, 'released', n, 'missed', n,
'recurrence_waits', n } (fired: entries in the stream; ready: elements in
the list; inflight: events leased to a reactor; dead: entries in the dead
stream; fired_PATH: events fired through each path, acked ... released:
what the delivery functions did, dead_total: events moved to dead,
missed: occurrences of recurring events that firings coalesced,
recurrence_waits: the looks at recurrences whose rule the library could
not read (an unknown zone) and that went on waiting, about one a minute
for each, since lapse:{NS}:counts was created).
inflight, dead and counts are read by name, like the horizon, in the
same slot.
]]
local function stats(keys, args)
	local ns = args[1]
	check_ns(ns)
	local p = prefix(ns)
	check_keys(keys, { p .. 'due', p .. 'fired', p .. 'ready' })
	local pending = read_typed('zset', 'ZCARD', keys[1])
	local fired = read_typed('stream', 'XLEN', keys[2])
	local ready = read_typed('list', 'LLEN', keys[3])
	local inflight = read_typed('zset', 'ZCARD', p .. 'inflight')
	local dead = read_typed('stream', 'XLEN', p .. 'dead')
	local counts = read_typed('hash', 'HMGET', p .. 'counts', 'expired',
	    'timer', 'sweep', 'acked', 'retried', 'dead', 'lease_expired',
	    'released', 'missed', 'recurrence_waits')
	local now = now_ms()
	return { 'pending', pending,
	    'overdue', redis.call('ZCOUNT', keys[1], '-inf', now),
	    'next_due', head(keys[1]), 'now', now,
	    'fired', fired, 'ready', ready,
	    'fired_expired', count_of(counts[1]),
	    'fired_timer', count_of(counts[2]),
	    'fired_sweep', count_of(counts[3]),
	    'inflight', inflight, 'dead', dead,
	    'acked', count_of(counts[4]),
	    'retried', count_of(counts[5]),
	    'dead_total', count_of(counts[6]),
	    'lease_expired', count_of(counts[7]),
	    'released', count_of(counts[8]),
	    'missed', count_of(counts[9]),
	    'recurrence_waits', count_of(counts[10]) }
end

--[[
Cron expressions and time zones: the occurrences of a cron expression in
an IANA time zone (SPEC, "Recurring events"). They are computed here, in
the library, rather than by the reactors: an application that calls FCALL
from any language gets the same validation and the same occurrences as
`lapse`, and a claim can schedule the next occurrence in the same atomic
call that fires one. All of it is pure computation on numbers; nothing
below touches a key or reads a clock (but lapse_next, which reads TIME).

Instants are whole seconds since the epoch (UTC) inside the engine and
milliseconds at its edges; offsets are seconds east of UTC; a "local
second" is the wall-clock time of a zone written as seconds since the
epoch, as if that wall clock were UTC (local = instant + offset).

Each module (calendar, tz, cron, recurrence) is a table that a function
builds and returns, rather than a do block: Lua 5.1 allows a function 200
locals at once, and the library's main chunk is close to that with its
own; a module's locals are its function's.
]]

local INF = 1 / 0
local DAY = 86400

-- The calendar (proleptic Gregorian, as cron and tzdata use it).
local calendar = (function()
	local calendar = {}

	local LENGTHS = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 }

	-- Days since the epoch of y-m-d; d may run past the month's end.
	-- (Howard Hinnant's days_from_civil: a year that starts in March, so
	-- that February's length does not matter.)
	function calendar.days(y, m, d)
		if m <= 2 then
			y = y - 1
		end
		local era = floor(y / 400)
		local yoe = y - era * 400
		local doy = floor((153 * ((m + 9) % 12) + 2) / 5) + d - 1
		return era * 146097 + yoe * 365 + floor(yoe / 4) -
		    floor(yoe / 100) + doy - 719468
	end

	-- The date of day n since the epoch: y, m, d.
	function calendar.date(n)
		n = n + 719468
		local era = floor(n / 146097)
		local doe = n - era * 146097
		local yoe = floor((doe - floor(doe / 1460) +
		    floor(doe / 36524) - floor(doe / 146096)) / 365)
		local doy = doe -
		    (365 * yoe + floor(yoe / 4) - floor(yoe / 100))
		local mp = floor((5 * doy + 2) / 153)
		local d = doy - floor((153 * mp + 2) / 5) + 1
		local m = mp < 10 and mp + 3 or mp - 9
		local y = yoe + era * 400
		if m <= 2 then
			y = y + 1
		end
		return y, m, d
	end

	function calendar.leap(y)
		return y % 4 == 0 and (y % 100 ~= 0 or y % 400 == 0)
	end

	function calendar.length(y, m)
		if m == 2 and calendar.leap(y) then
			return 29
		end
		return LENGTHS[m]
	end

	-- The day of the week of day n since the epoch, 0 for Sunday.
	function calendar.weekday(n)
		return (n + 4) % 7
	end
	return calendar
end)()

--[[
Time zones. Redis's Lua has no os library and no zone database, so the
library carries the rules of every IANA zone and link, generated from the
build machine's tzdata by tools/tz/tzgen: the build puts them in place of
the TZDATA line below (the library Redis loads is lua/built/lapse.lua;
lua/lapse.lua alone knows UTC only). They are in the library's text, not
in keys: in a Cluster a function may touch only its namespace's slot, and
the rules are the same for every namespace. tools/tz/zonestr.h describes
a zone's text; a link's is "=ZONE".

A zone is decoded at its first use in the loaded library and kept, with
the last stretch of time it was asked about (segment()):
{ first = the offset at the epoch, times[i] = the instant of a change,
offs[i] = the offset from it, rule = nil (the last offset stays), { std }
or { std, dst, start, stop } after the last change }. A rule is read as
glibc reads a TZif footer: for an instant of year Y (UTC), DST is in force
from START to STOP of year Y, or outside [STOP, START) when STOP comes
first (the southern hemisphere).
]]
local TZDATA = { zones = { UTC = '0;;0', ['Etc/UTC'] = '0;;0' } }

tz = (function()
	local tz = {}

	local decoded = {}

	-- A rule date, "M3.5.0/7200", "J60/7200" or "59/7200".
	local function rule_date(s)
		local m, w, d, t = match(s, '^M(%d+)%.(%d+)%.(%d+)/(%-?%d+)$')
		if m then
			return { kind = 'M', m = tonumber(m), w = tonumber(w),
			    d = tonumber(d), time = tonumber(t) }
		end
		local j
		j, t = match(s, '^J(%d+)/(%-?%d+)$')
		if j then
			return { kind = 'J', d = tonumber(j),
			    time = tonumber(t) }
		end
		d, t = match(s, '^(%d+)/(%-?%d+)$')
		return { kind = 'D', d = tonumber(d), time = tonumber(t) }
	end

	local function decode(text)
		local offsets, changes, rule =
		    match(text, '^([^;]*);([^;]*);(.*)$')
		local list = {}
		for o in offsets:gmatch('[^,]+') do
			list[#list + 1] = tonumber(o)
		end
		local z = { first = list[1], times = {}, offs = {} }
		local t = 0
		for delta, letter in changes:gmatch('([%da-z]+)(%u)') do
			t = t + tonumber(delta, 36)
			z.times[#z.times + 1] = t
			z.offs[#z.offs + 1] = list[byte(letter) - 64]
		end
		local std, dst, start, stop =
		    match(rule, '^(%-?%d+),(%-?%d+),([^,]+),([^,]+)$')
		if std then
			z.rule = { std = tonumber(std), dst = tonumber(dst),
			    start = rule_date(start), stop = rule_date(stop) }
		elseif rule ~= '' then
			z.rule = { std = tonumber(rule) }
		end
		return z
	end

	-- The zone or link called name, or nil.
	function tz.find(name)
		local z = decoded[name]
		if z == nil and type(name) == 'string' then
			local text = TZDATA.zones[name]
			if text == nil then
				return nil
			end
			if byte(text) == 61 then -- '=': a link
				z = tz.find(text:sub(2))
			else
				z = decode(text)
			end
			decoded[name] = z
		end
		return z
	end

	-- The tzdata release of the zone table ('2025b'), nil when there is
	-- none (the library as written, UTC only).
	function tz.release()
		return TZDATA.version
	end

	-- The name of a zone that differs from name in case only, or nil.
	function tz.like(name)
		local lower = name:lower()
		for known in pairs(TZDATA.zones) do
			if known:lower() == lower then
				return known
			end
		end
		return nil
	end

	-- The instant at which rule date r falls in year y, in the local
	-- time of offset off.
	local function rule_instant(r, y, off)
		local day
		if r.kind == 'M' then
			local first = calendar.days(y, r.m, 1)
			local len = calendar.length(y, r.m)
			local d = (r.d - calendar.weekday(first)) % 7 +
			    7 * (r.w - 1)
			while d >= len do
				d = d - 7
			end
			day = first + d
		elseif r.kind == 'J' then
			day = calendar.days(y, 1, 1) + r.d - 1
			if r.d >= 60 and calendar.leap(y) then
				day = day + 1
			end
		else
			day = calendar.days(y, 1, 1) + r.d
		end
		return day * DAY + r.time - off
	end

	-- The instants at which DST starts and stops under rule r in year
	-- y, remembered for the years asked about last.
	local function rule_year(r, y)
		local memo = r.memo
		if memo == nil or memo.n >= 64 then
			memo = { n = 0 }
			r.memo = memo
		end
		local m = memo[y]
		if m == nil then
			m = { rule_instant(r.start, y, r.std),
			    rule_instant(r.stop, y, r.dst) }
			memo[y] = m
			memo.n = memo.n + 1
		end
		return m[1], m[2]
	end

	local function rule_offset(r, t)
		if r.dst == nil then
			return r.std
		end
		local s, e = rule_year(r, calendar.date(floor(t / DAY)))
		local dst
		if s > e then
			dst = t < e or t >= s
		else
			dst = t >= s and t < e
		end
		return dst and r.dst or r.std
	end

	-- The changes of offset under rule r in UTC year y, in order. In a
	-- year, the offset can change only at its START and STOP, and on
	-- January 1 at 00:00 UTC, where the rule's year changes.
	local function year_changes(r, y)
		rule_year(r, y)
		local m = r.memo[y]
		if m.changes == nil then
			local from = calendar.days(y, 1, 1) * DAY
			local to = calendar.days(y + 1, 1, 1) * DAY
			local s, e = m[1], m[2]
			if e < s then
				s, e = e, s
			end
			local list = {}
			for _, c in ipairs({ from, s, e }) do
				local new = #list == 0 or c > list[#list]
				if new and c >= from and c < to and
				    rule_offset(r, c) ~=
				    rule_offset(r, c - 1) then
					list[#list + 1] = c
				end
			end
			m.changes = list
		end
		return m.changes
	end

	-- The changes of offset under rule r around t: the last at or
	-- before t and the first after it (-INF and INF when there is none
	-- within two years).
	local function rule_changes(r, t)
		local a, b = -INF, INF
		if r.dst == nil then
			return a, b
		end
		local y = calendar.date(floor(t / DAY))
		for year = y, y - 2, -1 do
			local list = year_changes(r, year)
			for i = #list, 1, -1 do
				if list[i] <= t then
					a = list[i]
					break
				end
			end
			if a > -INF then
				break
			end
		end
		for year = y, y + 2 do
			local list = year_changes(r, year)
			for i = 1, #list do
				if list[i] > t then
					b = list[i]
					break
				end
			end
			if b < INF then
				break
			end
		end
		return a, b
	end

	-- The stretch of the transitions of z at index i: t is in
	-- [times[i], times[i + 1]) (i = 0: before the first).
	local function listed(z, i)
		local o = i > 0 and z.offs[i] or z.first
		local p = i > 1 and z.offs[i - 1] or z.first
		if i == 0 then
			p = o
		end
		return i > 0 and z.times[i] or -INF, z.times[i + 1], o, p
	end

	-- The stretch after the last transition of z, around t.
	local function ruled(z, t)
		local n = #z.times
		local last = n > 0 and z.times[n] or -INF
		local _, _, lo, lp = listed(z, n)
		if z.rule == nil then
			return last, INF, lo, lp
		end
		local a, b = rule_changes(z.rule, t)
		local o = rule_offset(z.rule, t)
		if a <= last then
			-- The rule takes over at the last transition.
			return last, b, o, n > 0 and lp or o
		end
		return a, b, o, rule_offset(z.rule, a - 1)
	end

	--[[
	The stretch of time around instant t with one offset in zone z:
	a <= t < b (a may be -INF, b INF), its offset o, and p, the offset
	before a (o when there is no change at a).
	]]
	function tz.segment(z, t)
		local s = z.last
		if s and t >= s[1] and t < s[2] then
			return s[1], s[2], s[3], s[4]
		end
		local times, n = z.times, #z.times
		local a, b, o, p
		if n > 0 and t < times[n] then
			local lo, hi = 0, n
			while hi - lo > 1 do
				local mid = floor((lo + hi) / 2)
				if times[mid] <= t then
					lo = mid
				else
					hi = mid
				end
			end
			a, b, o, p = listed(z, lo)
		else
			a, b, o, p = ruled(z, t)
		end
		z.last = { a, b, o, p }
		return a, b, o, p
	end

	--[[
	Local time l in zone z, as an instant: the first instant at or after
	t whose local time is l or later (so, of a local time shown twice,
	the first; of one that a change skipped, the change), and the
	offset then. The caller makes sure that t's own local time is before
	l.
	]]
	function tz.first(z, l, t)
		local a, b, o = tz.segment(z, t)
		while true do
			if l < a + o then
				return a, o
			elseif l < b + o then
				return l - o, o
			end
			a, b, o = tz.segment(z, b)
		end
	end

	-- For tests/tzcheck.c, which decodes zone texts of its own.
	tz.decode = decode
	return tz
end)()

--[[
Cron expressions (SPEC, "Recurring events"). cron.parse() turns an
expression into a table of its fields, refusing anything malformed with a
message that names the field and the token; cron.next() finds the first
occurrence after an instant in a zone.

Fields: second (6 and 7 fields only; 0 otherwise), minute, hour, month and
year (7 fields only) are next-value tables: t[v] is the first value >= v
that the field matches, nil past the last. The days a month matches
depend only on its length and the weekday of its first day, so they are
computed for each such shape the first time a search meets it, and kept
in the same kind of table (c.shapes). With 5 fields, a day matches when
either day field does if both are restricted (neither is * nor ?), as in
Unix cron; with 6 or 7, when both do, as in Spring and Quartz.

DST (SPEC): an expression whose hour field is * or a step "follows elapsed
time": it fires at each instant whose local time matches, so a local time
that does not exist fires nothing and one that occurs twice fires twice.
Any other expression fires once per matching local time: at its first
occurrence, or at the first instant after a gap that skipped it. That is
"the first instant whose local time is at least the one matched, after
every local time already shown": see next_fixed().

Work is bounded: a search goes at most 400 years (the Gregorian calendar
repeats after that, so nothing found means never) or to the end of its
year field; an expression that can never match is refused when it is
parsed, after the same bounded search.
]]
cron = (function()
	local cron = {}

	local MONTHS = { jan = 1, feb = 2, mar = 3, apr = 4, may = 5, jun = 6,
	    jul = 7, aug = 8, sep = 9, oct = 10, nov = 11, dec = 12 }
	local DAYS = { sun = 0, mon = 1, tue = 2, wed = 3, thu = 4, fri = 5,
	    sat = 6 }
	local QUARTZ_DAYS = { sun = 1, mon = 2, tue = 3, wed = 4, thu = 5,
	    fri = 6, sat = 7 }
	local MACROS = { ['@yearly'] = '0 0 1 1 *', ['@annually'] = '0 0 1 1 *',
	    ['@monthly'] = '0 0 1 * *', ['@weekly'] = '0 0 * * 0',
	    ['@daily'] = '0 0 * * *', ['@midnight'] = '0 0 * * *',
	    ['@hourly'] = '0 * * * *' }
	local EXPR_MAX = 1024
	local SEARCH_YEARS = 400
	local YEAR_MAX = 9999

	local SECOND = { name = 'second', min = 0, max = 59,
	    nan = 'is not a number' }
	local MINUTE = { name = 'minute', min = 0, max = 59,
	    nan = 'is not a number' }
	local HOUR = { name = 'hour', min = 0, max = 23,
	    nan = 'is not a number' }
	local DOM = { name = 'day-of-month', min = 1, max = 31, days = true,
	    nan = 'is not a number' }
	local MONTH = { name = 'month', min = 1, max = 12, names = MONTHS,
	    nan = 'is not a month (1-12 or JAN-DEC)' }
	local DOW = { name = 'day-of-week', min = 0, max = 7, names = DAYS,
	    days = true, nan = 'is not a day of the week (0-7 or SUN-SAT)' }
	local QUARTZ_DOW = { name = 'day-of-week', min = 1, max = 7,
	    names = QUARTZ_DAYS, days = true,
	    nan = 'is not a day of the week (1-7 or SUN-SAT)' }
	local YEAR = { name = 'year', min = 1970, max = 2099,
	    nan = 'is not a number' }

	-- Refuse the expression being parsed (p) for its current field.
	local function refuse(p, fmt, ...)
		fail('bad cron expression "%s": %s field: ' .. fmt,
		    show(p.expr), p.field.name, ...)
	end

	-- The value of token tok of element e: a number in the field's
	-- range, or a name. high: tok ends a range (where SUN is 7 in Unix
	-- days of the week, so that FRI-SUN reads as it should).
	local function value(p, tok, e, high)
		local f = p.field
		if tok == '' then
			refuse(p, '"%s" is missing a value', show(e))
		end
		local n
		if match(tok, '^%d+$') then
			n = #tok <= 4 and tonumber(tok) or INF
			if n < f.min or n > f.max then
				refuse(p, '"%s" is out of range %d-%d',
				    show(tok), f.min, f.max)
			end
			return n
		end
		n = f.names and f.names[tok:lower()]
		if n == nil then
			refuse(p, '"%s" %s', show(tok), f.nan)
		end
		if high and f == DOW and n == 0 then
			return 7
		end
		return n
	end

	-- The step s of element e: 1 to the number of values of the field.
	local function step(p, s, e)
		local f = p.field
		local most = f == DOW and 7 or f.max - f.min + 1
		if s == '' then
			refuse(p, '"%s" is missing a value', show(e))
		end
		if not match(s, '^%d+$') then
			refuse(p, 'step "%s" is not a number', show(s))
		end
		local n = #s <= 4 and tonumber(s) or INF
		if n < 1 or n > most then
			refuse(p, 'step "%s" is out of range 1-%d', show(s),
			    most)
		end
		return n
	end

	-- Add the values of element e (*, A, A-B, each with an optional
	-- /STEP; A/STEP runs to the field's last value) to set.
	local function plain(p, e, set)
		local f = p.field
		local base, s = match(e, '^([^/]*)/(.*)$')
		base = base or e
		local lo, hi
		if base == '*' then
			lo, hi = f.min, f.max
		else
			local a, b = match(base, '^([^%-]*)%-(.*)$')
			if a then
				-- SUN ends a range as 7 after another day (FRI-SUN),
				-- as 0 after Sunday itself (SUN-SUN).
				lo = value(p, a, e)
				hi = value(p, b, e, lo > 0)
				if lo > hi then
					refuse(p, 'range "%s" runs backwards',
					    show(base))
				end
			else
				lo = value(p, base, e)
				hi = s and f.max or lo
			end
		end
		for v = lo, hi, s and step(p, s, e) or 1 do
			set[v] = true
		end
	end

	-- Element e of the day-of-month field when it is L, L-n, LW or nW:
	-- added to days' specials; false when it is none of them.
	local function dom_special(p, e, days)
		local u = e:upper()
		if u == 'L' or u == 'LW' then
			days.special[#days.special + 1] = { kind = u, n = 0 }
			return true
		end
		local n = match(u, '^L%-')
		if n then
			n = e:sub(3)
			if not match(n, '^%d+$') then
				refuse(p, 'offset "%s" in "%s" is not a number',
				    show(n), show(e))
			end
			if #n > 4 or tonumber(n) > 30 then
				refuse(p, 'offset "%s" in "%s" is out of ' ..
				    'range 0-30', show(n), show(e))
			end
			days.special[#days.special + 1] =
			    { kind = 'L', n = tonumber(n) }
			return true
		end
		n = match(u, '^(.*)W$')
		if n == nil then
			return false
		end
		if not match(n, '^%d+$') then
			refuse(p, '"%s": W takes one day of the month, ' ..
			    'as in 15W (or LW)', show(e))
		end
		days.special[#days.special + 1] =
		    { kind = 'W', n = value(p, n, e) }
		return true
	end

	-- Element e of the day-of-week field when it is nL or n#k: added to
	-- days' specials; false when it is neither.
	local function dow_special(p, e, days)
		local u = e:upper()
		if u == 'L' then
			refuse(p, '"%s" needs a day before it, as in 5L or ' ..
			    'FRIL (the last Friday of the month)', show(e))
		end
		local d = match(u, '^(.+)L$')
		if d then
			days.special[#days.special + 1] =
			    { kind = 'L', wd = value(p, e:sub(1, #d), e) }
			return true
		end
		local k
		d, k = match(e, '^(.*)#(.*)$')
		if d == nil then
			return false
		end
		if d == '' then
			refuse(p, '"%s" needs a day before "#", as in MON#2',
			    show(e))
		end
		if not match(k, '^%d+$') then
			refuse(p, 'occurrence "%s" in "%s" is not a number',
			    show(k), show(e))
		end
		if #k > 1 or k == '0' or k > '5' then
			refuse(p, 'occurrence "%s" in "%s" is out of range 1-5',
			    show(k), show(e))
		end
		days.special[#days.special + 1] =
		    { kind = '#', wd = value(p, d, e), n = tonumber(k) }
		return true
	end

	-- The next-value table of set over [min, max].
	local function next_table(set, min, max)
		local t, v = {}, nil
		for i = max, min, -1 do
			if set[i] then
				v = i
			end
			t[i] = v
		end
		return t
	end

	-- The elements of field token tok, each checked by each(e).
	local function elements(p, tok, each)
		if tok:find(',,', 1, true) or tok:sub(1, 1) == ',' or
		    tok:sub(-1) == ',' then
			refuse(p, '"%s" has an empty element', show(tok))
		end
		for e in tok:gmatch('[^,]+') do
			if e == '?' then
				if not p.field.days then
					refuse(p, '"?" is allowed only in ' ..
					    'day-of-month and day-of-week')
				end
				refuse(p, '"?" must stand alone')
			end
			each(e)
		end
	end

	-- A field of plain values: its next-value table.
	local function field(p, f, tok)
		p.field = f
		local set = {}
		if tok == '?' then
			refuse(p, '"?" is allowed only in day-of-month and ' ..
			    'day-of-week')
		end
		elements(p, tok, function(e)
			plain(p, e, set)
		end)
		return next_table(set, f.min, f.max)
	end

	-- A day field: { star = * or ?, set = plain values, special = the
	-- others }; days of the week as 0-6, Sunday 0.
	local function day_field(p, f, tok, special)
		p.field = f
		local days = { set = {}, special = {},
		    star = tok == '*' or tok == '?' }
		if tok == '?' then
			return days
		end
		elements(p, tok, function(e)
			if e:find('/', 1, true) or not special(p, e, days) then
				plain(p, e, days.set)
			end
		end)
		if f == QUARTZ_DOW then
			local set = {}
			for v = 1, 7 do
				set[v - 1] = days.set[v]
			end
			days.set = set
			for _, s in ipairs(days.special) do
				s.wd = s.wd - 1
			end
		else
			days.set[0] = days.set[0] or days.set[7]
			for _, s in ipairs(days.special) do
				s.wd = s.wd and s.wd % 7
			end
		end
		return days
	end

	-- Whether day d (weekday wd) of a month of len days is one of dom's.
	local function dom_has(dom, d, len, wd)
		if dom.star or dom.set[d] then
			return true
		end
		for _, s in ipairs(dom.special) do
			local want
			if s.kind == 'L' then
				want = len - s.n
			elseif s.kind == 'LW' then
				local last = (wd + len - d) % 7
				want = len -
				    (last == 6 and 1 or last == 0 and 2 or 0)
			elseif s.n <= len then
				-- nW: the weekday nearest to day n, within
				-- the month.
				local w = (wd + s.n - d) % 7
				want = s.n
				if w == 6 then
					want = s.n == 1 and 3 or s.n - 1
				elseif w == 0 then
					want = s.n == len and s.n - 2 or s.n + 1
				end
			end
			if d == want then
				return true
			end
		end
		return false
	end

	-- Whether day d (weekday wd) of a month of len days is one of dow's.
	local function dow_has(dow, d, len, wd)
		if dow.star or dow.set[wd] then
			return true
		end
		for _, s in ipairs(dow.special) do
			local nth = floor((d - 1) / 7) + 1
			if s.wd == wd and ((s.kind == 'L' and d + 7 > len) or
			    (s.kind == '#' and nth == s.n)) then
				return true
			end
		end
		return false
	end

	-- The next-value table of the days c matches in a month of len
	-- days whose first day is weekday w1.
	local function month_days(c, len, w1)
		local key = len * 8 + w1
		local t = c.shapes[key]
		if t == nil then
			local set = {}
			for d = 1, len do
				local wd = (w1 + d - 1) % 7
				local a = dom_has(c.dom, d, len, wd)
				local b = dow_has(c.dow, d, len, wd)
				if (c.either and (a or b)) or
				    (not c.either and a and b) then
					set[d] = true
				end
			end
			t = next_table(set, 1, len)
			c.shapes[key] = t
		end
		return t
	end

	--[[
	The first local second >= from that c matches, or nil: with to, only
	below to (then the second result is false), else within
	SEARCH_YEARS of from and the year field (then it is true: there is
	none).
	]]
	local function next_local(c, from, to)
		local day = floor(from / DAY)
		local sod = from - day * DAY
		local y, m, d = calendar.date(day)
		local h, mi = floor(sod / 3600), floor(sod / 60) % 60
		local s = sod % 60
		local last = y + SEARCH_YEARS
		if c.year_last < last then
			last = c.year_last
		end
		while true do
			local ny = y
			if c.year then
				local y0 = c.year_first
				ny = c.year[y > y0 and y or y0]
			end
			if ny == nil or ny > last then
				return nil, true
			elseif ny ~= y then
				y, m, d, h, mi, s = ny, 1, 1, 0, 0, 0
			end
			local nm = c.month[m]
			if nm == nil then
				y, m, d, h, mi, s = y + 1, 1, 1, 0, 0, 0
			elseif nm ~= m then
				m, d, h, mi, s = nm, 1, 0, 0, 0
			else
				local first = calendar.days(y, m, 1)
				if to and first * DAY >= to then
					return nil, false
				end
				local nd = month_days(c, calendar.length(y, m),
				    calendar.weekday(first))[d]
				local nh = c.hour[h]
				local nmi = c.minute[mi]
				local ns = c.second[s]
				if nd == nil then
					m, d, h, mi, s = m + 1, 1, 0, 0, 0
				elseif nd ~= d then
					d, h, mi, s = nd, 0, 0, 0
				elseif nh == nil then
					d, h, mi, s = d + 1, 0, 0, 0
				elseif nh ~= h then
					h, mi, s = nh, 0, 0
				elseif nmi == nil then
					h, mi, s = h + 1, 0, 0
				elseif nmi ~= mi then
					mi, s = nmi, 0
				elseif ns == nil then
					mi, s = mi + 1, 0
				else
					local l = (first + d - 1) * DAY +
					    h * 3600 + mi * 60 + ns
					if to and l >= to then
						return nil, false
					end
					return l, false
				end
			end
		end
	end

	-- Refuse c, parsed from p, if it can never match (see the header).
	local function check_matches(p, c)
		local start = calendar.days(c.year_first, 1, 1) * DAY
		if next_local(c, start) then
			return
		end
		local why = 'it matches no date in the years of its year field'
		local days = { star = true }
		local loose = { dom = c.dom, dow = days, either = false,
		    shapes = {}, second = c.second, minute = c.minute,
		    hour = c.hour, month = c.month, year_first = 2000,
		    year_last = YEAR_MAX }
		if not next_local(loose, 946684800) then
			why = 'it never matches: no month of its month ' ..
			    'field has a day its day-of-month field names'
		elseif c.year_last == YEAR_MAX then
			why = 'it never matches: its day-of-month and ' ..
			    'day-of-week fields never fall on the same day'
		end
		fail('bad cron expression "%s": %s', show(p.expr), why)
	end

	-- The fields of expr, checked: 5, 6 or 7 tokens, or a macro; as 6
	-- or 7 (a second field 0 first when there are 5), and how many there
	-- were.
	local function tokens(expr)
		if type(expr) ~= 'string' or expr == '' then
			fail('bad cron expression "": empty')
		end
		if #expr > EXPR_MAX then
			fail('bad cron expression: longer than %d bytes (%d)',
			    EXPR_MAX, #expr)
		end
		local t = {}
		local macro = match(expr, '^%s*(@%S*)%s*$')
		if macro then
			local fields = MACROS[macro:lower()]
			if fields == nil then
				fail('bad cron expression "%s": unknown ' ..
				    'macro (use @yearly, @annually, ' ..
				    '@monthly, @weekly, @daily, @midnight ' ..
				    'or @hourly)', show(expr))
			end
			expr = fields
		end
		for tok in expr:gmatch('%S+') do
			t[#t + 1] = tok
		end
		if #t == 0 then
			fail('bad cron expression "%s": empty', show(expr))
		elseif #t < 5 or #t > 7 then
			fail('bad cron expression "%s": %d field%s (use 5: ' ..
			    'minute hour day-of-month month day-of-week; 6 ' ..
			    'with seconds first; or 7 with a year last)',
			    show(expr), #t, #t == 1 and '' or 's')
		end
		if #t == 5 then
			return { '0', t[1], t[2], t[3], t[4], t[5] }, 5
		end
		return t, #t
	end

	--[[
	Parse cron expression expr (quartz: numeric days of the week are
	Quartz's, 1 for Sunday). Returns its table, or refuses the call.
	]]
	local function parse(expr, quartz)
		local t, n = tokens(expr)
		local p = { expr = expr }
		local c = { shapes = {},
		    second = field(p, SECOND, t[1]),
		    minute = field(p, MINUTE, t[2]),
		    hour = field(p, HOUR, t[3]),
		    dom = day_field(p, DOM, t[4], dom_special),
		    month = field(p, MONTH, t[5]),
		    dow = day_field(p, quartz and QUARTZ_DOW or DOW, t[6],
		        dow_special),
		    elapsed = t[3] == '*' or t[3]:find('/', 1, true) ~= nil }
		c.either = n == 5 and not c.dom.star and not c.dow.star
		if t[7] then
			c.year = field(p, YEAR, t[7])
			c.year_first = c.year[YEAR.min]
			c.year_last = YEAR.max
		else
			c.year_first, c.year_last = 2000, YEAR_MAX
		end
		check_matches(p, c)
		return c
	end

	-- The expressions parsed last, kept across calls: a claim parses
	-- its event's expression at every occurrence, and parsing (with the
	-- search that refuses one that never matches) costs about 55 us, a
	-- whole call for the next occurrence of a parsed one about 10 (Redis
	-- 7.0.15 here). A parsed expression is never changed but for the
	-- days it caches, which depend on it alone.
	local PARSED_MAX = 256
	local parsed, nparsed = {}, 0

	-- cron.parse(expr, quartz): parse(), remembered.
	function cron.parse(expr, quartz)
		local key = (quartz and 'q' or 'u') .. tostring(expr)
		local c = parsed[key]
		if c == nil then
			c = parse(expr, quartz)
			if nparsed == PARSED_MAX then
				parsed, nparsed = {}, 0
			end
			parsed[key] = c
			nparsed = nparsed + 1
		end
		return c
	end

	-- The first instant >= u at which c fires in zone z, when c follows
	-- elapsed time: the first stretch of one offset that has a local
	-- time c matches; and that offset.
	local function next_elapsed(c, z, u)
		local a, b, o = tz.segment(z, u)
		while true do
			local from = u > a and u or a
			local l, over = next_local(c, from + o, b + o)
			if l then
				return l - o, o
			end
			if over or b == INF then
				return nil
			end
			a, b, o = tz.segment(z, b)
		end
	end

	-- The same when c does not follow elapsed time: the first instant
	-- whose local time is at least l, the first local time c matches
	-- after every one already shown up to u - 1 (the latest, seen: the
	-- local time of u - 1, or the one before a change back).
	local function next_fixed(c, z, u)
		local a, b, o, p = tz.segment(z, u - 1)
		local seen = u - 1 + o
		if a - 1 + p > seen then
			seen = a - 1 + p
		end
		local l = next_local(c, seen + 1)
		if l == nil then
			return nil
		end
		return tz.first(z, l, u - 1)
	end

	--[[
	The first occurrence of c in zone z strictly after instant after
	(ms): its ms and the zone's offset then (seconds), or nil when there
	is none (the year field is over, or it would be after TIME_MAX).
	]]
	function cron.next(c, z, after)
		local u = floor(after / 1000) + 1
		local t, o
		if c.elapsed then
			t, o = next_elapsed(c, z, u)
		else
			t, o = next_fixed(c, z, u)
		end
		if t == nil or t * 1000 > TIME_MAX then
			return nil
		end
		return t * 1000, o
	end
	return cron
end)()

--[[
A recurrence as ARGV give it, checked, in the terms of an event's record
(see "Recurrences" above): { k = 'every', e = the period, s = the anchor,
f = from, u = until } for a fixed rate, as recur_next() reads it, and
{ k = 'cron', c = the parsed expression, z = the zone, f, u } for a cron
expression: its matches at or after f. From and until are ms, either
absent; an anchor s that from does not give is the caller's to set.
]]
recurrence = (function()
	local recurrence = {}

	local OCCURRENCES_MAX = 1000

	-- The options of read(), and those a caller may add.
	local OWN = { tz = true, dialect = true, from = true, ['until'] = true }

	-- The zone called name, or refuse it.
	local function zone(name)
		local z = tz.find(name)
		if z then
			return z
		end
		if TZDATA.version == nil then
			fail('bad time zone "%s": this library has no ' ..
			    'zone table but UTC (load the built library, ' ..
			    'lua/built/lapse.lua, not lua/lapse.lua)',
			    show(name))
		end
		local like = tz.like(name)
		fail('bad time zone "%s": not in tzdata %s%s', show(name),
		    TZDATA.version,
		    like and format(' (did you mean "%s"?)', like) or '')
	end

	-- The options in args from index i, as name -> value: each a name
	-- in OWN or extra, at most once, with its value.
	local function options(args, i, extra, names)
		local opts = {}
		while args[i] ~= nil do
			local name, v = args[i], args[i + 1]
			if not OWN[name] and not extra[name] then
				fail('unknown option "%s" (use %s)', show(name),
				    names)
			end
			if opts[name] then
				fail('option "%s" given twice', name)
			end
			if v == nil then
				fail('missing value after "%s"', name)
			end
			opts[name] = v
			i = i + 2
		end
		return opts
	end

	recurrence.zone = zone

	-- Refuse a window whose until comes before its first occurrence
	-- could, from (lapse_schedule's message).
	function recurrence.check_window(from, upto)
		if from and upto and upto < from then
			fail('empty window: the first occurrence from %s ' ..
			    'would come after until %s', decimal(from),
			    decimal(upto))
		end
	end

	--[[
	The recurrence in args from index i: cron EXPR or every MS, then
	options as name-value pairs: tz ZONE and dialect quartz (cron only),
	from MS and until MS, and the caller's own (extra: name -> true;
	names: how the message for an unknown option lists them all).
	Returns the recurrence (a fixed rate without from has no anchor yet)
	and the values of the caller's options (strings); refuses anything
	else, with lapse_schedule's messages where it has the same argument.
	]]
	function recurrence.read(args, i, extra, names)
		local kind, what = args[i], args[i + 1]
		if kind ~= 'cron' and kind ~= 'every' then
			fail('bad recurrence "%s" (use cron EXPR or every MS)',
			    show(kind or ''))
		end
		local opts = options(args, i + 2, extra, names)
		local r = { k = kind }
		if kind == 'cron' then
			local d = opts.dialect
			if d ~= nil and d ~= 'quartz' then
				fail('bad dialect "%s" (use quartz)', show(d))
			end
			r.c = cron.parse(what, d == 'quartz')
			r.z = zone(opts.tz or 'UTC')
		else
			r.e = schedule_time('every', what)
			if opts.tz or opts.dialect then
				fail('%s applies to cron only',
				    opts.tz and 'tz' or 'dialect')
			end
		end
		r.f = opts.from and option_time('from', opts.from)
		r.u = opts['until'] and option_time('until', opts['until'])
		r.s = r.f
		recurrence.check_window(r.f, r.u)
		return r, opts
	end

	-- The first occurrence of r strictly after after (ms): its ms and
	-- the UTC offset then (seconds; 0 for a fixed rate), or nil.
	function recurrence.next(r, after)
		if r.k == 'every' then
			return recur_next(r, after), 0
		end
		if r.f and after < r.f - 1 then
			after = r.f - 1
		end
		local t, o = cron.next(r.c, r.z, after)
		if t == nil or (r.u and t > r.u) then
			return nil
		end
		return t, o
	end

	-- A count of occurrences, 1 to OCCURRENCES_MAX.
	function recurrence.count(v)
		local n = whole(v, OCCURRENCES_MAX)
		if n == nil or n == 0 then
			fail('bad count "%s": must be 1 to %d', show(v),
			    OCCURRENCES_MAX)
		end
		return n
	end

	return recurrence
end)()

--[[
lapse_next: the next occurrences of a recurrence, computed and validated
as scheduling it would, without touching any key (`lapse next`, and any
application that shows a schedule before it creates it).

KEYS: none
ARGV: (cron EXPR [tz ZONE] [dialect quartz] | every MS) [from MS]
      [until MS] [after MS] [count N]
  cron EXPR     5, 6 or 7 fields, or a macro (SPEC, "Recurring events")
  tz ZONE       an IANA zone or link of the library's tzdata (default UTC)
  dialect quartz  numeric days of the week as Quartz's (1 is Sunday)
  every MS      a fixed rate of MS milliseconds (1 .. 100 years), anchored
                at from (default: now, as lapse_schedule anchors it)
  from MS, until MS  the window: no occurrence before from or after until
  after MS      occurrences strictly after MS (default: now - 1, so that
                one due at this very millisecond counts)
  count N       at most N occurrences (1 .. 1000, default 1)
Options come in any order, each at most once. Now is this server's TIME.
Reply: { ms1, offset1, ms2, offset2, ... }: each occurrence and the zone's
UTC offset at it, in seconds (0 for every); fewer than N when the
recurrence ends (until, the last year of its year field, or 9999).
]]
local function next_occurrences(keys, args)
	if #keys ~= 0 then
		fail('expected 0 keys, got %d', #keys)
	end
	local r, opts = recurrence.read(args, 1, { after = true, count = true },
	    'tz, dialect, from, until, after or count')
	local count = opts.count and recurrence.count(opts.count) or 1
	local after = opts.after and option_time('after', opts.after)
	local anchor = r.k == 'every' and r.s == nil
	local now = (after == nil or anchor) and now_ms()
	after = after or now - 1
	if anchor then
		r.s = now
		recurrence.check_window(now, r.u)
	end
	local out = {}
	for _ = 1, count do
		local t, o = recurrence.next(r, after)
		if t == nil or t > TIME_MAX then
			break
		end
		out[#out + 1] = t
		out[#out + 1] = o
		after = t
	end
	return out
end

--[[
The reactor registry and the status page's reads. Each reactor says hello
on every namespace it serves every few seconds (lapse_hello): an entry in
lapse:{NS}:reactors (id -> the Redis time of its last hello) and its
description in lapse:{NS}:reactor-info, both in the namespace's slot, so
that a Redis Cluster can hold them as it holds the namespace. An entry not
renewed within STALE ms counts as gone: readers skip it and the next hello
of any reactor prunes it; a reactor that stops cleanly says goodbye
(lapse_bye). lapse_status answers everything the status page shows of a
namespace in one read-only call.
]]
local registry = (function()
	local registry = {}
	-- A reactor id, host, version and listen address: printable ASCII
	-- without spaces, at most this many bytes.
	local WORD_MAX = { id = 128, host = 255, version = 64, listen = 64 }
	local STALE_MIN, STALE_MAX = 1000, 86400000
	local PID_MAX = 2147483647
	-- Stale entries one hello prunes; entries one status reads; items of
	-- each list of lapse_status.
	local PRUNE_MAX = 100
	local REACTORS_MAX = 100
	local LIMIT_MAX = 100

	-- A value as reply text: numbers in plain decimal.
	local function text(v)
		if type(v) == 'number' then
			return decimal(v)
		end
		return tostring(v or '')
	end

	local function reactor_keys(ns)
		local p = prefix(ns)
		return p .. 'reactors', p .. 'reactor-info'
	end

	-- A word of kind what: 1 to WORD_MAX[what] bytes 0x21-0x7e; '' too
	-- when empty_ok.
	local function check_word(what, s, empty_ok)
		if s == '' and empty_ok then
			return
		end
		if s == nil or s == '' then
			fail('bad %s: empty', what)
		end
		if #s > WORD_MAX[what] then
			fail('bad %s: longer than %d bytes (%d)', what,
			    WORD_MAX[what], #s)
		end
		local at = s:find('[^\33-\126]')
		if at then
			fail('bad %s "%s": byte 0x%02x at offset %d is not ' ..
			    'allowed (bytes 0x21-0x7e)', what, show(s),
			    s:byte(at), at - 1)
		end
	end

	local function check_stale(v)
		local n = whole(v, STALE_MAX)
		if n == nil or n < STALE_MIN then
			fail('bad stale "%s": must be %d to %d ms',
			    show(v or ''), STALE_MIN, STALE_MAX)
		end
		return n
	end

	--[[
	lapse_hello: reactor ID is attached to namespace NS; prune the
	entries of reactors not heard of within STALE.

	KEYS: lapse:{NS}:reactors lapse:{NS}:reactor-info
	ARGV: NS ID STALE HOST PID VERSION STARTED LISTEN
	  ID       the reactor's id, unique while it runs (lapsed:
	           HOST:PID:STARTED), 1-128 bytes 0x21-0x7e
	  STALE    ms (1000 .. 86400000): an entry last seen before now -
	           STALE is removed (at most 100 a call); readers pass the
	           same to lapse_status
	  HOST     1-255 bytes 0x21-0x7e
	  PID      1 .. 2147483647
	  VERSION  lapsed's version, 1-64 bytes 0x21-0x7e
	  STARTED  when it started, ms since the epoch (its host's clock:
	           shown, never compared)
	  LISTEN   its status page's address, '' when it serves none
	Reply: { now, pruned }: the Redis time written as ID's last hello,
	and how many stale entries this call removed.
	]]
	function registry.hello(keys, args)
		local ns = args[1]
		check_ns(ns)
		local rkey, ikey = reactor_keys(ns)
		check_keys(keys, { rkey, ikey })
		check_nargs(args, 8,
		    'NS ID STALE HOST PID VERSION STARTED LISTEN')
		check_word('id', args[2])
		local stale = check_stale(args[3])
		check_word('host', args[4])
		local pid = whole(args[5], PID_MAX)
		if pid == nil or pid == 0 then
			fail('bad pid "%s": must be 1 to %d', show(args[5]),
			    PID_MAX)
		end
		check_word('version', args[6])
		local started = whole(args[7], TIME_MAX)
		if started == nil then
			fail('bad start time "%s": must be 0 to %d ms',
			    show(args[7]), TIME_MAX)
		end
		check_word('listen', args[8], true)
		check_type(rkey, 'zset')
		check_type(ikey, 'hash')

		local now = now_ms()
		local old = redis_call('ZRANGEBYSCORE', rkey, '-inf',
		    '(' .. decimal(now - stale), 'LIMIT', 0, PRUNE_MAX)
		if #old > 0 then
			redis_call('ZREM', rkey, unpack(old))
			redis_call('HDEL', ikey, unpack(old))
		end
		redis_call('ZADD', rkey, now, args[2])
		redis_call('HSET', ikey, args[2], msgpack_pack({ h = args[4],
		    p = pid, v = args[6], s = started, l = args[8] }))
		return { now, #old }
	end

	--[[
	lapse_bye: reactor ID leaves namespace NS (a clean stop).

	KEYS: lapse:{NS}:reactors lapse:{NS}:reactor-info
	ARGV: NS ID
	Reply: 1 when ID was attached, else 0.
	]]
	function registry.bye(keys, args)
		local ns = args[1]
		check_ns(ns)
		local rkey, ikey = reactor_keys(ns)
		check_keys(keys, { rkey, ikey })
		check_nargs(args, 2, 'NS ID')
		check_word('id', args[2])
		check_type(rkey, 'zset')
		check_type(ikey, 'hash')
		local n = redis_call('ZREM', rkey, args[2])
		redis_call('HDEL', ikey, args[2])
		return n
	end

	-- The fields of a stream entry's { f1, v1, ... } as a table.
	local function fields(flat)
		local t = {}
		for i = 1, #flat, 2 do
			t[flat[i]] = flat[i + 1]
		end
		return t
	end

	-- The first limit pending events, earliest first: id, due.
	local function upcoming(c, limit)
		if limit == 0 then
			return {}
		end
		local r = read_typed('zset', 'ZRANGE', c.due, 0, limit - 1,
		    'WITHSCORES')
		for i = 2, #r, 2 do
			r[i] = (due_of(r[i]))
		end
		return r
	end

	-- The first limit events in flight, earliest lease first: id,
	-- lease deadline, attempt (0 when its record is missing).
	local function leased(c, limit)
		local out = {}
		if limit == 0 then
			return out
		end
		local r = read_typed('zset', 'ZRANGE', c.inflight, 0,
		    limit - 1, 'WITHSCORES')
		for i = 1, #r, 2 do
			local id = r[i]
			local raw = read_typed('hash', 'HGET', c.jobs, id)
			out[#out + 1] = id
			out[#out + 1] = (due_of(r[i + 1]))
			out[#out + 1] = record_unpack(raw).a
		end
		return out
	end

	-- The limit newest entries of a stream, newest first: for each, the
	-- values of names.
	local function stream_tail(key, limit, names)
		local out = {}
		if limit == 0 then
			return out
		end
		local r = read_typed('stream', 'XREVRANGE', key, '+', '-',
		    'COUNT', limit)
		for _, e in ipairs(r) do
			local f = fields(e[2])
			for _, name in ipairs(names) do
				out[#out + 1] = text(f[name])
			end
		end
		return out
	end

	-- The limit newest elements of the list sink, newest first, as
	-- stream_tail gives the stream's: id (base64 as "b64:...", as the
	-- element has it), due, fired, via, attempt.
	local function list_tail(key, limit)
		local out = {}
		if limit == 0 then
			return out
		end
		local r = read_typed('list', 'LRANGE', key, -limit, -1)
		for i = #r, 1, -1 do
			local ok, o = pcall(cjson.decode, r[i])
			if not ok or type(o) ~= 'table' then
				o = {}
			end
			local id = o.id or (o.id_b64 and 'b64:' .. o.id_b64)
			for _, v in ipairs({ id or '', o.due or '',
			    o.fired or '', o.via or '', o.attempt or '' }) do
				out[#out + 1] = text(v)
			end
		end
		return out
	end

	-- The reactors seen within stale, most recent first: id, last seen,
	-- host, pid, version, started, listen.
	local function reactors(rkey, ikey, now, stale)
		local r = read_typed('zset', 'ZREVRANGEBYSCORE', rkey, '+inf',
		    decimal(now - stale), 'WITHSCORES', 'LIMIT', 0,
		    REACTORS_MAX)
		local out = {}
		for i = 1, #r, 2 do
			local raw = read_typed('hash', 'HGET', ikey, r[i])
			local ok, d = pcall(msgpack_unpack, raw or '')
			if not ok or type(d) ~= 'table' then
				d = {}
			end
			out[#out + 1] = r[i]
			out[#out + 1] = (due_of(r[i + 1]))
			out[#out + 1] = text(d.h)
			out[#out + 1] = text(d.p)
			out[#out + 1] = text(d.v)
			out[#out + 1] = text(d.s)
			out[#out + 1] = text(d.l)
		end
		return out
	end

	--[[
	lapse_status: what the status page shows of a namespace, read-only.

	KEYS: lapse:{NS}:due lapse:{NS}:jobs lapse:{NS}:inflight
	      lapse:{NS}:dead lapse:{NS}:fired lapse:{NS}:ready
	      lapse:{NS}:counts lapse:{NS}:reactors lapse:{NS}:reactor-info
	ARGV: NS LIMIT STALE
	  LIMIT  items of each list below (0 .. 100)
	  STALE  as lapse_hello's: reactors not seen within it are left out
	Reply: { 'now', ms, 'pending', n, 'overdue', n, 'next_due', ms or -1,
	'inflight', n, 'dead', n, 'fired', n, 'ready', n, 'missed', n,
	'upcoming', { id, due, ... }, 'leased', { id, lease, attempt, ... },
	'dead_recent', { id, failed,
	attempts, error, ... }, 'fired_recent', { id, due, fired, via,
	attempt, ... }, 'reactors', { id, last_seen, host, pid, version,
	started, listen, ... } }: the counts as lapse_stats has them (missed:
	lapse:{NS}:counts's); upcoming the first LIMIT pending events,
	earliest first; leased the first LIMIT events in flight,
	earliest lease first (attempt 0: no record); dead_recent the LIMIT
	newest dead entries and fired_recent the LIMIT newest firings (from
	the stream, or from the list when the stream is empty), newest first,
	their fields as the entries hold them ('' when absent); reactors the
	reactors seen within STALE, at most 100, most recent first.
	]]
	function registry.status(keys, args)
		local ns = args[1]
		check_ns(ns)
		local c = delivering(ns)
		local p = c.p
		local rkey, ikey = reactor_keys(ns)
		check_keys(keys, { c.due, c.jobs, c.inflight, c.dead,
		    p .. 'fired', p .. 'ready', p .. 'counts', rkey, ikey })
		check_nargs(args, 3, 'NS LIMIT STALE')
		local limit = whole(args[2], LIMIT_MAX)
		if limit == nil then
			fail('bad limit "%s": must be 0 to %d', show(args[2]),
			    LIMIT_MAX)
		end
		local stale = check_stale(args[3])
		local now = now_ms()
		local counts = read_typed('hash', 'HGET', keys[7], 'missed')
		local fired = read_typed('stream', 'XLEN', keys[5])
		local ready = read_typed('list', 'LLEN', keys[6])
		local recent
		if fired > 0 or ready == 0 then
			recent = stream_tail(keys[5], limit, { 'id', 'due',
			    'fired', 'via', 'attempt' })
		else
			recent = list_tail(keys[6], limit)
		end
		return { 'now', now,
		    'pending', read_typed('zset', 'ZCARD', c.due),
		    'overdue', redis_call('ZCOUNT', c.due, '-inf', now),
		    'next_due', head(c.due),
		    'inflight', read_typed('zset', 'ZCARD', c.inflight),
		    'dead', read_typed('stream', 'XLEN', c.dead),
		    'fired', fired, 'ready', ready,
		    'missed', count_of(counts),
		    'upcoming', upcoming(c, limit),
		    'leased', leased(c, limit),
		    'dead_recent', stream_tail(c.dead, limit, { 'id',
		        'failed', 'attempts', 'error' }),
		    'fired_recent', recent,
		    'reactors', reactors(rkey, ikey, now, stale) }
	end

	return registry
end)()

--[[
lapse_version: the version of this library; clients load theirs with
FUNCTION LOAD REPLACE when the server's is absent or older.

KEYS: none. ARGV: none. Reply: VERSION * 1000000 plus the release of the
tzdata its zone table came from as YYYY * 100 + the letter's rank (2025b:
202502; 0 without a zone table): a build from a newer tzdata replaces the
library of the same VERSION (tools/embed-lua.sh computes the same).
]]
local function version()
	-- Not through api(): the builtins' locals may be unbound yet.
	local y, l = string.match(TZDATA.version or '', '^(%d%d%d%d)(%l)$')
	return VERSION * 1000000 +
	    (y and y * 100 + string.byte(l) - 96 or 0)
end

redis.register_function('lapse_schedule', api(schedule, true))
redis.register_function('lapse_cancel', api(cancel, true))
redis.register_function('lapse_claim', api(claim, true))
redis.register_function('lapse_sweep', api(sweep, true))
redis.register_function('lapse_adopt', api(adopt, true))
redis.register_function('lapse_expired', api(expired, true))
redis.register_function('lapse_ack', api(ack, true))
redis.register_function('lapse_retry', api(retry, true))
redis.register_function('lapse_extend', api(extend, true))
redis.register_function('lapse_release', api(release, true))
redis.register_function('lapse_requeue', api(requeue, true))
redis.register_function('lapse_purge', api(purge, true))
redis.register_function{ function_name = 'lapse_get', callback = api(get),
    flags = { 'no-writes' } }
redis.register_function{ function_name = 'lapse_list', callback = api(list),
    flags = { 'no-writes' } }
redis.register_function{ function_name = 'lapse_stats', callback = api(stats),
    flags = { 'no-writes' } }
redis.register_function('lapse_hello', api(registry.hello, true))
redis.register_function('lapse_bye', api(registry.bye, true))
redis.register_function{ function_name = 'lapse_status',
    callback = api(registry.status), flags = { 'no-writes' } }
redis.register_function{ function_name = 'lapse_next',
    callback = api(next_occurrences), flags = { 'no-writes' } }
redis.register_function{ function_name = 'lapse_version',
    callback = version, flags = { 'no-writes' } }
