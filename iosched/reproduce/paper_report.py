"""``iosched reproduce --report DIR``: every paper's reproduction in one folder.

``report.md`` (per paper: the experiment's table and notes, every compared figure with the
paper's value beside ours and the note that explains a difference, the figures),
``comparisons.json`` (the same figures as records, :data:`iosched.reproduce.COMPARISON_KEYS`),
and ``figures/*.png``. Every file is written whole or not at all.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from iosched.files import write_text
from iosched.reproduce import CLOSE, COMPARISON_KEYS, Reproduction


def classify(entry: dict) -> str:
    """``within`` (10 % of the paper's), ``explained`` (beyond, with a note), ``unexplained`` (beyond,
    no note) or ``not comparable`` (no relative difference: a missing or non-numeric value)."""
    diff = entry.get("relative_difference")
    if diff is None or not math.isfinite(diff):
        return "not comparable"
    if abs(diff) <= CLOSE:
        return "within"
    return "explained" if str(entry.get("note") or "").strip() else "unexplained"


def counts(entries: list[dict]) -> dict[str, int]:
    out = {"within": 0, "explained": 0, "unexplained": 0, "not comparable": 0}
    for e in entries:
        out[classify(e)] += 1
    return out


def _cell(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value).replace("|", "\\|").replace("\n", " ")


def _comparison_table(entries: list[dict]) -> str:
    head = "| table / figure | row | column | paper | ours | unit | difference | verdict | note |"
    lines = [head, "|" + "---|" * 9]
    for e in entries:
        diff = e["relative_difference"]
        lines.append("| " + " | ".join([_cell(e["table_or_figure"]), _cell(e["row"]), _cell(e["column"]),
                                        _cell(e["paper_value"]), _cell(e["ours"]), _cell(e["unit"]),
                                        "-" if diff is None else f"{diff:+.1%}", classify(e),
                                        _cell(e["note"])]) + " |")
    return "\n".join(lines)


def check_entries(problem: str, entries: list[dict]) -> None:
    """Every record carries exactly the comparison keys (a programming error otherwise)."""
    for i, e in enumerate(entries):
        if set(e) != set(COMPARISON_KEYS):
            raise ValueError(f"{problem}: comparison {i} has keys {sorted(e)}, expected {list(COMPARISON_KEYS)}")


SEED_LEGEND = "\"The seed\" is a problem's source paper (the README's table of problems names each)."


def write(reproductions: dict[str, Reproduction], folder: str | Path) -> dict[str, Path]:
    """The report of ``reproductions`` (problem name -> its Reproduction) in ``folder``: the paths
    written, by kind (``report``, ``json``, and each figure by its file name)."""
    folder = Path(folder)
    figures_dir = folder / "figures"
    figures_dir.mkdir(parents=True, exist_ok=True)
    written: dict[str, Path] = {}
    sections, records = [], []
    total = {"within": 0, "explained": 0, "unexplained": 0, "not comparable": 0}
    for problem, rep in reproductions.items():
        check_entries(problem, rep.comparisons)
        for e in rep.comparisons:
            records.append({"problem": problem, **e})
        c = counts(rep.comparisons)
        for k, v in c.items():
            total[k] += v
        paths = rep.figures(figures_dir) if rep.figures is not None else []
        for p in paths:
            written[p.name] = p
        parts = [f"## {rep.title}", "",
                 f"{len(rep.comparisons)} figures compared: {c['within']} within {CLOSE * 100:.0f} % of the paper's, "
                 f"{c['explained']} beyond it with a measured explanation, {c['unexplained']} beyond it without "
                 f"one, {c['not comparable']} not comparable. Every solution feasible: {'yes' if rep.ok else 'NO'}.",
                 "", rep.table, ""]
        if rep.notes:
            parts += [rep.notes, ""]
        if rep.comparisons:
            parts += ["### The paper's figures beside ours", "", _comparison_table(rep.comparisons), ""]
        if paths:
            parts += ["### Figures", ""] + [f"![{p.stem}](figures/{p.name})" for p in paths] + [""]
        sections.append("\n".join(parts))
    head = ["# iosched: the papers' tables and figures beside ours", "",
            f"{sum(total.values())} figures compared: {total['within']} within {CLOSE * 100:.0f} %, "
            f"{total['explained']} explained by a measurement, {total['unexplained']} unexplained, "
            f"{total['not comparable']} not comparable. `comparisons.json` holds the same figures as records.", "",
            SEED_LEGEND, ""]
    written["report"] = write_text(folder / "report.md", "\n".join(head + sections))
    written["json"] = write_text(folder / "comparisons.json", json.dumps(records, indent=1, default=str) + "\n")
    return written
