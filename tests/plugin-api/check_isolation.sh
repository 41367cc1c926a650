#!/bin/sh
# `plexus info` and `plexus doctor` beside plugins that crash, abort, hang or exit in init, or
# crash later: info lists each with its outcome and exits 0 within the time limit plus one
# second (and far sooner once the verdicts are cached); doctor diagnoses each, human and JSON,
# and exits 1.
# args: PLEXUS_EXE NAME=PLUGIN_PATH...
set -eu
PLEXUS=$1
shift
TMP=$(mktemp -d "${TMPDIR:-/tmp}/plexus-isolation-XXXXXX")
trap 'rm -rf "$TMP"' EXIT
mkdir "$TMP/plugins"
for pair in "$@"; do
    cp "${pair#*=}" "$TMP/plugins/libplexus-${pair%%=*}.so"
done
LIMIT_MS=2000
printf '{"plugin_dirs": ["plugins"], "plugin_init_timeout_ms": %s, "cache_dir": "%s"}' "$LIMIT_MS" "$TMP/cache" \
    > "$TMP/config.json"
export PLEXUS_CONFIG="$TMP/config.json" PLEXUS_PLUGIN_PATH="" PLEXUS_LOG=off

fail() { echo "FAIL: $*"; exit 1; }
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

start=$(now_ms)
table=$("$PLEXUS" info) || fail "plexus info exited $?"
took=$(( $(now_ms) - start ))
echo "$table"
# One second of slack, times PLEXUS_TEST_TIME_SCALE in a sanitizer build (tests/sanitize.sh).
SLACK_MS=$((1000 * ${PLEXUS_TEST_TIME_SCALE:-1}))
echo "plexus info took $took ms, first run (time limit $LIMIT_MS ms, slack $SLACK_MS ms)"
[ "$took" -le $((LIMIT_MS + SLACK_MS)) ] || fail "plexus info took $took ms, more than the limit plus $SLACK_MS ms"
row() { echo "$table" | grep -q "^$1  *$2 .*/libplexus-$3.so\$" || fail "no '$2' row for $3"; }
row - crashed segv
row - crashed abort
row - timed_out loop
row - crashed exit0
row thread_crash crashed thread_crash
row example loaded example
row launch_crash loaded launch_crash
echo "$table" | grep -q "crashed with SIGSEGV (segmentation fault) in plx_plugin_init" || fail "no SIGSEGV message"
echo "$table" | grep -q "plexus validates it again when it changes" || fail "no word on how to retry"

start=$(now_ms)
PLEXUS_LOG=debug "$PLEXUS" info --json > "$TMP/info.json" 2> "$TMP/info.log" || fail "plexus info --json exited $?"
took=$(( $(now_ms) - start ))
echo "plexus info took $took ms with the verdicts cached"
grep "plugin validation: " "$TMP/info.log"
grep -q "plugin validation: 0 in child processes" "$TMP/info.log" || fail "the second run started validation children"
python3 - "$TMP/info.json" "$TMP" <<'PY'
import json, signal, sys
doc = json.load(open(sys.argv[1]))
by = {p["path"].rsplit("/", 1)[1]: p for p in doc["plugins"] if p["path"].startswith(sys.argv[2] + "/")}
want = {"segv": ("crashed", signal.SIGSEGV), "abort": ("crashed", signal.SIGABRT), "loop": ("timed_out", 0),
        "exit0": ("crashed", 0), "thread_crash": ("crashed", signal.SIGSEGV), "example": ("loaded", 0),
        "launch_crash": ("loaded", 0)}
for name, (outcome, sig) in want.items():
    p = by["libplexus-%s.so" % name]
    assert (p["outcome"], p["signal"]) == (outcome, sig), (name, p)
PY

set +e
"$PLEXUS" doctor > "$TMP/doctor.txt"
rc=$?
set -e
cat "$TMP/doctor.txt"
[ $rc -eq 1 ] || fail "plexus doctor exited $rc with broken plugins, not 1"
grep -q "^\[problem\] -  .*/libplexus-segv.so" "$TMP/doctor.txt" || fail "segv is not a problem"
grep -q "^\[ok\] example  " "$TMP/doctor.txt" || fail "example is not ok"
grep -q "device 0: Fake CPU 0 (cpu): \[problem\] crashed with SIGSEGV (segmentation fault) while compiling or launching a test kernel" \
    "$TMP/doctor.txt" || fail "the crash at launch is not diagnosed"
grep -q "what to do: A program that loaded it would have crashed" "$TMP/doctor.txt" || fail "no advice for a crash in init"

set +e
"$PLEXUS" doctor --json > "$TMP/doctor.json"
rc=$?
set -e
[ $rc -eq 1 ] || fail "plexus doctor --json exited $rc, not 1"
python3 - "$TMP/doctor.json" "$TMP" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
by = {p["path"].rsplit("/", 1)[1]: p for p in doc["plugins"] if p["path"].startswith(sys.argv[2] + "/")}
for name in ["segv", "abort", "loop", "exit0", "thread_crash", "launch_crash"]:
    p = by["libplexus-%s.so" % name]
    assert p["severity"] == "problem" and p["advice"], (name, p)
assert by["libplexus-loop.so"]["outcome"] == "timed_out"
crash = by["libplexus-launch_crash.so"]["devices"][0]
assert crash["severity"] == "problem" and "SIGSEGV" in crash["summary"], crash
assert [s["step"] for s in crash["steps"]][-1] == "free", crash  # memory passed, the kernel crashed
ex = by["libplexus-example.so"]
assert ex["severity"] == "ok", ex
steps = {s["step"]: s for s in ex["devices"][0]["steps"]}
assert steps["kernel"]["ok"] and "correct" in steps["kernel"]["message"], steps
assert doc["problems"] >= 6, doc["problems"]
PY
echo "PASS"
