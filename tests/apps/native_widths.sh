#!/bin/sh
# Every sample kernel on the native backend with the work-item loops vectorized for each x86
# vector width (backends.native.features): the host's own, 256 bits (-avx512f) and 128 bits
# (no AVX), each checked element by element by `plexus run`; elsewhere the host's width only.
# An unknown feature is a configuration error that names it. Argument: the plexus executable.
set -eu
plexus=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
widths='host'
[ "$(uname -m)" = x86_64 ] && widths='host -avx512f -avx512f,-avx,-avx2,-fma,-f16c'
for features in $widths; do
    [ "$features" = host ] && features=''
    printf '{"cache_dir": "%s/cache", "backends": {"opencl": {"enabled": false}, "native": {"features": "%s"}}}\n' \
        "$dir" "$features" > "$dir/config.json"
    out=$(PLEXUS_CONFIG="$dir/config.json" "$plexus" run --backend native) || { echo "$out"; echo "FAIL: features '$features'"; exit 1; }
    summary=$(echo "$out" | tail -1)
    echo "features '$features': $summary"
    echo "$summary" | grep -q ' 0 failed' || { echo "$out"; exit 1; }
    echo "$summary" | grep -q '^0 runs' && { echo "FAIL: nothing ran"; exit 1; }
done
printf '{"cache_dir": "%s/cache", "backends": {"native": {"features": "+nosuch"}}}\n' "$dir" > "$dir/config.json"
out=$(PLEXUS_CONFIG="$dir/config.json" "$plexus" run --backend native --kernel vector_add 2>&1) && { echo "FAIL: an unknown feature ran"; exit 1; }
echo "$out" | grep -q "LLVM knows no CPU feature 'nosuch'" || { echo "$out"; echo "FAIL: the error does not name the feature"; exit 1; }
echo ok
