"""DMR's gap, and rigid-optimal's, to the exact optimum on small workloads; and every method's
certified gap on the paper's workloads.

    python benchmarks/malleable_gap.py [--workloads 30] [--jobs 4] [--profile default] [--costs 4 0]
    python benchmarks/malleable_gap.py --paper [--generated 10] [--profile default]

``--paper``: on paper:50, paper:100, paper:200, paper:400 and ``--generated`` workloads of 50
jobs (random:SEED:50, the paper's applications), each method's mean completion time, the
problem's bound (valid for every schedule: the largest of the closed-form, interval LP,
Lagrangian and, up to six jobs, completion-order LP bounds), the certified gap (value - bound) / value, the status,
and wall and CPU seconds;
then, per workload, the best method and its certified gap.

Grid workloads (8 nodes, ladders within 1-2-4, check period 8 s) of ``jobs`` jobs, seeds
0.. ``workloads`` - 1, once per resize cost in ``costs`` (s; the grid's default is 4 s; the
seed's 0.42 s on jobs of ~500 s is closest to 0). Per workload: DMR, rigid FCFS, rigid EASY,
rigid-optimal and CP-SAT (with enough segments to hold DMR's schedule), all through the
evaluator; gaps are to CP-SAT's optimum (optimal for its scope only), and CP-SAT is set
beside the closed-form bound that holds for every schedule. Wall and CPU time of each
setting are printed; other work on the machine inflates wall time.
"""

from __future__ import annotations

import argparse
import json
import time

from iosched.reproduce.malleable import format_gaps, gap_study

PAPER_WORKLOADS = ("paper:50", "paper:100", "paper:200", "paper:400")
METHODS = ("dmr", "rigid-backfill", "rigid-list", "rigid-optimal", "cpsat")


def certified(generated: int, profile: str) -> None:
    from iosched import solve
    from iosched.models.malleable import bounds

    workloads = list(PAPER_WORKLOADS) + [f"random:{seed}:50" for seed in range(generated)]
    print(f"profile {profile} for rigid-optimal and cpsat; bound = the problem's (valid for every schedule)\n")
    print("| workload | bound s | which | method | mean completion s | certified gap | status | wall s | CPU s |")
    print("|---|---|---|---|---|---|---|---|---|")
    best = []
    for spec in workloads:
        rows = []
        for method in METHODS:
            params = {"profile": profile} if method in ("rigid-optimal", "cpsat") else {}
            w, c = time.perf_counter(), time.process_time()
            r = solve("malleable", spec, method, **params)
            wall, cpu = time.perf_counter() - w, time.process_time() - c
            which = bounds(r.instance_data)["mean_completion_from"]
            rows.append((r.objective, method, r.gap))
            value = "-" if r.objective is None else f"{r.objective:.1f}"
            gap = "-" if r.gap is None else f"{r.gap:.1%}"
            print(f"| {spec} | {r.bound:.1f} | {which} | {method} | {value} | {gap} | {r.status.value} | {wall:.1f} "
                  f"| {cpu:.1f} |", flush=True)
        found = [row for row in rows if row[0] is not None]
        best.append((spec, *min(found)))
    print("\n| workload | best method | mean completion s | certified gap |\n|---|---|---|---|")
    for spec, value, method, gap in best:
        print(f"| {spec} | {method} | {value:.1f} | {gap:.1%} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--paper", action="store_true", help="the certified-gap table on the paper's workloads")
    ap.add_argument("--generated", type=int, default=10, help="with --paper: generated 50-job workloads")
    ap.add_argument("--workloads", type=int, default=30)
    ap.add_argument("--jobs", type=int, default=4)
    ap.add_argument("--profile", default="default")
    ap.add_argument("--costs", type=float, nargs="*", default=[4.0, 0.0])
    ap.add_argument("--rows", metavar="FILE", help="also write every workload's row as JSON lines")
    args = ap.parse_args()
    if args.paper:
        certified(args.generated, args.profile)
        return
    for cost in args.costs:
        w, c = time.perf_counter(), time.process_time()
        rows = gap_study(args.workloads, args.jobs, args.profile, reconfig_s=cost)
        wall, cpu = time.perf_counter() - w, time.process_time() - c
        print(f"\n### {args.workloads} grid workloads of {args.jobs} jobs, resize cost {cost:g} s "
              f"(profile {args.profile}; {wall:.0f} s wall, {cpu:.0f} s CPU)\n")
        print(format_gaps(rows))
        print(f"\nCP-SAT solve time: max {max(r['cpsat_s'] for r in rows):.1f} s; all schedules feasible: "
              f"{all(r['feasible'] for r in rows)}", flush=True)
        if args.rows:
            with open(args.rows, "a") as f:
                for r in rows:
                    f.write(json.dumps({"reconfig_s": cost, **r}) + "\n")


if __name__ == "__main__":
    main()
