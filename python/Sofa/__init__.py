"""Sofa: SofaPython3's packages over Canapé, so that SofaPython3 scenes and scripts run
unchanged (`import Sofa`, `Sofa.Core.Node`, `Sofa.Simulation.animate`…). Importing it prints
nothing and changes no interpreter hook."""

from Sofa import Core, Helper, Types, Simulation, constants, Gui, SofaDeformable  # noqa: F401
from Sofa.Helper import msg_info, msg_warning, msg_error, msg_deprecated, msg_fatal  # noqa: F401
from Sofa.Prefab import Prefab  # noqa: F401

__all__ = ["Core", "Helper", "Types", "Simulation", "constants", "Gui", "Prefab"]


def import_sofa_python_scene(path):
    """Import a Python scene file as a module (SofaPython3's helper)."""
    import importlib.util
    import os

    spec = importlib.util.spec_from_file_location(os.path.splitext(os.path.basename(path))[0], path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
