#!/bin/sh
# `plexus bench --startup` measures (it asserts no time): every backend of the build alone and
# all together, five fresh processes each, every run a number of milliseconds or a stated
# reason (no CUDA driver here). Argument: the plexus executable.
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
print("ok")
PY
