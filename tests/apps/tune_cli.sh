#!/bin/sh
# `plexus tune` and `plexus explain` of kernel families on native (a matmul, a row and a scan
# family): the first tuning measures
# and stores, the second finds the choice, the tuning file exports and imports it, a bad tuning
# file is refused with its place named and stores nothing. Argument: the plexus executable.
set -eu
plexus=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export XDG_CACHE_HOME="$dir/a" PLEXUS_CONFIG=
first=$("$plexus" tune matmul_tf32 --backend native --mnk 64,48,72)
echo "$first"
echo "$first" | grep -q '^matmul_tf32 64,48,72 on native .*(measured, ' || { echo "FAIL: not measured"; exit 1; }
echo "$first" | grep -q 'matmul_tf32__wide1_blocks1 *not timed: wide 1 needs subgroups of 32' || { echo "FAIL: wide variant not dropped with its reason"; exit 1; }
[ "$(echo "$first" | grep -c ' ms  ')" -ge 2 ] || { echo "FAIL: fewer than two candidates timed"; exit 1; }
again=$("$plexus" tune matmul_tf32 --backend native --mnk 64,48,72)
echo "$again" | grep -q '(stored)' || { echo "FAIL: the second tuning did not find the stored choice"; exit 1; }
# A row family and a scan family tune through --shape; a shape of the wrong length is refused.
rows=$("$plexus" tune softmax_f32 --backend native --shape 64,1000)
echo "$rows" | grep -q '^softmax_f32 64,1000 on native .*(measured, ' || { echo "FAIL: softmax_f32 not measured"; exit 1; }
scan=$("$plexus" tune scan_i32 --backend native --shape 5000)
echo "$scan" | grep -q '^scan_i32 5000 on native .*(measured, ' || { echo "FAIL: scan_i32 not measured"; exit 1; }
if err=$("$plexus" tune softmax_f32 --shape 64 2>&1); then echo "FAIL: a short shape was taken"; exit 1; fi
echo "$err" | grep -q 'softmax_f32 takes a shape of 2 sizes (ROWS,COLS), not 1' || { echo "FAIL: $err"; exit 1; }
explain=$("$plexus" explain matmul_tf32)
echo "$explain" | grep -q '^matmul_tf32 is a kernel family' || { echo "FAIL: explain does not say family"; exit 1; }
echo "$explain" | grep -q '^matmul_tf32 on native:.*bucket 64,64,128,16,16,8: ' || { echo "FAIL: explain lacks the stored choice"; exit 1; }
"$plexus" tune --export "$dir/t.json" | grep -q '^3 tuning choices written' || { echo "FAIL: export"; exit 1; }
XDG_CACHE_HOME="$dir/b" "$plexus" tune --import "$dir/t.json" | grep -q '^3 tuning choices stored' || { echo "FAIL: import"; exit 1; }
XDG_CACHE_HOME="$dir/b" "$plexus" tune --list | grep -q '^3 stored choices' || { echo "FAIL: list after import"; exit 1; }
sed 's/"kernel_hash": "[0-9a-f]*"/"kernel_hash": "xyz"/' "$dir/t.json" > "$dir/bad.json"
if err=$(XDG_CACHE_HOME="$dir/c" "$plexus" tune --import "$dir/bad.json" 2>&1); then
    echo "FAIL: a bad tuning file was imported"; exit 1
fi
echo "$err"
echo "$err" | grep -q 'bad.json.*records\[0\]\.kernel_hash' || { echo "FAIL: the error does not name the place"; exit 1; }
[ ! -d "$dir/c/plexus/tuning" ] || [ -z "$(ls "$dir/c/plexus/tuning")" ] || { echo "FAIL: something was stored"; exit 1; }
echo ok
