#!/bin/sh
# `plexus codegen KERNEL --lang llvm-host [--optimized]` and `--lang asm-host`: the lowered
# module has the work-item loops and no vector type yet; the optimized one and the assembly
# are the vectorized function (what the native backend runs).
# args: PLEXUS_EXE
set -eu
PLEXUS=$1
fail() { echo "FAIL: $*"; exit 1; }

lowered=$("$PLEXUS" codegen vector_add --lang llvm-host) || fail "llvm-host exited $?"
printf '%s\n' "$lowered" | grep -q '^define void @plx_wg_vector_add(' || fail "no work-group function in the lowered IR"
printf '%s\n' "$lowered" | grep -q '^wi.xc.head' || fail "no loop over chunks of work-items in the lowered IR"
printf '%s\n' "$lowered" | grep -q 'llvm.loop.parallel_accesses' || fail "the x loop is not marked parallel"
! printf '%s\n' "$lowered" | grep -q 'x float>' || fail "the lowered IR already has vector types"

optimized=$("$PLEXUS" codegen vector_add --lang llvm-host --optimized) || fail "llvm-host --optimized exited $?"
printf '%s\n' "$optimized" | grep -q '^define void @plx_wg_vector_add(' || fail "no work-group function in the optimized IR"
printf '%s\n' "$optimized" | grep -q 'fadd <[0-9]* x float>' || fail "no vector addition in the optimized IR"

asm=$("$PLEXUS" codegen vector_add --lang asm-host) || fail "asm-host exited $?"
printf '%s\n' "$asm" | grep -q '^plx_wg_vector_add:' || fail "no work-group function in the assembly"
printf '%s\n' "$asm" | grep -q 'vaddps\|addps\|fadd' || fail "no float addition in the assembly"

if "$PLEXUS" codegen vector_add --lang asm-hst 2>/dev/null; then fail "an unknown language was accepted"; fi
echo "ok: plexus codegen prints the host IR as lowered and optimized, and the host assembly"
