#!/usr/bin/env python3
"""Sweep SOFA's example scenes as a new user would: run each `.scn` under an examples directory
for a few steps and sort it into: clean and moving (no error while loading, some state changed),
clean but static, loaded with errors, failed (diverged, crashed, timed out). Prints the counts,
the components that block the most scenes (unknown or refused), and writes one line per scene
to a TSV file.

usage: scripts/sweep-examples.py BIN EXAMPLES_DIR OUT.tsv [STEPS] [TIMEOUT_S]
"""
import collections
import gzip
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path


def frames(path):
    """The X lines of a WriteState file, in order."""
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt") as f:
        return [line.split("X=", 1)[1].split() for line in f if line.strip().startswith("X=")]


def moved(dirname):
    for name in sorted(os.listdir(dirname)):
        xs = frames(os.path.join(dirname, name))
        if len(xs) >= 2:
            a, b = xs[0], xs[-1]
            if len(a) != len(b):
                return True
            for u, v in zip(a, b):
                try:
                    if abs(float(u) - float(v)) > 1e-9 * (1 + abs(float(u))):
                        return True
                except ValueError:
                    return True
    return False


def main():
    binary, root, out = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
    steps = sys.argv[4] if len(sys.argv) > 4 else "20"
    timeout = float(sys.argv[5]) if len(sys.argv) > 5 else 60.0
    scenes = sorted(p for p in root.rglob("*.scn"))
    counts = collections.Counter()
    blockers = collections.Counter()
    rows = []
    for scn in scenes:
        rel = scn.relative_to(root)
        with tempfile.TemporaryDirectory() as tmp:
            try:
                r = subprocess.run(
                    [binary, "run", str(scn), "-n", steps, "--write-states", tmp],
                    capture_output=True,
                    text=True,
                    timeout=timeout,
                )
                text = r.stdout + r.stderr
                errors = [l for l in text.splitlines() if l.startswith("error:")]
                diverged = "diverged" in text
                if r.returncode != 0 and not errors:
                    status = f"failed (exit {r.returncode})"
                elif diverged:
                    status = "failed (diverged)"
                elif errors:
                    status = "errors"
                else:
                    status = "clean, moves" if moved(tmp) else "clean, static"
            except subprocess.TimeoutExpired:
                status, errors = "failed (timeout)", []
        kind = status.split(" (")[0] if status.startswith("failed") else status
        counts[kind] += 1
        scene_blockers = set()
        for e in errors:
            m = re.search(r"unknown component '([^']+)'", e)
            if m:
                scene_blockers.add(m.group(1))
                continue
            m = re.search(r"\(([A-Za-z0-9]+)\): ", e) or re.search(r": ([A-Z][A-Za-z0-9]+): ", e)
            if m:
                scene_blockers.add(m.group(1) + " (refused)")
        for b in scene_blockers:
            blockers[b] += 1
        first = errors[0][7:][:160] if errors else ""
        rows.append(f"{rel}\t{status}\t{len(errors)}\t{first}")
        print(f"{status:24} {rel}", flush=True)
    with open(out, "w") as f:
        f.write("scene\tstatus\terrors\tfirst error\n")
        f.write("\n".join(rows) + "\n")
    print(f"\n{len(scenes)} scenes:")
    for k, v in counts.most_common():
        print(f"  {v:4}  {k}")
    print("\nblocking the most scenes:")
    for k, v in blockers.most_common(40):
        print(f"  {v:4}  {k}")


if __name__ == "__main__":
    main()
