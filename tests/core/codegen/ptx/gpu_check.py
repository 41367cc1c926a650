#!/usr/bin/env python3
"""Runs the PTX of the test kernels (written by `ptx_dump --out DIR`) on a CUDA GPU through
CuPy and checks every output element against a NumPy reference; prints the measured ulp error of
each math intrinsic. Usage: gpu_check.py DIR [APPROX_DIR]   (APPROX_DIR: PLEXUS_LIBDEVICE=none)
Not a meson test: CI machines have no GPU. Exit status 1 when a check fails."""
import os
import sys

import cupy as cp
import numpy as np

rng = np.random.default_rng(1234)
failures = []


def check(name, ok, detail=""):
    print(f"{'ok  ' if ok else 'FAIL'} {name} {detail}")
    if not ok:
        failures.append(name)


def kernel(folder, name):
    return cp.RawModule(path=os.path.join(folder, name + ".ptx")).get_function(name)


def groups(n, block):
    return (n + block - 1) // block


def vector_add(d):
    n = 100_003
    a, b = rng.standard_normal(n, np.float32), rng.standard_normal(n, np.float32)
    c = cp.zeros(n, cp.float32)
    kernel(d, "vector_add")((groups(n, 256),), (256,), (cp.asarray(a), cp.asarray(b), c, np.int32(n)))
    check("vector_add", np.array_equal(c.get(), a + b), "(bit-exact)")


def reduce_sum(d):
    n = 1_000_000
    x = rng.uniform(-1, 1, n).astype(np.float32)
    out = cp.zeros(1, cp.float32)
    kernel(d, "reduce_sum")((groups(n, 256),), (256,), (cp.asarray(x), out, np.int32(n)))
    ref = x.astype(np.float64).sum()
    err = abs(float(out.get()[0]) - ref)
    check("reduce_sum", err <= 1e-5 * np.abs(x).sum(), f"(|error| {err:.3g})")


def matmul(d):
    n = 100  # not a multiple of the 16x16 tile
    a = rng.uniform(-1, 1, (n, n)).astype(np.float32)
    b = rng.uniform(-1, 1, (n, n)).astype(np.float32)
    c = cp.zeros((n, n), cp.float32)
    g = groups(n, 16)
    kernel(d, "matmul_tiled")((g, g), (16, 16), (cp.asarray(a), cp.asarray(b), c, np.int32(n)))
    ref = a.astype(np.float64) @ b.astype(np.float64)
    bound = 1e-6 * (np.abs(a) @ np.abs(b)) * n
    err = np.abs(c.get() - ref)
    check("matmul_tiled", bool((err <= bound).all()), f"(max |error| {err.max():.3g})")


def histogram(d):
    n, nbins = 200_000, 37
    data = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    bins = cp.zeros(nbins, cp.uint32)
    kernel(d, "histogram")((groups(n, 256),), (256,), (cp.asarray(data), bins, np.int32(n), np.uint32(nbins)))
    check("histogram", np.array_equal(bins.get(), np.bincount(data % nbins, minlength=nbins)))


def atomics64(d):
    n = 5000
    vals = rng.integers(-2**40, 2**40, n, dtype=np.int64)
    mins = cp.asarray(np.array([2**63 - 1, -2**63, 0], np.int64))
    sums = cp.zeros(2, cp.uint64)
    flags0 = rng.integers(0, 3, 2 * n, dtype=np.uint64)
    flags, olds = cp.asarray(flags0), cp.zeros(n, cp.uint64)
    kernel(d, "atomics64")((groups(n, 128),), (128,), (cp.asarray(vals), mins, sums, flags, olds, np.int32(n)))
    u = vals.view(np.uint64)
    with np.errstate(over="ignore"):
        want_sum = np.add.reduce(u, dtype=np.uint64)
    m, s, f = mins.get(), sums.get(), flags.get()
    check("atomics64 i64 min/max", m[0] == vals.min() and m[1] == vals.max())
    check("atomics64 shared i64 add", m[2] == vals.sum())
    check("atomics64 u64 add/xor", s[0] == want_sum and s[1] == np.bitwise_xor.reduce(u))
    want_flags = np.concatenate([np.where(flags0[:n] == 0, 1, flags0[:n]), np.full(n, 7)])
    check("atomics64 cmpxchg/xchg", np.array_equal(f, want_flags)
          and np.array_equal(olds.get(), flags0[:n] + flags0[n:]))


def control_flow(d):
    n, limit = 300, 50
    out = cp.zeros(n, cp.int32)
    kernel(d, "control_flow")((groups(n, 64),), (64,), (out, np.int32(n), np.int32(limit)))
    want = []
    for g in range(n):
        acc = 0
        for i in range(limit):
            if i % 3 == 0:
                continue
            if i + g > 100:
                break
            acc += i
        while True:
            acc >>= 1
            if acc < 10:
                break
        want.append(acc)
    check("control_flow", np.array_equal(out.get(), np.array(want, np.int32)))


L = np.longdouble
MATH = [  # catalog order; the kernel passes x, x + 1, x + 2 (sums rounded to the type)
    ("sqrt", lambda a, b, c: np.sqrt(a)), ("rsqrt", lambda a, b, c: 1 / np.sqrt(a)),
    ("exp", lambda a, b, c: np.exp(a)), ("exp2", lambda a, b, c: np.exp2(a)),
    ("log", lambda a, b, c: np.log(a)), ("log2", lambda a, b, c: np.log2(a)),
    ("sin", lambda a, b, c: np.sin(a)), ("cos", lambda a, b, c: np.cos(a)),
    ("tan", lambda a, b, c: np.tan(a)), ("pow", lambda a, b, c: np.power(a, b)),
    ("fabs", lambda a, b, c: np.abs(a)), ("floor", lambda a, b, c: np.floor(a)),
    ("ceil", lambda a, b, c: np.ceil(a)), ("fma", lambda a, b, c: a * b + c),
    ("min", lambda a, b, c: np.minimum(a, b)), ("max", lambda a, b, c: np.maximum(a, b)),
    ("clamp", lambda a, b, c: np.minimum(np.maximum(a, b), c)),
]


def math_each(d, dtype, label, limits):
    n = 1 << 16
    name = "math_each_" + ("f32" if dtype == np.float32 else "f64")
    if not os.path.exists(os.path.join(d, name + ".ptx")):
        print(f"skip {label} {name}: no PTX")
        return
    # Mostly in (0.01, 10), plus larger sines and cosines for the range reduction.
    x = np.concatenate([rng.uniform(0.01, 10, n - 1024), rng.uniform(10, 1000, 1024)]).astype(dtype)
    out = cp.zeros(len(MATH) * n, dtype)
    kernel(d, name)((groups(n, 256),), (256,), (cp.asarray(x), out, np.int32(n)))
    got = out.get().reshape(len(MATH), n)
    args = [(x + dtype(i)).astype(L) for i in range(3)]
    for j, (fn, ref) in enumerate(MATH):
        want = ref(*args)
        with np.errstate(over="ignore", invalid="ignore"):
            rounded = want.astype(dtype)
            ulp = np.abs(np.spacing(rounded)).astype(L)
            err = np.abs(got[j].astype(L) - want) / ulp
        # Where the result overflows the type, only inf is right.
        err[~np.isfinite(rounded)] = np.where(got[j] == rounded, 0, np.inf)[~np.isfinite(rounded)]
        small = err[: n - 1024].max()
        print(f"     {label} {name} {fn:6s} max error {small:.2f} ulp on (0.01, 10), "
              f"{err[n - 1024:].max():.3g} on (10, 1000)")
        if fn in limits:
            check(f"{label} {name} {fn}", small <= limits[fn], f"(limit {limits[fn]} ulp)")


def main():
    d = sys.argv[1]
    print(cp.cuda.runtime.getDeviceProperties(0)["name"].decode(), "PTX from", d)
    for test in (vector_add, reduce_sum, matmul, histogram, atomics64, control_flow):
        try:
            test(d)
        except Exception as e:  # a PTX the driver refuses, a launch that faults
            check(test.__name__, False, f"({type(e).__name__}: {e})")
    exact = {f: 0.501 for f in ("sqrt", "fabs", "floor", "ceil", "fma", "min", "max", "clamp")}
    # CUDA's documented bounds for its math library (the error measured here includes the
    # reference's own rounding of half an ulp).
    math_each(d, np.float32, "libdevice", {**exact, "rsqrt": 2.5, "exp": 2.5, "exp2": 2.5,
              "log": 1.5, "log2": 1.5, "sin": 2.5, "cos": 2.5, "tan": 4.5, "pow": 4.5})
    math_each(d, np.float64, "libdevice", {**exact, "rsqrt": 1.5, "exp": 1.5, "exp2": 1.5,
              "log": 1.5, "log2": 1.5, "sin": 2.5, "cos": 2.5, "tan": 2.5, "pow": 2.5})
    if len(sys.argv) > 2:
        math_each(sys.argv[2], np.float32, "approx", exact)
    print("FAILED: " + ", ".join(failures) if failures else "all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
