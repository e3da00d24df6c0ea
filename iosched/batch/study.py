"""The paper's comparison (Section 4): every window method on the S1-S4 mixes, four metrics each
(with the SSD mixes S5-S7 of Section 6, SSD usage and wasted SSD too).

Workloads: a slice of the Theta log (WFP, as the paper's Theta runs) or a generated trace
(FCFS, as its Cori runs), each with a mix; all methods with EASY backfilling, window 20,
starvation bound 50. ``base`` is the base scheduler alone (start in priority order until
the first job that does not fit: the paper's naive baseline without a window).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from iosched import validate
from iosched.batch.metrics import breakdown, summary
from iosched.batch.simulator import simulate
from iosched.batch.workload import THETA_NODES, Trace, apply_mix, generate, read_swf
from iosched.errors import InstanceError, ParameterError

THETA_PLACE = "../shared/data/theta-2022.swf"  # beside the checkout (the repository root's parent holds shared/)
# (label, window method or None, its parameters): the paper's eight methods, first-fit and the exact front
METHODS = [("base", None, {}), ("naive", "naive", {}), ("first-fit", "first-fit", {}),
           ("bin-packing", "bin-packing", {}),
           ("weighted", "weighted", {"node_weight": 0.5}), ("weighted-cpu", "weighted", {"node_weight": 0.8}),
           ("weighted-bb", "weighted", {"node_weight": 0.2}), ("constrained-cpu", "constrained-cpu", {}),
           ("constrained-bb", "constrained-bb", {}), ("exact", "exact", {}), ("bbsched-ga", "bbsched-ga", {}),
           ("nsga2", "nsga2", {}), ("nsga2-g50", "nsga2", {"generations": 50})]  # G = 500 takes ~20 s a call here
CHEAP = [m for m in METHODS if m[1] not in ("bbsched-ga", "nsga2")]


def workload(kind: str, mix: str, jobs: int, seed: int = 0, theta: str | Path | None = None) -> tuple[Trace, str]:
    """(trace, base policy): ``theta`` (the first ``jobs`` jobs of the log) or ``generated``, with ``mix``."""
    validate.choice("kind", kind, ("theta", "generated"), error=ParameterError)
    if kind == "theta":
        path = Path(theta) if theta is not None else theta_log()
        return apply_mix(read_swf(path, nodes=THETA_NODES).head(jobs), mix, seed=seed), "wfp"
    return apply_mix(generate(seed, jobs=jobs), mix, seed=seed), "fcfs"


def theta_log() -> Path:
    """The Theta log: $IOSCHED_THETA_LOG, or ../shared/data/theta-2022.swf beside the repository."""
    repo = Path(__file__).resolve().parents[2]
    named = os.environ.get("IOSCHED_THETA_LOG")
    place = Path(named) if named else repo / THETA_PLACE
    if place.is_file():
        return place
    where = "IOSCHED_THETA_LOG names" if named else "the Theta log is not at"
    raise InstanceError(f"{where} {place}, which is not a file: set IOSCHED_THETA_LOG to the log's path")


def run(kinds=("theta", "generated"), mixes=("S1", "S2", "S3", "S4"), methods=CHEAP, jobs: int = 2000,
        seed: int = 0, theta: str | Path | None = None, log: Callable[[str], None] | None = None,
        breakdowns: dict[str, tuple] | None = None) -> list[dict]:
    """One row per workload and method: the four metrics, plug-in calls and time; with ``breakdowns``
    (``by`` -> bin edges, as :func:`iosched.batch.metrics.breakdown`) the average wait per bin too."""
    rows = []
    for kind in kinds:
        for mix in mixes:
            trace, policy = workload(kind, mix, jobs, seed, theta)
            for label, window, params in methods:
                res = simulate(trace, policy=policy, window=window, params=params)
                s = summary(res)
                rows.append({"workload": f"{kind}-{mix}", "method": label, "node_usage": s["node_usage"],
                             "bb_usage": s["bb_usage"], "avg_wait_s": s["avg_wait_s"],
                             "avg_bounded_slowdown": s["avg_bounded_slowdown"], "forced": s["forced"],
                             "plugin_calls": s["plugin_calls"], "plugin_time_s": s["plugin_time_s"],
                             "wall_time_s": s["wall_time_s"], "jobs": len(trace)})
                if "ssd_usage" in s:
                    rows[-1].update(ssd_usage=s["ssd_usage"], wasted_ssd=s["wasted_ssd"])
                if breakdowns:
                    rows[-1]["breakdowns"] = {by: breakdown(res, by, bins=bins) for by, bins in breakdowns.items()}
                if log is not None:
                    log(f"{kind}-{mix} {label}: nodes {s['node_usage']:.3f} BB {s['bb_usage']:.3f} "
                        f"wait {s['avg_wait_s']:.0f} s slowdown {s['avg_bounded_slowdown']:.2f} "
                        f"({s['wall_time_s']:.1f} s)")
    return rows


def table(rows: list[dict]) -> str:
    """Markdown: per workload and method the four metrics, and the wait change against ``base``."""
    base = {r["workload"]: r for r in rows if r["method"] == "base"}
    lines = ["| workload | method | node usage | BB usage | avg wait (h) | wait vs base | avg bounded slowdown |"
             " forced | plug-in s |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        b = base.get(r["workload"])
        change = f"{r['avg_wait_s'] / b['avg_wait_s'] - 1:+.1%}" if b and b["avg_wait_s"] > 0 else "-"
        lines.append(f"| {r['workload']} | {r['method']} | {r['node_usage']:.1%} | {r['bb_usage']:.1%} | "
                     f"{r['avg_wait_s'] / 3600:.2f} | {change} | {r['avg_bounded_slowdown']:.2f} | {r['forced']} | "
                     f"{r['plugin_time_s']:.1f} |")
    return "\n".join(lines)


def findings(rows: list[dict]) -> list[str]:
    """The paper's claims checked per workload: best BB usage, worst BB usage, weakest overall, wait reduction."""
    from iosched.batch.plots import kiviat_values

    out = []
    for wl in dict.fromkeys(r["workload"] for r in rows):
        here = {r["method"]: r for r in rows if r["workload"] == wl}
        best_bb = max(here, key=lambda m: here[m]["bb_usage"])
        worst_bb = min((m for m in here if m != "base"), key=lambda m: here[m]["bb_usage"])
        area = {m: sum(v) for m, v in kiviat_values(here).items()}
        weakest = min((m for m in area if m != "base"), key=area.__getitem__)
        base = here.get("base")
        change = {m: here[m]["avg_wait_s"] / base["avg_wait_s"] - 1 for m in here if base and m != "base"}
        top = min(change, key=change.__getitem__) if change else "-"
        out.append(f"{wl}: best BB usage {best_bb} ({here[best_bb]['bb_usage']:.1%}); worst BB usage "
                   f"(window methods) {worst_bb} ({here[worst_bb]['bb_usage']:.1%}); weakest overall (Kiviat sum, "
                   f"window methods) {weakest}; lowest average wait {top} "
                   f"({change.get(top, float('nan')):+.1%} against base)")
    return out
