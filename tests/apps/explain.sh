#!/bin/sh
# `plexus explain`: the ranked candidates of a sample kernel, one dropped by the configuration
# with its reason, in text and JSON, and one dropped for an operation its device lacks. Argument: the plexus executable.
set -eu
plexus=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
printf '{"backends": {"native": {"devices": "gpu"}}}\n' > "$dir/config.json"
out=$(PLEXUS_CONFIG="$dir/config.json" "$plexus" explain particles)
echo "$out"
echo "$out" | grep -q '^kernel particles: ' || { echo "FAIL: no header"; exit 1; }
echo "$out" | grep -q '^  1\. ' || { echo "FAIL: nothing kept"; exit 1; }
echo "$out" | grep -q 'native:0 .*dropped: not selected by backends.native.devices "gpu"' || { echo "FAIL: native not dropped with its reason"; exit 1; }
json=$(PLEXUS_CONFIG="$dir/config.json" "$plexus" explain particles --json --grid 1000 --local 64)
echo "$json" | grep -q '"kernel": "particles"' || { echo "FAIL: JSON lacks the kernel"; exit 1; }
echo "$json" | grep -q '"kept": false' || { echo "FAIL: JSON lacks the dropped candidate"; exit 1; }
if "$plexus" explain particles --grid 0 2>/dev/null; then echo "FAIL: --grid 0 accepted"; exit 1; fi
# A device dropped for warp_reduce (an OpenCL device without cl_khr_subgroups) is dropped for
# the subgroup operation it lacks, which the reason names.
sg=$("$plexus" explain warp_reduce)
echo "$sg"
if echo "$sg" | grep 'dropped:' | grep -v 'dropped: the device lacks subgroups (cl_khr_subgroups), which subgroup_[a-z_0-9]* needs'; then
    echo "FAIL: a device dropped for warp_reduce without naming the subgroup operation"; exit 1
fi
# A warpgroup kernel that never calls subgroup_id still needs it where its accumulators run as
# plain arithmetic: a device dropped for it is told why.
wg=$("$plexus" explain matmul_f16__path0_wide0_stages4_blocks1)
echo "$wg"
if echo "$wg" | grep 'dropped:.*subgroup_id' | grep -v "warpgroup accumulators use it"; then
    echo "FAIL: subgroup_id named without the warpgroup accumulators that need it"; exit 1
fi
echo ok
