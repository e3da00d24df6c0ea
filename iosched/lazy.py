"""Modules imported on first use, so that ``import iosched`` does not pay for Pyomo (and the SciPy it
pulls in) when no model is built.

``pe = lazy.module("pyomo.environ")`` behaves like ``import pyomo.environ as pe`` once an attribute is
read; until then nothing is imported.
"""

from __future__ import annotations

import importlib
from types import ModuleType


class _LazyModule:
    __slots__ = ("_name", "_module")

    def __init__(self, name: str):
        self._name = name
        self._module: ModuleType | None = None

    def __getattr__(self, attr: str):
        if self._module is None:
            self._module = importlib.import_module(self._name)
        return getattr(self._module, attr)

    def __repr__(self) -> str:
        state = "loaded" if self._module is not None else "not loaded yet"
        return f"<lazy module {self._name!r} ({state})>"


def module(name: str) -> _LazyModule:
    """A stand-in for the module ``name`` that imports it when an attribute is first read."""
    return _LazyModule(name)
