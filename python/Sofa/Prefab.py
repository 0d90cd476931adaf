"""Sofa.Prefab: a node subclass built from declared parameters (SofaPython3's prefab)."""

from Sofa.Core import Node


class Prefab(Node):
    """A node whose `prefabParameters` (dicts with name, type, help, default) become Data, and
    whose `init()` builds its content."""

    prefabParameters = []
    prefabData = []

    def __init__(self, *args, **kwargs):
        name = kwargs.pop("name", args[0] if args else type(self).__name__)
        Node.__init__(self, name)
        for p in list(self.prefabParameters) + list(self.prefabData):
            value = kwargs.pop(p["name"], p.get("default"))
            self.addData(name=p["name"], value=value, type=p.get("type"), help=p.get("help", ""))
        for k, v in kwargs.items():
            if self._has_data(k):
                self._data_set(k, v)
        self.init()

    def init(self):
        pass
