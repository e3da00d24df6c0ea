"""The free (fluid) problem's search (iosched.models.malleable_fluid) on library instances, beside the Lagrangian.

    python benchmarks/malleable_fluid.py [--library paper10-0,paper10-1,paper10-2,paper-50] [--time-limit 600]

Per instance: the search's bound on the mean completion (valid for every schedule), whether it closed (then the
bound is the free optimum, shaded by 1e-6), the best complete order's free value, nodes expanded, LPs, wall and
CPU time; the Lagrangian bound (its own 20 s); the library's best known and its gap against the larger of the two
bounds; the load average before and after. Wall time grows with the machine's load; CPU time is the search's own
(one thread).
"""

from __future__ import annotations

import argparse
import os
import time
from datetime import UTC, datetime

import iosched
from iosched import library
from iosched.models.malleable_fluid import search
from iosched.models.malleable_lp import lagrangian_bound
from iosched.solvers import Deadline

PAPER = ["paper10-0", "paper10-1", "paper10-2", "paper-50"]


def fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def row(name: str, seconds: float) -> str:
    inst = iosched.load_instance("malleable", f"lib:malleable/{name}")
    known = library.summary("malleable").get(f"malleable/{name}", {}).get("best_known")
    before = os.getloadavg()[0]
    cpu = time.process_time()
    found = search(inst, Deadline(seconds))
    cpu = time.process_time() - cpu
    after = os.getloadavg()[0]
    lagrangian = lagrangian_bound(inst)
    best = max(b for b in (found.bound, lagrangian, -1.0) if b is not None)
    gap = "-" if known is None else f"{(known - best) / known:.2%}"
    return (f"| {name} | {fmt(found.bound)} | {'closed' if found.complete else 'open'} | {fmt(found.best)} | "
            f"{found.nodes} | {found.lps} | {found.seconds:.1f} | {cpu:.1f} | {fmt(lagrangian)} | {fmt(known)} | "
            f"{gap} | {before:.1f} / {after:.1f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--library", default=",".join(PAPER), help="library names (malleable/...), comma-separated")
    ap.add_argument("--time-limit", type=float, default=600.0, help="s of search per instance")
    args = ap.parse_args()
    print(f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {os.cpu_count()} cores, {args.time_limit:g} s per instance\n")
    print("| instance | bound | search | best free | nodes | LPs | wall s | CPU s | Lagrangian | best known | "
          "gap (best known vs larger bound) | load before / after |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name in [n for n in args.library.split(",") if n]:
        print(row(name, args.time_limit), flush=True)


if __name__ == "__main__":
    main()
