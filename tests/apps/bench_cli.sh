#!/bin/sh
# `plexus bench` as a program (no time is asserted): --startup measures every backend of the
# build alone and all together, five fresh processes each, every run a number of milliseconds
# or a stated reason (no CUDA driver here); --plot draws one bar per row that has a ratio, in
# an SVG that parses as XML; empty_launch on native and OpenCL has its raw baseline.
# Argument: the plexus executable.
set -eu
plexus=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$plexus" bench --startup --json "$dir/startup.json"
python3 - "$dir/startup.json" <<'PY'
import json, sys
runs = json.load(open(sys.argv[1]))["startup"]
for kind in ("runtime all", "runtime interp", "raw cuda", "raw opencl"):
    assert kind in runs, f"no {kind} row: {sorted(runs)}"
    assert len(runs[kind]) == 5, f"{kind}: {len(runs[kind])} runs"
    for r in runs[kind]:
        assert ("ms" in r and r["ms"] > 0) or r.get("error"), f"{kind}: {r}"
for r in runs["runtime interp"]:
    assert r["backends"] == 1 and r["devices"] == 1, r
assert runs["runtime all"][0]["backends"] >= 1, runs["runtime all"][0]
print("startup ok")
PY
"$plexus" bench --backend native --kernel vector_add --size 100000 --reps 1 --json "$dir/rows.json" --plot "$dir/rows.svg"
python3 - "$dir/rows.json" "$dir/rows.svg" <<'PY'
import json, sys
import xml.etree.ElementTree as ET
rows = json.load(open(sys.argv[1]))["results"]
assert len(rows) == 1 and rows[0]["verified"] and rows[0]["ratio"] > 0, rows
svg = ET.parse(sys.argv[2]).getroot()
ns = "{http://www.w3.org/2000/svg}"
bars = [r for r in svg.iter(ns + "rect") if r.find(ns + "title") is not None]
assert len(bars) == 1, len(bars)
assert bars[0].find(ns + "title").text.startswith("vector_add - native"), bars[0].find(ns + "title").text
labels = [t.text for t in svg.iter(ns + "text")]
assert any(l and l.startswith("vector_add - native") for l in labels), labels
print("plot ok")
PY
# The empty_launch rows of the CPU backends: each beside its raw call (a std::thread
# fork-join; clEnqueueNDRangeKernel through the ICD loader), both measured.
for backend in native opencl; do
    "$plexus" bench --backend $backend --kernel empty_launch --json "$dir/launch-$backend.json"
    python3 - "$dir/launch-$backend.json" $backend <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))["results"]
assert len(rows) >= 1, rows
for r in rows:
    assert r["kernel"] == "empty_launch" and r["backend"] == sys.argv[2], r
    assert r["value"] > 0 and r["baseline"]["value"] > 0 and "error" not in r["baseline"], r
    assert abs(r["above_baseline_us"] - (r["value"] - r["baseline"]["value"])) < 1e-9, r
print(sys.argv[2], "empty_launch ok")
PY
done
# A CPU matmul row comes with a second row against OpenBLAS's cblas_sgemm: measured and
# checked where libopenblas is installed, else a baseline error that says so.
"$plexus" bench --backend native --kernel matmul_tiled --size 100 --reps 1 --json "$dir/matmul.json"
python3 - "$dir/matmul.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))["results"]
assert len(rows) == 2 and all(r["kernel"] == "matmul_tiled" and r["verified"] for r in rows), rows
assert rows[0]["baseline"]["name"].startswith("C++") and rows[0]["ratio"] > 0, rows[0]
blas = rows[1]["baseline"]
assert rows[1]["value"] == rows[0]["value"] and rows[1]["against"] == "OpenBLAS" and "against" not in rows[0], rows
assert blas["name"].startswith("OpenBLAS cblas_sgemm"), blas
assert (blas["value"] > 0 and rows[1]["ratio"] > 0) or "OpenBLAS was not found" in blas.get("error", ""), blas
print("matmul_tiled beside OpenBLAS ok:", blas.get("error") or blas["name"])
PY
