#!/bin/bash
# sink = http over https: a receiver whose certificate the configured CA
# signed for 127.0.0.1 gets the event; one whose certificate names another
# host, and one with a certificate no trusted CA signed, are refused: each
# event fails with a TLS error and reaches nobody. A port where nothing
# listens is a refused connection, said as such (not a TLS failure), in
# the dead entry and in the log.
. "$TESTS_LIB"
t_start 90
redis_start

# A CA, and three certificates: good (IP 127.0.0.1, signed by the CA),
# wrong-name (other.test, signed by the CA), untrusted (self-signed).
D=$T_DIR/pki
mkdir "$D"
ossl() {
	openssl "$@" 2>>"$D/openssl.log"
}
ossl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -days 2 -subj /CN=lapse-test-ca -keyout "$D/ca.key" -out "$D/ca.pem"
leaf() {
	local name=$1 san=$2
	ossl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
	    -subj "/CN=$name" -keyout "$D/$name.key" -out "$D/$name.csr"
	printf 'subjectAltName=%s\n' "$san" >"$D/$name.ext"
	ossl x509 -req -in "$D/$name.csr" -CA "$D/ca.pem" -CAkey "$D/ca.key" \
	    -CAcreateserial -days 2 -extfile "$D/$name.ext" -out "$D/$name.pem"
}
leaf good IP:127.0.0.1
leaf wrongname DNS:other.test
ossl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -days 2 -subj /CN=untrusted -addext subjectAltName=IP:127.0.0.1 \
    -keyout "$D/untrusted.key" -out "$D/untrusted.pem"
t_is "the test's certificates" "$(ls "$D"/*.pem | wc -l)" 4

hookrecv_start good --tls "$D/good.pem" "$D/good.key"
hookrecv_start wrong --tls "$D/wrongname.pem" "$D/wrongname.key"
hookrecv_start untrusted --tls "$D/untrusted.pem" "$D/untrusted.key"
https() {
	printf '%s\n' "[namespace $1]" "sink = http" \
	    "url = https://127.0.0.1:$2/ok/$1/" "ca-file = $D/ca.pem" \
	    "max-attempts = 1"
}
free_port
lapsed_conf r1 "$(https good "$HOOK_PORT_good")" \
    "$(https wrong "$HOOK_PORT_wrong")" \
    "$(https untrusted "$HOOK_PORT_untrusted")" \
    "$(https refused "$FREE_PORT")"
lapsed_start r1
wait_for 20 "lapsed to listen" lapsed_ready r1

for ns in good wrong untrusted refused; do
	lapse_cli schedule "$ns" e --in 100ms --payload secret-body >/dev/null
done
wait_until 20 "the delivery" \
    '[ "$(jq -s length "$T_DIR/hook-good.log" 2>/dev/null)" = 1 ]'
t_is "https with the configured CA: delivered" \
    "$(jq -r '[.path, .body, .status] | @tsv' "$T_DIR/hook-good.log")" \
    "$(printf '/ok/good/\tsecret-body\t200')"
wait_until 20 "the refusals" \
    '[ "$(rcli XLEN "lapse:{wrong}:dead")$(rcli XLEN "lapse:{untrusted}:dead")$(
    rcli XLEN "lapse:{refused}:dead")" = 111 ]'
t_match "a certificate for another host name is refused" \
    "$(dead wrong)" '^e\|1\|TLS: .*(host|name|mismatch)'
t_match "a certificate no trusted CA signed is refused" \
    "$(dead untrusted)" '^e\|1\|TLS: .*verify'
t_is "nothing listening: the dead entry says the connection was refused" \
    "$(dead refused)" "e|1|connection refused"
t_is "and so does the log" \
    "$(grep -c -F 'namespace refused: event "e" attempt 1 failed: connection refused; to the dead stream' \
        "$T_DIR/r1.log")" 1
t_is "and neither receiver got a request" \
    "$(cat "$T_DIR/hook-wrong.log" "$T_DIR/hook-untrusted.log" 2>/dev/null |
        wc -l)" 0
lapsed_stop r1
t_is "SIGTERM: exit 0" "$?" 0
t_done
