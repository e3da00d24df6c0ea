"""trace-compact against persched-compact on the paper's sets 1-10: value, gap to the LP bound, time, by budget.

    python benchmarks/periodic_finder.py [--budgets 5 10 30] [--sets 2 4]

Each budget is trace-compact's whole time limit per set (a solver profile of that many
seconds). The machine's load changes how many windows fit in a budget: compare within one
run, not across machines.
"""

from __future__ import annotations

import argparse

import iosched
from iosched.instances.periodic import paper_set
from iosched.models.periodic import longrun_bound
from iosched.solvers import Profile


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budgets", type=float, nargs="+", default=[5.0, 10.0, 30.0])
    ap.add_argument("--sets", type=int, nargs="+", default=list(range(1, 11)))
    args = ap.parse_args()
    iosched.solve("periodic", paper_set(9), "trace-compact", profile="quick")  # warm-up: imports, JIT caches
    per_budget = " | ".join(f"trace-compact {b:g} s | gap | s | windows" for b in args.budgets)
    print(f"| set | persched-compact | s | {per_budget} |")
    print("|---" * (3 + 4 * len(args.budgets)) + "|")
    for k in args.sets:
        inst = paper_set(k)
        lp = longrun_bound(inst, "sys_efficiency")
        base = iosched.solve("periodic", inst, "persched-compact")
        cells = [f"{k}", f"{base.objective:.6f}", f"{base.wall_time_s:.1f}"]
        for budget in args.budgets:
            res = iosched.solve("periodic", inst, "trace-compact", profile=Profile("bench", budget, 1e-4, 1, 0))
            assert res.evaluation.feasible
            cells += [f"{res.objective:.6f}", f"{(lp - res.objective) / lp:.3%}", f"{res.wall_time_s:.1f}",
                      f"{res.info['compacted']}"]
        print("| " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
