// Test vectors for lapse's cron engine from an independent implementation,
// npm's cron-parser (pinned in package.json and package-lock.json): for
// each (expression, zone, instant), the next five occurrences as
// cron-parser computes them, with the zone's UTC offset at each (luxon,
// on Node's ICU time zones). Run by hand, never by the build:
//
//   cd tools/cronvec && npm ci && node gen.js ../../tests/data/cron-vectors.tsv
//
// The vectors are the same on every run (a seeded generator), and the
// file is committed; tests/integration/cron_vectors.sh runs each through
// FCALL lapse_next. Where cron-parser is known to differ from lapse's
// contract (SPEC, "Recurring events"), or its tzdata from the system's,
// the vector is kept but marked with the reason (the REASONS below), by a
// rule decided here, from the expression and from cron-parser's and the
// system's own answers, never from lapse's: the test compares the others
// and reports the marked ones by reason.
'use strict';

const fs = require('fs');
const { execFileSync } = require('child_process');
const { CronExpressionParser } = require('cron-parser');
const { DateTime } = require('luxon');

const REASONS = {
	'dom-dow-6': 'six fields with both day fields restricted: ' +
	    'cron-parser matches a day when either matches (Unix), lapse ' +
	    'when both do (Spring and Quartz, as SPEC says)',
	dst: 'the zone changes offset within the vector and the expression ' +
	    'names a local time in the hours the change skips or repeats: ' +
	    'cron-parser has its own rules, by whole local hours (a skipped ' +
	    '02:30 fires at 03:30; a time in a 30-minute gap not at all; a ' +
	    'step hour fires in a gap; a repeated half hour once; a change at ' +
	    '02:45 moves 02:15 too), lapse follows SPEC, and cron-hand.txt ' +
	    'checks those cases by hand',
	backwards: 'cron-parser answers an occurrence that is not after the ' +
	    'one before it, which no schedule can do (a cron-parser bug, seen ' +
	    'on the day of a DST change)',
	tzdata: 'Node\'s ICU tzdata and the system\'s (Debian\'s) give the ' +
	    'zone different offsets within the vector',
};

// Five fields (minute hour day-of-month month day-of-week).
const FIVE = [
	'* * * * *', '*/5 * * * *', '0 * * * *', '30 2 * * *', '0 2 * * *',
	'0 0 * * *', '15 14 1 * *', '0 22 * * 1-5', '23 0-20/2 * * *',
	'5 4 * * sun', '0 0,12 1 */2 *', '0 4 8-14 * *', '0 0 1,15 * 3',
	'*/15 9-17 * * MON-FRI', '0 9 * JAN,APR,JUL,OCT 1', '59 23 L * *',
	'0 12 * * 5L', '0 10 * * TUE#2', '0 0 29 2 *', '0 0 31 * *',
	'45 */3 * * *', '0 1-3 * * *', '30 1 * * 0', '0 0 * * 7',
	'7 7 7 7 *', '*/20 0-4 * * *', '0 3 * * 6,0', '10,40 2 * * *',
	'0 2-4/2 * * *', '30 * * * *', '0 */2 * * *', '0 0 1 1 *',
	'0 0 L 2 *', '0 8 1-7 * MON', '0 0 13 * FRI', '1 2 3 4 *',
	'0 12 * * SAT#5', '20 2 * * *', '0 0 * * MON-FRI', '*/10 1 * * *',
	'0 1 * * *', '45 1 * * *', '15 2 * * *', '0 0 * Feb,mar wed',
	'*/7 * * * *', '0 6-18/4 * * *', '30 23 * * 5', '0 0 L * *',
	'0 12 15 * *', '5 0 * 8 *',
];

// Six fields, seconds first (Spring).
const SIX = [
	'0/10 * * * * ?', '0 15 10 ? * MON-FRI', '*/5 * * * * *',
	'30 0 0 1 * ?', '0 0 12 ? * WED', '0 0 0 L * ?', '0 0 0 ? * 6#3',
	'15,45 * * * * *', '0 30 2 * * *', '0 0 2 * * ?', '0 30 * * * ?',
	'0 0 */2 * * ?', '10 20 1 ? * SUN', '0 0 0 29 2 ?', '0 */30 1-3 * * *',
	'5 5 5 5 5 ?', '0 0 0 ? * 5L', '0 0 23 L * ?', '59 59 23 31 12 ?',
	'0 45 1 * * *', '0 15 2 * * *', '0 0 12 1-7 * MON', '0 0 8 13 * FRI',
	'*/20 * 9 * * *', '0 0 0 ? 1/3 1#1', '30 30 3 * * ?',
];

const ZONES = [
	'UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Shanghai',
	'Australia/Lord_Howe', 'Asia/Kolkata', 'Asia/Kathmandu',
	'America/Sao_Paulo', 'Pacific/Auckland', 'Europe/London',
	'America/Los_Angeles', 'Asia/Tokyo', 'Africa/Cairo', 'America/Santiago',
	'Asia/Tehran', 'Australia/Adelaide', 'Pacific/Chatham',
	'America/St_Johns', 'America/Havana', 'Europe/Dublin',
	'Australia/Sydney', 'Asia/Gaza',
];

// Expressions whose hours are in or around DST changes, for the vectors
// that start just before one.
const NEAR_DST = [
	'30 2 * * *', '0 2 * * *', '30 * * * *', '0 */2 * * *', '45 1 * * *',
	'15 2 * * *', '*/15 * * * *', '0 0 * * *', '0 1-3 * * *',
	'0 30 2 * * *', '0 0 2 * * ?', '0 */30 1-3 * * *', '0 45 1 * * *',
	'10,40 2 * * *', '0 3 * * 6,0',
];

const FROM = Date.UTC(2000, 0, 1);
const TO = Date.UTC(2031, 0, 1);
const DAY = 86400000;

// mulberry32: a small seeded generator, so every run writes the same.
function random(seed) {
	let a = seed >>> 0;
	return function () {
		a = (a + 0x6d2b79f5) >>> 0;
		let t = a;
		t = Math.imul(t ^ (t >>> 15), t | 1);
		t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	};
}
const rand = random(20261123);
const pick = (list) => list[Math.floor(rand() * list.length)];

function offsetOf(zone, ms) {
	return DateTime.fromMillis(ms, { zone }).offset * 60;
}

// The zone's changes of offset in [from, to] by ICU: { t, before, after }.
function icuChanges(zone, from, to) {
	const out = [];
	let o = offsetOf(zone, from);
	for (let t = from; t < to; t += DAY) {
		let hi = Math.min(t + DAY, to);
		if (offsetOf(zone, hi) === o)
			continue;
		let lo = t;
		while (hi - lo > 1000) {
			const mid = lo + Math.floor((hi - lo) / 2000) * 1000;
			if (offsetOf(zone, mid) === o)
				lo = mid;
			else
				hi = mid;
		}
		const after = offsetOf(zone, hi);
		out.push({ t: hi, before: o, after });
		o = after;
	}
	return out;
}

// The system's (glibc's, from /usr/share/zoneinfo) changes, by zdump.
function systemChanges(zone) {
	const text = execFileSync('zdump', ['-v', '-c', '1999,2042', zone],
	    { encoding: 'utf8' });
	const out = [];
	let prev = null;
	for (const line of text.split('\n')) {
		const m = line.match(/  (\w+ \w+ +\d+ [\d:]+ \d+) UT = .* gmtoff=(-?\d+)$/);
		if (!m)
			continue;
		const t = Date.parse(m[1] + ' UTC');
		const off = Number(m[2]);
		if (prev !== null && prev.off !== off && t - prev.t === 1000)
			out.push({ t, before: prev.off, after: off });
		prev = { t, off };
	}
	return out;
}

// The spans where ICU and the system disagree on the zone's offset.
function disagreements(zone) {
	const icu = icuChanges(zone, Date.UTC(1999, 0, 1), Date.UTC(2042, 0, 1));
	const sys = systemChanges(zone);
	const key = (c) => `${c.t} ${c.before} ${c.after}`;
	const sysKeys = new Set(sys.map(key));
	const icuKeys = new Set(icu.map(key));
	const spans = [];
	for (const c of icu)
		if (!sysKeys.has(key(c)))
			spans.push(c.t);
	for (const c of sys)
		if (!icuKeys.has(key(c)))
			spans.push(c.t);
	return { icu, spans };
}

// The next five occurrences by cron-parser, or null if it gives up.
function occurrences(expr, zone, after) {
	try {
		const it = CronExpressionParser.parse(expr,
		    { currentDate: new Date(after), tz: zone });
		const out = [];
		for (let i = 0; i < 5; i++)
			out.push(it.next().getTime());
		return out;
	} catch (e) {
		return null;
	}
}

// Whether expr matches a local time in [lo, hi) (local times written as
// instants of UTC): cron-parser itself, in UTC, where no DST interferes.
function matchesLocal(expr, lo, hi) {
	const next = occurrences(expr, 'UTC', lo - 1);
	return next !== null && next[0] < hi;
}

function fields(expr) {
	return expr.trim().split(/\s+/);
}

// Why a vector is marked, or '-'.
function mark(expr, zone, after, next, info) {
	const f = fields(expr);
	const star = (v) => v === '*' || v === '?';
	if (f.length === 6 && !star(f[3]) && !star(f[5]))
		return 'dom-dow-6';
	for (let i = 1; i < next.length; i++)
		if (next[i] <= next[i - 1])
			return 'backwards';
	const end = next[next.length - 1];
	for (const t of info.spans)
		if (t >= after - DAY && t <= end + DAY)
			return 'tzdata';
	for (const c of info.icu) {
		if (c.t <= after || c.t > end)
			continue;
		// The local hours of the times the change skips or shows twice.
		const lo = c.t + Math.min(c.before, c.after) * 1000;
		const hi = c.t + Math.max(c.before, c.after) * 1000;
		const hour = 3600000;
		if (matchesLocal(expr, lo - lo % hour,
		    hi % hour === 0 ? hi : hi - hi % hour + hour))
			return 'dst';
	}
	return '-';
}

function vector(expr, zone, after, info) {
	const next = occurrences(expr, zone, after);
	if (next === null)
		return null;
	const shown = next.map((ms) => `${ms}:${offsetOf(zone, ms)}`);
	return [expr, zone, after, shown.join(' '),
	    mark(expr, zone, after, next, info)].join('\t');
}

function main() {
	const file = process.argv[2];
	if (!file) {
		console.error('usage: node gen.js OUTPUT.tsv');
		process.exit(2);
	}
	const info = {};
	for (const zone of ZONES)
		info[zone] = disagreements(zone);
	const lines = [];
	const all = FIVE.concat(SIX);
	// Every expression in several zones, at instants spread over 2000-2030
	// (with milliseconds, so that rounding to the second is tested too).
	for (const expr of all) {
		for (let i = 0; i < 16; i++) {
			const zone = i === 0 ? 'UTC' : pick(ZONES);
			const after = FROM + Math.floor(rand() * (TO - FROM));
			const v = vector(expr, zone, after, info[zone]);
			if (v)
				lines.push(v);
		}
	}
	// Around the DST changes of 2024-2028: from a little before each.
	for (const zone of ZONES) {
		for (const c of info[zone].icu) {
			if (c.t < Date.UTC(2024, 0, 1) || c.t >= Date.UTC(2028, 0, 1))
				continue;
			for (let i = 0; i < 3; i++) {
				const before = [3600000, 6 * 3600000, DAY][i] +
				    Math.floor(rand() * 60) * 60000;
				const v = vector(pick(NEAR_DST), zone, c.t - before,
				    info[zone]);
				if (v)
					lines.push(v);
			}
		}
	}
	const counts = {};
	for (const l of lines) {
		const m = l.split('\t')[4];
		counts[m] = (counts[m] || 0) + 1;
	}
	const head = [
	    '# Cron test vectors: expression, zone, after (ms), the next five',
	    '# occurrences as ms:UTC-offset-seconds, and a mark (- or a reason).',
	    `# Generated by tools/cronvec/gen.js with cron-parser ${require('cron-parser/package.json').version}`,
	    `# and Node ${process.version}'s ICU tzdata ${process.versions.tz}; the system's tzdata:`,
	    `# ${fs.readFileSync('/usr/share/zoneinfo/tzdata.zi', 'utf8').split('\n')[0].replace(/^# /, '')}.`,
	    `# ${lines.length} vectors; marked: ${JSON.stringify(counts)}.`,
	    '# Reasons:',
	];
	for (const [k, v] of Object.entries(REASONS))
		head.push(`#   ${k}: ${v}`);
	fs.writeFileSync(file, head.concat(lines).join('\n') + '\n');
	console.log(`${file}: ${lines.length} vectors, ${JSON.stringify(counts)}`);
}

main();
