"""Checks shared by instances and method parameters: each names the field and the value it rejects.

Instance fields raise :class:`InstanceError` (the default), method parameters pass
``error=ParameterError``. Numbers must be finite unless a check says otherwise; booleans
are never accepted as numbers (JSON ``true`` is not ``1``).
"""

from __future__ import annotations

import math
import typing
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from iosched.errors import InstanceError, ParameterError


def integer(where: str, value, lo: int | None = 0, hi: int | None = None, error=InstanceError) -> int:
    """``value`` as an int in [lo, hi] (None: unbounded on that side); floats are refused."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise error(f"{where} must be an integer, got {value!r}")
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        raise error(f"{where} must be an integer in [{'-inf' if lo is None else lo}, "
                    f"{'inf' if hi is None else hi}], got {value!r}")
    return value


def number(where: str, value, lo: float | None = None, hi: float | None = None, *, lo_open: bool = False,
           hi_open: bool = False, error=InstanceError) -> float:
    """``value`` as a finite float within the bounds (``lo_open``: > lo, else >= lo)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise error(f"{where} must be a number, got {value!r}")
    try:
        x = float(value)
    except OverflowError:
        raise error(f"{where} must be a finite number, got {value!r}") from None
    if not math.isfinite(x):
        raise error(f"{where} must be a finite number, got {value!r}")
    below = lo is not None and (x <= lo if lo_open else x < lo)
    above = hi is not None and (x >= hi if hi_open else x > hi)
    if below or above:
        left = "-inf" if lo is None else f"{lo:g}"
        right = "inf" if hi is None else f"{hi:g}"
        raise error(f"{where} must be in {'(' if lo_open or lo is None else '['}{left}, {right}"
                    f"{')' if hi_open or hi is None else ']'}, got {value!r}")
    return x


def positive(where: str, value, error=InstanceError) -> float:
    """A finite number > 0."""
    return number(where, value, 0, lo_open=True, error=error)


def choice(where: str, value, options: Iterable, error=InstanceError):
    """``value`` if it is one of ``options``."""
    options = list(options)
    if isinstance(value, (list, dict)) or value not in options:
        raise error(f"{where} must be one of {', '.join(map(str, options))}, got {value!r}")
    return value


def boolean(where: str, value, error=InstanceError) -> bool:
    if not isinstance(value, bool):
        raise error(f"{where} must be true or false, got {value!r}")
    return value


def text(where: str, value, error=InstanceError) -> str:
    """A non-empty string."""
    if not isinstance(value, str) or not value:
        raise error(f"{where} must be a non-empty string, got {value!r}")
    return value


def real(x) -> bool:
    """A real number (int, float or their numpy kinds), never a bool."""
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, (bool, np.bool_))


def finite(x) -> bool:
    """``math.isfinite`` of a real number, False for an int beyond every float."""
    try:
        return math.isfinite(x)
    except OverflowError:
        return False


def finite_numbers(value) -> bool:
    """True when every number in a nested structure of lists, tuples and dicts is finite.

    Evaluators call it on what they read, so that NaN or inf anywhere is a violation.
    """
    if isinstance(value, bool):
        return True
    if isinstance(value, (int, float)):
        return finite(value)
    if isinstance(value, dict):
        return all(finite_numbers(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return all(finite_numbers(v) for v in value)
    if isinstance(value, np.ndarray):
        return value.dtype.kind not in "fc" or bool(np.all(np.isfinite(value)))
    if isinstance(value, np.floating):
        return bool(np.isfinite(value))
    return True


# --- declarative checks for method parameters ---------------------------------------------------
# A method states its parameters' ranges in its signature, e.g.
#     def ga(instance, generations: Annotated[int, Integer(1)] = 500, p_m: Annotated[float, Number(0, 1)] = 5e-4)
# and core.solve / the benchmark suites check given values against them before anything runs.


# Each check also says in words what it accepts (``describe``), and may carry the parameter's
# unit, for ``iosched list PROBLEM METHOD`` and ``iosched.describe``.


@dataclass(frozen=True)
class Integer:
    lo: int | None = 0
    hi: int | None = None
    unit: str = ""

    def __call__(self, where, value, error=ParameterError):
        return integer(where, value, self.lo, self.hi, error)

    def describe(self) -> str:
        return f"integer in [{'-inf' if self.lo is None else self.lo}, {'inf' if self.hi is None else self.hi}]"


@dataclass(frozen=True)
class Number:
    lo: float | None = None
    hi: float | None = None
    lo_open: bool = False
    hi_open: bool = False
    unit: str = ""

    def __call__(self, where, value, error=ParameterError):
        return number(where, value, self.lo, self.hi, lo_open=self.lo_open, hi_open=self.hi_open, error=error)

    def describe(self) -> str:
        left = "(-inf" if self.lo is None else f"{'(' if self.lo_open else '['}{self.lo:g}"
        right = "inf)" if self.hi is None else f"{self.hi:g}{')' if self.hi_open else ']'}"
        return f"number in {left}, {right}"


@dataclass(frozen=True)
class OneOf:
    options: tuple
    unit: str = ""

    def __call__(self, where, value, error=ParameterError):
        return choice(where, value, self.options, error)

    def describe(self) -> str:
        return "one of " + ", ".join(map(str, self.options))


@dataclass(frozen=True)
class Boolean:
    unit: str = ""

    def __call__(self, where, value, error=ParameterError):
        return boolean(where, value, error)

    def describe(self) -> str:
        return "true or false"


@dataclass(frozen=True)
class ListOf:
    """A non-empty list (at most ``max_len`` items) whose every item passes ``item``; with ``scalar``,
    one item alone is also accepted."""

    item: Integer | Number | OneOf
    max_len: int = 10_000
    scalar: bool = False

    @property
    def unit(self) -> str:
        return self.item.unit

    def describe(self) -> str:
        return f"{'one value or ' if self.scalar else ''}a list of at most {self.max_len} of: {self.item.describe()}"

    def __call__(self, where, value, error=ParameterError):
        if self.scalar and not isinstance(value, (list, tuple)):
            return self.item(where, value, error)
        if not isinstance(value, (list, tuple)) or not value or len(value) > self.max_len:
            one = "one value or " if self.scalar else ""
            raise error(f"{where} must be {one}a non-empty list of at most {self.max_len} items, got {value!r}")
        return [self.item(f"{where}[{i}]", v, error) for i, v in enumerate(value)]


CHECKS = (Integer, Number, OneOf, Boolean, ListOf)

# A method's wall-clock budget in seconds; None: the default profile's time_limit
# (see solvers.Deadline.for_method, which every method's loops check)
TimeLimit = typing.Annotated[float | None, Number(0, 10**7, lo_open=True, unit="s")]


def declared_checks(fn) -> dict[str, tuple[list, bool]]:
    """Per parameter of ``fn``: its declared checks and whether None is accepted."""
    hints = typing.get_type_hints(fn, include_extras=True)
    out = {}
    for name, hint in hints.items():
        checks = [c for c in getattr(hint, "__metadata__", ()) if isinstance(c, CHECKS)]
        base = typing.get_args(hint)[0] if checks else hint
        out[name] = (checks, type(None) in typing.get_args(base))
    return out


def check_params(fn, params: dict, label: str) -> None:
    """Check ``params`` against the ``Annotated`` checks in ``fn``'s signature (ParameterError naming
    ``label``, the parameter and the value). None passes where the annotated type admits it."""
    declared = declared_checks(fn)
    for name, value in params.items():
        checks, none_ok = declared.get(name, ([], False))
        if value is None and none_ok:
            continue
        for check in checks:
            check(f"{label}: {name}", value, ParameterError)
