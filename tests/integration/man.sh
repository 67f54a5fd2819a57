#!/bin/bash
# The manual pages stay true to the programs: every command and option of
# lapse's help is an item of lapse.1 (and every command item is a real
# command), every option of lapsed --help an item of lapsed.8, every key
# the configuration parser accepts an item of lapsed.conf.5 under its own
# section (and every key item a real key) stating its default, the same
# default as the sample configuration; mandoc -T lint finds nothing above
# style level, and man renders each page. Needs no redis-server, but
# t_start skips without one, like every integration test.
. "$TESTS_LIB"
t_start 30

: "${LAPSE_MAN_DIR:?LAPSE_MAN_DIR is not set}"
man1=$LAPSE_MAN_DIR/lapse.1
man8=$LAPSE_MAN_DIR/lapsed.8
man5=$LAPSE_MAN_DIR/lapsed.conf.5

for f in "$man1" "$man8" "$man5"; do
	if [ -r "$f" ]; then
		t_ok "$(basename "$f") exists"
	else
		t_fail "$(basename "$f") exists" "not readable: $f"
	fi
done

# heads FILE: the head of every list item (.It), one a line, without
# ".It "; a head spread over lines by ".It Xo" ... ".Xc" is joined, its
# macro lines without their leading dots.
heads() {
	awk '
	xo && /^\.Xc/ { print head; xo = 0; next }
	xo { line = $0; sub(/^\./, "", line); head = head " " line; next }
	/^\.It Xo$/ { xo = 1; head = ""; next }
	/^\.It / { print substr($0, 5) }' "$1" | sed 's/^ *//'
}

# has_flag HEADS OPTION: true when a head holds "Fl x" for -x or
# "Fl \-word" (or "Fl -word") for --word.
has_flag() {
	local pat
	case $2 in
	--*) pat="(^| )Fl (\\\\)?-${2#--}( |$)" ;;
	-*) pat="(^| )Fl ${2#-}( |$)" ;;
	esac
	printf '%s\n' "$1" | grep -Eq -- "$pat"
}

# options TEXT: every -x and --word of a help text, once each.
options() {
	printf '%s\n' "$1" | grep -oE -- '(^|[][ (|])--?[A-Za-z][A-Za-z0-9-]*' |
	    sed 's/^[][ (|]*//' | sort -u
}

# --- lapse.1 -----------------------------------------------------------------

help=$("$LAPSE" --help)
commands=$(printf '%s\n' "$help" | sed -n 's/^  lapse \([a-z][a-z-]*\).*/\1/p')
t_match "lapse --help lists commands" "$commands" '^schedule$'
h1=$(heads "$man1")
for cmd in $commands; do
	if printf '%s\n' "$h1" | grep -Eq "^Cm $cmd( |$)"; then
		t_ok "lapse.1 documents command $cmd"
	else
		t_fail "lapse.1 documents command $cmd" \
		    "no item \".It Cm $cmd\" (or .It Xo/.Cm $cmd)"
	fi
done
for cmd in $(printf '%s\n' "$h1" | sed -n 's/^Cm \([a-z][a-z-]*\).*/\1/p'); do
	if printf '%s\n' "$commands" | grep -qx -- "$cmd"; then
		t_ok "lapse.1 command $cmd exists"
	else
		t_fail "lapse.1 command $cmd exists" "not in lapse --help"
	fi
done

alltext=$help
for cmd in $commands; do
	alltext=$alltext$'\n'$("$LAPSE" "$cmd" --help)
done
for opt in $(options "$alltext"); do
	if has_flag "$h1" "$opt"; then
		t_ok "lapse.1 documents option $opt"
	else
		t_fail "lapse.1 documents option $opt" "no item with Fl for $opt"
	fi
done

# --- lapsed.8 ----------------------------------------------------------------

dhelp=$("$LAPSED" --help)
h8=$(heads "$man8")
dopts=$(options "$dhelp")
t_match "lapsed --help lists options" "$dopts" '^--check-config$'
for opt in $dopts; do
	if has_flag "$h8" "$opt"; then
		t_ok "lapsed.8 documents option $opt"
	else
		t_fail "lapsed.8 documents option $opt" "no item with Fl for $opt"
	fi
done

# --- lapsed.conf.5 -----------------------------------------------------------

# The keys the parser accepts, "section key" per line, from its table in
# src/conf.c; else the keys of the sample configuration, without sections.
if [ -n "${LAPSE_CONF_C:-}" ] && [ -r "$LAPSE_CONF_C" ]; then
	keys=$(sed -n 's/^[[:space:]]*{ SECTION_\([A-Z]*\), "\([^"]*\)",.*/\1 \2/p' \
	    "$LAPSE_CONF_C" | sed 's/^REDIS /redis /; s/^LAPSED /lapsed /;
	    s/^NS /namespace /')
	t_match "the keys are read from conf.c" "$keys" '^redis url$'
	all_keys=yes
else
	keys=$(sed -n 's/^;\{0,1\}\([a-z][a-z-]*\) = .*/- \1/p' \
	    "$LAPSE_SAMPLE_CONF")
	t_match "the keys are read from the sample configuration" "$keys" \
	    '^- url$'
	all_keys=no # the sample leaves out keys meant for diagnosis
fi

# "section key" for every item "Cm key" of lapsed.conf.5, the section
# taken from the ".Ss The [section] ..." it is under; then, per item,
# "section key<TAB>body" with the item's text joined on one line.
documented=$(awk '
	/^\.Ss / { sec = ""; if (match($0, /\[[a-z]+/))
	    sec = substr($0, RSTART + 1, RLENGTH - 1) }
	/^\.It Cm [a-z]/ && sec != "" { print sec, $3 }' "$man5")
items=$(awk '
	function flush() { if (key != "") print key "\t" body; key = "" }
	/^\.Ss / { flush(); sec = ""; if (match($0, /\[[a-z]+/))
	    sec = substr($0, RSTART + 1, RLENGTH - 1); next }
	/^\.(It|El|Sh)/ { flush() }
	/^\.It Cm [a-z]/ && sec != "" { key = sec " " $3; body = ""; next }
	key != "" { body = body " " $0 }
	END { flush() }' "$man5")

while read -r sec key; do
	[ -n "$key" ] || continue
	if [ "$sec" = - ]; then
		found=$(printf '%s\n' "$documented" | awk -v k="$key" '$2 == k')
	else
		found=$(printf '%s\n' "$documented" | grep -x -- "$sec $key")
	fi
	if [ -n "$found" ]; then
		t_ok "lapsed.conf.5 documents $sec $key"
	else
		t_fail "lapsed.conf.5 documents $sec $key" \
		    "no \".It Cm $key\" under \".Ss The [$sec] ...\""
	fi
done <<EOF
$keys
EOF

while read -r sec key; do
	[ -n "$key" ] || continue
	if printf '%s\n' "$keys" | grep -Eqx -- "($sec|-) $key"; then
		t_ok "lapsed.conf.5 key $sec $key exists"
	elif [ "$all_keys" = no ]; then
		t_ok "lapsed.conf.5 key $sec $key exists # SKIP no src/conf.c"
	else
		t_fail "lapsed.conf.5 key $sec $key exists" \
		    "the configuration parser has no such key"
	fi
	body=$(printf '%s\n' "$items" | awk -F'\t' -v k="$sec $key" \
	    '$1 == k { print $2 }')
	t_match "lapsed.conf.5 states the default of $key" "$body" \
	    '[Dd]efault'
done <<EOF
$documented
EOF

# Every "key = value" of the sample configuration (commented-out keys
# have no default) gives the default stated in the key's item.
while read -r key value; do
	[ -n "$key" ] || continue
	body=$(printf '%s\n' "$items" | awk -F'\t' -v k="$key" \
	    '{ split($1, a, " ") } a[2] == k { print $2 }')
	case $body in
	*"$value"*) t_ok "lapsed.conf.5 gives $key the sample's default $value" ;;
	*) t_fail "lapsed.conf.5 gives $key the sample's default $value" \
	    "item: $body" ;;
	esac
done <<EOF
$(sed -n 's/^\([a-z][a-z-]*\) = \(.*\)/\1 \2/p' "$LAPSE_SAMPLE_CONF")
EOF

# --- the pages as pages ------------------------------------------------------

if command -v mandoc >/dev/null 2>&1; then
	lint=$(mandoc -T lint -W warning "$man1" "$man8" "$man5" 2>&1)
	rc=$?
	t_is "mandoc -T lint -W warning finds nothing" "$rc: $lint" "0: "
else
	t_ok "mandoc -T lint -W warning finds nothing # SKIP mandoc not installed"
fi

if command -v man >/dev/null 2>&1; then
	for f in "$man1" "$man8" "$man5"; do
		out=$(MANPAGER=cat PAGER=cat MANWIDTH=80 man -l "$f" 2>/dev/null)
		t_match "man -l renders $(basename "$f")" "$out" '^NAME$'
	done
else
	t_ok "man -l renders the pages # SKIP man not installed"
fi

t_done
