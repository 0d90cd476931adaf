"""Sofa.Types: RGBAColor and BoundingBox value types."""

_NAMED = {
    "white": (1, 1, 1, 1), "black": (0, 0, 0, 1), "red": (1, 0, 0, 1), "green": (0, 1, 0, 1),
    "blue": (0, 0, 1, 1), "cyan": (0, 1, 1, 1), "magenta": (1, 0, 1, 1), "yellow": (1, 1, 0, 1),
    "gray": (0.5, 0.5, 0.5, 1), "grey": (0.5, 0.5, 0.5, 1), "darkgray": (0.25, 0.25, 0.25, 1),
    "lightgray": (0.75, 0.75, 0.75, 1), "orange": (1, 0.5, 0, 1), "purple": (0.5, 0, 0.5, 1),
    "pink": (1, 0, 0.5, 1), "brown": (0.6, 0.3, 0, 1), "transparent": (1, 1, 1, 0),
}


class RGBAColor:
    def __init__(self, *args):
        if not args:
            v = (1.0, 1.0, 1.0, 1.0)
        elif len(args) == 1 and isinstance(args[0], str):
            if args[0] not in _NAMED:
                raise TypeError("unknown color name '%s'" % args[0])
            v = _NAMED[args[0]]
        elif len(args) == 1:
            v = list(args[0])
        else:
            v = list(args)
        if len(v) != 4 or not all(isinstance(x, (int, float)) for x in v):
            raise TypeError("an RGBAColor takes four numbers or a color name")
        self._v = [float(x) for x in v]

    def r(self):
        return self._v[0]

    def g(self):
        return self._v[1]

    def b(self):
        return self._v[2]

    def a(self):
        return self._v[3]

    def __getitem__(self, i):
        return self._v[i]

    def lighten(self, factor):
        return RGBAColor(*[min(1.0, c + (1.0 - c) * factor) for c in self._v[:3]], 1.0)

    def __eq__(self, other):
        return isinstance(other, RGBAColor) and self._v == other._v

    def __repr__(self):
        return "RGBAColor(%s)" % ", ".join(repr(x) for x in self._v)

    __str__ = __repr__


from Sofa.Core import Data as _Data


class BoundingBox(_Data):
    """A node's or object's bounding box Data (min then max corner)."""

    def __init__(self, owner=None, name="bbox"):
        _Data.__init__(self, owner, name)
        object.__setattr__(self, "_data", self if owner is not None else None)

    def getMin(self):
        v = list(self._data.value) if self._data is not None else []
        return v[:3]

    def getMax(self):
        v = list(self._data.value) if self._data is not None else []
        return v[3:6]

    def getCenter(self):
        a, b = self.getMin(), self.getMax()
        return [(x + y) / 2 for x, y in zip(a, b)]
