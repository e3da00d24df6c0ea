"""DMR's gap, and rigid-optimal's, to the exact optimum on small workloads (the issue's closing figure).

    python benchmarks/malleable_gap.py [--workloads 30] [--jobs 4] [--profile default] [--costs 4 0]

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

from iosched.harness.malleable import format_gaps, gap_study


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workloads", type=int, default=30)
    ap.add_argument("--jobs", type=int, default=4)
    ap.add_argument("--profile", default="default")
    ap.add_argument("--costs", type=float, nargs="*", default=[4.0, 0.0])
    ap.add_argument("--rows", metavar="FILE", help="also write every workload's row as JSON lines")
    args = ap.parse_args()
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
