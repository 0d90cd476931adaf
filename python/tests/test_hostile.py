"""Hostile use of the Python API: random sequences of calls with bad values (seeded) must end in
Python exceptions or results, never a crash of the interpreter; each sequence runs in a child
process so that a crash is seen as such (a signal or an abort) and reported with its seed."""

import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent(
    r'''
    import math, random, sys
    import numpy as np
    import Sofa, Sofa.Core, Sofa.Simulation, canape

    rng = random.Random(int(sys.argv[1]))
    BAD = [float("nan"), float("inf"), -1, 0, 1e308, "x", "", "@nowhere", "@/..", None, [], [[]],
           [1, 2], [[1, 2, 3]] * 3, np.zeros((2, 2)), np.full((3, 3), np.nan), {"a": 1}, "1 2 x",
           "0-99999999999", True, -1e9, "\x00", "@", ".", b"bytes"]
    CLASSES = ["MechanicalObject", "UniformMass", "ConstantForceField", "EulerImplicitSolver",
               "CGLinearSolver", "FixedProjectiveConstraint", "SpringForceField", "BoxROI",
               "IdentityMapping", "TetrahedronFEMForceField", "RegularGridTopology", "Nope"]
    DATA = ["position", "velocity", "totalMass", "forces", "indices", "box", "youngModulus",
            "iterations", "n", "name", "input", "output", "template", "vertexMass"]

    class C(Sofa.Core.Controller):
        def onAnimateBeginEvent(self, e):
            if rng.random() < 0.3:
                raise RuntimeError("controller trouble")
            if rng.random() < 0.3:
                self.getContext().addObject("ConstantForceField", forces=[0, 1, 0])

    def attempt(f):
        try:
            f()
        except Exception:
            pass

    for round_ in range(3):
        root = Sofa.Core.Node("root")
        nodes = [root]
        for _ in range(40):
            n = rng.choice(nodes)
            what = rng.random()
            if what < 0.15:
                attempt(lambda: nodes.append(n.addChild("c%d" % len(nodes))))
            elif what < 0.55:
                kw = {rng.choice(DATA): rng.choice(BAD) for _ in range(rng.randint(0, 3))}
                attempt(lambda: n.addObject(rng.choice(CLASSES), **kw))
            elif what < 0.6:
                attempt(lambda: n.addObject(C(name="ctl")))
            elif what < 0.75 and n._objects:
                o = rng.choice(n._objects)
                attempt(lambda: setattr(o, rng.choice(DATA), rng.choice(BAD)))
            elif what < 0.8 and n._objects:
                attempt(lambda: n.removeObject(rng.choice(n._objects)))
            elif what < 0.85:
                attempt(lambda: Sofa.Simulation.init(root))
            elif what < 0.95:
                attempt(lambda: Sofa.Simulation.animate(root, rng.choice([0.01, -1, 0, float("nan")])))
            else:
                attempt(lambda: [getattr(o, d).value for o in n._objects for d in DATA if hasattr(o, d)])
        attempt(lambda: Sofa.Simulation.unload(root))
    print("survived")
    '''
)


@pytest.mark.parametrize("seed", range(8))
def test_random_bad_calls_never_crash_the_interpreter(seed):
    p = subprocess.run([sys.executable, "-c", SCRIPT, str(seed)], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and "survived" in p.stdout, (
        "seed %d: exit %d\n%s" % (seed, p.returncode, p.stderr[-3000:])
    )
