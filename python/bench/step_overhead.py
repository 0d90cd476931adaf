"""What Python adds to a step, and what reading a state costs.

    python python/bench/step_overhead.py [SOFA_EXAMPLES_DIR]

1. TetrahedronFEMForceField.scn: ms/step when Rust loops over the steps (one `step(n)` call)
   and when Python calls `step()` once per step; the difference is the binding's cost per step.
   Rounds alternate and the median of each is reported.
2. `position` of a state of 1 000, 10 000 and 100 000 points: microseconds per read of
   `position.value` (a read-only view of the state: the time does not grow with the size).
3. Two simulations stepped from two Python threads against one after the other.
"""

import os
import statistics
import sys
import time

import canape

here = os.path.dirname(os.path.abspath(__file__))
examples = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "..", "..", "shared", "sofa", "examples")
scene = os.path.join(examples, "Component", "SolidMechanics", "FEM", "TetrahedronFEMForceField.scn")

N = 200
rust, python = [], []
for _ in range(5):
    sim = canape.load(scene)
    sim.step(10)  # warm
    t = time.perf_counter()
    sim.step(N)
    rust.append((time.perf_counter() - t) * 1e3 / N)
    sim = canape.load(scene)
    sim.step(10)
    t = time.perf_counter()
    for _ in range(N):
        sim.step()
    python.append((time.perf_counter() - t) * 1e3 / N)
r, p = statistics.median(rust), statistics.median(python)
print("TetrahedronFEMForceField.scn: %.4f ms/step looped in Rust, %.4f ms/step called from Python: %+.2f %%" % (r, p, 100 * (p - r) / r))

for n in (1000, 10000, 100000):
    pts = " ".join("%d 0 0" % i for i in range(n))
    import Sofa.Core
    import Sofa.Simulation

    root = Sofa.Core.Node("root")
    root.addObject("DefaultAnimationLoop")
    mo = root.addObject("MechanicalObject", name="dofs", position=pts)
    Sofa.Simulation.init(root)
    reps = 200
    t = time.perf_counter()
    for _ in range(reps):
        v = mo.position.value
    us = (time.perf_counter() - t) * 1e6 / reps
    import numpy as np

    kind = "view" if np.shares_memory(v, mo.position.value) else "copy"
    print("position.value of %6d points: %8.1f us per read (%s)" % (n, us, kind))

# 3. Two simulations stepping in two Python threads (the GIL is released while stepping)
import threading

a, b = canape.load(scene), canape.load(scene)
t = time.perf_counter()
a.step(N)
b.step(N)
seq = time.perf_counter() - t
a, b = canape.load(scene), canape.load(scene)
t = time.perf_counter()
ths = [threading.Thread(target=s.step, args=(N,)) for s in (a, b)]
for th in ths:
    th.start()
for th in ths:
    th.join()
par = time.perf_counter() - t
print("two simulations x %d steps: %.0f ms one after the other, %.0f ms in two threads (%.2fx)" % (N, seq * 1e3, par * 1e3, seq / par))
