#!/bin/sh
# Drop-in plugins side by side: plexus's own OpenCL plugin and two third-party OpenCL plugins
# over the same ICD loader and driver (tests/plugin-api/frozen/clplugin.c, built against the ABI 1.0
# header and today's) in one plugin folder. 200 process starts of `plexus info`, and every
# tenth a `plexus run` of reduce on a third-party plugin: none may crash, and every plugin
# must load each time. (Before plugin inits ran one after another, 4 in 5 starts crashed in
# PoCL 3.1.)
# args: PLEXUS_EXE OPENCL_PLUGIN THIRD_PARTY_PLUGIN...
set -eu
PLEXUS=$1 OPENCL=$2
shift 2
TMP=$(mktemp -d "${TMPDIR:-/tmp}/plexus-side-XXXXXX")
trap 'rm -rf "$TMP"' EXIT
mkdir "$TMP/plugins"
cp "$OPENCL" "$TMP/plugins/libplexus-opencl.so"
names="opencl"
for p in "$@"; do
    cp "$p" "$TMP/plugins/"
    n=$(basename "$p" .so)
    names="$names ${n#libplexus-}"
done
# Only the folder's plugins: the build tree's native, interp and cuda are disabled.
printf '{"plugin_dirs": ["plugins"], "cache_dir": "%s/cache", "backends": {"native": {"enabled": false}, "interp": {"enabled": false}, "cuda": {"enabled": false}}}' "$TMP" > "$TMP/config.json"
export PLEXUS_CONFIG="$TMP/config.json" PLEXUS_PLUGIN_PATH="" PLEXUS_LOG=off

fail() { echo "FAIL: $*"; exit 1; }

"$PLEXUS" info > "$TMP/first.txt" || fail "plexus info exited $?"
cat "$TMP/first.txt"
if grep -q "^opencl  *no_devices" "$TMP/first.txt"; then
    echo "SKIP: the OpenCL driver reports no device here"
    exit 77
fi
runs=${PLEXUS_SIDE_BY_SIDE_RUNS:-200}
i=1
while [ $i -le "$runs" ]; do
    "$PLEXUS" info > "$TMP/info.txt" 2>&1 || fail "start $i: plexus info exited $? (a signal is 128 + its number)"
    for n in $names; do
        grep -q "^$n  *loaded " "$TMP/info.txt" || { cat "$TMP/info.txt"; fail "start $i: $n is not loaded"; }
    done
    if [ $((i % 10)) -eq 0 ]; then
        "$PLEXUS" run --backend "${n}" --kernel reduce > "$TMP/run.txt" 2>&1 ||
            { cat "$TMP/run.txt"; fail "start $i: plexus run --backend $n --kernel reduce exited $?"; }
    fi
    i=$((i + 1))
done
echo "$runs starts with $names side by side: no crash, every plugin loaded each time"
