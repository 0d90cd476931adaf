"""Canapé from Python.

    import canape
    sim = canape.load("liver.scn")          # or canape.load("scene.py"): createScene(root)
    sim.step(10)
    x = sim["/Liver/dofs"]["position"]       # numpy array (n, 3)
    snap = sim.snapshot(); sim.step(5); sim.restore(snap)
    other = sim.clone()                      # independent, steps on another thread

SofaPython3 scenes use the compatibility packages `Sofa`, `SofaRuntime` and `SofaTypes`
installed beside this one.
"""

import os
import runpy
import sys

import numpy as _np

from canape import _native

__version__ = _native.__version__

__all__ = ["load", "Simulation", "Component", "SimulationError", "batch", "scene_from_python", "view"]


class SimulationError(RuntimeError):
    """A step reported errors (a controller's exception, a diverging state…)."""

    def __init__(self, diagnostics):
        self.diagnostics = diagnostics
        RuntimeError.__init__(self, "\n".join(text for _, text in diagnostics))


def _check(diags):
    errors = [d for d in diags if d[0] == "error"]
    if errors:
        raise SimulationError(errors)


class Component:
    """One component of a simulation: its Data by name (`c["position"]`), read as numpy arrays
    or Python values, written from arrays, lists, numbers or SOFA text."""

    def __init__(self, sim, info):
        self._sim = sim
        self._info = info

    @property
    def path(self):
        return self._info["path"]

    @property
    def class_name(self):
        return self._info["class"]

    @property
    def name(self):
        return self._info["name"]

    def data_names(self):
        return self._sim._native.data_names(self._info["index"], self._info["generation"])

    def __getitem__(self, name):
        v = self._sim._native.get(self._info["index"], self._info["generation"], name)
        if isinstance(v, _np.ndarray):
            v.flags.writeable = False
        return v

    def __setitem__(self, name, value):
        i, g = self._info["index"], self._info["generation"]
        if isinstance(value, _np.ndarray) and name in ("position", "velocity", "force", "rest_position"):
            self._sim._native.set_state(i, g, name, _np.ascontiguousarray(value, dtype=_np.float64).ravel())
            return
        from Sofa.Core import to_text

        self._sim._native.set(i, g, name, to_text(value))

    def __repr__(self):
        return "<canape.Component %s (%s)>" % (self.path, self.class_name)


class Simulation:
    """A running simulation (see the module's documentation)."""

    def __init__(self, native):
        self._native = native

    def step(self, n=1, dt=None):
        """Advance n steps; raises SimulationError if a step reported errors."""
        b = getattr(self, "_binding", None)
        ffs = b.forcefields if b is not None else ()
        if not ffs:
            diags = self._native.step(n, dt)
            if b is not None:
                b.bind_pending()
            _check(diags)
            return
        # Python force fields read their links from a copy taken before each step
        diags = []
        for _ in range(n):
            for f in ffs:
                f._before_step()
            try:
                diags += self._native.step(1, dt)
            finally:
                for f in ffs:
                    f._after_step()
                b.bind_pending()
        _check(diags)

    @property
    def time(self):
        return self._native.time

    @property
    def dt(self):
        return self._native.dt

    @dt.setter
    def dt(self, value):
        self._native.set_dt(float(value))

    @property
    def gravity(self):
        return _np.array(self._native.gravity)

    @gravity.setter
    def gravity(self, g):
        self._native.set_gravity([float(x) for x in g])

    def components(self):
        return [Component(self, c) for c in self._native.components()]

    def __getitem__(self, path):
        """The component at `path` (`/Liver/dofs`, the root's name optional)."""
        comps = self._native.components()
        for c in comps:
            p = c["path"]
            rel = "/" + p.split("/", 2)[2] if p.count("/") >= 2 else p
            if path in (p, rel):
                return Component(self, c)
        raise KeyError("no component at '%s'" % path)

    def diagnostics(self):
        return self._native.diagnostics()

    def snapshot(self):
        return self._native.snapshot()

    def restore(self, snap):
        self._native.restore(snap)

    def clone(self):
        return Simulation(self._native.clone())

    @property
    def threads(self):
        return self._native.threads

    @threads.setter
    def threads(self, n):
        self._native.set_threads(int(n))

    def send_script_event(self, name):
        self._native.send_script_event(name)

    def finish(self):
        self._native.finish()


def view(sim, port=0, host="127.0.0.1", open_browser=True, block=True, paused=True):
    """Show a simulation in Canapé's browser viewer (the page `canape view` serves). The viewer
    runs a clone of `sim` on its own thread. With block=True, waits until Ctrl-C and stops the
    viewer; otherwise returns it (`viewer.url`, `viewer.stop()`). `sim` may be a
    canape.Simulation or an initialised Sofa.Core.Node."""
    import time

    native = _native_of(sim)
    viewer = native.view(host=host, port=port, paused=paused)
    print("Canapé viewer at %s" % viewer.url)
    if open_browser and not viewer.open_browser():
        print("(no browser found to open: open the address above yourself)")
    if not block:
        return viewer
    try:
        while True:
            time.sleep(0.2)
    except KeyboardInterrupt:
        pass
    finally:
        viewer.stop()
    return None


def _native_of(sim):
    if isinstance(sim, Simulation):
        return sim._native
    if isinstance(sim, _native.Simulation):
        return sim
    root = getattr(sim, "getRoot", None)
    if root is not None:
        root = sim.getRoot()
        if root._sim is None:
            from Sofa import Simulation as S

            S.init(root)
        return root._sim.native
    raise TypeError("canape.view takes a canape.Simulation or a Sofa.Core.Node")


def load(path, dt=None, threads=0, **scene_kwargs):
    """Load a scene: .scn/.xml through Canapé's loader; .py through its createScene(root)."""
    path = os.fspath(path)
    if os.path.splitext(path)[1].lower() in (".py", ".py3", ".pyscn", ".py3scn"):
        root = scene_from_python(path, **scene_kwargs)
        from Sofa import Simulation as S

        if root._sim is None:
            S.init(root)
        sim = Simulation(root._sim.native)
        sim._root = root
        sim._binding = root._sim
        if dt:
            sim.dt = dt
        if threads:
            sim.threads = threads
        return sim
    return Simulation(_native.Simulation.load(os.path.abspath(path), dt=dt, threads=threads))


def scene_from_python(path, **kwargs):
    """Run a SofaPython3 scene file's createScene(root) on a new root node named `root`."""
    import Sofa.Core

    path = os.path.abspath(path)
    folder = os.path.dirname(path)
    sys.path.insert(0, folder)
    try:
        module = runpy.run_path(path, run_name="__canape_scene__")
    finally:
        if sys.path and sys.path[0] == folder:
            sys.path.pop(0)
    if "createScene" not in module:
        raise ValueError("%s has no createScene(root) function" % path)
    root = Sofa.Core.Node("root")
    object.__setattr__(root, "_scene_dir", folder)
    module["createScene"](root, **kwargs)
    return root


def batch(sim, count, steps, setup=None, read=None, threads=None):
    """Step `count` clones of `sim` for `steps` steps in parallel threads (the GIL is released
    while stepping). `setup(i, clone)` may change each clone first; `read(clone)` returns what
    to keep (default: every state's positions of the first state). Returns a numpy array
    stacking `read` of each clone."""
    from concurrent.futures import ThreadPoolExecutor

    clones = [sim.clone() for _ in range(count)]
    if setup is not None:
        for i, c in enumerate(clones):
            setup(i, c)

    def run(c):
        c.step(steps)
        if read is not None:
            return _np.asarray(read(c))
        for comp in c.components():
            if comp.class_name == "MechanicalObject":
                return _np.array(comp["position"])
        return _np.zeros(0)

    with ThreadPoolExecutor(max_workers=threads or min(count, os.cpu_count() or 1)) as ex:
        results = list(ex.map(run, clones))
    return _np.stack(results)
