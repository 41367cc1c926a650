#!/bin/sh
# `plexus info`: the table and the JSON list every plugin file with its outcome, failures
# of plugins still exit 0, and an invalid configuration exits 2 naming file and JSON path.
# args: PLEXUS_EXE EXAMPLE_PLUGIN
set -eu
PLEXUS=$1 EXAMPLE=$2
TMP=$(mktemp -d "${TMPDIR:-/tmp}/plexus-info-XXXXXX")
trap 'rm -rf "$TMP"' EXIT
mkdir "$TMP/plugins"
cp "$EXAMPLE" "$TMP/plugins/"
head -c 4096 /dev/urandom > "$TMP/plugins/libplexus-noise.so"
printf '{"plugin_dirs": ["plugins"], "backends": {"example": {"priority": 7}}}' > "$TMP/config.json"
export PLEXUS_CONFIG="$TMP/config.json" PLEXUS_PLUGIN_PATH="" PLEXUS_LOG=off

fail() { echo "FAIL: $*"; exit 1; }

"$PLEXUS" --help | grep -q "info" || fail "--help does not list info"
table=$("$PLEXUS" info) || fail "plexus info exited $?"
echo "$table"
echo "$table" | grep -q "^example  *loaded  *direct  *7 " || fail "no loaded example row with priority 7"
echo "$table" | grep -q "device 0: example single-threaded CPU (cpu, 1 compute units" || fail "no device row"
echo "$table" | grep -q "local memory 64 KiB, work-groups of up to 1024, subgroups of 1, fp64 yes" ||
  fail "no row of the device's limits"
echo "$table" | grep -q "^-  *not_a_plugin .*libplexus-noise.so" || fail "no not_a_plugin row"
echo "$table" | grep -q "^configuration: $TMP/config.json" || fail "the configuration file is not named"

"$PLEXUS" info --json > "$TMP/info.json" || fail "plexus info --json exited $?"
python3 - "$TMP/info.json" "$TMP/config.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["config"] == sys.argv[2], doc["config"]
# Run from a build tree, plexus also lists the build tree's plugins: look only at ours.
tmp = sys.argv[2].rsplit("/", 1)[0]
by = {p["path"].rsplit("/", 1)[1]: p for p in doc["plugins"] if p["path"].startswith(tmp + "/")}
assert sorted(by) == ["libplexus-example.so", "libplexus-noise.so"], sorted(by)
ex = by["libplexus-example.so"]
assert (ex["name"], ex["outcome"], ex["execution_model"], ex["priority"]) == ("example", "loaded", "direct", 7), ex
assert ex["devices"] == [{"name": "example single-threaded CPU", "type": "cpu", "compute_units": 1,
                          "memory_bytes": 1 << 30, "local_memory_bytes": 64 << 10,
                          "max_work_group_size": 1024, "subgroup_size": 1, "fp64": True,
                          "uuid": "", "pci_bus_id": ""}], ex["devices"]
noise = by["libplexus-noise.so"]
assert noise["outcome"] == "not_a_plugin" and "not an ELF file" in noise["message"], noise
assert noise["devices"] == []
PY

printf '{"backends": {"example": {"priority": "high"}}}' > "$TMP/bad.json"
set +e
err=$(PLEXUS_CONFIG="$TMP/bad.json" "$PLEXUS" info 2>&1)
rc=$?
set -e
[ $rc -eq 2 ] || fail "an invalid configuration exited $rc, not 2"
echo "$err" | grep -q "$TMP/bad.json" || fail "the error does not name the file: $err"
echo "$err" | grep -q "backends.example.priority" || fail "the error does not name the JSON path: $err"
echo "$err" | grep -q 'expected an integer' || fail "the error does not say what was expected: $err"
"$PLEXUS" info --bogus 2>/dev/null && fail "an unknown option was accepted"
echo "PASS"
