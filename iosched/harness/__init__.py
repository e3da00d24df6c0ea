"""The benchmark harness: suites (:mod:`~iosched.harness.suite`), resumable runs
(:mod:`~iosched.harness.runner`) and their report (:mod:`~iosched.harness.report`).

The papers' reproductions moved to :mod:`iosched.reproduce`. Their old names
(``iosched.harness.<problem>``, ``iosched.harness.paper_report``, and ``Reproduction``,
``comparison``, ``COMPARISON_KEYS``, ``CLOSE`` here) stay importable for one release and
warn (``DeprecationWarning``) when used.
"""

from __future__ import annotations

import importlib
import sys
import warnings

_MOVED_NAMES = ("CLOSE", "COMPARISON_KEYS", "Reproduction", "comparison")


def _warn_moved(old: str, new: str, stacklevel: int) -> None:
    """A DeprecationWarning for a name that moved, at ``stacklevel`` frames above the caller."""
    warnings.warn(f"{old} moved to {new}; the old name goes in the next release", DeprecationWarning,
                  stacklevel=stacklevel + 1)


def __getattr__(name: str):
    """The names that moved to :mod:`iosched.reproduce`, with a DeprecationWarning."""
    if name in _MOVED_NAMES:
        _warn_moved(f"iosched.harness.{name}", f"iosched.reproduce.{name}", 2)
        return getattr(importlib.import_module("iosched.reproduce"), name)
    raise AttributeError(f"module 'iosched.harness' has no attribute {name!r}")


def alias_moved_module(old: str, new: str) -> None:
    """Make module ``old`` the module ``new`` (the same object: every name, private ones too), warning at
    the line that imported it (``warnings`` skips the import machinery's frames), so a script run as
    ``__main__`` sees the warning under Python's default filters."""
    _warn_moved(old, new, 3)
    sys.modules[old] = importlib.import_module(new)
