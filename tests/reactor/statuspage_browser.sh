#!/bin/bash
# The status page in a real browser (headless Chromium, as a person would
# load it): the DOM after the page is parsed shows every namespace's row
# with Redis's counts, the page healthy, both reactors attached; ids made
# of HTML (<script>alert(1)</script>"&', an <img> and an <svg> whose
# handlers would retitle the page) are text in their cells and no element
# of theirs is in the DOM, and the title is still lapsed's (no injected
# script ran); the browser reports no Content-Security-Policy violation
# (its own style sheet is allowed by its hash), where a control page that
# breaks the same policy is reported; a screenshot at 1280x1000 is kept
# as tests/reactor/statuspage.png in the build directory (the log names
# it). Every browser run is bounded by timeout.
. "${TESTS_LIB:?is not set: run this test through make check}" || exit 1
CHROMIUM=$(command -v chromium || command -v chromium-browser) || {
	echo "1..0 # SKIP chromium not found"
	exit 0
}
t_start 240
if ! command -v curl >/dev/null 2>&1; then
	echo "Bail out! curl is not installed (tools/bootstrap installs it)"
	exit 1
fi

# chrome ARGS...: headless Chromium with a profile of its own, at most
# 60 s; its messages (and the page's console) go to $T_DIR/chrome.err.
chrome() {
	local profile
	profile=$(mktemp -d "$T_DIR/chrome.XXXXXX")
	timeout 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu \
	    --disable-quic --no-first-run --disable-background-networking \
	    --disable-component-update --disable-sync \
	    --user-data-dir="$profile" --enable-logging=stderr --v=0 "$@" \
	    2>"$T_DIR/chrome.err"
}
csp_violations() {
	grep -c 'violates the following Content Security Policy' \
	    "$T_DIR/chrome.err"
}

redis_start
lapsed_listen_start r1 \
    "[namespace orders]" \
    "[namespace mail]" "sink = list" \
    "[namespace hooks]" "sink = http" "url = http://127.0.0.1:1/" \
    "max-attempts = 2" "retry = 10ms"
wait_until 20 "lapsed to be ready" '[ "$(http_get /readyz)" = ok ]'
lapsed_conf r2 "[namespace orders]" "[namespace mail]" "sink = list"
lapsed_start r2

# Ids a person might be shown, and some that try to be HTML.
SCRIPT_ID='<script>alert(1)</script>"&'"'"
IMG_ID='<img/src=x/onerror=document.title="PWNED">'
SVG_ID='"><svg/onload=document.title="PWNED">'
for i in $(seq 101 112); do
	lapse_cli schedule orders "close:$i" --in "$((i % 5 + 1))ms" \
	    --payload "{\"order\":$i}" >/dev/null
done
lapse_cli schedule orders "$SCRIPT_ID" --in 1ms >/dev/null
lapse_cli schedule orders "$IMG_ID" --in 1ms >/dev/null
for i in 1 2 3 4 5 6; do
	lapse_cli schedule orders "close:$((200 + i))" --in "$((i * 7))m" \
	    >/dev/null
done
lapse_cli schedule orders "$SVG_ID" --in 3h >/dev/null
lapse_cli schedule orders report --every 1h >/dev/null
for i in 1 2 3; do
	lapse_cli schedule mail "welcome:$i" --in 1ms >/dev/null
done
lapse_cli schedule hooks "invoice:77" --in 1ms >/dev/null
lapse_cli schedule hooks "$IMG_ID" --in 1ms >/dev/null
lapse_cli schedule hooks "invoice:78" --in 1h >/dev/null
wait_until 20 "the events to fire and the hooks to die" \
    '[ "$(fired_count orders)" = 15 ] &&
    [ "$(rcli XLEN "lapse:{hooks}:dead")" = 2 ] &&
    [ "$(rcli ZCARD "lapse:{orders}:reactors")" = 2 ]'

# --- the DOM, as the browser built it ------------------------------------------

chrome --dump-dom "http://127.0.0.1:$HTTP_PORT/" >"$T_DIR/dom.html"
t_is "chromium loaded the page" "$?" 0
DOM=$T_DIR/dom.html
t_is "the title is lapsed's: no injected script ran" \
    "$(grep -c '<title>lapsed status</title>' "$DOM"):$(grep -c PWNED'<' \
        "$DOM")" "1:0"
t_is "the page says healthy" \
    "$(grep -c '<p id="health" class="ok">healthy</p>' "$DOM")" 1
t_is "a row per namespace, in order" \
    "$(sed -n 's/.*<tr class="ns"><td class="name">\([^<]*\)<.*/\1/p' \
        "$DOM" | tr '\n' ' ')" "orders mail hooks "
t_is "orders: pending and dead as Redis holds them" \
    "$(grep '<tr class="ns"><td class="name">orders<' "$DOM" |
        sed 's/.*<td class="n pending">\([0-9]*\)<.*<td class="n dead">\([0-9]*\)<.*/\1 \2/')" \
    "$(rcli ZCARD 'lapse:{orders}:due') 0"
t_is "hooks: 2 dead" \
    "$(grep '<tr class="ns"><td class="name">hooks<' "$DOM" |
        sed 's/.*<td class="n dead">\([0-9]*\)<.*/\1/')" 2
t_is "both reactors attached" \
    "$(grep -c '<tr class="reactor">' "$DOM")" 2
t_is "<script>alert(1)</script>\"&' is text in its cell" \
    "$(grep -c -F "<td class=\"id\">&lt;script&gt;alert(1)&lt;/script&gt;\"&amp;'</td>" \
        "$DOM")" 1
t_is "the <img> id is text: orders' firings, hooks' dead and its 2 attempts" \
    "$(grep -c -F '<td class="id">&lt;img/src=x/onerror=document.title="PWNED"&gt;</td>' \
        "$DOM")" 4
t_is "the <svg> id is text, among the pending" \
    "$(grep -c -F '<td class="id">"&gt;&lt;svg/onload=document.title="PWNED"&gt;</td>' \
        "$DOM")" 1
t_is "no element of theirs in the DOM: no script, img or svg" \
    "$(grep -c -i -e '<script' -e '<img' -e '<svg' "$DOM")" 0
t_is "no Content-Security-Policy violation: the style sheet applies" \
    "$(csp_violations)" 0

# The control: the same policy broken is reported by this browser.
cat >"$T_DIR/control.html" <<'HTML'
<!DOCTYPE html><html><head><meta http-equiv="Content-Security-Policy"
content="default-src 'none'"><style>p{color:red}</style></head>
<body><p>x</p></body></html>
HTML
chrome --dump-dom "file://$T_DIR/control.html" >/dev/null
t_is "(control: an inline style the policy forbids is reported)" \
    "$(csp_violations)" 1

# --- what a person sees --------------------------------------------------------

chrome --screenshot="$T_DIR/statuspage.png" --window-size=1280,1000 \
    "http://127.0.0.1:$HTTP_PORT/" >/dev/null
t_is "the screenshot is taken" "$?" 0
t_is "a PNG of 1280x1000" \
    "$(od -An -tx1 -N24 "$T_DIR/statuspage.png" | tr -d ' \n')" \
    "89504e470d0a1a0a0000000d49484452000005000000""03e8"
t_match "of some substance ($(wc -c <"$T_DIR/statuspage.png") bytes)" \
    "$(wc -c <"$T_DIR/statuspage.png")" '^[0-9]{5,}$'
t_is "no Content-Security-Policy violation there either" \
    "$(csp_violations)" 0
if [ -n "${LAPSE_BUILDDIR:-}" ] && [ -d "$LAPSE_BUILDDIR/tests/reactor" ]; then
	cp "$T_DIR/statuspage.png" "$LAPSE_BUILDDIR/tests/reactor/statuspage.png"
	echo "# screenshot: $LAPSE_BUILDDIR/tests/reactor/statuspage.png"
fi

lapsed_stop r2
lapsed_stop r1
t_is "lapsed stops cleanly: exit 0" "$?" 0
t_done
