#!/usr/bin/env python3
"""Whole-suite rounds: runs `BIN bench --suite ../shared/sofa/perf/perf.scenes` ROUNDS times for
each binary in turn, then prints per binary the geometric mean of SOFA/Canapé over the scenes from
each scene's median of its rounds (SOFA's own times in sofa-here.tsv are medians of 3 runs), from
each scene's best round, and from each single round; then each scene's median per binary.

usage: scripts/bench-rounds.py ROUNDS BIN [BIN...]   (run from the repository, ../shared beside it)
"""
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

SUITE = Path(__file__).resolve().parent.parent.parent / "shared" / "sofa" / "perf" / "perf.scenes"


def main():
    rounds, bins = int(sys.argv[1]), sys.argv[2:]
    times = {b: {} for b in bins}
    sofa = {}
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "suite.json")
        for _ in range(rounds):
            for b in bins:
                subprocess.run([b, "bench", "--suite", str(SUITE), "--json", out], capture_output=True)
                for x in json.load(open(out)):
                    if x.get("error") is None and x.get("median_ms"):
                        times[b].setdefault(x["scene"], []).append(x["median_ms"])
                        sofa[x["scene"]] = x["sofa_ms"]

    def gmean(b, pick):
        t = times[b]
        return math.exp(sum(math.log(sofa[s] / pick(v)) for s, v in t.items()) / len(t))

    for b in bins:
        singles = [gmean(b, lambda v, i=i: v[i]) for i in range(rounds)]
        print(f"{b}: {len(times[b])} scenes, geometric mean {gmean(b, statistics.median):.3f}x "
              f"(median of {rounds} rounds per scene), {gmean(b, min):.3f}x (best), single rounds "
              + " ".join(f"{g:.2f}" for g in singles))
    for s in sorted(times[bins[0]], key=lambda s: sofa[s] / statistics.median(times[bins[-1]][s])):
        cells = " | ".join(f"{statistics.median(times[b][s]):.3f}" for b in bins if s in times[b])
        ratio = sofa[s] / statistics.median(times[bins[-1]][s])
        print(f"{Path(s).name}: {cells} ms (SOFA {sofa[s]:.3f}, {ratio:.2f}x)")


if __name__ == "__main__":
    main()
