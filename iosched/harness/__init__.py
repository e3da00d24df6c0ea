"""Benchmark suites, the runner and report, and each paper's reproduction.

A problem's reproduction lives in ``iosched/harness/<problem>.py`` as
``reproduce(workers=1, progress=True, **options) -> Reproduction``: the paper's
experiment run on its instances, beside the paper's own figures.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Reproduction:
    """A paper's experiment beside its figures: a Markdown table and whether every solution was feasible."""

    title: str
    rows: list[dict]
    table: str
    ok: bool
    notes: str = ""
