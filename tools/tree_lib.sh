# Sourced first by the measuring scripts in tools/ (sentinel-failover.sh,
# cluster-failover.sh, cluster-bench.sh), with top set to the tree they
# run from: the programs and Lua library built there unless LAPSE, LAPSED,
# LAPSE_LUA or TESTS_LIB say otherwise (as make check sets them), then the
# test libraries the scripts build on: lib.sh, sentinel_lib.sh and
# cluster_lib.sh.
: "${LAPSE:=$top/src/lapse}" "${LAPSED:=$top/src/lapsed}"
: "${LAPSE_LUA:=$top/lua/built/lapse.lua}"
: "${TESTS_LIB:=$top/tests/integration/lib.sh}"
export LAPSE LAPSED LAPSE_LUA
. "$TESTS_LIB"
. "$(dirname "$TESTS_LIB")/sentinel_lib.sh"
. "$(dirname "$TESTS_LIB")/cluster_lib.sh"
