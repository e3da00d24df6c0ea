"""Merge a results directory into gap tables and plots.

For each instance and objective, the best known bound is the tightest bound any result
proved, and the best known value the best feasible objective any method reached (for a library
instance, ``lib:NAME``, the library's recorded best known and bound count too). One row
per **configuration** (a method and its parameters, profile included: ``exact[engine=milp]``;
the seeds of one configuration are its runs): runs and distinct seeds, runs solved (a
feasible answer), mean, spread (standard deviation of the per-seed means, so the spread is
the seeds' and not the instances') and max of the gap to the best bound, mean gap to the best
value (both blank for runs whose problem says the objective's gap means nothing for them:
``objective_gap`` False, e.g. a window method that returns one decision, not a front),
success rate, runs starved of CPU (see
:mod:`iosched.harness.runner`), the shifted geometric mean of the time (shift 1 s), and the
mean of the problem's own columns (``Problem.report_columns``: for ``window`` the decision's
node and burst-buffer loss against the exact decision and the share of dominated decisions).
Gaps are ``|reference - value| / |value|``.
"""

from __future__ import annotations

import csv
import io
import json
import math
import statistics
from pathlib import Path

SHIFT_S = 1.0


def load_results(out: str | Path, skipped: list[Path] | None = None, reasons: dict[Path, str] | None = None) \
        -> list[dict]:
    """Every result that holds: read, checked and its solution scored again by the problem's evaluator, its
    bound not beaten by a value of the folder (:mod:`iosched.harness.records`). The paths of the others go to
    ``skipped``, and why to ``reasons``."""
    from iosched.harness.records import load_checked

    paths = sorted(Path(out, "results").glob("[!.]*.json"))  # (a write in progress is a dot file)
    good, bad = load_checked(paths)
    if skipped is not None:
        skipped.extend(p for p in paths if p in bad)
    if reasons is not None:
        reasons.update(bad)
    return [good[p] for p in paths if p in good]


def _better(sense: str, a: float, b: float) -> bool:
    return a > b if sense == "max" else a < b


def _gap(value: float | None, ref: float | None) -> float | None:
    if value is None or ref is None or not math.isfinite(value) or not math.isfinite(ref):
        return None
    return 0.0 if value == ref else abs(ref - value) / abs(value) if value else math.inf


def best_known(rows: list[dict]) -> dict:
    """(instance, objective) -> {"sense", "value", "bound"}: the best over all methods, and for a library
    instance (``lib:NAME``) over its recorded best known and bound too (iosched.library)."""
    best: dict = {}
    for r in rows:
        if r.get("objective_name") is None:
            continue
        key = (r["instance"], r["objective_name"])
        if key not in best:
            best[key] = {"sense": r["sense"], "value": None, "bound": None}
            if r["instance"].startswith("lib:"):
                from iosched import library

                e = library.entry(r["instance"][4:], r["problem"])
                if e.objective == r["objective_name"]:
                    rec = library.summary(e.problem)[e.name]
                    best[key].update(value=rec["best_known"], bound=rec["bound"])
        b = best[key]
        if r.get("feasible") and r.get("objective") is not None and math.isfinite(r["objective"]):
            if b["value"] is None or _better(r["sense"], r["objective"], b["value"]):
                b["value"] = r["objective"]
        if r.get("bound") is not None and math.isfinite(r["bound"]):
            # the tightest bound: the smallest upper bound (max) or the largest lower bound (min)
            if b["bound"] is None or _better(r["sense"], b["bound"], r["bound"]):
                b["bound"] = r["bound"]
    return best


def config(record: dict) -> str:
    """A result's configuration label: its method and parameters (``exact[engine=milp,profile=quick]``)."""
    params = record.get("params") or {}
    if not params:
        return record["method"]
    text = ",".join(f"{k}={v if isinstance(v, str) else json.dumps(v)}" for k, v in sorted(params.items()))
    return f"{record['method']}[{text}]"


def _sgm(times: list[float]) -> float | None:
    if not times:
        return None
    return math.exp(sum(math.log(t + SHIFT_S) for t in times) / len(times)) - SHIFT_S


def summarize(rows: list[dict]) -> list[dict]:
    """One row per configuration with the figures of the module docstring."""
    best = best_known(rows)
    by_config: dict[str, list[dict]] = {}
    for r in rows:
        by_config.setdefault(config(r), []).append(r)
    table = []
    for label, rs in sorted(by_config.items()):
        solved = [r for r in rs if r.get("feasible") and r.get("objective") is not None]
        gapped = [r for r in solved if (r.get("columns") or {}).get("objective_gap") is not False]
        to_bound = [(r.get("seed"), g) for r in gapped
                    if (g := _gap(r["objective"], best[(r["instance"], r["objective_name"])]["bound"])) is not None]
        to_value = [g for r in gapped
                    if (g := _gap(r["objective"], best[(r["instance"], r["objective_name"])]["value"])) is not None]
        table.append({
            "config": label, "method": rs[0]["method"], "runs": len(rs),
            "seeds": len({r.get("seed") for r in rs}), "solved": len(solved),
            "success_rate": len(solved) / len(rs),
            "mean_gap_bound": sum(g for _, g in to_bound) / len(to_bound) if to_bound else None,
            "sd_gap_bound": _spread(to_bound),
            "max_gap_bound": max(g for _, g in to_bound) if to_bound else None,
            "mean_gap_value": sum(to_value) / len(to_value) if to_value else None,
            "sgm_time_s": _sgm([r["solve_s"] for r in rs if r.get("solve_s") is not None]),
            "starved": sum(1 for r in rs if r.get("starved")),
            "statuses": {s: sum(1 for r in rs if r["status"] == s) for s in sorted({r["status"] for r in rs})},
            **_columns(rs),
        })
    keys = list(dict.fromkeys(k for row in table for k in row))  # one set of columns for every row (CSV)
    return [{k: row.get(k) for k in keys} for row in table]


def _spread(gaps: list[tuple[object, float]]) -> float | None:
    """Standard deviation over the seeds of the mean gap per seed ((seed, gap) pairs; finite gaps only);
    None with fewer than two seeds."""
    per_seed: dict[object, list[float]] = {}
    for seed, g in gaps:
        if math.isfinite(g):
            per_seed.setdefault(seed, []).append(g)
    means = [sum(v) / len(v) for v in per_seed.values()]
    return statistics.stdev(means) if len(means) > 1 else None


def _columns(rows: list[dict]) -> dict:
    """The problem's own report columns (``Problem.report_columns``, in each record's ``columns``):
    their mean over the configuration's runs that have them (a yes/no column as a share)."""
    values: dict[str, list[float]] = {}
    for r in rows:
        for key, value in (r.get("columns") or {}).items():
            if key == "objective_gap":  # said by the gap columns being blank
                continue
            values.setdefault(key, []).append(float(value))
    return {f"mean_{key}": sum(v) / len(v) for key, v in values.items()}


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

    from iosched.files import atomic_path

    flat = [{k: json.dumps(v) if isinstance(v, dict | list) else v for k, v in r.items()} for r in rows]
    with atomic_path(path) as tmp:  # whole or not at all, with the umask's mode, never through a symlink
        pq.write_table(pa.Table.from_pylist(flat), str(tmp))


def curves(rows: list[dict]) -> dict[str, dict[str, tuple[list[float], list[float]]]]:
    """The plots' data: per configuration, the performance profile of time (x: time over the
    fastest configuration's on the instance, mean over seeds; y: share of the instances) and
    the cumulative distribution of gaps to the best bound (y: share of the configuration's
    runs). Every share lies in [0, 1]."""
    best = best_known(rows)
    labels = sorted({config(r) for r in rows})
    instances = sorted({r["instance"] for r in rows})
    times: dict[tuple[str, str], list[float]] = {}
    for r in rows:
        if r.get("feasible") and r.get("solve_s") is not None:
            times.setdefault((r["instance"], config(r)), []).append(r["solve_s"])
    mean = {k: sum(v) / len(v) for k, v in times.items()}
    out: dict[str, dict] = {"time": {}, "gap": {}}
    for c in labels:
        ratios = []
        for i in instances:
            fastest = min((t for (j, _), t in mean.items() if j == i), default=None)
            t = mean.get((i, c))
            if t is not None and fastest is not None:
                ratios.append((t + 1e-3) / (fastest + 1e-3))
        xs = sorted(ratios)
        if xs:
            out["time"][c] = (xs, [(k + 1) / len(instances) for k in range(len(xs))])
        runs = [r for r in rows if config(r) == c]
        gaps = sorted(g for r in runs if r.get("feasible") and r.get("objective") is not None
                      if (g := _gap(r["objective"], best[(r["instance"], r["objective_name"])]["bound"]))
                      is not None)
        if gaps:
            out["gap"][c] = ([max(g, 1e-6) for g in gaps], [(k + 1) / len(runs) for k in range(len(gaps))])
    return out


def plot(rows: list[dict], folder: str | Path) -> list[Path]:
    """A Dolan-Moré performance profile of time and the distribution of gaps to the best bound,
    one line per configuration (:func:`curves`); a configuration without a finished run is
    named in the legend as such rather than left out."""
    from iosched.errors import OutputError
    from iosched.plots import figure, finish

    folder = Path(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise OutputError(f"cannot make the plots' folder {str(folder)!r}: {e.strerror or e}") from None
    data = curves(rows)
    labels = sorted({config(r) for r in rows})
    paths = []
    for kind, xlabel, ylabel, title, name in (
            ("time", "time / fastest time on the instance", "share of instances solved", "performance profile (time)",
             "performance_profile.png"),
            ("gap", "gap to the best known bound (values below 1e-6 drawn at 1e-6)", "share of the runs",
             "cumulative distribution of gaps", "gaps.png")):
        fig, ax = figure(figsize=(7, 4.5))
        for c in labels:
            if c in data[kind]:
                xs, ys = data[kind][c]
                ax.step(xs, ys, where="post", label=c)
            else:
                ax.plot([], [], label=f"{c}: no feasible run")
        ax.set_xscale("log")
        ax.set_ylim(0, 1.02)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.legend(fontsize=7)
        paths.append(folder / name)
        finish(fig, paths[-1])
    return paths
