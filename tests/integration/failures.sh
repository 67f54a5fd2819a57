#!/bin/bash
# Redis does not roll back a function that fails half-way, so every
# function checks what can fail before its first write, or orders its
# writes so that a failure loses nothing: a sink that refuses a hand-off
# leaves that event pending and every event before it fully fired. Each
# case compares DEBUG DIGEST and the pending events before and after, or
# proves that every event fired exactly once once the cause is gone.
. "$TESTS_LIB"
t_start 60
redis_start
load_functions

# sweep NS [BATCH]: lapse_sweep into the stream, its whole reply
sweep() {
	rcli FCALL lapse_sweep 3 "$(k_due "$1")" "$(k_jobs "$1")" \
	    "$(k_fired "$1")" "$1" sweep stream 0 "${2:-100}" 2>&1
}
# pending NS: "id due ..." of the pending events
pending() {
	rcli ZRANGE "$(k_due "$1")" 0 -1 WITHSCORES | paste -sd' '
}
# exhaust NS [SEQ]: make the fired stream refuse XADD * after the entries
# that the ids up to 18446744073709551615-SEQ leave room for.
exhaust() {
	rcli DEL "$(k_fired "$1")" >/dev/null
	rcli XADD "$(k_fired "$1")" \
	    "18446744073709551615-${2:-18446744073709551615}" f v >/dev/null
}
EXHAUSTED='The stream has exhausted the last possible ID, unable to add more items'

# --- a sink that refuses the hand-off --------------------------------------

fcall_schedule x e1 at 1000 p1 >/dev/null
fcall_schedule x e2 at 2000 p2 >/dev/null
fcall_schedule x e3 at 3000 p3 >/dev/null
exhaust x
d0=$(digest)
p0=$(pending x)
t_is "a sweep whose first hand-off is refused answers the sink's error" \
    "$(sweep x)" \
    "ERR lapse:{x}:fired refused event \"e1\" (0 fired before it): $EXHAUSTED"
t_is "and changed nothing" "$(digest)" "$d0"
t_is "every event is still pending" "$(pending x)" "$p0"

# Room for two more entries: e1 and e2 are handed off, e3 is refused.
exhaust x 18446744073709551613
t_is "a sweep refused at its third hand-off answers the sink's error" \
    "$(sweep x)" \
    "ERR lapse:{x}:fired refused event \"e3\" (2 fired before it): $EXHAUSTED"
t_is "the two handed off are no longer pending, the third is" \
    "$(pending x)" "e3 3000"
t_is "the third keeps its record" \
    "$(rcli FCALL_RO lapse_get 2 "$(k_due x)" "$(k_jobs x)" x e3 |
        paste -sd' ')" "3000 p3 0"
t_is "the two handed off are in the stream" \
    "$(fired_entries x | awk '{ print $1 }' | paste -sd' ')" "e1 e2"
rcli DEL "$(k_fired x)" >/dev/null
sweep x >/dev/null
t_is "once the sink takes entries again, the third fires" \
    "$(fired_entries x | awk '{ print $1 }' | paste -sd' ')" "e3"
t_is "nothing is left pending" "$(pending x)" ""

# lapse_claim: one event, refused: nothing changes.
fcall_schedule c e at 1000 p >/dev/null
exhaust c
d0=$(digest)
t_is "a claim refused by its sink answers the sink's error" \
    "$(rcli FCALL lapse_claim 4 "$(k_due c)" "$(k_jobs c)" "$(k_t c e)" \
        "$(k_fired c)" c e timer stream 0 2>&1)" \
    "ERR lapse:{c}:fired refused event \"e\" (0 fired before it): $EXHAUSTED"
t_is "and changed nothing" "$(digest)" "$d0"

# lapse_expired: unadopted expiries refused are not remembered as fired,
# so that they fire when the sink takes them.
G='lapse:{w}:gone'
expired() {
	rcli FCALL lapse_expired 4 "$(k_due w)" "$(k_jobs w)" "$(k_fired w)" \
	    "$G" w stream 0 "$@" 2>&1
}
exhaust w
d0=$(digest)
t_is "lapse_expired refused by its sink answers the sink's error" \
    "$(expired u1 u2)" \
    "ERR lapse:{w}:fired refused event \"u1\" (0 fired before it): $EXHAUSTED"
t_is "and changed nothing" "$(digest)" "$d0"
rcli DEL "$(k_fired w)" >/dev/null
t_is "once the sink takes entries, both fire" "$(expired u1 u2 | head -1)" 2
t_is "each once" "$(fired_entries w | awk '{ print $1 }' | paste -sd' ')" \
    "u1 u2"

# lapse_adopt: an adopted occurrence whose expiry came, its key set anew,
# is fired before the new TTL is adopted; refused, nothing changes.
adopt() {
	rcli FCALL lapse_adopt 5 "$(k_due w)" "$(k_jobs w)" "$(k_fired w)" \
	    "$G" w:d w stream 0 1048576 d 2>&1 | grep . | paste -sd" "
}
due=$(($(redis_time_ms) + 200))
rcli SET w:d v1 PXAT "$due" >/dev/null
t_is "w:d adopted" "$(adopt)" "1 0 0"
wait_until 5 "w:d to fall due" '[ "$(redis_time_ms)" -gt "$due" ]'
rcli SET w:d v2 PX 60000 >/dev/null
exhaust w
d0=$(digest)
t_is "lapse_adopt refused by its sink answers the sink's error" \
    "$(adopt)" \
    "ERR lapse:{w}:fired refused event \"d\" (0 fired before it): $EXHAUSTED"
t_is "and changed nothing" "$(digest)" "$d0"
rcli DEL "$(k_fired w)" >/dev/null
t_is "once the sink takes entries, the occurrence fires, the new TTL is adopted" \
    "$(adopt)" "1 0 1"
t_is "the occurrence fired once, with its old value" \
    "$(fired_payloads w | paste -sd' ')" "d v1"

t_done
