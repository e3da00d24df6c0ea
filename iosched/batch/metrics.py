"""The paper's four metrics (Section 4.2), their breakdowns, and the per-job records.

The measured period is the submit span of the trace less a warm-up at its start and a
cool-down at its end (the paper: half a month each of five months, i.e. 10 % each; the
default here is 10 % of the submit span each). Over that period [lo, hi]:

* node usage: node-seconds of job execution inside [lo, hi] over nodes x (hi - lo);
* burst buffer usage: the same with the jobs' burst buffer (GB-seconds) over the whole
  burst buffer capacity (a persistent reservation is not counted as used);
* average wait (s) and average bounded slowdown, max(1, (wait + run) / max(run, 10 s)),
  of the jobs submitted in [lo, hi]. The 10 s bound stands in for the paper's filtering
  of "abnormal jobs" that end at once (Feitelson's usual bound);
* with SSD classes (the paper's Section 6), SSD usage: the jobs' requested SSD (GB per node x
  nodes) over the machine's SSD, and wasted SSD: the SSD of their nodes beyond the request over
  the machine's SSD, both GB-seconds inside [lo, hi].
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from iosched import validate
from iosched.batch.simulator import SimResult
from iosched.errors import ParameterError
from iosched.files import atomic_path, write_text

SLOWDOWN_BOUND = 10  # s: run times below it count as 10 s in the bounded slowdown
SIZE_BINS = (1, 129, 257, 513, 1025, 10**9)  # nodes: [1,128], [129,256], [257,512], [513,1024], > 1024
BB_BINS = (0, 1, 50_000, 100_000, 200_000, 10**18)  # GB: none, < 50 TB, 50-100, 100-200, > 200 TB
RUN_BINS = (0, 3600, 3 * 3600, 6 * 3600, 12 * 3600, 10**12)  # s


def period(result: SimResult, warmup: float = 0.1, cooldown: float = 0.1) -> tuple[float, float]:
    """[lo, hi] (s): the submit span less ``warmup`` and ``cooldown`` shares of it at each end."""
    validate.number("warmup", warmup, 0, 1, error=ParameterError)
    validate.number("cooldown", cooldown, 0, 1, error=ParameterError)
    if warmup + cooldown >= 1:
        raise ParameterError(f"warmup + cooldown must leave part of the trace, got {warmup} + {cooldown}")
    ran = result.start >= 0
    sub = result.trace.submit[ran]
    first, last = float(sub.min()), float(sub.max())
    span = max(last - first, 1.0)
    return first + warmup * span, last - cooldown * span


def _usage(result: SimResult, amount: np.ndarray, capacity: int, lo: float, hi: float) -> float:
    ran = result.start >= 0
    inside = np.clip(np.minimum(result.end, hi) - np.maximum(result.start, lo), 0, None)
    return float(np.sum(amount[ran] * inside[ran]) / (capacity * (hi - lo))) if capacity and hi > lo else 0.0


def _measured(result: SimResult, lo: float, hi: float) -> np.ndarray:
    sub = result.trace.submit
    return (result.start >= 0) & (sub >= lo) & (sub <= hi)


def waits(result: SimResult) -> np.ndarray:
    return (result.start - result.trace.submit).astype(float)


def slowdowns(result: SimResult) -> np.ndarray:
    run = (result.end - result.start).astype(float)
    return np.maximum(1.0, (waits(result) + run) / np.maximum(run, SLOWDOWN_BOUND))


MIN_MEASURED = 30  # jobs: a measured period with fewer is reported with a warning


def summary(result: SimResult, warmup: float = 0.1, cooldown: float = 0.1) -> dict[str, Any]:
    """Node usage, BB usage (shares), average wait (s) and bounded slowdown over the measured period
    (with SSD classes also ``ssd_usage`` and ``wasted_ssd``, shares of the machine's SSD);
    ``offered_load`` the jobs' node-seconds (and burst-buffer GB-seconds) over the machine's in
    the submit span, and
    ``warnings`` where the figures need context (few jobs measured, an offered load over 1)."""
    lo, hi = period(result, warmup, cooldown)
    t = result.trace
    keep = _measured(result, lo, hi)
    out: dict[str, Any] = {
        "node_usage": _usage(result, t.job_nodes, t.nodes, lo, hi),
        "bb_usage": _usage(result, t.burst_buffer, t.bb_capacity, lo, hi),
        "avg_wait_s": float(waits(result)[keep].mean()) if keep.any() else float("nan"),
        "avg_bounded_slowdown": float(slowdowns(result)[keep].mean()) if keep.any() else float("nan"),
        "jobs_measured": int(keep.sum()), "jobs": len(t), "left_out": len(result.left_out),
        "clipped": result.clipped, "forced": result.forced, "period_s": [lo, hi],
        "plugin_calls": result.plugin_calls, "plugin_time_s": result.plugin_time_s,
        "plugin_generations": result.info.get("plugin_generations"),
        "wall_time_s": result.wall_time_s}
    if result.wasted_ssd is not None:  # exactly when the run had SSD classes (SimResult checks it)
        total = sum(a * b for a, b in result.ssd_classes)
        out["ssd_usage"] = _usage(result, t.ssd_per_node * t.job_nodes, total, lo, hi)
        out["wasted_ssd"] = _usage(result, result.wasted_ssd, total, lo, hi)
    span = float(t.submit.max() - t.submit.min())
    run = t.run.astype(float)
    offered: dict[str, float | None] = {
        "nodes": float((t.job_nodes * run).sum()) / (t.nodes * span) if span else None,
        "burst_buffer": float((t.burst_buffer * run).sum()) / (t.bb_capacity * span)
        if span and t.bb_capacity else None}
    warnings: list[str] = []
    out["offered_load"], out["warnings"] = offered, warnings
    if out["jobs_measured"] < min(MIN_MEASURED, len(t)):
        warnings.append(f"{out['jobs_measured']} of {len(t)} jobs were submitted in the measured period "
                        f"[{lo:.6g}, {hi:.6g}] s (the submit span less the warm-up and cool-down shares): "
                        f"averages over fewer than {MIN_MEASURED} jobs say little")
    for what, load in offered.items():
        if load is not None and load > 1:
            warnings.append(f"the trace asks for {load:.2f} x the machine's {what.replace('_', ' ')} over "
                            f"its submit span: the queue grows while jobs arrive, and waits grow with the "
                            f"trace's length")
    return out


def breakdown(result: SimResult, by: str, warmup: float = 0.1, cooldown: float = 0.1,
              bins: tuple | None = None) -> list[dict]:
    """Average wait (s) and job count per bin of ``by``: ``nodes``, ``burst_buffer`` (GB) or ``run`` (s);
    ``bins`` (increasing edges, each bin [a, b)) replaces the default edges of ``by``."""
    validate.choice("by", by, ("nodes", "burst_buffer", "run"), error=ParameterError)
    lo, hi = period(result, warmup, cooldown)
    keep = _measured(result, lo, hi)
    t = result.trace
    values, default = {"nodes": (t.job_nodes, SIZE_BINS), "burst_buffer": (t.burst_buffer, BB_BINS),
                       "run": (result.end - result.start, RUN_BINS)}[by]
    bins = default if bins is None else bins
    w = waits(result)
    rows = []
    for a, b in zip(bins[:-1], bins[1:]):
        mask = keep & (values >= a) & (values < b)
        rows.append({"bin": f"[{a}, {b})" if b < bins[-1] else f">= {a}", "jobs": int(mask.sum()),
                     "avg_wait_s": float(w[mask].mean()) if mask.any() else float("nan")})
    return rows


def utilisation_over_time(result: SimResult, points: int = 200) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Times (s) and the node and BB utilisation (shares) in use at each."""
    validate.integer("points", points, 2, error=ParameterError)
    ran = result.start >= 0
    s, e = result.start[ran], result.end[ran]
    times = np.linspace(float(s.min()), float(e.max()), points)
    t = result.trace
    active = (s[None, :] <= times[:, None]) & (times[:, None] < e[None, :])
    used_n = active @ t.job_nodes[ran] / t.nodes
    used_b = active @ t.burst_buffer[ran] / t.bb_capacity if t.bb_capacity else np.zeros(points)
    return times, used_n, used_b


def job_records(result: SimResult) -> dict[str, np.ndarray]:
    """Per-job columns: job_id, submit, start, end, nodes, burst_buffer (GB), requested_time, wait (s);
    with SSD classes also ssd_per_node and wasted_ssd (GB)."""
    t = result.trace
    cols = {"job_id": t.ids, "submit": t.submit, "start": result.start, "end": result.end, "nodes": t.job_nodes,
            "burst_buffer": t.burst_buffer, "requested_time": t.requested_time, "wait": result.start - t.submit}
    if result.wasted_ssd is not None:  # exactly when the run had SSD classes
        cols.update(ssd_per_node=t.ssd_per_node, wasted_ssd=result.wasted_ssd)
    return cols


def write_records(result: SimResult, path: str | Path) -> Path:
    """The per-job records as CSV, or Parquet when ``path`` ends in .parquet (pyarrow)."""
    path = Path(path)
    cols = job_records(result)
    if path.suffix == ".parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        with atomic_path(path) as tmp:
            pq.write_table(pa.table({k: np.asarray(v) for k, v in cols.items()}), tmp)
        return path
    rows = np.column_stack([np.asarray(v, dtype=np.int64) for v in cols.values()])
    lines = [",".join(cols)] + [",".join(map(str, r)) for r in rows.tolist()]
    return write_text(path, "\n".join(lines) + "\n")
