"""Sofa.Simulation: init, animate, reset, load, unload — over a Canapé simulation.

`init(root)` writes the Python scene tree as SOFA XML, builds it with Canapé's scene builder
(the same one `canape run` uses for .scn files), adds the Python controllers to their nodes,
calls the Python objects' `init()`, then initialises the scene (controllers then receive
SimulationInitDone). Each Python object is then bound to its component in the simulation.
"""

import os
import sys

import numpy as _np

from canape import _native
from Sofa import Core as _Core
from Sofa.Core import Node, Object, _quoteattr, to_text


def _serial_path(node):
    """The node's path in the scene written for Canapé: a node with several parents (SOFA's
    DAG) is written under its last parent (`Simulation.addChild(Modelling)`: the solver node
    that takes charge of it)."""
    if not node._parents:
        return "/"
    p = _serial_path(node._parents[-1])
    return (p if p != "/" else "") + "/" + node.getName()


def _native_path(node):
    """The node's path as Canapé names it (the root's name included)."""
    root = node.getRoot()
    p = _serial_path(node)
    base = "/" + root.getName()
    return base if p == "/" else base + p


def _link_text(link):
    """A link as written in the scene for Canapé: made from an object, node or Data, it is
    rewritten with the paths of the written scene (a node with several parents moves)."""
    t = getattr(link, "_target", None)
    if isinstance(t, _Core.Node):
        return "@" + _serial_path(t)
    if isinstance(t, _Core.Object) and t._node is not None:
        p = _serial_path(t._node)
        return "@" + (p if p != "/" else "") + "/" + t.getName()
    if isinstance(t, _Core.Data) and isinstance(t._owner, _Core.Object) and t._owner._node is not None:
        p = _serial_path(t._owner._node)
        return "@" + (p if p != "/" else "") + "/" + t._owner.getName() + "." + t._name
    return str(link)


class _Bound:
    """A component of a running simulation, as an object's Data source."""

    __slots__ = ("binding", "index", "generation", "role")

    def __init__(self, binding, index, generation, role):
        self.binding = binding
        self.index = index
        self.generation = generation
        self.role = role

    def data_names(self):
        return self.binding.native.data_names(self.index, self.generation)

    def data_info(self, name):
        return self.binding.native.data_info(self.index, self.generation, name)

    def has_data(self, name):
        try:
            self.data_info(name)
            return True
        except KeyError:
            return False

    def get(self, name):
        return self.binding.native.get(self.index, self.generation, name)

    def set(self, name, text, value=None):
        native = self.binding.native
        if isinstance(value, _np.ndarray) and name in ("position", "velocity", "force", "rest_position"):
            native.set_state(self.index, self.generation, name, _np.ascontiguousarray(value, dtype=_np.float64).ravel())
        else:
            native.set(self.index, self.generation, name, text)


class _Binding:
    """A Python scene tree and the Canapé simulation built from it."""

    def __init__(self, root, native):
        self.root = root
        self.native = native
        self.reset_point = None
        # Python force fields, whose links to other objects are read before each step
        self.forcefields = []
        # objects added by controllers during a step, bound when it ends
        self.pending = []

    def bind_pending(self):
        if not self.pending:
            return
        comps = self.native.components()
        bound = set()
        for node in _walk_nodes(self.root):
            for o in node._objects:
                if o._handle is not None:
                    bound.add((o._handle.index, o._handle.generation))
        for node, obj in self.pending:
            path = _native_path(node)
            for c in comps:
                key = (c["index"], c["generation"])
                if c["node"] == path and c["name"] == obj.getName() and c["class"] == obj._class and key not in bound:
                    object.__setattr__(obj, "_handle", _Bound(self, c["index"], c["generation"], c["role"]))
                    bound.add(key)
                    break
        self.pending = []

    @property
    def running(self):
        return self.native.is_running

    def added_after_init(self, node, obj):
        """An object added to a node of the running scene: built into that node between steps."""
        path = self.ensure_node(node)
        if obj._proto is None:
            _add_python_component(self.native, path, obj)
            if isinstance(obj, _Core.ForceField):
                self.forcefields.append(obj)
            return
        if self.native.in_step:
            # asked by a controller during a step: queued, added when the step ends
            attrs = [(k, v) for k, v in obj._attrs.items()]
            self.native.queue_add(path, obj.getName(), obj._class, obj._template or "", attrs)
            self.pending.append((node, obj))
            return
        ids = self.native.add_into(path, "<Node>%s</Node>" % _object_xml(obj))
        if ids:
            roles = {(c["index"], c["generation"]): c["role"] for c in self.native.components()}
            i, g = ids[0]
            object.__setattr__(obj, "_handle", _Bound(self, i, g, roles.get((i, g), "Other")))

    def ensure_node(self, node):
        """The node's path in the running scene, creating it (and missing ancestors) if it was
        added to the Python tree after init."""
        path = _native_path(node)
        if any(p == path for p, _, _ in self.native.nodes()):
            return path
        parent = node._parents[-1]
        ppath = self.ensure_node(parent)
        self.native.add_into(ppath, "<Node><Node name=%s/></Node>" % _quoteattr(node.getName()))
        return path

    def moved_node(self, node, new_parent):
        """A node of the running scene moved under another parent (its Python links not yet
        changed): moved in the running scene too, or an error and nothing changed."""
        path = _native_path(node)
        if any(p == path for p, _, _ in self.native.nodes()):
            self.native.move_node(path, self.ensure_node(new_parent))
            return True
        return False

    def removed(self, obj):
        h = obj._handle
        if h is not None:
            self.native.remove_component(h.index, h.generation)
            object.__setattr__(obj, "_handle", None)
        if obj in self.forcefields:
            self.forcefields.remove(obj)

    def removed_node(self, node):
        path = _native_path(node)
        if any(p == path for p, _, _ in self.native.nodes()):
            self.native.remove_node(path)


def _walk_nodes(node):
    yield node
    for c in node._children:
        if c._parents and c._parents[-1] is node:
            yield from _walk_nodes(c)


def _py_role(obj):
    if isinstance(obj, _Core.ForceField):
        return "ForceField"
    if isinstance(obj, _Core.Mapping):
        return "Mapping"
    return "Controller"


def _add_python_component(native, path, obj):
    if isinstance(obj, _Core.Mapping):
        ends = ["" if e is None else _link_text(e if isinstance(e, _Core.LinkPath) else _Core.LinkPath(e.getLinkPath(), e) if hasattr(e, "getLinkPath") else str(e)) for e in (obj._input, obj._output)]
        return native.add_controller(path, obj.getName(), obj, "Mapping", ends[0], ends[1])
    return native.add_controller(path, obj.getName(), obj, _py_role(obj))


def _object_xml(obj):
    attrs = [("name", obj.getName())]
    if obj._template:
        attrs.append(("template", obj._template))
    links = obj.__dict__.get("_links", {})
    attrs += [(k, _link_text(links[k]) if k in links else v) for k, v in obj._attrs.items()]
    return "<%s %s/>" % (obj._class, " ".join("%s=%s" % (k, _quoteattr(v)) for k, v in attrs))


def _node_xml(node, controllers, out, indent=""):
    attrs = [("name", node.getName())]
    for k in ("gravity", "dt", "animate", "activated"):
        f = node._fields.get(k)
        if f is not None and (f.meta.get("is_set") or (not node._parents and k in ("gravity", "dt"))):
            attrs.append((k, to_text(f.value)))
    out.append("%s<Node %s>" % (indent, " ".join("%s=%s" % (k, _quoteattr(v)) for k, v in attrs)))
    for o in node._objects:
        if o._proto is None:
            controllers.append((node, o))
        else:
            out.append(indent + "  " + _object_xml(o))
    for c in node._children:
        if c._parents and c._parents[-1] is node:
            _node_xml(c, controllers, out, indent + "  ")
    out.append(indent + "</Node>")


def _report(diags, where=None):
    from Sofa import Helper

    for sev, text in diags:
        if sev in ("error", "warning"):
            Helper._emit(sev, text)


def init(root):
    """Build and initialise the scene below `root` (SofaPython3's Sofa.Simulation.init)."""
    root = root.getRoot()
    controllers = []
    out = ['<?xml version="1.0"?>']
    _node_xml(root, controllers, out)
    xml = "\n".join(out)
    scene_dir = getattr(root, "_scene_dir", None) or os.getcwd()
    native = _native.Simulation.build(xml, scene_dir)
    binding = _Binding(root, native)
    for node, obj in controllers:
        _add_python_component(native, _native_path(node), obj)
        if isinstance(obj, _Core.ForceField):
            binding.forcefields.append(obj)
    # bind every object to its component: a node's components are its XML objects in order,
    # then its Python controllers
    by_node = {}
    for c in native.components():
        by_node.setdefault(c["node"], []).append(c)
    _bind(root, binding, by_node)
    object.__setattr__(root, "_sim", binding)
    for node, obj in controllers:
        obj.init()
    _report(native.start())
    object.__setattr__(root, "_initialized", True)
    _mark_initialized(root)
    binding.reset_point = native.snapshot()
    return binding


def _mark_initialized(node):
    object.__setattr__(node, "_initialized", True)
    for c in node._children:
        _mark_initialized(c)


def _bind(node, binding, by_node):
    comps = list(by_node.get(_native_path(node), []))
    for o in node._objects:
        if o._proto is None:
            continue
        for k, c in enumerate(comps):
            if c["name"] == o.getName() and c["class"] == o._class:
                object.__setattr__(o, "_handle", _Bound(binding, c["index"], c["generation"], c["role"]))
                del comps[k]
                break
    for ch in node._children:
        if ch._parents and ch._parents[-1] is node:
            _bind(ch, binding, by_node)


def initRoot(root):
    return init(root)


def _binding(root):
    root = root.getRoot()
    if root._sim is None:
        init(root)
    return root._sim


def _apply_threads(b):
    n = _Core.TaskScheduler._threads
    if n and getattr(b, "threads", None) != n:
        b.native.set_threads(n)
        b.threads = n


def _step(b, dt):
    ffs = b.forcefields
    for f in ffs:
        f._before_step()
    try:
        _report(b.native.step(1, float(dt) if dt else None))
    finally:
        for f in ffs:
            f._after_step()
        b.bind_pending()


def animate(root, dt=0.0):
    """One step of the root's animation loop over `dt` (the root's dt when 0)."""
    b = _binding(root)
    _apply_threads(b)
    _step(b, dt)


def animateNSteps(root, n_steps=1, dt=0.0):
    b = _binding(root)
    _apply_threads(b)
    if b.forcefields:
        for _ in range(int(n_steps)):
            _step(b, dt)
    else:
        _report(b.native.step(int(n_steps), float(dt) if dt else None))
        b.bind_pending()


def reset(root):
    b = _binding(root)
    if b.reset_point is not None:
        b.native.restore(b.reset_point)


def unload(root):
    root = root.getRoot()
    object.__setattr__(root, "_sim", None)
    object.__setattr__(root, "_initialized", False)
    _unbind(root)


def _unbind(node):
    for o in node._objects:
        if o._proto is not None or o._handle is not None:
            object.__setattr__(o, "_handle", None)
    for c in node._children:
        _unbind(c)


def load(filename):
    """Load a scene file: a .scn/.xml file through Canapé's loader, a .py file through its
    `createScene(root)`. Returns the root node."""
    ext = os.path.splitext(filename)[1].lower()
    if ext in (".py", ".py3", ".pyscn", ".py3scn"):
        from canape import scene_from_python

        return scene_from_python(filename)
    native = _native.Simulation.load(os.path.abspath(filename))
    return _tree_from_native(native)


def _tree_from_native(native):
    nodes = native.nodes()
    comps = native.components()
    paths = {}
    root = None
    binding = None
    for path, _, _ in nodes:
        name = path.rsplit("/", 1)[-1]
        n = Node(name)
        parent = path.rsplit("/", 1)[0]
        if parent in paths:
            paths[parent].addChild(n)
        else:
            root = n
        paths[path] = n
    binding = _Binding(root, native)
    object.__setattr__(root, "_sim", binding)
    for c in comps:
        o = Object.__new__(Object)
        _Core.Base.__init__(o)
        object.__setattr__(o, "_node", paths[c["node"]])
        object.__setattr__(o, "_proto", None)
        object.__setattr__(o, "_attrs", {})
        object.__setattr__(o, "_class", c["class"])
        object.__setattr__(o, "_template", "")
        object.__setattr__(o, "_handle", _Bound(binding, c["index"], c["generation"], c["role"]))
        o._fields["name"] = _Core._Field("str", c["name"], "object name")
        paths[c["node"]]._objects.append(o)
    _mark_initialized(root)
    binding.reset_point = native.snapshot()
    return root


def print(node):
    def walk(n, indent):
        sys.stdout.write("%s%s\n" % (indent, n.getName()))
        for o in n._objects:
            sys.stdout.write("%s  %s (%s)\n" % (indent, o.getName(), o.getClassName()))
        for c in n._children:
            walk(c, indent + "  ")

    walk(node, "")


def initVisual(node):
    pass


def updateVisual(node):
    pass


def initTextures(node):
    pass
