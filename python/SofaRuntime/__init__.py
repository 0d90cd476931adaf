"""SofaRuntime: plugin loading accepted for SOFA's plugin names (Canapé's components are all
built in), categories of a class, data and plugin search paths."""

from Sofa.Helper import System as _System

DataRepository = _System.DataRepository
PluginRepository = _System.PluginRepository

_KNOWN_PREFIXES = ("Sofa.", "Sofa", "SofaPython3", "Sofa.Component", "SofaComponentAll")


def importPlugin(name):
    """Accept a SOFA plugin name (Sofa.Component.* and the built-in modules): True."""
    if any(name.startswith(p) for p in _KNOWN_PREFIXES):
        return True
    from Sofa.Helper import _emit

    _emit("warning", "plugin '%s' is not part of Canapé: its components are unknown" % name)
    return False


def unload_plugin(name):
    return True


def load_plugins_from_ini_file(path):
    return True


def auto_load_plugins():
    return True


def init():
    return True


def getCategories(class_name):
    """The roles of a class, as a list (SOFA's categories)."""
    from canape import _native

    for c, desc, inert in _native.classes():
        if c == class_name:
            try:
                return [_native.Proto(c).role]
            except Exception:
                return ["Object"]
    return []
