"""Sofa.constants: key codes."""
from Sofa.constants import Key  # noqa: F401
