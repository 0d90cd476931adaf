"""SofaTypes: SOFA's small value types (Vec1d…Vec12d, Vec1i…Vec12i, Mat1x1…Mat4x4) for
SofaPython3 scripts, in plain Python. Equality is SOFA's: components within 1e-6."""

import math as _math

EQUALITY_THRESHOLD = 1e-6

_NAMES = "xyzw"


class _Vec:
    _n = 3
    _kind = float

    def __init__(self, *args):
        if len(args) == 1 and not isinstance(args[0], (int, float)):
            vals = list(args[0])
        elif args:
            vals = list(args)
        else:
            vals = [0] * self._n
        if len(vals) != self._n:
            raise TypeError("%s takes %d values, not %d" % (type(self).__name__, self._n, len(vals)))
        object.__setattr__(self, "_v", [self._kind(x) for x in vals])

    def set(self, *args):
        if len(args) != self._n:
            raise TypeError("%s.set takes %d values" % (type(self).__name__, self._n))
        self._v[:] = [self._kind(x) for x in args]

    def __len__(self):
        return self._n

    def __getitem__(self, i):
        if isinstance(i, int) and not -self._n <= i < self._n:
            raise IndexError("index %d out of range for %s" % (i, type(self).__name__))
        return self._v[i]

    def __setitem__(self, i, x):
        if not -self._n <= i < self._n:
            raise IndexError("index %d out of range for %s" % (i, type(self).__name__))
        self._v[i] = self._kind(x)

    def __iter__(self):
        return iter(self._v)

    def __getattr__(self, name):
        if name and all(c in _NAMES[: min(self._n, 4)] for c in name) and len(name) <= min(self._n, 4):
            if len(name) == 1:
                return self._v[_NAMES.index(name)]
            # SofaPython3 gives the prefixes xy, xyz, xyzw
            if _NAMES.startswith(name):
                return tuple(self._v[: len(name)])
        raise AttributeError("'%s' has no attribute '%s'" % (type(self).__name__, name))

    def __setattr__(self, name, value):
        if len(name) == 1 and name in _NAMES[: min(self._n, 4)]:
            self._v[_NAMES.index(name)] = self._kind(value)
        else:
            raise AttributeError("'%s' has no attribute '%s'" % (type(self).__name__, name))

    def clear(self):
        self._v[:] = [self._kind(0)] * self._n

    def fill(self, x):
        self._v[:] = [self._kind(x)] * self._n

    def norm2(self):
        return sum(x * x for x in self._v)

    def norm(self):
        return _math.sqrt(self.norm2())

    def lNorm(self, p):
        if p == 0:
            return max(abs(x) for x in self._v)
        return sum(abs(x) ** p for x in self._v) ** (1.0 / p)

    def normalized(self):
        n = self.norm()
        return type(self)([x / n for x in self._v]) if n > 0 else type(self)(self._v)

    def normalize(self):
        n = self.norm()
        if n <= 0:
            return False
        self._v[:] = [x / n for x in self._v]
        return True

    def dot(self, other):
        return sum(a * b for a, b in zip(self._v, other))

    def __eq__(self, other):
        try:
            o = list(other)
        except TypeError:
            return False
        return len(o) == self._n and all(abs(a - b) <= EQUALITY_THRESHOLD for a, b in zip(self._v, o))

    def __ne__(self, other):
        return not self.__eq__(other)

    def __add__(self, other):
        return type(self)([a + b for a, b in zip(self._v, other)])

    def __sub__(self, other):
        return type(self)([a - b for a, b in zip(self._v, other)])

    def __mul__(self, other):
        if isinstance(other, _Vec):
            return self.dot(other)
        return _Vec._float(self)([a * other for a in self._v])

    __rmul__ = __mul__

    def __truediv__(self, s):
        return _Vec._float(self)([a / s for a in self._v])

    def __imul__(self, s):
        self._v[:] = [self._kind(a * s) for a in self._v]
        return self

    def __itruediv__(self, s):
        self._v[:] = [self._kind(a / s) for a in self._v]
        return self

    def __neg__(self):
        return type(self)([-a for a in self._v])

    def __repr__(self):
        return "%s(%s)" % (type(self).__name__, ", ".join(repr(x) for x in self._v))

    @staticmethod
    def _float(v):
        return globals()["Vec%dd" % v._n]


def _cross3(self, o):
    a, b = self._v, list(o)
    return type(self)(a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def _cross2(self, o):
    a, b = self._v, list(o)
    return a[0] * b[1] - a[1] * b[0]


for _n in range(1, 13):
    for _suffix, _kind in (("d", float), ("i", int)):
        _attrs = {"_n": _n, "_kind": _kind, "__module__": __name__}
        if _n == 3:
            _attrs["cross"] = _cross3
        elif _n == 2:
            _attrs["cross"] = _cross2
        globals()["Vec%d%s" % (_n, _suffix)] = type("Vec%d%s" % (_n, _suffix), (_Vec,), _attrs)


class _Mat:
    _r = 3
    _c = 3

    def __init__(self, rows=None):
        if rows is None:
            rows = [[0.0] * self._c for _ in range(self._r)]
        rows = [[float(x) for x in r] for r in rows]
        if len(rows) != self._r or any(len(r) != self._c for r in rows):
            raise TypeError("%s takes %d rows of %d values" % (type(self).__name__, self._r, self._c))
        self._m = rows

    def __getitem__(self, i):
        return self._m[i]

    def __len__(self):
        return self._r

    def __eq__(self, other):
        try:
            o = [list(r) for r in other]
        except TypeError:
            return False
        return len(o) == self._r and all(
            len(r) == self._c and all(abs(a - b) <= EQUALITY_THRESHOLD for a, b in zip(ra, r)) for ra, r in zip(self._m, o)
        )

    def __ne__(self, other):
        return not self.__eq__(other)

    def __add__(self, o):
        return type(self)([[a + b for a, b in zip(ra, rb)] for ra, rb in zip(self._m, o)])

    def __sub__(self, o):
        return type(self)([[a - b for a, b in zip(ra, rb)] for ra, rb in zip(self._m, o)])

    def __mul__(self, o):
        if isinstance(o, _Mat):
            cols = list(zip(*o._m))
            out = [[sum(a * b for a, b in zip(r, c)) for c in cols] for r in self._m]
            return globals()["Mat%dx%d" % (self._r, o._c)](out)
        if isinstance(o, _Vec):
            return _Vec._float(o)([sum(a * b for a, b in zip(r, o)) for r in self._m]) if self._r == o._n else NotImplemented
        return type(self)([[a * o for a in r] for r in self._m])

    def __truediv__(self, s):
        return type(self)([[a / s for a in r] for r in self._m])

    def __itruediv__(self, s):
        self._m = [[a / s for a in r] for r in self._m]
        return self

    def __imul__(self, s):
        self._m = [[a * s for a in r] for r in self._m]
        return self

    def transposed(self):
        return globals()["Mat%dx%d" % (self._c, self._r)]([list(c) for c in zip(*self._m)])

    def __repr__(self):
        return "%s(%r)" % (type(self).__name__, self._m)


for _r in range(1, 5):
    for _c in range(1, 5):
        globals()["Mat%dx%d" % (_r, _c)] = type("Mat%dx%d" % (_r, _c), (_Mat,), {"_r": _r, "_c": _c, "__module__": __name__})
