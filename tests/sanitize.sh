#!/bin/sh
# The sanitizer runs of docs/testing.md, one command each: builds the tree with
# AddressSanitizer + UndefinedBehaviorSanitizer (asan) or ThreadSanitizer (tsan) in
# build-asan or build-tsan beside the sources, then runs the whole suite there with the
# suppressions of tests/sanitizers/ (each entry says why). Prints how long each part took.
# usage: tests/sanitize.sh asan|tsan [meson test arguments, e.g. --suite abi]
# JOBS (default 2) is ninja's -j. TESTS, when set, names the tests to run (meson test names):
# then only what they need is built (tests/sanitizers/targets.py), which is how .ci/run's
# sanitizer passes fit CI's time. SETUP adds meson options to a new tree, and BUILD_DIR names
# it (default build-asan / build-tsan beside the sources): .ci/run builds build-asan-ci with
# SETUP=-Dllvm=disabled.
set -eu
[ $# -ge 1 ] || { echo "usage: $0 asan|tsan [meson test arguments]"; exit 2; }
kind=$1
shift
root=$(cd "$(dirname "$0")/.." && pwd)
supp=$root/tests/sanitizers
# -O1 with line tables (-g1) rather than the project's -O3 keeps the build short on two cores
# (docs/testing.md has the times); reports still name file and line.
common="-Doptimization=1 -Ddebug=false -Dc_args=-g1 -Dcpp_args=-g1"
case $kind in
asan)
    default_dir=$root/build-asan
    options="-Db_sanitize=address,undefined -Db_lundef=false $common"
    # detect_leaks is left to each program's default: the validation child turns it off, so
    # that a plugin calling exit() is reported with its own exit status.
    export ASAN_OPTIONS="abort_on_error=1:halt_on_error=1:verify_asan_link_order=0:suppressions=$supp/asan.supp"
    export LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0"
    export UBSAN_OPTIONS="halt_on_error=1:abort_on_error=1:print_stacktrace=1:suppressions=$supp/ubsan.supp"
    ;;
tsan)
    default_dir=$root/build-tsan
    options="-Db_sanitize=thread -Db_lundef=false $common"
    export TSAN_OPTIONS="halt_on_error=1:abort_on_error=1:second_deadlock_stack=1:suppressions=$supp/tsan.supp"
    # The install suite's consumer programs link libplexus; ThreadSanitizer's runtime must be
    # in the executable itself, or the program dies before main.
    export PLEXUS_TEST_CONSUMER_FLAGS="-fsanitize=thread"
    # ThreadSanitizer runs the stress suite about ten times slower: 0.4 of its iterations
    # still make 2000 launches per backend and mode.
    export PLEXUS_STRESS_SCALE=${PLEXUS_STRESS_SCALE:-0.4}
    ;;
*)
    echo "usage: $0 asan|tsan [meson test arguments]"
    exit 2
    ;;
esac
# Processes start several times slower under a sanitizer: the time checks of the abi suite
# (plexus info within the plugin time limit plus a second) get this many seconds of slack.
export PLEXUS_TEST_TIME_SCALE=${PLEXUS_TEST_TIME_SCALE:-4}
start=$(date +%s)
dir=${BUILD_DIR:+$root/$BUILD_DIR}
dir=${dir:-$default_dir}
# shellcheck disable=SC2086 # option lists
[ -f "$dir/build.ninja" ] || meson setup "$dir" $options ${SETUP:-}
if [ -n "${TESTS:-}" ]; then
    # shellcheck disable=SC2086 # lists of names
    ninja -C "$dir" -j"${JOBS:-2}" $(python3 "$supp/targets.py" "$dir" $TESTS)
    # shellcheck disable=SC2086
    set -- --no-rebuild "$@" $TESTS
else
    ninja -C "$dir" -j"${JOBS:-2}"
fi
built=$(date +%s)
echo "CPU time so far (minutes and seconds, user then system; the second line is every process this ran):"
times
status=0
meson test -C "$dir" --print-errorlogs --timeout-multiplier 4 "$@" || status=$?
# LeakSanitizer's own tracer sometimes crashes at a program's exit while PoCL's worker threads
# end ("Tracer caught signal 11 ... LeakSanitizer has encountered a fatal error": no leak
# report, the tests had passed). A test that failed that way, and only that way, runs once
# more, and this says so; any other failure stands.
if [ "$kind" = asan ] && [ $status -ne 0 ]; then
    again=$(python3 - "$dir/meson-logs/testlog.json" <<'PY'
import json, sys
names, other = [], False
for line in open(sys.argv[1]):
    t = json.loads(line)
    if t["result"] in ("OK", "SKIP", "EXPECTEDFAIL"):
        continue
    out = t.get("stdout", "") + t.get("stderr", "")
    if "Tracer caught signal" in out and "LeakSanitizer has encountered a fatal error" in out:
        names.append(t["name"].split(" / ")[-1])
    else:
        other = True
print("" if other else " ".join(names))
PY
)
    if [ -n "$again" ]; then
        echo "tests/sanitize.sh: LeakSanitizer's tracer crashed in: $again; running them once more"
        status=0
        # shellcheck disable=SC2086 # a list of names
        meson test -C "$dir" --no-rebuild --print-errorlogs --timeout-multiplier 4 $again || status=$?
    fi
fi
finished=$(date +%s)
echo "CPU time at the end (build and suite):"
times
echo "tests/sanitize.sh $kind: build $((built - start)) s, suite $((finished - built)) s, exit $status" \
     "(load average now: $(cut -d' ' -f1-3 /proc/loadavg))"
exit $status
