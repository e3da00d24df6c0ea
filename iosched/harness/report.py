"""Merge a results directory into gap tables and plots.

For each instance and objective, the best known bound is the tightest bound any result
proved, and the best known value the best feasible objective any method reached. Per
method: instances solved (a feasible answer), mean and max gap to the best bound, mean
gap to the best value, success rate, and the shifted geometric mean of the time
(shift 1 s). Gaps are |reference - value| / |value|.
"""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

SHIFT_S = 1.0


def load_results(out: str | Path, skipped: list[Path] | None = None) -> list[dict]:
    """Every result that reads back; the paths of those that do not go to ``skipped``."""
    from iosched.harness.runner import read_result

    rows = []
    for p in sorted(Path(out, "results").glob("*.json")):
        record = read_result(p)
        if record is None:
            if skipped is not None:
                skipped.append(p)
            continue
        rows.append(record)
    return rows


def _better(sense: str, a: float, b: float) -> bool:
    return a > b if sense == "max" else a < b


def _gap(value: float | None, ref: float | None) -> float | None:
    if value is None or ref is None or not math.isfinite(value) or not math.isfinite(ref):
        return None
    return 0.0 if value == ref else abs(ref - value) / abs(value) if value else math.inf


def best_known(rows: list[dict]) -> dict:
    """(instance, objective) -> {"sense", "value", "bound"}: the best over all methods."""
    best: dict = {}
    for r in rows:
        if r.get("objective_name") is None:
            continue
        b = best.setdefault((r["instance"], r["objective_name"]), {"sense": r["sense"], "value": None,
                                                                   "bound": None})
        if r.get("feasible") and r.get("objective") is not None and math.isfinite(r["objective"]):
            if b["value"] is None or _better(r["sense"], r["objective"], b["value"]):
                b["value"] = r["objective"]
        if r.get("bound") is not None and math.isfinite(r["bound"]):
            # the tightest bound: the smallest upper bound (max) or the largest lower bound (min)
            if b["bound"] is None or _better(r["sense"], b["bound"], r["bound"]):
                b["bound"] = r["bound"]
    return best


def _sgm(times: list[float]) -> float | None:
    if not times:
        return None
    return math.exp(sum(math.log(t + SHIFT_S) for t in times) / len(times)) - SHIFT_S


def summarize(rows: list[dict]) -> list[dict]:
    """One row per method with the figures of the module docstring."""
    best = best_known(rows)
    by_method: dict[str, list[dict]] = {}
    for r in rows:
        by_method.setdefault(r["method"], []).append(r)
    table = []
    for method, rs in sorted(by_method.items()):
        solved = [r for r in rs if r.get("feasible") and r.get("objective") is not None]
        to_bound = [g for r in solved
                    if (g := _gap(r["objective"], best[(r["instance"], r["objective_name"])]["bound"])) is not None]
        to_value = [g for r in solved
                    if (g := _gap(r["objective"], best[(r["instance"], r["objective_name"])]["value"])) is not None]
        table.append({
            "method": method, "runs": len(rs), "solved": len(solved),
            "success_rate": len(solved) / len(rs),
            "mean_gap_bound": sum(to_bound) / len(to_bound) if to_bound else None,
            "max_gap_bound": max(to_bound) if to_bound else None,
            "mean_gap_value": sum(to_value) / len(to_value) if to_value else None,
            "sgm_time_s": _sgm([r["solve_s"] for r in rs if r.get("solve_s") is not None]),
            "statuses": {s: sum(1 for r in rs if r["status"] == s) for s in sorted({r["status"] for r in rs})},
        })
    return table


def per_instance(rows: list[dict]) -> list[dict]:
    return [{"instance": i, "objective": o, **b} for (i, o), b in sorted(best_known(rows).items())]


def _fmt(x) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:.4g}"
    if isinstance(x, dict):
        return " ".join(f"{k}:{v}" for k, v in x.items())
    return str(x)


def to_markdown(table: list[dict]) -> str:
    if not table:
        return "(no results)"
    cols = list(table[0])
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(_fmt(r[c]) for c in cols) + " |" for r in table]
    return "\n".join(lines)


def to_csv(table: list[dict]) -> str:
    buf = io.StringIO()
    if table:
        w = csv.DictWriter(buf, fieldnames=list(table[0]))
        w.writeheader()
        for r in table:
            w.writerow({k: json.dumps(v) if isinstance(v, dict) else v for k, v in r.items()})
    return buf.getvalue()


def to_parquet(rows: list[dict], path: str | Path) -> None:
    """Every result as one row of a Parquet file (needs pyarrow)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    flat = [{k: json.dumps(v) if isinstance(v, dict | list) else v for k, v in r.items()} for r in rows]
    pq.write_table(pa.Table.from_pylist(flat), str(path))


def plot(rows: list[dict], folder: str | Path) -> list[Path]:
    """A Dolan-Moré performance profile of time and the distribution of gaps to the best bound."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    best = best_known(rows)
    methods = sorted({r["method"] for r in rows})
    instances = sorted({r["instance"] for r in rows})
    times = {(r["instance"], r["method"]): r["solve_s"] for r in rows
             if r.get("feasible") and r.get("solve_s") is not None}
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for m in methods:
        ratios = []
        for i in instances:
            fastest = min((t for (j, _), t in times.items() if j == i), default=None)
            t = times.get((i, m))
            ratios.append(math.inf if t is None or fastest is None else (t + 1e-3) / (fastest + 1e-3))
        xs = sorted(r for r in ratios if math.isfinite(r))
        if xs:
            ax.step(xs, [(k + 1) / len(instances) for k in range(len(xs))], where="post", label=m)
    ax.set_xscale("log")
    ax.set_xlabel("time / fastest time on the instance")
    ax.set_ylabel("share of instances solved")
    ax.set_title("performance profile (time)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    paths = [folder / "performance_profile.png"]
    fig.savefig(paths[0], dpi=120)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for m in methods:
        gaps = sorted(g for r in rows if r["method"] == m and r.get("feasible") and r.get("objective") is not None
                      if (g := _gap(r["objective"], best[(r["instance"], r["objective_name"])]["bound"]))
                      is not None)
        if gaps:
            ax.step([max(g, 1e-6) for g in gaps], [(k + 1) / len(instances) for k in range(len(gaps))],
                    where="post", label=m)
    ax.set_xscale("log")
    ax.set_xlabel("gap to the best known bound (values below 1e-6 drawn at 1e-6)")
    ax.set_ylabel("share of instances")
    ax.set_title("cumulative distribution of gaps")
    ax.legend(fontsize=8)
    fig.tight_layout()
    paths.append(folder / "gaps.png")
    fig.savefig(paths[1], dpi=120)
    plt.close(fig)
    return paths
