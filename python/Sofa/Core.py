"""Sofa.Core: SofaPython3's scene API (Node, Object, Data, Controller) over Canapé.

A scene written in Python is a tree of `Node`s holding `Object`s. Before the scene is
initialised, each object is a prototype made by Canapé's registry from its Data text (so an
unknown class or Data fails at `addObject`, and Data read back at once); `Sofa.Simulation.init`
writes the tree as SOFA XML, builds it with Canapé's scene builder, attaches the Python
controllers and initialises it. From then on, Data are read from and written to the running
simulation.
"""

import numpy as _np
from xml.sax.saxutils import quoteattr as _quoteattr

from canape import _native

PROTECTED = {"children", "objects", "parents", "data", "links", "linkpath"}

# ----------------------------------------------------------------------------------------------
# values <-> SOFA text


def _num(x):
    if isinstance(x, (bool, _np.bool_)):
        return "1" if x else "0"
    if isinstance(x, (int, _np.integer)):
        return str(int(x))
    x = float(x)
    if x.is_integer() and abs(x) < 1e16:
        return str(int(x))
    return repr(x)


def to_text(value):
    """A Python value as the attribute text a SOFA scene file would hold."""
    if isinstance(value, LinkPath):
        return str(value)
    if isinstance(value, Data):
        if value._is_link_value():
            return value.getValueString()
        return value.getValueString()
    if isinstance(value, (Base,)) and hasattr(value, "getLinkPath"):
        return value.getLinkPath()
    if isinstance(value, str):
        return value
    if isinstance(value, (bool, _np.bool_, int, float, _np.integer, _np.floating)):
        return _num(value)
    if isinstance(value, _np.ndarray):
        if value.dtype.kind in "US":
            return " ".join(str(v) for v in value.ravel())
        return " ".join(_num(v) for v in value.ravel())
    if isinstance(value, (list, tuple)):
        parts = []
        for v in value:
            parts.append(to_text(v))
        return " ".join(parts)
    return repr(value)


_SOFA_TYPES = {
    "bool": "bool",
    "int": "int",
    "real": "double",
    "str": "string",
    "file": "string",
    "words": "vector<string>",
}


def _type_name(kind, name=""):
    if name == "showColor" or name == "color" and kind.startswith("vector:4"):
        return "RGBAColor"
    if kind in _SOFA_TYPES:
        return _SOFA_TYPES[kind]
    family, _, w = kind.partition(":")
    w = int(w or 0)
    if family == "reals":
        if w in (0, 1):
            return "vector<double>"
        if w == 7:
            return "vector<RigidCoord<3,double>>"
        if w == 6:
            return "vector<RigidDeriv<3,double>>"
        return "vector<Vec%dd>" % w
    if family == "vector":
        return "Vec%dd" % w
    if family == "ints":
        if w in (0, 1):
            return "vector<unsigned int>"
        return "vector<fixed_array<unsigned int,%d>>" % w
    return kind


# SofaPython3's addData type names -> Canapé kinds
_ADD_TYPES = {
    "int": "int",
    "unsigned int": "int",
    "bool": "bool",
    "float": "real",
    "double": "real",
    "string": "str",
    "str": "str",
    "vector<int>": "ints:0",
    "vector<unsigned int>": "ints:0",
    "vector<double>": "reals:0",
    "vector<float>": "reals:0",
    "vector<string>": "words",
    "Vec3d": "vector:3",
    "Vec3": "vector:3",
    "Vec2d": "vector:2",
    "Vec4d": "vector:4",
    "RGBAColor": "vector:4",
    "vector<Vec3d>": "reals:3",
    "vector<Vec3>": "reals:3",
    "vector<Vec2d>": "reals:2",
    "vector<Vec1d>": "reals:1",
    "vector<Rigid3d::Coord>": "reals:7",
}


def _guess_kind(value):
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "real"
    if isinstance(value, str):
        return "str"
    a = _np.asarray(value)
    if a.dtype.kind in "US":
        return "words"
    if a.ndim == 2:
        return "reals:%d" % a.shape[1]
    if a.dtype.kind in "iu":
        return "ints:0"
    return "reals:0"


def _parse(kind, value):
    """A Python value (or SOFA text) as the Python value of a Data of `kind`."""
    if isinstance(value, str) and kind not in ("str", "file"):
        toks = value.replace(",", " ").replace("[", " ").replace("]", " ").split()
        if kind == "words":
            return toks
        if kind == "bool":
            return toks[0].lower() in ("1", "true", "yes", "on") if toks else False
        if kind == "int":
            return int(float(toks[0])) if toks else 0
        if kind == "real":
            return float(toks[0]) if toks else 0.0
        value = [float(t) for t in toks]
    if kind in ("str", "file"):
        return str(value)
    if kind == "words":
        return [str(v) for v in (value if isinstance(value, (list, tuple)) else [value])]
    if kind == "bool":
        return bool(value)
    if kind == "int":
        return int(value)
    if kind == "real":
        return float(value)
    family, _, w = kind.partition(":")
    w = int(w or 0)
    dtype = _np.int64 if family == "ints" else _np.float64
    a = _np.array(value, dtype=dtype)
    if family == "vector":
        return a.reshape(-1)
    if w > 1:
        return a.reshape(-1, w)
    return a.reshape(-1)


def _readonly(v):
    if isinstance(v, _np.ndarray):
        v.flags.writeable = False
    return v


# ----------------------------------------------------------------------------------------------
# Data


_CATEGORIES = {
    "State": "MechanicalState",
    "ProjectiveConstraint": "ProjectiveConstraintSet",
    "Visual": "VisualModel",
    "Collision": "CollisionModel",
    "TopologicalMapping": "TopologicalMapping",
    "Other": "BaseObject",
}


class LinkPath:
    """A link to a Data or an object, as SOFA writes it (`@/node/object.data`)."""

    def __init__(self, path, target=None):
        self._path = path
        self._target = target

    def __str__(self):
        return self._path

    def target(self):
        """What the link names: the object, node or Data it was made from."""
        return self._target

    def __repr__(self):
        return "LinkPath(%r)" % self._path

    def __eq__(self, other):
        return str(self) == str(other)

    def __hash__(self):
        return hash(self._path)


class Data:
    """One Data of a node or an object: `.value` reads it (a read-only numpy array for lists of
    numbers), assigning `.value` writes it; `with d.writeable() as a:` edits it in place."""

    def __init__(self, owner, name):
        object.__setattr__(self, "_owner", owner)
        object.__setattr__(self, "_name", name)

    # value ------------------------------------------------------------------------------------
    @property
    def value(self):
        return _readonly(self._owner._data_get(self._name))

    @value.setter
    def value(self, v):
        self._owner._data_set(self._name, v)

    def array(self):
        v = self._owner._data_get(self._name)
        return _readonly(_np.asarray(v))

    def toList(self):
        v = self._owner._data_get(self._name)
        return v.tolist() if isinstance(v, _np.ndarray) else v

    def writeable(self, wrapper=None):
        return _Writeable(self, wrapper)

    def writeableArray(self, wrapper=None):
        return _Writeable(self, wrapper)

    # description ----------------------------------------------------------------------------
    def getName(self):
        return self._name

    def setName(self, name):
        self._owner._data_rename(self._name, name)
        object.__setattr__(self, "_name", name)

    def getOwner(self):
        return self._owner

    def typeName(self):
        return _type_name(self._owner._data_kind(self._name), self._name)

    def getValueTypeString(self):
        return self.typeName()

    def getValueString(self):
        v = self._owner._data_get(self._name)
        return to_text(v)

    def getHelp(self):
        return self._owner._data_meta(self._name).get("help", "")

    def isSet(self):
        return bool(self._owner._data_meta(self._name).get("is_set", False))

    def isRequired(self):
        return False

    def isPersistent(self):
        return self._owner._data_meta(self._name).get("persistent", True)

    def setPersistent(self, flag):
        self._owner._data_meta(self._name)["persistent"] = bool(flag)

    def isReadOnly(self):
        return bool(self._owner._data_meta(self._name).get("readonly", False))

    def setReadOnly(self, flag):
        self._owner._data_meta(self._name)["readonly"] = bool(flag)

    def isDirty(self):
        parent = self.getParent()
        if parent is None:
            return False
        seen = self._owner._data_meta(self._name).get("seen", 0)
        return parent._owner._data_version(parent._name) != seen

    def updateIfDirty(self):
        parent = self.getParent()
        if parent is not None:
            self._owner._data_meta(self._name)["seen"] = parent._owner._data_version(parent._name)

    def hasChanged(self):
        return self.isDirty()

    def read(self, text):
        try:
            self._owner._data_set(self._name, str(text))
        except (ValueError, TypeError, IndexError, KeyError):
            return False
        return True

    def getPathName(self):
        return "%s.%s" % (self._owner.getPathName(), self._name)

    def getLinkPath(self):
        return "@%s.%s" % (self._owner.getPathName(), self._name)

    @property
    def linkpath(self):
        return LinkPath(self.getLinkPath(), self)

    def getAsACreateObjectParameter(self):
        return self.getLinkPath()

    # parent (links between Data) ------------------------------------------------------------
    def _is_link_value(self):
        return self._owner._data_meta(self._name).get("parent") is not None

    def setParent(self, other):
        link = other.linkpath if isinstance(other, Data) else str(other)
        self._owner._data_link(self._name, link)

    def getParent(self):
        link = self._owner._data_meta(self._name).get("parent")
        if link is None:
            return None
        if isinstance(link, LinkPath) and link._target is not None:
            return link._target
        return _resolve_data(self._owner, str(link))

    def hasParent(self):
        return self._is_link_value()

    # container behaviour ------------------------------------------------------------------
    def __len__(self):
        v = self._owner._data_get(self._name)
        return len(v)

    def __getitem__(self, key):
        return self.value[key]

    def __setitem__(self, key, val):
        a = _np.array(self._owner._data_get(self._name))
        a[key] = val
        self._owner._data_set(self._name, a)

    def __iter__(self):
        return iter(self.value)

    @property
    def shape(self):
        return _np.asarray(self._owner._data_get(self._name)).shape

    @property
    def size(self):
        return _np.asarray(self._owner._data_get(self._name)).size

    @property
    def ndim(self):
        return _np.asarray(self._owner._data_get(self._name)).ndim

    def __repr__(self):
        return repr(self.value)

    def __str__(self):
        return str(self.value)

    def __eq__(self, other):
        if isinstance(other, Data):
            return self._owner is other._owner and self._name == other._name
        v = self.value
        if isinstance(v, _np.ndarray):
            return _np.array_equal(v, other)
        return v == other

    def __hash__(self):
        return hash((id(self._owner), self._name))

    def __float__(self):
        return float(self.value)

    def __int__(self):
        return int(self.value)

    def __bool__(self):
        return True

    def __getattr__(self, name):
        # a link Data (`mstate="@dofs"`) forwards attributes to the object it names
        owner = self.__dict__.get("_owner")
        if owner is not None and hasattr(owner, "_link_target") and not name.startswith("_"):
            target = owner._link_target(self.__dict__["_name"])
            if target is not None:
                return getattr(target, name)
        raise AttributeError("'%s' has no attribute '%s'" % (type(self).__name__, name))

    def __setattr__(self, name, value):
        if name.startswith("_"):
            return object.__setattr__(self, name, value)
        owner = self.__dict__.get("_owner")
        if name != "value" and owner is not None and hasattr(owner, "_link_target"):
            target = owner._link_target(self.__dict__["_name"])
            if target is not None:
                return setattr(target, name, value)
        return object.__setattr__(self, name, value)


class DataString(Data):
    pass


class DataVectorString(Data):
    def __repr__(self):
        return repr(list(self.value))


class DataContainer(Data):
    pass


class DataLink(Data):
    pass


class Link:
    """A link of a node or an object (SofaPython3's BaseLink): its name, help, the objects it
    points to and their paths."""

    def __init__(self, owner, name, help, targets, multi, type_name):
        self._owner = owner
        self._name = name
        self._help = help
        self._targets = targets
        self._multi = multi
        self._type = type_name
        self._persistent = False

    def getName(self):
        return self._name

    def setName(self, name):
        self._name = name

    def getHelp(self):
        return self._help

    def setHelp(self, text):
        self._help = text

    def isMultiLink(self):
        return self._multi

    def isPersistent(self):
        return self._persistent

    def setPersistent(self, flag):
        self._persistent = bool(flag)

    def isReadOnly(self):
        return not self._persistent

    def getSize(self):
        return len(self._targets)

    def getLinkedBase(self, i=0):
        return self._targets[i] if i < len(self._targets) else None

    def getLinkedPath(self, i=0):
        t = self.getLinkedBase(i)
        return t.getLinkPath() if t is not None else ""

    def getValueString(self):
        return " ".join(t.getLinkPath() for t in self._targets)

    def getValueTypeString(self):
        return self._type

    def getOwnerBase(self):
        return self._owner

    def getOwnerData(self):
        return None


# SOFA's Node links: name -> (help, multi, role of the objects or None for children)
_NODE_LINKS = {
    "child": ("Child nodes", True, None),
    "object": ("All objects attached to this node", True, "*"),
    "animationLoop": ("The AnimationLoop attached to this node (only valid for root node)", False, "AnimationLoop"),
    "solver": ("The ODE solvers attached to this node", True, "OdeSolver"),
    "linearSolver": ("The LinearSolver(s) attached to this node", True, "LinearSolver"),
    "topology": ("The Topology attached to this node", False, "Topology"),
    "mechanicalState": ("The MechanicalState attached to this node (storing all state vectors)", False, "State"),
    "mechanicalMapping": ("The MechanicalMapping attached to this node", False, "Mapping"),
    "mass": ("The Mass attached to this node", False, "Mass"),
    "forceField": ("The (non-interaction) ForceField(s) attached to this node", True, "ForceField"),
    "projectiveConstraintSet": ("The ProjectiveConstraintSet(s) attached to this node", True, "ProjectiveConstraint"),
    "topologyObject": ("The topology objects attached to this node", True, "Topology"),
}


class DataDict(dict):
    """The Data of a node or an object by name (SofaPython3's `__data__`)."""


class _Writeable:
    """`with data.writeable() as a:` — a writable array, written back when the block ends; the
    array turns read-only afterwards."""

    def __init__(self, data, wrapper):
        self._data = data
        self._wrapper = wrapper
        self._array = None

    def __enter__(self):
        self._array = _np.array(self._data._owner._data_get(self._data._name))
        if self._wrapper is not None:
            self._wrapped = self._wrapper(self._array)
            return self._wrapped
        return self._array

    def __exit__(self, *exc):
        self._data._owner._data_set(self._data._name, self._array)
        self._array.flags.writeable = False
        w = getattr(self, "_wrapped", None)
        if isinstance(w, _np.ndarray):
            w.flags.writeable = False
        return False


def _data_class(kind, name=""):
    if kind in ("str", "file"):
        return DataString
    if kind == "words":
        return DataVectorString
    if kind.startswith(("reals", "ints", "vector")):
        if _type_name(kind, name) == "RGBAColor" or name == "bbox":
            return Data
        return DataContainer
    return Data


def _resolve_data(owner, path):
    """The Data a link `@path.data` names, from `owner`'s node."""
    if isinstance(path, LinkPath) and path._target is not None:
        return path._target
    path = str(path)
    p = path[1:] if path.startswith("@") else path
    target, _, dname = p.rpartition(".")
    if "/" not in target and target in ("", "."):
        base = owner
    else:
        base = _resolve_path(owner, target)
    if base is None:
        return None
    return base.getData(dname)


def _resolve_path(owner, target):
    node = owner if isinstance(owner, Node) else owner._node
    if node is None:
        return None
    if target.startswith("/"):
        node = node.getRoot()
        parts = [t for t in target.split("/") if t]
    else:
        parts = [t for t in target.split("/") if t]
    cur = node
    for i, part in enumerate(parts):
        if part == ".":
            continue
        if part == "..":
            cur = cur._parents[0] if cur._parents else cur
            continue
        child = cur._child(part)
        if child is not None:
            cur = child
            continue
        obj = cur._object(part)
        if obj is not None and i == len(parts) - 1:
            return obj
        # SOFA searches a name up the tree for relative links
        up = cur
        found = None
        while up is not None and found is None:
            found = up._object(part)
            up = up._parents[0] if up._parents else None
        if found is not None and i == len(parts) - 1:
            return found
        return None
    return cur


# ----------------------------------------------------------------------------------------------
# Base, Node, Object


class _Field:
    """A Data held on the Python side (a node's Data, Data added with addData)."""

    __slots__ = ("kind", "value", "meta")

    def __init__(self, kind, value, help=""):
        self.kind = kind
        self.value = value
        self.meta = {"help": help, "is_set": False, "persistent": True}


class Base:
    """What nodes and objects share: Data by attribute, addData, messages."""

    def __init__(self):
        object.__setattr__(self, "_fields", {})
        object.__setattr__(self, "_messages", [])

    # Data storage, overridden by objects backed by Canapé -----------------------------------
    def _native_names(self):
        return []

    def _has_data(self, name):
        return name in self._fields or name in self._native_names()

    def _data_kind(self, name):
        return self._fields[name].kind

    def _data_meta(self, name):
        return self._fields[name].meta

    def _data_get(self, name):
        f = self._fields[name]
        if isinstance(self, DataEngine):
            self._update_if_dirty(name)
        parent = f.meta.get("parent")
        if parent is not None:
            d = _resolve_data(self, parent)
            if d is not None:
                return d._owner._data_get(d._name)
        return f.value

    def _data_set(self, name, value):
        f = self._fields[name]
        if f.meta.get("readonly"):
            raise ValueError("the Data '%s' is read-only" % name)
        if isinstance(value, LinkPath) or (isinstance(value, str) and value.startswith("@")):
            f.meta["parent"] = value
            return
        new = _parse(f.kind, value)
        old = f.value
        if isinstance(old, _np.ndarray) and isinstance(new, _np.ndarray):
            if old.ndim == 2 and new.ndim == 2 and old.shape[1] != new.shape[1]:
                raise IndexError("rows of %d values given for a Data of rows of %d" % (new.shape[1], old.shape[1]))
        f.value = new
        f.meta["is_set"] = True
        f.meta["version"] = f.meta.get("version", 0) + 1

    def _data_version(self, name):
        """How many times the Data was set (Data held by Canapé's components: 0)."""
        f = self._fields.get(name)
        return f.meta.get("version", 0) if f is not None else 0

    def _data_link(self, name, path):
        self._fields[name].meta["parent"] = path

    def _data_rename(self, old, new):
        self._fields[new] = self._fields.pop(old)

    # the public API ------------------------------------------------------------------------
    def getLinkPath(self):
        return "@" + self.getPathName()

    @property
    def linkpath(self):
        return LinkPath(self.getLinkPath(), self)

    def getAsACreateObjectParameter(self):
        return self.getLinkPath()

    def getData(self, name):
        if not self._has_data(name):
            return None
        if name == "bbox":
            from Sofa.Types import BoundingBox

            return BoundingBox(self, name)
        return _data_class(self._data_kind(name), name)(self, name)

    findData = getData

    def getDataFields(self):
        return [self.getData(n) for n in self._all_data_names()]

    def _all_data_names(self):
        names = list(self._native_names())
        names += [n for n in self._fields if n not in names]
        return names

    @property
    def __data__(self):
        d = DataDict()
        for n in self._all_data_names():
            d[n] = self.getData(n)
        return d

    def addData(self, name, value=None, default=None, help="", group="", type=None):
        if name in PROTECTED:
            raise ValueError("'%s' is a protected name and cannot be a Data" % name)
        if self._has_data(name):
            raise ValueError("there is already a Data named '%s'" % name)
        if value is None:
            value = default
        if isinstance(value, Data):
            # a Data given as the value: linked to it (its parent), as SofaPython3 does
            value = value.linkpath
        if isinstance(value, LinkPath) or (isinstance(value, str) and value.startswith("@") and type is None):
            target = _resolve_data(self, value)
            if target is None:
                raise ValueError("the link '%s' names no Data" % value)
            kind = target._owner._data_kind(target._name)
            f = _Field(kind, None, help)
            f.meta["parent"] = value
            self._fields[name] = f
            return
        if type is None and isinstance(value, str):
            raise TypeError("addData of a text value needs its type (type=\"string\")")
        kind = _ADD_TYPES.get(type) if type is not None else _guess_kind(value)
        if kind is None:
            raise TypeError("unknown Data type '%s'" % type)
        f = _Field(kind, _parse(kind, value if value is not None else _default_of(kind)), help)
        self._fields[name] = f

    def getLoggedMessagesAsString(self):
        return "\n".join(self._messages)

    def countLoggedMessages(self):
        return len(self._messages)

    def clearLoggedMessages(self):
        self._messages.clear()

    def _log(self, text):
        self._messages.append(text)

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        found = self._lookup(name)
        if found is not None:
            return found
        raise AttributeError(
            "'%s' object has no attribute, child, object or Data '%s'" % (type(self).__name__, name)
        )

    def _lookup(self, name):
        if self._has_data(name):
            return self.getData(name)
        return None

    def __setattr__(self, name, value):
        if not name.startswith("_") and "_fields" in self.__dict__ and self._has_data(name):
            if isinstance(value, Data):
                value = value.value
            self._data_set(name, value)
            return
        object.__setattr__(self, name, value)


def _base_fields(o, present):
    for n, kind, value, help in (
        ("bbox", "reals:0", _np.zeros(0), "this object bounding box"),
        ("tags", "words", [], "list of the subsets the object belongs to"),
        ("printLog", "bool", False, "if true, emits extra messages at runtime."),
        ("listening", "bool", False, "if true, handle the events, otherwise ignore the events"),
        ("componentState", "str", "Valid", "The state of the component"),
    ):
        if n not in present:
            o._fields[n] = _Field(kind, value, help)


def _default_of(kind):
    if kind in ("str", "file"):
        return ""
    if kind == "words":
        return []
    if kind == "bool":
        return False
    if kind == "int":
        return 0
    if kind == "real":
        return 0.0
    return []


class _NodeList:
    """A node's children, parents or objects: len, index, name lookup, `in`, at, remove_at."""

    def __init__(self, owner, attr):
        self._owner = owner
        self._attr = attr

    def _items(self):
        return getattr(self._owner, self._attr)

    def __len__(self):
        return len(self._items())

    def __getitem__(self, key):
        if isinstance(key, str):
            for o in self._items():
                if o.getName() == key:
                    return o
            raise KeyError(key)
        return self._items()[key]

    def __iter__(self):
        return iter(list(self._items()))

    def __contains__(self, key):
        if isinstance(key, str):
            return any(o.getName() == key for o in self._items())
        return any(o is key for o in self._items())

    def at(self, i):
        return self._items()[i]

    def remove_at(self, i):
        item = self._items()[i]
        if self._attr == "_children":
            self._owner.removeChild(item)
        elif self._attr == "_objects":
            self._owner.removeObject(item)
        else:
            item.removeChild(self._owner)

    def __repr__(self):
        return repr([o.getName() for o in self._items()])


class Node(Base):
    """A node of the scene graph (SofaPython3's Sofa.Core.Node)."""

    def __init__(self, name="unnamed", **kwargs):
        Base.__init__(self)
        object.__setattr__(self, "_children", [])
        object.__setattr__(self, "_parents", [])
        object.__setattr__(self, "_objects", [])
        object.__setattr__(self, "_sim", None)
        object.__setattr__(self, "_initialized", False)
        f = self._fields
        f["name"] = _Field("str", name, "object name")
        f["gravity"] = _Field("vector:3", _np.array([0.0, -9.81, 0.0]), "Gravity in the world coordinate system")
        f["dt"] = _Field("real", 0.01, "Time step")
        f["time"] = _Field("real", 0.0, "Current time")
        f["animate"] = _Field("bool", False, "Animate the Simulation(applied at initialization only)")
        f["activated"] = _Field("bool", True, "To Activate a node")
        f["bbox"] = _Field("reals:0", _np.zeros(0), "this object bounding box")
        f["tags"] = _Field("words", [], "list of the subsets the object belongs to")
        f["printLog"] = _Field("bool", False, "if true, emits extra messages at runtime.")
        for k, v in kwargs.items():
            if k in f:
                self._data_set(k, v)
            else:
                self.addData(k, v)

    # identity ------------------------------------------------------------------------------
    def getName(self):
        return self._fields["name"].value

    def setName(self, name):
        self._fields["name"].value = name

    def getClassName(self):
        return "Node"

    def getPathName(self):
        if not self._parents:
            return "/"
        p = self._parents[0].getPathName()
        return (p if p != "/" else "") + "/" + self.getName()

    def getRoot(self):
        n = self
        while n._parents:
            n = n._parents[0]
        return n

    def getRootPath(self):
        depth = 0
        n = self
        while n._parents:
            n = n._parents[0]
            depth += 1
        return "../" * depth if depth else "./"

    # Data reaching the running simulation ----------------------------------------------------
    def _data_get(self, name):
        sim = self.getRoot()._sim
        if sim is not None and not self._parents:
            if name == "time":
                return sim.native.time
            if name == "dt":
                return sim.native.dt
            if name == "gravity":
                return _np.array(sim.native.gravity)
        return Base._data_get(self, name)

    def _data_set(self, name, value):
        sim = self.getRoot()._sim
        Base._data_set(self, name, value)
        if sim is not None and not self._parents:
            if name == "dt":
                sim.native.set_dt(float(self._fields["dt"].value))
            elif name == "gravity":
                sim.native.set_gravity([float(x) for x in self._fields["gravity"].value])

    def getDt(self):
        return self._data_get("dt")

    def getTime(self):
        return self._data_get("time")

    def getGravity(self):
        return self._data_get("gravity")

    # tree ----------------------------------------------------------------------------------
    @property
    def children(self):
        return _NodeList(self, "_children")

    @property
    def parents(self):
        return _NodeList(self, "_parents")

    @property
    def objects(self):
        return _NodeList(self, "_objects")

    def _child(self, name):
        for c in self._children:
            if c.getName() == name:
                return c
        return None

    def _object(self, name):
        for o in self._objects:
            if o.getName() == name:
                return o
        return None

    def addChild(self, child, **kwargs):
        if isinstance(child, str):
            if child in PROTECTED:
                raise ValueError("'%s' is a protected name and cannot name a child" % child)
            child = Node(child, **kwargs)
        elif not isinstance(child, Node):
            raise TypeError("addChild takes a name or a Sofa.Core.Node")
        self._children.append(child)
        child._parents.append(self)
        self._changed()
        return child

    def createChild(self, name, **kwargs):
        return self.addChild(name, **kwargs)

    def getChild(self, name):
        return self._child(name)

    def removeChild(self, child):
        if isinstance(child, str):
            child = self._child(child)
            if child is None:
                return
        if child in self._children:
            sim = self.getRoot()._sim
            if sim is not None and child._parents and child._parents[-1] is self:
                sim.removed_node(child)
            self._children.remove(child)
            child._parents.remove(self)
            self._changed()

    def moveChild(self, child, old_parent):
        sim = self.getRoot()._sim
        if (
            sim is not None
            and sim is old_parent.getRoot()._sim
            and child in old_parent._children
            and child._parents
            and child._parents[-1] is old_parent
            and sim.moved_node(child, self)
        ):
            # moved in the running scene with its components and states
            old_parent._children.remove(child)
            child._parents.remove(old_parent)
            self._children.append(child)
            child._parents.append(self)
            return
        old_parent.removeChild(child)
        self.addChild(child)

    def detachFromGraph(self):
        for p in list(self._parents):
            p.removeChild(self)

    def addObject(self, type_, *args, **kwargs):
        if isinstance(type_, Object):
            obj = type_
        elif isinstance(type_, str):
            obj = Object._create(type_, kwargs, self)
        else:
            raise TypeError("addObject takes a class name (str) or a Sofa.Core.Object, not %s" % type(type_).__name__)
        if obj.getName() in PROTECTED:
            raise ValueError("'%s' is a protected name and cannot name an object" % obj.getName())
        object.__setattr__(obj, "_node", self)
        self._objects.append(obj)
        self._changed(obj)
        return obj

    createObject = addObject

    def getObject(self, name, **kwargs):
        return self._object(name)

    def hasObject(self, name):
        return self._object(name) is not None

    def removeObject(self, obj):
        if obj in self._objects:
            sim = self.getRoot()._sim
            if sim is not None:
                # refused (an error naming what uses it) when another component needs it
                sim.removed(obj)
            self._objects.remove(obj)
            object.__setattr__(obj, "_node", None)
            self._changed()

    def getObjects(self):
        return list(self._objects)

    def getMechanicalState(self):
        return self._first_role("State")

    def getMass(self):
        return self._first_role("Mass")

    def getForceField(self, i=0):
        ffs = [o for o in self._objects if o._role() == "ForceField"]
        return ffs[i] if i < len(ffs) else None

    def getMechanicalMapping(self):
        return self._first_role("Mapping")

    def _first_role(self, role):
        for o in self._objects:
            if o._role() == role:
                return o
        return None

    def _lookup(self, name):
        o = self._object(name)
        if o is not None:
            return o
        c = self._child(name)
        if c is not None:
            return c
        return Base._lookup(self, name)

    def __getitem__(self, path):
        return _get_item(self, path)

    def _changed(self, obj=None):
        root = self.getRoot()
        if root._sim is not None and obj is not None:
            root._sim.added_after_init(self, obj)

    # life ----------------------------------------------------------------------------------
    def init(self):
        from Sofa import Simulation

        Simulation.init(self.getRoot())

    def isInitialized(self):
        return self.getRoot()._initialized

    def findLink(self, name):
        spec = _NODE_LINKS.get(name)
        if spec is None:
            return None
        help, multi, role = spec
        if role is None:
            targets, tname = list(self._children), "Node"
        elif role == "*":
            targets, tname = list(self._objects), "BaseObject"
        else:
            targets, tname = [o for o in self._objects if o._role() == role], role
        if not multi:
            targets = targets[:1]
        return Link(self, name, help, targets, multi, tname)

    def getLinks(self):
        return [self.findLink(n) for n in _NODE_LINKS]

    def sendEvent(self, sender, event_name, userData=None):
        event = {
            "type": "PythonScriptEvent",
            "isHandled": False,
            "sender": sender._owner if isinstance(sender, Data) else sender,
            "event_name": event_name,
            "userData": userData,
        }
        if userData is None:
            event["userData"] = sender
        for o in _walk_objects(self):
            if isinstance(o, Controller):
                o._dispatch("PythonScriptEvent", event)

    def getContext(self):
        return self

    def __repr__(self):
        return "<Sofa.Core.Node %s>" % self.getPathName()


def _walk_objects(node):
    for o in node._objects:
        yield o
    for c in node._children:
        yield from _walk_objects(c)


def _get_item(base, path):
    if path in ("", "."):
        return base
    if path.startswith("."):
        path = path[1:]
    parts = path.split(".")
    cur = base
    for p in parts:
        if isinstance(cur, Node):
            nxt = cur._lookup(p)
        else:
            nxt = cur.getData(p)
        if nxt is None:
            raise KeyError("no '%s' in %s" % (p, path))
        cur = nxt
    return cur


class Object(Base):
    """A component (SofaPython3's Sofa.Core.Object): Data by attribute."""

    def __init__(self, *args, **kwargs):
        Base.__init__(self)
        object.__setattr__(self, "_node", None)
        object.__setattr__(self, "_proto", None)
        object.__setattr__(self, "_attrs", {})
        object.__setattr__(self, "_handle", None)
        object.__setattr__(self, "_class", type(self).__name__)
        object.__setattr__(self, "_template", "")
        name = kwargs.get("name", args[0] if args and isinstance(args[0], str) else type(self).__name__)
        self._fields["name"] = _Field("str", name, "object name")
        self._fields["listening"] = _Field("bool", True, "if true, handle the events")
        self._fields["printLog"] = _Field("bool", False, "if true, emits extra messages at runtime.")
        self._fields["tags"] = _Field("words", [], "list of the subsets the object belongs to")
        self._fields["bbox"] = _Field("reals:0", _np.zeros(0), "this object bounding box")
        self._fields["componentState"] = _Field("str", "Valid", "The state of the component")
        for k, v in kwargs.items():
            if k != "name" and k in self._fields:
                self._data_set(k, v)

    @classmethod
    def _create(cls, class_name, kwargs, node):
        name = kwargs.pop("name", None)
        template = kwargs.pop("template", "")
        if isinstance(template, (list, tuple)):
            template = ",".join(template)
        texts = {}
        links = {}
        for k, v in kwargs.items():
            t = to_text(v)
            if isinstance(v, (LinkPath, Base)) or (isinstance(t, str) and t.startswith("@")):
                links[k] = v if isinstance(v, LinkPath) else LinkPath(t)
            else:
                texts[k] = t
        attrs = [(k, t) for k, t in texts.items() if k not in ("src",)]
        try:
            proto = _native.Proto(class_name, template, attrs)
        except ValueError as e:
            hint = _native.suggest_class(class_name)
            msg = str(e)
            if hint and "did you mean" not in msg:
                msg += " (did you mean %s?)" % ", ".join(hint)
            raise ValueError(msg) from None
        kind = _SpringForceField if proto.class_name in ("SpringForceField", "StiffSpringForceField") else Object
        o = Object.__new__(kind)
        Base.__init__(o)
        object.__setattr__(o, "_node", node)
        object.__setattr__(o, "_proto", proto)
        object.__setattr__(o, "_attrs", dict(texts, **{k: str(v) for k, v in links.items()}))
        object.__setattr__(o, "_handle", None)
        object.__setattr__(o, "_class", proto.class_name)
        object.__setattr__(o, "_template", template)
        o._fields["name"] = _Field("str", name if name is not None else class_name, "object name")
        _base_fields(o, set(proto.data_names()))
        for k, t in links.items():
            if proto.has_data(k):
                o._link_of()[k] = t
        return o

    def _link_of(self):
        d = self.__dict__.setdefault("_links", {})
        return d

    # identity ------------------------------------------------------------------------------
    def getName(self):
        return self._fields["name"].value

    def setName(self, name):
        self._fields["name"].value = name

    def getClassName(self):
        return self._class

    def getPathName(self):
        node = self._node
        if node is None:
            return self.getName()
        p = node.getPathName()
        return (p if p != "/" else "") + "/" + self.getName()

    def getContext(self):
        return self._node

    def getOwner(self):
        return self._node

    def _role(self):
        if self._handle is not None:
            return self._handle.role
        if self._proto is not None:
            return self._proto.role
        return "Controller"

    # life ----------------------------------------------------------------------------------
    def init(self):
        pass

    def reinit(self):
        pass

    def reset(self):
        pass

    def bwdInit(self):
        pass

    # Data -----------------------------------------------------------------------------------
    def _src(self):
        """Where this object's Canapé Data live: the running simulation, else the prototype."""
        h = self._handle
        if h is not None:
            return h
        return self._proto

    def _native_names(self):
        src = self._src()
        if src is None:
            return []
        return [n for n in src.data_names() if n != "name"]

    def _native_info(self, name):
        src = self._src()
        if src is None or name == "name":
            return None
        try:
            return src.data_info(name)
        except KeyError:
            return None

    def _data_kind(self, name):
        if name in self._fields:
            return self._fields[name].kind
        info = self._native_info(name)
        return info[0] if info is not None else "str"

    def _data_meta(self, name):
        if name in self._fields:
            return self._fields[name].meta
        meta = self.__dict__.setdefault("_native_meta", {}).setdefault(name, {})
        info = self._native_info(name)
        if info is not None:
            meta["help"] = info[1]
            meta["is_set"] = info[3] or name in self._attrs
        if name in self._link_of():
            meta["parent"] = self._link_of()[name]
        return meta

    def _data_get(self, name):
        if name in self._fields:
            return Base._data_get(self, name)
        if self._handle is None and name in self._link_of():
            d = _resolve_data(self, self._link_of()[name])
            if d is not None:
                return d._owner._data_get(d._name)
        v = self._src().get(name)
        if name in ("showColor", "color") and isinstance(v, _np.ndarray) and v.ndim == 2 and v.shape[0] == 1:
            v = v.reshape(-1)
        return v

    def _data_set(self, name, value):
        if name in self._fields:
            return Base._data_set(self, name, value)
        if isinstance(value, _np.ndarray) and value.ndim == 2:
            fam, _, w = self._data_kind(name).partition(":")
            if fam == "reals" and int(w or 0) > 1 and value.shape[1] != int(w):
                raise IndexError("rows of %d values given for rows of %s" % (value.shape[1], w))
        if isinstance(value, (LinkPath,)) or (isinstance(value, str) and value.startswith("@")):
            return self._data_link(name, str(value))
        text = to_text(value)
        h = self._handle
        if h is not None:
            h.set(name, text, value)
        else:
            self._proto.set(name, text)
            self._attrs[name] = text

    def _data_link(self, name, path):
        if name in self._fields:
            return Base._data_link(self, name, path)
        self._link_of()[name] = path if isinstance(path, LinkPath) else LinkPath(str(path))
        self._attrs[name] = str(path)

    def __getitem__(self, path):
        return _get_item(self, path)

    def _assemble(self, which):
        if self._handle is None:
            raise RuntimeError("%s: matrices are assembled once the scene is initialised" % self.getPathName())
        try:
            import scipy.sparse
        except ImportError:
            raise ImportError("assembling a matrix gives a scipy.sparse matrix: pip install scipy") from None
        h = self._handle
        rows, cols, vals, n = h.binding.native.assemble(h.index, h.generation, which)
        return scipy.sparse.coo_matrix((vals, (rows, cols)), shape=(n, n)).tocsr()

    def assembleMMatrix(self):
        """The mass matrix M of this mass (scipy.sparse CSR over its state's DOFs)."""
        return self._assemble("M")

    def assembleKMatrix(self):
        """The stiffness K = df/dx of this force field (scipy.sparse CSR over its state's DOFs)."""
        return self._assemble("K")

    def findLink(self, name):
        """A link Data of this object (`input`, `output`, `mstate`…), as a Link to its target."""
        if not self._has_data(name):
            return None
        target = self._link_target(name)
        targets = [target] if target is not None else []
        help = self._data_meta(name).get("help", "")
        return Link(self, name, help, targets, False, "BaseObject")

    def _link_target(self, name):
        link = self._link_of().get(name)
        text = str(link) if link is not None else None
        if text is None:
            try:
                v = self._data_get(name)
            except (KeyError, ValueError):
                return None
            text = v if isinstance(v, str) else None
        if not text or not text.startswith("@"):
            return None
        if isinstance(link, LinkPath) and isinstance(link._target, Base):
            return link._target
        return _resolve_path(self, text[1:])

    def getCategories(self):
        return [_CATEGORIES.get(self._role(), self._role())]

    def _lookup(self, name):
        found = Base._lookup(self, name)
        if found is None and name == "mstate" and self._node is not None:
            # SOFA's mstate link, when the component has no such Data: its context state
            node = self._node
            while node is not None:
                st = node.getMechanicalState()
                if st is not None:
                    return st
                node = node._parents[0] if node._parents else None
        return found

    def getTemplateName(self):
        if self._template:
            return self._template
        if self._class == "MechanicalObject" or self._role() == "State":
            w = self._data_kind("position").partition(":")[2]
            return {"1": "Vec1d", "2": "Vec2d", "3": "Vec3d", "7": "Rigid3d", "3r": "Rigid2d"}.get(w, "Vec3d")
        return ""

    def __repr__(self):
        return "<Sofa.Core.Object %s (%s)>" % (self.getPathName(), self._class)


class _SpringForceField(Object):
    """SOFA's (Stiff)SpringForceField with SofaPython3's spring list API."""

    def getSprings(self):
        from Sofa.SofaDeformable import LinearSpring

        def flags(name, default):
            return [w.lower() in ("1", "true") for w in self._data_get(name)] if self._has_data(name) else []

        eo, en = flags("elongationOnly", False), flags("enabled", True)
        table = _np.asarray(self._data_get("spring"), dtype=float).reshape(-1, 5)
        out = []
        if len(table):
            rows = [tuple(r) for r in table]
        else:
            i1 = list(_np.asarray(self._data_get("indices1")).ravel())
            i2 = list(_np.asarray(self._data_get("indices2")).ravel())
            ks = list(_np.asarray(self._data_get("stiffness")).ravel())
            kd = list(_np.asarray(self._data_get("damping")).ravel())
            ls = list(_np.asarray(self._data_get("lengths")).ravel())

            def pick(v, k, d):
                return v[k] if len(v) > k else (v[0] if v else d)

            rows = [(i1[k], i2[k], pick(ks, k, 100.0), pick(kd, k, 5.0), pick(ls, k, 0.0)) for k in range(min(len(i1), len(i2)))]
        for k, (a, b, s_, d, l0) in enumerate(rows):
            out.append(LinearSpring(int(a), int(b), s_, d, l0,
                                    eo[k] if k < len(eo) else False, en[k] if k < len(en) else True))
        return out

    def _set_springs(self, springs):
        table = " ".join("%d %d %r %r %r" % (s.index1, s.index2, s.springStiffness, s.dampingFactor, s.restLength) for s in springs)
        values = [
            ("spring", table),
            ("indices1", ""),
            ("indices2", ""),
            ("elongationOnly", " ".join("1" if s.elongationOnly else "0" for s in springs)),
            ("enabled", " ".join("1" if s.enabled else "0" for s in springs)),
        ]
        h = self._handle
        if h is not None:
            h.binding.native.set_many(h.index, h.generation, values)
        else:
            for n, t in values:
                self._proto.set(n, t)
                self._attrs[n] = t

    def addSpring(self, spring=None, **kwargs):
        from Sofa.SofaDeformable import LinearSpring

        if spring is None:
            spring = LinearSpring(**kwargs)
        self._set_springs(self.getSprings() + [spring])

    def addSprings(self, springs):
        self._set_springs(self.getSprings() + list(springs))

    def removeSpring(self, index):
        springs = self.getSprings()
        del springs[index]
        self._set_springs(springs)

    def removeSprings(self, indices):
        drop = set(indices)
        self._set_springs([s for k, s in enumerate(self.getSprings()) if k not in drop])

    def clear(self):
        self._set_springs([])


class BaseObject(Object):
    pass


class Controller(Object):
    """A Python component receiving the scene's events in `on<EventName>(event)` methods."""

    def __init__(self, *args, **kwargs):
        Object.__init__(self, *args, **kwargs)

    def _dispatch(self, name, event):
        f = getattr(type(self), "on" + name, None)
        if callable(f):
            return getattr(self, "on" + name)(event)
        f = getattr(self, "onEvent", None)
        if callable(f):
            return f(event)
        return None


class _StateVec:
    """A state vector handed to a Python force field: `.value` and indexing read it, `with
    v.writeable() as a:` edits it (the array the solver reads back)."""

    def __init__(self, array):
        self._a = array

    @property
    def value(self):
        return self._a

    def array(self):
        return self._a

    def writeable(self):
        return _Passthrough(self._a)

    writeableArray = writeable

    def __getitem__(self, k):
        return self._a[k]

    def __len__(self):
        return len(self._a)

    @property
    def shape(self):
        return self._a.shape


class _Passthrough:
    def __init__(self, a):
        self._a = a

    def __enter__(self):
        return self._a

    def __exit__(self, *exc):
        return False


class ForceField(Object):
    """A force field written in Python: override `addForce(mparams, f, x, v)`,
    `addDForce(mparams, df, dx)` and, for assembled solvers, `addKToMatrix(mparams, nNodes,
    nDofs)` returning (row, col, value) triplets or a square matrix (K = df/dx times kFactor)."""

    _default_template = "Vec3d"

    def __init__(self, *args, **kwargs):
        Object.__init__(self, *args, **kwargs)
        object.__setattr__(self, "_template", kwargs.get("template", self._default_template))
        object.__setattr__(self, "_n_nodes", 0)

    def _role(self):
        return "ForceField"

    def _data_get(self, name):
        # during a step the scene is the solver's: Data linked to other objects are read from
        # the copy taken before the step (Sofa.Simulation refreshes it each step)
        cache = self.__dict__.get("_step_cache")
        if cache is not None and name in cache:
            return cache[name]
        return Object._data_get(self, name)

    def _before_step(self):
        object.__setattr__(self, "_step_cache", None)
        cache = {}
        for n, f in self._fields.items():
            if f.meta.get("parent") is not None:
                v = Base._data_get(self, n)
                cache[n] = _np.array(v) if isinstance(v, _np.ndarray) else v
        object.__setattr__(self, "_step_cache", cache)

    def _after_step(self):
        object.__setattr__(self, "_step_cache", None)

    def addForce(self, mparams, f, x, v):
        pass

    def addDForce(self, mparams, df, dx):
        pass

    def addKToMatrix(self, mparams, nNodes, nDofs):
        return None

    def _add_force(self, mparams, f, x, v):
        object.__setattr__(self, "_n_nodes", len(x))
        self.addForce(mparams, _StateVec(f), _StateVec(x), _StateVec(v))

    def _add_dforce(self, mparams, df, dx):
        self.addDForce(mparams, _StateVec(df), _StateVec(dx))

    def _add_k(self, mparams, n_dofs):
        k = self.addKToMatrix(mparams, self._n_nodes, n_dofs)
        if k is None:
            return None
        k = _np.ascontiguousarray(k, dtype=_np.float64)
        return k


class ForceFieldVec3d(ForceField):
    _default_template = "Vec3d"


class ForceFieldVec2d(ForceField):
    _default_template = "Vec2d"


class ForceFieldVec1d(ForceField):
    _default_template = "Vec1d"


class ForceFieldRigid3d(ForceField):
    _default_template = "Rigid3d"


class Mapping(Object):
    """A mapping written in Python: override `apply(mparams, out, in)`, `applyJ(mparams, out,
    in)` and `applyJT(mparams, in, out)` (out and in are state vectors: `.value`, indexing,
    `with v.writeableArray() as a:`). Its ends are the `input` and `output` links (objects or
    LinkPaths)."""

    _templates = ("Vec3d", "Vec3d")

    def __init__(self, *args, **kwargs):
        Object.__init__(self, *args, **kwargs)
        object.__setattr__(self, "_input", kwargs.get("input"))
        object.__setattr__(self, "_output", kwargs.get("output"))
        object.__setattr__(self, "_template", "%s,%s" % self._templates)

    def _role(self):
        return "Mapping"

    def apply(self, mparams, out, inp):
        pass

    def applyJ(self, mparams, out, inp):
        pass

    def applyJT(self, mparams, inp, out):
        pass

    def _apply(self, mparams, out, ins):
        self.apply(mparams, _StateVec(out), _StateVec(ins[0]) if len(ins) == 1 else [_StateVec(a) for a in ins])

    def _apply_j(self, mparams, out, ins):
        self.applyJ(mparams, _StateVec(out), _StateVec(ins[0]) if len(ins) == 1 else [_StateVec(a) for a in ins])

    def _apply_jt(self, mparams, ins, out):
        self.applyJT(mparams, _StateVec(ins[0]) if len(ins) == 1 else [_StateVec(a) for a in ins], _StateVec(out))


def _mapping_class(name, a, b):
    return type(name, (Mapping,), {"_templates": (a, b), "__module__": __name__})


for _a in ("Vec3d", "Vec2d", "Vec1d", "Rigid3d"):
    for _b in ("Vec3d", "Vec2d", "Vec1d", "Rigid3d"):
        globals()["Mapping_%s_%s" % (_a, _b)] = _mapping_class("Mapping_%s_%s" % (_a, _b), _a, _b)


class TaskScheduler:
    """SOFA's task scheduler: the number of threads the simulations step with (Canapé gives
    each simulation its own workers; `init(n)` applies to the next steps of every Python scene)."""

    _threads = 0

    @staticmethod
    def GetHardwareThreadsCount():
        import os

        return os.cpu_count() or 1

    @staticmethod
    def init(n=0):
        TaskScheduler._threads = int(n)

    @staticmethod
    def stop():
        TaskScheduler._threads = 0

    @staticmethod
    def getThreadCount():
        return TaskScheduler._threads


def _version(data, depth=0):
    """A Data's change count, followed through its parent links (SOFA's dirty flags)."""
    parent = data.getParent() if depth < 32 else None
    if parent is not None:
        if isinstance(parent._owner, DataEngine):
            parent._owner._update_if_dirty(parent._name)
        return ("link", _version(parent, depth + 1))
    return data._owner._data_version(data._name)


class DataEngine(Object):
    """A Python engine: `addInput`/`addOutput` in `init`, `update()` recomputes the outputs.
    Lazy as SOFA's DataEngine: reading an output runs `update()` first when an input changed
    since the last update (inputs start dirty)."""

    def __init__(self, *args, **kwargs):
        Object.__init__(self, *args, **kwargs)
        object.__setattr__(self, "_inputs", [])
        object.__setattr__(self, "_outputs", [])
        object.__setattr__(self, "_seen", None)
        object.__setattr__(self, "_updating", False)

    def addInput(self, data):
        self._inputs.append(data)

    def addOutput(self, data):
        self._outputs.append(data)

    def update(self):
        pass

    def _update_if_dirty(self, name):
        if self._updating or not any(d._name == name for d in self.__dict__.get("_outputs", ())):
            return
        seen = tuple(_version(d) for d in self._inputs)
        if seen == self._seen:
            return
        object.__setattr__(self, "_seen", seen)
        object.__setattr__(self, "_updating", True)
        try:
            self.update()
        finally:
            object.__setattr__(self, "_updating", False)


class ObjectFactory:
    @staticmethod
    def dump_json():
        import json

        return json.dumps({c: {"description": d, "inert": i} for c, d, i in _native.classes()})

    @staticmethod
    def getComponentsFromTarget(target):
        return [c for c, _, _ in _native.classes()]


class Topology(Object):
    pass


class Camera(Object):
    pass


class ContactListener(Object):
    pass


class RawPrefab(Node):
    pass
