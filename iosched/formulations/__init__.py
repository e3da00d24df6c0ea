"""Formulations: every exact model of each problem in one registry, and the study that compares them.

* :mod:`iosched.formulations.registry`: the registry (:class:`~iosched.formulations.registry.Formulation`),
  the one source of truth that ``iosched model``, ``iosched formulations``, ``Problem.models`` and the
  functions below read; each problem declares its formulations in ``iosched/formulations/<problem>.py``.
* :mod:`iosched.formulations.study`: the side-by-side table (size, LP relaxation, root bound, best value,
  bound, status, nodes, time, gaps, scope, evaluated value), its CSV / Parquet / JSON and its plot.
* :mod:`iosched.formulations.loop`: :func:`build_model` and :func:`solve_model`, to change a model and see
  the effect.

The package itself is callable, so that ``iosched.formulations(problem, instance, ...)`` runs the study
(:func:`iosched.formulations.study.study`) while ``iosched.formulations.build_model`` and the registry stay
reachable under the same name: a function of that name beside the package would hide one of them.
"""

from __future__ import annotations

import sys
import types

from iosched.formulations import filedomain as _filedomain  # noqa: F401  (each module registers its formulations)
from iosched.formulations import forwarding as _forwarding  # noqa: F401
from iosched.formulations import malleable as _malleable  # noqa: F401
from iosched.formulations import periodic as _periodic  # noqa: F401
from iosched.formulations import window as _window  # noqa: F401
from iosched.formulations.loop import build_model, solve_model
from iosched.formulations.registry import (
    FORMULATIONS,
    ArrayModel,
    Formulation,
    builders,
    formulations_of,
    get_formulation,
)
from iosched.formulations.study import KEYS, Study, study

__all__ = ["FORMULATIONS", "KEYS", "ArrayModel", "Formulation", "Study", "build_model", "builders",
           "formulations_of", "get_formulation", "solve_model", "study"]


class _CallablePackage(types.ModuleType):
    def __call__(self, problem: str, instance, **kwargs) -> Study:
        """``iosched.formulations(problem, instance, solvers=..., profile=..., names=..., params=..., variants=...)``:
        :func:`iosched.formulations.study.study`."""
        return study(problem, instance, **kwargs)


sys.modules[__name__].__class__ = _CallablePackage
