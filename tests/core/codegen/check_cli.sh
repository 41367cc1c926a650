#!/bin/sh
# `plexus codegen FILE.json --lang opencl-c|cuda-c` on a plexus-ir/2 file with a record, a
# variant, f16 / bf16, vectors, a match, a private and a shaped shared array (step.json): the
# output shows each in the language's form.
# args: PLEXUS_EXE STEP_JSON
set -eu
PLEXUS=$1 JSON=$2
fail() { echo "FAIL: $*"; exit 1; }
expect() { # TEXT LINE...
    text=$1
    shift
    for line in "$@"; do
        printf '%s\n' "$text" | grep -qF -- "$line" || fail "no line '$line' in:
$text"
    done
}

cl=$("$PLEXUS" codegen "$JSON" --lang opencl-c) || fail "plexus codegen --lang opencl-c exited $?"
expect "$cl" "#pragma OPENCL FP_CONTRACT OFF" "typedef struct Particle {" "    float3 pos;" "    ushort charge; // bf16" "} Particle;" \
    "        ushort charged; // f16" "__kernel void step(__global Particle* parts, __global const Kind* kinds, int n, ushort plx_arg_dt) {" \
    "    __local float tile[272]; // [16][16] pad 1" "    __private float4 acc[4];" "    float dt = plx_from_f16(plx_arg_dt);" \
    "        if (plx_match_0.tag == 1u) {" "            p.vel.y = p.vel.y + plx_round_f16(q * dt);" "        acc[0] = (float4)(p.mass);"

cu=$("$PLEXUS" codegen "$JSON" --lang cuda-c) || fail "plexus codegen --lang cuda-c exited $?"
expect "$cu" "typedef plx_vec<float, 3> plx_float3;" "    plx_float3 pos;" "    unsigned short charge; // bf16" \
    "static_assert(sizeof(Particle) == 48 && alignof(Particle) == 16, \"Particle: the IR's size and alignment\");" \
    "    static __device__ Kind plx_make_charged(unsigned short p) {" "    __shared__ float tile[272]; // [16][16] pad 1" \
    "    plx_float4 acc[4];" "            p.vel.v[1] = p.vel.v[1] + plx_round_f16(__fmul_rn(q, dt));" "        acc[0] = plx_splat<4>(p.mass);"
echo "ok: plexus codegen shows records, variants, f16 / bf16, vectors, match and arrays in both languages"
