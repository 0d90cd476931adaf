"""Run SofaPython3's example scenes (every file under examples/ with `createScene`, the
additional-examples/, jax/ and meshing/ folders included) through Canapé: each loads and runs
100 steps in its own process. Prints one line per example (ok, or the first line of why not)
and a count.

    python python/tests/sofapython3_examples.py PEER_DIR [--steps N] [--expected FILE] [--write FILE]

With --expected, exits 1 if an example of the list no longer runs.
"""

import argparse
import glob
import os
import subprocess
import sys

SKIP_DIRS = ()

RUNNER = r"""
import sys, os, warnings
import numpy as np
import canape, Sofa.Simulation
path, steps = sys.argv[1], int(sys.argv[2])
root = canape.scene_from_python(path)
errors = []
import Sofa.Helper as H
class Collect(H.MessageHandler):
    def process(self, msg):
        if msg["type"] in ("Error", "Fatal"):
            errors.append(msg["message"])
with Collect():
    Sofa.Simulation.init(root)
    for _ in range(steps):
        Sofa.Simulation.animate(root, root.dt.value)
if errors:
    print("ERROR " + errors[0].splitlines()[0][:200])
    sys.exit(3)
print("OK t=%g" % root.time.value)
"""


def main():
    p = argparse.ArgumentParser()
    p.add_argument("peer")
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--timeout", type=int, default=120)
    p.add_argument("--expected")
    p.add_argument("--write")
    a = p.parse_args()
    a.peer = os.path.abspath(a.peer)
    files = []
    for f in sorted(glob.glob(os.path.join(a.peer, "examples", "**", "*.py"), recursive=True)):
        rel = os.path.relpath(f, os.path.join(a.peer, "examples"))
        if rel.split(os.sep)[0] in SKIP_DIRS:
            continue
        with open(f, encoding="utf-8", errors="replace") as fh:
            if "def createScene" not in fh.read():
                continue
        files.append((rel, f))
    if not files:
        print("error: no examples under %s/examples" % a.peer)
        return 1
    ok = []
    for rel, f in files:
        try:
            proc = subprocess.run([sys.executable, "-c", RUNNER, f, str(a.steps)], cwd=os.path.dirname(f),
                                  capture_output=True, text=True, timeout=a.timeout)
            out = proc.stdout.strip().splitlines()
            last = out[-1] if out else ""
            if proc.returncode == 0 and last.startswith("OK"):
                ok.append(rel)
                why = last
            else:
                err = [l for l in proc.stderr.strip().splitlines() if l.strip()]
                why = last if last.startswith("ERROR") else (err[-1] if err else "exit %d" % proc.returncode)
        except subprocess.TimeoutExpired:
            why = "timed out after %d s" % a.timeout
        print("%-4s %s: %s" % ("ok" if rel in ok else "no", rel, why[:220]))
    print("SofaPython3 examples: %d of %d load and run %d steps" % (len(ok), len(files), a.steps))
    if a.write:
        with open(a.write, "w") as fh:
            fh.write("# SofaPython3 examples that run (python/tests/sofapython3_examples.py --write)\n")
            fh.writelines(r + "\n" for r in ok)
    if a.expected:
        with open(a.expected) as fh:
            expected = [l.strip() for l in fh if l.strip() and not l.startswith("#")]
        lost = [r for r in expected if r not in ok]
        for r in lost:
            print("REGRESSION: example no longer runs: %s" % r)
        if lost:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
