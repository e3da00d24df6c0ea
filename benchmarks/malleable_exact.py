"""malleable/exact (every schedule) on the library's grid instances and on random 3-job grid workloads.

    python benchmarks/malleable_exact.py [--library grid3-0,grid6-4,...] [--seeds 0-20] [--profile default]

Per instance: the status, the value (mean completion, s), exact's bound (valid for every schedule) and
their exact relative gap, the library's best known beside them, where the start came from (cpsat,
rigid-list or dmr) and what the search did (tuples of skeletons solved, partial tuples, branch and bound
nodes, LPs), the method's wall and CPU time, and the load average before and after. The problem's bound
is not attached (it is the LP relaxations', far below; exact's own bound is the result's). Wall time
grows with the machine's load; the CPU time is the method's own (one thread).
"""

from __future__ import annotations

import argparse
import os
import platform
from datetime import UTC, datetime

from iosched import library
from iosched.core import solve

GRID = ["grid3-0", "grid3-1", "grid3-2", "grid3-3", "grid3-4", "grid4-0", "grid4-1", "grid4-2", "grid4-3",
        "grid4-4", "grid4-5", "grid4-6", "grid4-7", "grid6-0", "grid6-1", "grid6-2", "grid6-3", "grid6-4"]


def _seeds(text: str) -> list[int]:
    if not text:
        return []
    lo, _, hi = text.partition("-")
    return list(range(int(lo), int(hi or lo) + 1))


def _best_known(name: str) -> float | None:
    """The library's best known value of ``malleable/NAME`` (None where it has none)."""
    return library.summary("malleable").get(f"malleable/{name}", {}).get("best_known")


def _cpu() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def row(spec: str, profile: str, known: float | None) -> str:
    before = os.getloadavg()[0]
    res = solve("malleable", spec, "exact", attach_bound=False, profile=profile)
    after = os.getloadavg()[0]
    i = res.info
    value = "-" if res.objective is None else f"{res.objective:.6f}"
    bound = "-" if i.get("model_bound") is None else f"{i['model_bound']:.6f}"
    gap = "-" if i.get("exact_gap") is None else f"{i['exact_gap']:.2g}"
    start = i.get("start", {})
    return (f"| {spec} | {res.status.value} | {value} | {bound} | {gap} | {'-' if known is None else f'{known:.6f}'} "
            f"| {start.get('heuristic', '-')} {start.get('value', 0):.4f} | {i.get('tuples', '-')} | "
            f"{i.get('partial', '-')} | {i.get('nodes', '-')} | {i.get('lps', '-')} | {res.method_time_s:.1f} | "
            f"{res.method_cpu_s:.1f} | {before:.1f} / {after:.1f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--library", default=",".join(GRID), help="library names (malleable/...), comma-separated")
    ap.add_argument("--seeds", default="0-20", help="random:S:3:grid seeds, as A-B (empty: none)")
    ap.add_argument("--profile", default="default")
    args = ap.parse_args()
    print(f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {os.cpu_count()} cores ({_cpu()}), "
          f"profile {args.profile}\n")
    print("| instance | status | value | bound | gap | best known | start | tuples | partial | nodes | LPs | wall s "
          "| CPU s | load before / after |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name in [n for n in args.library.split(",") if n]:
        print(row(f"lib:malleable/{name}", args.profile, _best_known(name)), flush=True)
    for seed in _seeds(args.seeds):
        print(row(f"random:{seed}:3:grid", args.profile, None), flush=True)


if __name__ == "__main__":
    main()
