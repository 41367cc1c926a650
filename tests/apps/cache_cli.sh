#!/bin/sh
# `plexus cache list|stats|clear`: a run on the interpreter and the native backend fills a
# fresh cache directory; list and stats show its entries by backend and language; clear
# empties it and keeps the plugin verdicts; "cache_dir": null writes nothing. Argument: the
# plexus executable.
set -eu
plexus=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
printf '{"cache_dir": "%s/cache", "backends": {"opencl": {"enabled": false}}}\n' "$dir" > "$dir/config.json"
export PLEXUS_CONFIG="$dir/config.json"
"$plexus" run --kernel saxpy_f16 --backend native > /dev/null
"$plexus" run --kernel vector_add --backend native > /dev/null
list=$("$plexus" cache list)
echo "$list"
[ "$(echo "$list" | grep -c ' native  *host_object ')" = 2 ] || { echo "FAIL: list lacks the two native entries"; exit 1; }
stats=$("$plexus" cache stats)
echo "$stats"
echo "$stats" | grep -q ': 2 entries, ' || { echo "FAIL: stats does not count 2 entries"; exit 1; }
"$plexus" cache stats --json | grep -q '"entries": 2' || { echo "FAIL: JSON stats"; exit 1; }
"$plexus" cache clear | grep -q 'removed 2 files' || { echo "FAIL: clear"; exit 1; }
"$plexus" cache stats | grep -q ': 0 entries, 0 bytes' || { echo "FAIL: entries left after clear"; exit 1; }
[ -d "$dir/cache/plugin-verdicts" ] || { echo "FAIL: clear removed the verdicts"; exit 1; }
if "$plexus" cache shrink 2>/dev/null; then echo "FAIL: an unknown action was accepted"; exit 1; fi
# "cache_dir": null: the disk cache is off, nothing is written (the default directory under
# XDG_CACHE_HOME stays absent).
printf '{"cache_dir": null, "backends": {"opencl": {"enabled": false}}}\n' > "$dir/off.json"
PLEXUS_CONFIG="$dir/off.json" XDG_CACHE_HOME="$dir/xdg" "$plexus" run --kernel vector_add --backend native > /dev/null
[ ! -e "$dir/xdg" ] || { echo "FAIL: cache_dir null wrote $(find "$dir/xdg" | head -3)"; exit 1; }
echo ok
