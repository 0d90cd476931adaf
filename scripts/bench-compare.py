#!/usr/bin/env python3
"""Compare canape binaries on SOFA's performance scenes, run alternately scene by scene.

This machine's speed drifts by 10-40 % over minutes, so two suite runs made minutes apart are not
comparable; this runs `BIN bench SCENE` for each binary in turn, keeps each binary's best median
per scene over REPS rounds, and prints per-scene ratios to SOFA's time and the geometric means
(over each binary's supported scenes, and over the scenes all binaries support).

usage: scripts/bench-compare.py REPS BIN [BIN...]   (run from the repository, ../shared beside it)
Set ONLY=word,word to run just the scenes whose path contains one of the words.
"""
import math
import os
import subprocess
import sys
from pathlib import Path

SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "sofa"


def main():
    reps, bins = int(sys.argv[1]), sys.argv[2:]
    sofa = {}
    for line in open(SHARED / "perf" / "sofa-here.tsv"):
        p = line.rstrip("\n").split("\t")
        if len(p) > 2 and p[0].startswith("examples/"):
            try:
                sofa[p[0][len("examples/"):]] = float(p[2])
            except ValueError:
                pass
    scenes = [
        line.split()[0][len("examples/"):]
        for line in open(SHARED / "perf" / "perf.scenes")
        if line.strip() and not line.startswith("#")
    ]
    best = {b: {} for b in bins}
    for s in scenes:
        only = [w for w in os.environ.get("ONLY", "").split(",") if w]
        if s not in sofa or (only and not any(w in s for w in only)):
            continue
        for _ in range(reps):
            for b in bins:
                out = subprocess.run(
                    [b, "bench", str(SHARED / "examples" / s)], capture_output=True, text=True
                ).stdout
                for line in out.splitlines():
                    if line.startswith(s) and "unsupported" not in line:
                        t = float(line.split()[2])
                        best[b][s] = min(best[b].get(s, math.inf), t)
        cells = [
            f"{b}: {best[b][s]:.3f} ms ({sofa[s] / best[b][s]:.2f}x)" if s in best[b] else f"{b}: -"
            for b in bins
        ]
        print(Path(s).name, " | ".join(cells), flush=True)
    common = set.intersection(*(set(best[b]) for b in bins))
    for b in bins:
        for name, keys in (("supported", best[b].keys()), ("common", common)):
            keys = list(keys)
            if keys:
                g = math.exp(sum(math.log(sofa[k] / best[b][k]) for k in keys) / len(keys))
                print(f"{b}: {name} scenes {len(keys)}, geometric mean {g:.3f}x")


if __name__ == "__main__":
    main()
