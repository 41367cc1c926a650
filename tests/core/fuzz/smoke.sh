#!/bin/sh
# A short libFuzzer run of one target from its seed corpus: new inputs go to a temporary
# folder, never into the source tree.
# args: FUZZER CORPUS_FOLDER...
set -eu
FUZZER=$1
shift
TMP=$(mktemp -d "${TMPDIR:-/tmp}/plexus-fuzz-XXXXXX")
trap 'rm -rf "$TMP"' EXIT
"$FUZZER" -runs=20000 -max_len=8192 -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 "$TMP" "$@"
