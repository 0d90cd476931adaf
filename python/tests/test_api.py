"""Tests of the `canape` Python API and of the SofaPython3-compatible packages over it.

Run with `python -m pytest python/tests` in a venv where `pip install ./python` was done
(`.ci/run` does both). SOFA's example scenes are read from ../shared/sofa beside the repository.
"""

import os
import threading

import numpy as np
import pytest

import canape
import Sofa
import Sofa.Core
import Sofa.Simulation

HERE = os.path.dirname(os.path.abspath(__file__))
SOFA = os.path.normpath(os.path.join(HERE, "..", "..", "..", "shared", "sofa", "examples"))
TETRA = os.path.join(SOFA, "Component", "SolidMechanics", "FEM", "TetrahedronFEMForceField.scn")


def need_sofa():
    if not os.path.exists(TETRA):
        if os.environ.get("CANAPE_REQUIRE_SOFA"):
            pytest.fail("SOFA's example scenes are required (CANAPE_REQUIRE_SOFA) but %s is absent" % TETRA)
        pytest.skip("SOFA's example scenes are not beside the repository")


def falling_scene(name="root", controller=None):
    root = Sofa.Core.Node(name)
    root.addObject("DefaultAnimationLoop")
    root.addObject("EulerImplicitSolver", rayleighStiffness=0, rayleighMass=0)
    root.addObject("CGLinearSolver", iterations=25, tolerance=1e-12, threshold=1e-12)
    root.addObject("MechanicalObject", name="dofs", position=[[0, 0, 0], [1, 0, 0]])
    root.addObject("UniformMass", totalMass=2.0)
    if controller is not None:
        root.addObject(controller)
    return root


def test_load_step_and_read_positions():
    need_sofa()
    sim = canape.load(TETRA)
    x0 = np.array(sim["/BeamFEM_SMALL/MechanicalObject1"]["position"])
    sim.step(10)
    assert sim.time == pytest.approx(10 * sim.dt)
    x = sim["/BeamFEM_SMALL/MechanicalObject1"]["position"]
    assert x.shape == x0.shape and x.shape[1] == 3
    assert not np.array_equal(x, x0)  # the beam moved
    assert not x.flags.writeable  # a read is not a way to write


def test_python_scene_matches_free_fall_of_implicit_euler():
    root = falling_scene()
    Sofa.Simulation.init(root)
    dt = root.dt.value
    for _ in range(5):
        Sofa.Simulation.animate(root, dt)
    # implicit Euler on a free fall: v_n = n g dt, x_n = g dt^2 n(n+1)/2
    y = root.dofs.position.value[:, 1]
    expected = -9.81 * dt * dt * 5 * 6 / 2
    assert np.allclose(y, expected, rtol=1e-9)
    assert root.time.value == pytest.approx(5 * dt)


def test_data_written_from_python_takes_effect():
    root = falling_scene()
    Sofa.Simulation.init(root)
    with root.dofs.position.writeable() as x:
        x[:, 1] = 10.0
    assert root.dofs.position.value[0, 1] == 10.0
    root.gravity.value = [0.0, 0.0, 0.0]
    Sofa.Simulation.animate(root, root.dt.value)
    assert np.allclose(root.dofs.position.value[:, 1], 10.0)


def test_controller_events_in_order_and_data_edits_take_effect_in_the_step():
    seen = []

    class Recorder(Sofa.Core.Controller):
        def onSimulationInitDoneEvent(self, e):
            seen.append(e["type"])

        def onAnimateBeginEvent(self, e):
            seen.append(e["type"])
            # a controller moves a point: the step integrates from there
            with self.getContext().dofs.position.writeable() as x:
                x[0, 0] = 5.0

        def onAnimateEndEvent(self, e):
            seen.append(e["type"])

    root = falling_scene(controller=Recorder(name="rec"))
    Sofa.Simulation.init(root)
    Sofa.Simulation.animate(root, root.dt.value)
    Sofa.Simulation.animate(root, root.dt.value)
    assert seen == ["SimulationInitDoneEvent"] + ["AnimateBeginEvent", "AnimateEndEvent"] * 2
    assert root.dofs.position.value[0, 0] == pytest.approx(5.0)


def test_a_controller_that_raises_is_reported_with_its_path_and_the_simulation_goes_on():
    class Broken(Sofa.Core.Controller):
        def onAnimateBeginEvent(self, e):
            raise RuntimeError("boom in controller")

    root = falling_scene(controller=Broken(name="broken"))
    Sofa.Simulation.init(root)
    sim = canape.Simulation(root._sim.native)
    with pytest.raises(canape.SimulationError) as err:
        sim.step(1)
    text = str(err.value)
    assert "boom in controller" in text and "Traceback" in text
    assert "/root/broken" in text
    # the step was done and the simulation still steps
    t = sim.time
    with pytest.raises(canape.SimulationError):
        sim.step(1)
    assert sim.time == pytest.approx(t + sim.dt)
    assert np.all(np.isfinite(root.dofs.position.value))


def test_a_view_kept_after_its_simulation_is_dropped_stays_valid():
    root = falling_scene()
    Sofa.Simulation.init(root)
    Sofa.Simulation.animate(root, root.dt.value)
    kept = root.dofs.position.value
    copy = np.array(kept)
    Sofa.Simulation.unload(root)
    del root
    import gc

    gc.collect()
    assert np.array_equal(kept, copy)


def test_two_simulations_step_in_two_threads_as_alone():
    need_sofa()
    a = canape.load(TETRA)
    b = canape.load(TETRA)
    alone = canape.load(TETRA)
    alone.step(20)
    threads = [threading.Thread(target=s.step, args=(20,)) for s in (a, b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    path = "/BeamFEM_SMALL/MechanicalObject1"
    assert np.array_equal(a[path]["position"], alone[path]["position"])
    assert np.array_equal(b[path]["position"], alone[path]["position"])


def test_snapshot_restore_and_clone_are_bit_exact():
    need_sofa()
    sim = canape.load(TETRA)
    path = "/BeamFEM_SMALL/MechanicalObject1"
    sim.step(3)
    snap = sim.snapshot()
    clone = sim.clone()
    sim.step(7)
    after = np.array(sim[path]["position"])
    sim.restore(snap)
    sim.step(7)
    assert np.array_equal(sim[path]["position"], after)
    clone.step(7)
    assert np.array_equal(clone[path]["position"], after)


def test_batch_steps_clones_in_parallel():
    need_sofa()
    sim = canape.load(TETRA)
    out = canape.batch(sim, 3, 5, setup=lambda i, c: setattr(c, "gravity", [0, -9.81 * (i + 1), 0]))
    assert out.shape[0] == 3
    # more gravity, lower beam
    assert out[2][:, 1].min() < out[0][:, 1].min()


def test_bad_input_is_an_exception_not_a_crash():
    root = Sofa.Core.Node("root")
    with pytest.raises(ValueError, match="did you mean"):
        root.addObject("MechanicalObjekt")
    with pytest.raises(TypeError):
        root.addObject("MechanicalObject", positon=[1, 2, 3])
    with pytest.raises(ValueError):
        root.addObject("MechanicalObject", position="1 2 x")
    with pytest.raises(ValueError):
        canape.load(os.path.join(HERE, "does-not-exist.scn"))
    root = falling_scene()
    Sofa.Simulation.init(root)
    with pytest.raises(IndexError):
        root.dofs.position.value = np.zeros((5, 3))  # a running state keeps its size


def test_python_scene_file_runs(tmp_path):
    scene = tmp_path / "scene.py"
    scene.write_text(
        "def createScene(root, mass=1.0):\n"
        "    root.addObject('DefaultAnimationLoop')\n"
        "    root.addObject('EulerExplicitSolver')\n"
        "    root.addObject('MechanicalObject', name='dofs', position=[0, 0, 0])\n"
        "    root.addObject('UniformMass', totalMass=mass)\n"
    )
    sim = canape.load(str(scene))
    sim.step(3)
    assert sim["/dofs"]["position"][0, 1] < 0
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "canape", "run", str(scene), "-n", "4"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "4 steps" in out.stdout


def test_view_serves_the_page_of_a_clone_and_stops():
    import urllib.request

    root = falling_scene()
    Sofa.Simulation.init(root)
    viewer = canape.view(root, open_browser=False, block=False)
    try:
        with urllib.request.urlopen(viewer.url, timeout=10) as r:
            assert r.status == 200
            page = r.read().decode("utf-8", "replace")
        assert "<html" in page.lower()
        # the handle given to the viewer stays usable: its simulation is not the viewer's
        Sofa.Simulation.animate(root, root.dt.value)
        assert root.time.value == pytest.approx(root.dt.value)
    finally:
        viewer.stop()
    assert viewer.url is None


def test_objects_added_and_removed_after_init_change_the_running_scene():
    root = falling_scene()
    Sofa.Simulation.init(root)
    Sofa.Simulation.animate(root, root.dt.value)
    # a force cancelling gravity on both points (2 kg, g = 9.81), added to the running root
    ff = root.addObject("ConstantForceField", name="up", forces=[[0, 9.81, 0], [0, 9.81, 0]])
    assert ff._handle is not None
    v_before = np.array(root.dofs.velocity.value)
    Sofa.Simulation.animate(root, root.dt.value)
    assert np.allclose(root.dofs.velocity.value, v_before, atol=1e-9)
    # removed: gravity acts again
    root.removeObject(ff)
    Sofa.Simulation.animate(root, root.dt.value)
    assert root.dofs.velocity.value[0, 1] < v_before[0, 1] - 0.05
    # a child node with a mapped state, added after init
    child = root.addChild("mapped")
    m = child.addObject("MechanicalObject", name="copy")
    child.addObject("IdentityMapping", input="@../dofs", output="@copy")
    Sofa.Simulation.animate(root, root.dt.value)
    assert np.allclose(m.position.value, root.dofs.position.value)
    # what another component uses is not removed
    with pytest.raises(RuntimeError, match="uses|used"):
        root.removeObject(root.dofs)
    assert root.dofs._handle is not None


def test_a_node_moved_in_a_running_scene_keeps_its_state_and_gets_its_new_solver():
    root = Sofa.Core.Node("root")
    root.addObject("DefaultAnimationLoop")
    body = root.addChild("body")
    body.addObject("EulerImplicitSolver", rayleighStiffness=0, rayleighMass=0)
    body.addObject("CGLinearSolver", iterations=25, tolerance=1e-12, threshold=1e-12)
    body.addObject("MechanicalObject", name="dofs", position=[[0, 0, 0]])
    body.addObject("UniformMass", totalMass=1.0)
    # a point at the root: no solver integrates it
    ball = root.addChild("ball")
    pts = ball.addObject("MechanicalObject", name="pts", position=[[5, 0, 0]])
    ball.addObject("UniformMass", totalMass=1.0)
    Sofa.Simulation.init(root)
    Sofa.Simulation.animate(root, root.dt.value)
    assert np.allclose(pts.position.value, [[5, 0, 0]])
    body.moveChild(ball, root)
    assert ball in body.children and ball not in root.children
    for _ in range(3):
        Sofa.Simulation.animate(root, root.dt.value)
    # it kept its state and its new solver integrates it: three implicit Euler steps of free
    # fall from rest, y = -g dt^2 (1 + 2 + 3)
    dt = root.dt.value
    assert pts.position.value[0, 0] == 5.0
    assert np.isclose(pts.position.value[0, 1], -9.81 * dt * dt * 6, rtol=1e-9)
    # a move under its own subtree is refused and changes nothing
    with pytest.raises(RuntimeError, match="under itself"):
        ball.moveChild(body, root)
    assert body in root.children


def test_python_m_canape_view_serves_a_python_scene(tmp_path):
    import signal
    import subprocess
    import sys
    import urllib.request

    scene = tmp_path / "scene.py"
    scene.write_text(
        "def createScene(root):\n"
        "    root.addObject('DefaultAnimationLoop')\n"
        "    root.addObject('EulerExplicitSolver')\n"
        "    root.addObject('MechanicalObject', name='dofs', position=[0, 0, 0])\n"
        "    root.addObject('UniformMass', totalMass=1)\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-u", "-m", "canape", "view", str(scene), "--no-open", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline()
        assert "viewer at" in line, line + proc.stderr.read()
        url = line.split("viewer at", 1)[1].strip()
        with urllib.request.urlopen(url, timeout=10) as r:
            assert r.status == 200
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
    assert proc.returncode == 0, proc.stderr.read()


def test_position_value_is_a_read_only_view_that_keeps_what_it_saw():
    root = falling_scene()
    Sofa.Simulation.init(root)
    Sofa.Simulation.animate(root, root.dt.value)
    a = root.dofs.position.value
    b = root.dofs.position.value
    assert np.shares_memory(a, b)  # no copy: both view the state's buffer
    assert not a.flags.writeable
    with pytest.raises(ValueError):
        a[0, 0] = 1.0
    seen = np.array(a)
    Sofa.Simulation.animate(root, root.dt.value)
    # the step wrote a new buffer (the state copies before writing what a view holds)
    assert np.array_equal(a, seen)
    assert not np.array_equal(root.dofs.position.value, seen)
    # canape's API gives the same views
    sim = canape.Simulation(root._sim.native)
    x = sim["/dofs"]["position"]
    assert np.shares_memory(x, root.dofs.position.value)


class PyIdentity(Sofa.Core.Mapping_Vec3d_Vec3d):
    """An identity mapping written in Python (forces mapped back up)."""

    def apply(self, m, out, inp):
        with out.writeableArray() as o:
            o[:] = inp.value

    def applyJ(self, m, out, inp):
        with out.writeableArray() as o:
            o[:] = inp.value

    def applyJT(self, m, inp, out):
        with inp.writeableArray() as i:
            i[:] += out.value


def mapped_scene(python_mapping, solver):
    root = Sofa.Core.Node("root")
    root.addObject("DefaultAnimationLoop")
    root.addObject("EulerImplicitSolver", rayleighStiffness=0, rayleighMass=0)
    if solver == "cg":
        root.addObject("CGLinearSolver", iterations=50, tolerance=1e-15, threshold=1e-15)
    else:
        root.addObject("SparseLDLSolver")
    root.addObject("RegularGridTopology", n=[3, 2, 2], min=[0, 0, 0], max=[2, 1, 1])
    dofs = root.addObject("MechanicalObject", name="dofs")
    root.addObject("UniformMass", totalMass=1.0)
    root.addObject("HexahedronFEMForceField", youngModulus=500, poissonRatio=0.3)
    root.addObject("FixedProjectiveConstraint", indices=[0, 3, 6, 9])
    child = root.addChild("skin")
    out = child.addObject("MechanicalObject", name="pts")
    child.addObject("UniformMass", totalMass=0.5)
    child.addObject("ConstantForceField", forces=[0, 0, 0.2])
    if python_mapping:
        child.addObject(PyIdentity(name="map", input=dofs, output=out))
    else:
        child.addObject("IdentityMapping", input="@../dofs", output="@pts")
    return root


@pytest.mark.parametrize("solver", ["cg", "ldl"])
def test_a_python_mapping_moves_and_is_moved_as_the_built_in_one(solver):
    runs = []
    for python_mapping in (False, True):
        root = mapped_scene(python_mapping, solver)
        Sofa.Simulation.init(root)
        start = np.array(root.dofs.position.value)
        for _ in range(5):
            Sofa.Simulation.animate(root, root.dt.value)
        runs.append((np.array(root.dofs.position.value), np.array(root.skin.pts.position.value)))
    (x0, m0), (x1, m1) = runs
    assert np.abs(x0 - start).max() > 1e-6  # the mapped force and gravity moved the grid
    # the same motion (the Jacobian of the Python mapping is measured by applyJ for LDL)
    assert np.allclose(x1, x0, rtol=0, atol=1e-12), np.abs(x1 - x0).max()
    assert np.array_equal(m1, x1)


def test_assembled_stiffness_is_symmetric_and_ignores_translations():
    try:
        import scipy  # noqa: F401
    except ImportError:
        if os.environ.get("CANAPE_REQUIRE_SOFA"):
            pytest.fail("scipy is required here (.ci/run installs it)")
        pytest.skip("scipy is not installed: assembled matrices are scipy.sparse")
    root = Sofa.Core.Node("root")
    root.addObject("DefaultAnimationLoop")
    root.addObject("EulerImplicitSolver")
    root.addObject("SparseLDLSolver")
    root.addObject("RegularGridTopology", n=[3, 2, 2], min=[0, 0, 0], max=[2, 1, 1])
    root.addObject("MechanicalObject", name="dofs")
    root.addObject("UniformMass", name="mass", totalMass=1.0)
    fem = root.addObject("HexahedronFEMForceField", youngModulus=500, poissonRatio=0.3, method="large")
    Sofa.Simulation.init(root)
    Sofa.Simulation.animate(root, root.dt.value)
    K = fem.assembleKMatrix().toarray()
    assert K.shape == (36, 36)
    assert np.allclose(K, K.T, atol=1e-9 * np.abs(K).max())
    t = np.tile([1.0, 0.0, 0.0], 12)
    assert np.abs(K @ t).max() < 1e-9 * np.abs(K).max()
    M = root.mass.assembleMMatrix().toarray()
    assert np.allclose(np.diag(M), 1.0 / 12) and np.count_nonzero(M - np.diag(np.diag(M))) == 0


def test_a_controller_adds_an_object_during_a_step_and_it_acts_from_the_next():
    class Adder(Sofa.Core.Controller):
        def __init__(self, *a, **kw):
            Sofa.Core.Controller.__init__(self, *a, **kw)
            self.added = None

        def onAnimateBeginEvent(self, e):
            if self.added is None:
                # cancels gravity on the two points (2 kg)
                self.added = self.getContext().addObject("ConstantForceField", name="up", forces=[[0, 9.81, 0]] * 2)

    ctl = Adder(name="adder")
    root = falling_scene(controller=ctl)
    Sofa.Simulation.init(root)
    Sofa.Simulation.animate(root, root.dt.value)  # added when this step ends
    assert ctl.added._handle is not None
    v = np.array(root.dofs.velocity.value)
    Sofa.Simulation.animate(root, root.dt.value)
    assert np.allclose(root.dofs.velocity.value, v, atol=1e-9)
