"""The time-indexed MILP (HiGHS) against CP-SAT on small workloads: the same optimum where both prove one.

    python benchmarks/malleable_crosscheck.py [--workloads 10] [--jobs 3] [--segments 5] [--profile default]

Grid workloads (resize cost 4 s, and 0 s) of ``jobs`` jobs. CP-SAT gets ``segments``
segments per job; the MILP has no segment limit, so its optimum is at most CP-SAT's and
equal when the MILP's optimal schedule uses at most ``segments`` segments. Wall and CPU
time of each solve, measured in this run (other work on the machine inflates wall time).
"""

from __future__ import annotations

import argparse
import time

from iosched.core import solve
from iosched.instances.malleable_presets import generate


def timed(*args, **kw):
    w, c = time.perf_counter(), time.process_time()
    r = solve(*args, **kw)
    return r, time.perf_counter() - w, time.process_time() - c


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workloads", type=int, default=10)
    ap.add_argument("--jobs", type=int, default=3)
    ap.add_argument("--segments", type=int, default=5)
    ap.add_argument("--profile", default="default")
    args = ap.parse_args()
    print("| cost s | seed | CP-SAT | status | wall s | CPU s | MILP | status | wall s | CPU s | MILP segments "
          "| agree |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    agree = both = 0
    for cost in (4.0, 0.0):
        for seed in range(args.workloads):
            inst = generate(seed, args.jobs, "grid", reconfig_s=cost)
            cp, cw, cc = timed("malleable", inst, "cpsat", segments=args.segments, profile=args.profile)
            mi, mw, mc = timed("malleable", inst, "milp", profile=args.profile)
            runs = max(sum(iv.kind == "run" for iv in ivs) for ivs in mi.solution.jobs.values()) if mi.solution else 0
            proved = cp.info["model_status"] == mi.info["model_status"] == "optimal"
            same = proved and abs(cp.objective - mi.objective) <= 1e-6
            both += proved
            agree += same
            print(f"| {cost:g} | {seed} | {cp.objective:.4f} | {cp.info['model_status']} | {cw:.1f} | {cc:.1f} | "
                  f"{'-' if mi.objective is None else f'{mi.objective:.4f}'} | {mi.info['model_status']} | {mw:.1f} | "
                  f"{mc:.1f} | {runs} | {same if proved else '-'} |", flush=True)
    print(f"\nBoth proved optimal on {both} workloads; equal values on {agree} of them.")


if __name__ == "__main__":
    main()
