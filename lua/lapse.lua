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
times the event has fired so far, c = creation time (ms), and for adopted
events k = the application key, t = its type when it is not a string and
x = why the payload is empty when the value was too large. Readers ignore
keys they do not know, and read fields of the wrong type as absent.

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
lapse_sweep write lapse:{NS}:gone when they fire an adopted event; and
lapse_schedule and lapse_sweep read lapse:{NS}:horizon. All of these share
the {NS} hash tag and so the slot of KEYS[1]. The other exception is an
adopted event's application key, read and deleted by the functions that
fire it and deleted by lapse_cancel (its name is in the event's record).

Redis does not roll back a function that fails half-way, so each function
checks everything that can fail before its first write: its arguments, the
types of its keys, and whether its user may write the keys and channels
that are not in KEYS (FCALL checks those in KEYS before the call). A
refused call changes nothing. What cannot be checked, a sink refusing a
hand-off, is ordered so that it loses nothing (see claim_batch). A caller
who may not publish the wake channel publishes nothing: the event is
written all the same, and the reactors' timers and sweeps fire it.
]]

local VERSION = 5

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
	    string.format, string.byte, string.match, math.floor, math.ceil,
	    table.concat, redis.call, redis.pcall, redis.acl_check_cmd,
	    redis.error_reply, cmsgpack.pack, cmsgpack.unpack, cjson.encode
end
local type, tonumber, tostring, pcall, error, unpack, ipairs
local format, byte, match, floor, ceil, concat
local redis_call, redis_pcall, acl_check, error_reply
local msgpack_pack, msgpack_unpack, json_encode

-- Refuse a call: raise an error that api() turns into a plain error reply
-- (without the script location Redis adds to errors raised by scripts).
local function fail(fmt, ...)
	error({ lapse = 'ERR ' .. format(fmt, ...) })
end

local function api(fn)
	return function(keys, args)
		if not redis_call then
			type, tonumber, tostring, pcall, error, unpack, ipairs,
			    format, byte, match, floor, ceil, concat,
			    redis_call, redis_pcall, acl_check, error_reply,
			    msgpack_pack, msgpack_unpack,
			    json_encode = builtins()
		end
		local ok, r = pcall(fn, keys, args)
		if ok then
			return r
		end
		if type(r) == 'table' and r.lapse then
			return error_reply(r.lapse)
		end
		error(r)
	end
end

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

local function check_id(id)
	if id == nil or id == '' then
		fail('bad id: empty')
	end
	if #id > ID_MAX then
		fail('bad id: longer than %d bytes (%d)', ID_MAX, #id)
	end
	local at = id:find('[%z\1-\32\127]')
	if at then
		fail('bad id "%s": byte 0x%02x at offset %d is not allowed ' ..
		    '(ids are bytes 0x21-0x7e and 0x80-0xff)', show(id),
		    id:byte(at), at - 1)
	end
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
	local h = redis_call('ZRANGE', due_key, 0, 0, 'WITHSCORES')
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

local function record_pack(payload, attempts, created, key, ktype, why)
	return msgpack_pack({ p = payload, a = attempts, c = created,
	    k = key, t = ktype, x = why })
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

The delivery sinks http and exec will be entries of their own: a handoff
that leases the event into lapse:{NS}:inflight and adds it to the records
returned to the reactor. Recurring events will schedule their next
occurrence where the claim core removes a fired event.
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
-- (and type, for an adopted key that is not a string).
local function to_stream(c, id, rec, due, text)
	local a, r = rec.a == 1 and '1' or decimal(rec.a), nil
	if rec.t then
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
	    via = c.via, type = rec.t }
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

-- weight: how many bytes of a sweep's budget (MAXBYTES) each byte of a
-- record costs. A list element is JSON, and a payload that is not JSON
-- text goes in base64: about 60 ms per MiB in Lua, where XADD takes 5 to
-- 7 ms, so a list sweep of binary payloads would hold Redis eight times as
-- long as a stream sweep of the same budget (0.41 s for 8 MiB).
local SINKS = {
	stream = { suffix = 'fired', type = 'stream', handoff = to_stream,
	    weight = 1 },
	list = { suffix = 'ready', type = 'list', handoff = to_list,
	    weight = 8 },
}

local function check_via(via)
	if via ~= 'expired' and via ~= 'timer' and via ~= 'sweep' then
		fail('bad via "%s" (use expired, timer or sweep)',
		    show(via or ''))
	end
end

--[[
The context of a call that fires events: ns, p (the key prefix), the keys
due, jobs and gone, via, the sink (its SINKS entry), skey (its key) and
smax (the stream's trim length as XADD wants it, nil: never trim,
formatted once per call rather than by every XADD); once the arguments
are checked, start() adds now (this server's time) and fired (the same in
decimal, formatted once per call).
]]
local function firing(ns, via, sink, maxlen)
	local s = SINKS[sink]
	if s == nil then
		fail('bad sink "%s" (use stream or list)', show(sink or ''))
	end
	local n = whole(maxlen, 1e15)
	if n == nil then
		fail('bad stream-maxlen "%s"', show(maxlen or ''))
	end
	local p = prefix(ns)
	return { ns = ns, p = p, due = p .. 'due', jobs = p .. 'jobs',
	    gone = p .. 'gone', via = via, sink = s, skey = p .. s.suffix,
	    smax = n > 0 and decimal(n) or nil }
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
the application key to delete with event i (see find_app_keys).
]]
local function new_batch()
	return { n = 0, id = {}, due = {}, text = {}, rec = {},
	    adopted = false, appkey = {}, at = {} }
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
local function delete_triggers(c, b)
	local ids, triggers, p = b.id, {}, c.p
	for i = 1, b.n do
		triggers[i] = p .. 't:' .. ids[i]
	end
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
	local handoff, ids, due, text, recs = c.sink.handoff, b.id, b.due,
	    b.text, b.rec
	for i = 1, b.n do
		local rec = recs[i]
		rec.a = rec.a + 1
		local err = handoff(c, ids[i], rec, due[i], text[i])
		if err then
			rec.a = rec.a - 1
			return i - 1, err
		end
	end
	return b.n, nil
end

-- Remove the first n events of b, which the sink has taken: from due and
-- jobs; adopted ones also remembered in gone (pruned of entries older than
-- GONE_MS whenever it is added to, so that it stays small even when no
-- expired notification arrives), and their application keys deleted.
local function remove_claimed(c, b, n)
	if n == 0 then
		return
	end
	local ids = b.id
	redis_call('ZREM', c.due, unpack(ids, 1, n))
	redis_call('HDEL', c.jobs, unpack(ids, 1, n))
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

What comes next plugs in here. A delivery sink (http, exec) is a SINKS
entry whose hand-off leases the event into lapse:{NS}:inflight with its
record (so step 4 must leave that record in jobs) and whose claimed
records go back to the reactor in the caller's reply. A recurring event
schedules its next occurrence after step 4 (ZADD due, HSET jobs: after
the ZREM, which would remove it otherwise), in the same call.
]]
-- Count n events fired by the call's path in lapse:{NS}:counts (field
-- expired, timer or sweep), in the same atomic call as the claim: a
-- reactor that loses a reply cannot know what that call fired, Redis can.
-- A statistic must never fail a claim: a counts key the user may not
-- write, or of another type, is left as it is.
local function tally(c, n)
	redis_pcall('HINCRBY', c.p .. 'counts', c.via, n)
end

local function claim_batch(c, b)
	if b.n == 0 then
		return b
	end
	if b.adopted or c.watched then
		check_type(c.gone, 'zset')
		check_acl('ZADD', c.gone, c.now, b.id[1])
		check_acl('ZREMRANGEBYSCORE', c.gone, '-inf', c.now - GONE_MS)
		find_app_keys(b)
	end
	delete_triggers(c, b)
	local n, err = handoff_all(c, b)
	remove_claimed(c, b, n)
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

-- The trigger-key horizon of a namespace: ms (0: none) and mark (nil: no
-- promotion yet). Fields that are not whole numbers in range (written
-- behind lapse's back) count as absent.
local function horizon(p)
	local h = read_typed('hash', 'HMGET', p .. 'horizon', 'ms', 'mark')
	return whole(h[1], DURATION_MAX) or HORIZON_MS, whole(h[2], TIME_MAX)
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
	end
	fail('bad schedule "%s" (use in MS or at MS)', show(how or ''))
end

-- lapse_schedule's options after PAYLOAD, checked: nx, maxpayload BYTES.
local function schedule_options(args)
	local nx, maxpayload, i = false, PAYLOAD_MAX_DEFAULT, 6
	while args[i] ~= nil do
		local opt = args[i]
		if opt == 'nx' then
			nx = true
			i = i + 1
		elseif opt == 'maxpayload' then
			maxpayload = whole(args[i + 1], 1e15)
			if maxpayload == nil then
				fail('bad maxpayload "%s"',
				    show(args[i + 1] or ''))
			end
			i = i + 2
		else
			fail('unknown option "%s" (use nx or maxpayload)',
			    show(opt))
		end
	end
	return nx, maxpayload
end

--[[
lapse_schedule: schedule an event, or reschedule it if the id exists.

KEYS: lapse:{NS}:due lapse:{NS}:jobs lapse:{NS}:t:<id>
ARGV: NS ID (in MS | at MS) PAYLOAD [nx] [maxpayload BYTES]
  in MS   due MS milliseconds from now (1 .. 100 years)
  at MS   due at MS milliseconds since the epoch (0 .. 9999-12-31)
  nx      leave an existing event as it is
  maxpayload BYTES   the payload limit (default 1 MiB)
Reply: { due, status } where status is 1 scheduled (new), 2 rescheduled
(replaced), 0 not changed (nx and the event exists; due is the existing
one's).
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
	local nx, maxpayload = schedule_options(args)
	-- Each key's type is checked by the first command that touches it,
	-- and every one is checked before the first write: ZSCORE reads due,
	-- HMGET the horizon, and HSET, the first write, fails on a jobs key
	-- of another type before it changes anything.
	local old = read_typed('zset', 'ZSCORE', keys[1], id)
	local hms = horizon(p)
	if #payload > maxpayload then
		fail('payload too large: %d bytes (max-payload is %d)',
		    #payload, maxpayload)
	end

	local now = now_ms()
	local due = how == 'in' and now + n or n
	if old and nx then
		read_typed('hash', 'HEXISTS', keys[2], id)
		return { (due_of(old)), 0 }
	end
	local r = redis_pcall('HSET', keys[2], id, record_pack(payload, 0, now))
	if type(r) == 'table' and r.err then
		check_type(keys[2], 'hash')
		error(r)
	end
	redis_call('ZADD', keys[1], due, id)
	if due > now and (hms == 0 or due <= now + hms) then
		redis_call('SET', keys[3], '', 'PXAT', due)
	else
		redis_call('DEL', keys[3])
	end
	if redis_call('ZRANGE', keys[1], 0, 0)[1] == id then
		wake(p, due)
	end
	return { due, old and 2 or 1 }
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

--[[
lapse_cancel: remove an event so that it never fires.

KEYS: lapse:{NS}:due lapse:{NS}:jobs lapse:{NS}:t:<id>
ARGV: NS ID
Reply: 1 cancelled, 0 no such event (already fired, cancelled, or never
scheduled). Cancelling an adopted event also deletes the application's key
while it is the key of that occurrence (DEL: no `expired` follows); if the
key has expired already, its notification finds the id in gone and fires
nothing (see cancel_key).
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
		return 0
	end
	local rec = record_unpack(redis_call('HGET', keys[2], id))
	local now, key = now_ms(), {}
	if rec.k then
		key = cancel_key(p, rec, due_of(score), now)
	end
	redis_call('ZREM', keys[1], id)
	redis_call('HDEL', keys[2], id)
	redis_call('DEL', keys[3])
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
	check_keys(keys, { c.due, c.jobs, c.p .. 't:' .. id, c.skey })
	check_claim_keys(c)
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
	local r = read_typed('zset', 'ZRANGE', c.due, '-inf', c.now,
	    'BYSCORE', 'LIMIT', 0, max, 'WITHSCORES')
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
	b.n = n
	return b
end

--[[
lapse_sweep: fire every due event of a namespace, earliest first, up to a
batch size.

KEYS: lapse:{NS}:due lapse:{NS}:jobs SINK-KEY
ARGV: NS VIA SINK MAXLEN BATCH [MAXBYTES]
  BATCH     at most this many events (1 .. 4096)
  MAXBYTES  no more events once their records reach this many bytes, at
            least one (1 .. 10^15, default 8 MiB): bounds the time one call
            blocks Redis when payloads are large
Reply: { fired, next, now, dues } where fired is how many events this call
handed off, next the earliest due time left (-1 when none), now this
server's time of the call, and dues the array of the due times (ms) of
the events fired, in firing order (the reactor counts lateness = now -
due for each); next <= now means more are due: call again.
]]
local function sweep(keys, args)
	local ns, via, sink, maxlen, batch, maxbytes = args[1], args[2],
	    args[3], args[4], args[5], args[6]
	check_ns(ns)
	check_via(via)
	local c = firing(ns, via, sink, maxlen)
	check_keys(keys, { c.due, c.jobs, c.skey })
	local n = whole(batch, BATCH_MAX)
	if n == nil or n == 0 then
		fail('bad batch "%s": must be 1 to %d', show(batch or ''),
		    BATCH_MAX)
	end
	local m = MAXBYTES_DEFAULT
	if maxbytes ~= nil then
		m = whole(maxbytes, 1e15)
		if m == nil or m == 0 then
			fail('bad maxbytes "%s": must be 1 to %d',
			    show(maxbytes), 1e15)
		end
	end
	-- Types as in schedule: each checked by its first read, all before
	-- the first write; only the sink needs a TYPE of its own.
	check_type(c.skey, c.sink.type)
	local hms, hmark = horizon(c.p)

	start(c)
	local plan = promotion(c, hms, hmark)
	local b = take_due(c, n, m)
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
	redis_call('HSET', c.jobs, id,
	    record_pack(payload, 0, c.now, key, ktype, why))
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
	if totals.earliest and head(c.due) == totals.earliest then
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
	check_keys(keys, { c.due, c.jobs, c.skey, c.gone })
	check_claim_keys(c)
	check_type(c.gone, 'zset')
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
lapse_get: one pending event.

KEYS: lapse:{NS}:due lapse:{NS}:jobs
ARGV: NS ID
Reply: nil when there is no such pending event, else
{ due, payload, attempts } (attempts: how many times it fired so far).
]]
local function get(keys, args)
	local ns, id = args[1], args[2]
	check_ns(ns)
	check_id(id)
	local p = prefix(ns)
	check_keys(keys, { p .. 'due', p .. 'jobs' })
	-- Both reads always run, so that a key of another type is refused
	-- by name whether or not the event exists.
	local score = read_typed('zset', 'ZSCORE', keys[1], id)
	local raw = read_typed('hash', 'HGET', keys[2], id)
	if not score then
		return nil
	end
	local rec = record_unpack(raw)
	return { (due_of(score)), rec.p, rec.a }
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
'fired_sweep', n } (fired: entries in the stream; ready: elements in the
list; fired_PATH: events fired through each path since lapse:{NS}:counts
was created, read by name like the horizon, in the same slot).
]]
local function stats(keys, args)
	local ns = args[1]
	check_ns(ns)
	local p = prefix(ns)
	check_keys(keys, { p .. 'due', p .. 'fired', p .. 'ready' })
	local pending = read_typed('zset', 'ZCARD', keys[1])
	local fired = read_typed('stream', 'XLEN', keys[2])
	local ready = read_typed('list', 'LLEN', keys[3])
	local counts = read_typed('hash', 'HMGET', p .. 'counts', 'expired',
	    'timer', 'sweep')
	local now = now_ms()
	return { 'pending', pending,
	    'overdue', redis.call('ZCOUNT', keys[1], '-inf', now),
	    'next_due', head(keys[1]), 'now', now,
	    'fired', fired, 'ready', ready,
	    'fired_expired', count_of(counts[1]),
	    'fired_timer', count_of(counts[2]),
	    'fired_sweep', count_of(counts[3]) }
end

--[[
lapse_version: the version of this library; clients load theirs with
FUNCTION LOAD REPLACE when the server's is absent or older.

KEYS: none. ARGV: none. Reply: the version number.
]]
local function version()
	return VERSION
end

redis.register_function('lapse_schedule', api(schedule))
redis.register_function('lapse_cancel', api(cancel))
redis.register_function('lapse_claim', api(claim))
redis.register_function('lapse_sweep', api(sweep))
redis.register_function('lapse_adopt', api(adopt))
redis.register_function('lapse_expired', api(expired))
redis.register_function{ function_name = 'lapse_get', callback = api(get),
    flags = { 'no-writes' } }
redis.register_function{ function_name = 'lapse_list', callback = api(list),
    flags = { 'no-writes' } }
redis.register_function{ function_name = 'lapse_stats', callback = api(stats),
    flags = { 'no-writes' } }
redis.register_function{ function_name = 'lapse_version',
    callback = version, flags = { 'no-writes' } }
