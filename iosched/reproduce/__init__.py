"""Each paper's reproduction: its experiment run on its instances, beside the paper's own figures.

A problem's reproduction lives in ``iosched/reproduce/<problem>.py`` as
``reproduce(workers=1, progress=True, **options) -> Reproduction``;
:mod:`iosched.reproduce.paper_report` writes them all into one folder
(``iosched reproduce --report DIR``). The benchmark harness (suites, runner, report) is
:mod:`iosched.harness`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

COMPARISON_KEYS = ("paper", "table_or_figure", "row", "column", "paper_value", "ours", "unit",
                   "relative_difference", "note")
CLOSE = 0.10  # a figure within this relative difference of the paper's is reproduced; beyond, its note explains


def comparison(paper: str, table_or_figure: str, row, column, paper_value, ours, unit: str = "",
               note: str = "") -> dict:
    """One compared figure: the paper's value beside ours, ``relative_difference`` = (ours - paper) /
    |paper| for numbers; for a categorical value (a choice, a set written as text) 0 when the two
    are equal and 1 when not; None where either is missing. Beyond :data:`CLOSE`, ``note`` says which
    assumption is responsible and what the number is with it changed (a measurement, not a sentence);
    where the paper gives too little to calibrate, which quantity is missing."""
    numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
                  for v in (paper_value, ours))
    if paper_value is None or ours is None:
        diff = None
    elif not numbers:
        diff = 0.0 if paper_value == ours else 1.0
    elif paper_value == 0:
        diff = 0.0 if ours == 0 else None
    else:
        diff = (ours - paper_value) / abs(paper_value)
    return {"paper": paper, "table_or_figure": table_or_figure, "row": row, "column": column,
            "paper_value": paper_value, "ours": ours, "unit": unit, "relative_difference": diff, "note": note}


@dataclass
class Reproduction:
    """A paper's experiment beside its figures: a Markdown table and whether every solution was
    feasible; ``comparisons`` every compared figure (see :func:`comparison`), and ``figures``,
    given a folder, draws the figures (PNG, the paper's values beside ours) and returns their paths."""

    title: str
    rows: list[dict]
    table: str
    ok: bool
    notes: str = ""
    comparisons: list[dict] = field(default_factory=list)
    figures: Callable[[Path], list[Path]] | None = None
