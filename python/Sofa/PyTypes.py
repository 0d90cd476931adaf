"""Sofa.PyTypes: numpy-backed value wrappers (Vec3, RGBAColor) around Data or arrays."""

import numpy as _np


def _values(src, size):
    from Sofa.Core import Data

    if isinstance(src, Data):
        a = _np.array(src.value, dtype=float)
    elif isinstance(src, _np.ndarray) and src.dtype == _np.float64:
        a = src  # wrapped in place (a writeable() block's array)
    else:
        a = _np.array(src, dtype=float)
    if a.ndim != 1 or a.shape[0] != size:
        raise AttributeError("a %d-vector wraps a Data or an array of %d numbers, not of shape %s" % (size, size, a.shape))
    return a


class Vec3(_np.ndarray):
    def __new__(cls, src=None):
        a = _np.zeros(3) if src is None else _values(src, 3)
        return _np.asarray(a).view(cls)

    def __eq__(self, other):
        return bool(_np.array_equal(_np.asarray(self), _np.asarray(other)))

    def __ne__(self, other):
        return not self.__eq__(other)


class RGBAColor(_np.ndarray):
    def __new__(cls, src=None):
        a = _np.ones(4) if src is None else _values(src, 4)
        return _np.asarray(a).view(cls)

    def r(self):
        return float(self[0])

    def g(self):
        return float(self[1])

    def b(self):
        return float(self[2])

    def a(self):
        return float(self[3])
