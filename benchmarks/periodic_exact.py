"""periodic/exact on the paper's sets and the library's small instances, under the period cap K' t_min.

    python benchmarks/periodic_exact.py [--specs paper:set7 lib:periodic/small-0 ...] [--limit 600]
                                        [--json out.json]

Per instance: the number of applications, which leaves exact can solve (peak within B, one contender, or
none), the status, the value and the bound exact reports, the gap, the period and counts of its pattern,
the leaves and MILPs, the first incumbent (trace-compact's) and wall and CPU time, with the load average
before and after; the problem's bound (the period-capped integer bound) and the library's stored value
beside them. Every run is a fresh ``iosched.solve`` under a profile of ``--limit`` seconds (one thread).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time

import iosched
from iosched.models.periodic_leaf import contender, peak_fits
from iosched.solvers import Profile

SPECS = [f"paper:set{k}" for k in range(1, 11)] + [f"lib:periodic/small-{i}" for i in range(5)]


def stored(spec: str) -> float | None:
    """The library's best known value (its stored summary) for a ``lib:`` or ``paper:setK`` spec."""
    from iosched import library

    name = spec[4:] if spec.startswith("lib:") else "periodic/paper-set" + spec.split("set")[1]
    return library.summary("periodic").get(name, {}).get("best_known")


def run(spec: str, limit: float) -> dict:
    prob = iosched.get_problem("periodic")
    inst = prob.read_instance(spec)
    kind = "peak within B" if peak_fits(inst) else "one contender" if contender(inst) is not None else "none"
    load = os.getloadavg()[0]
    wall, cpu = time.perf_counter(), time.process_time()
    res = iosched.solve("periodic", inst, "exact", profile=Profile("bench", limit, 1e-9, 1, 0))  # optimal: gap <= 1e-9
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    start = res.info.get("start") or {}
    return {"instance": spec, "apps": len(inst.applications), "leaves solved by": kind, "status": res.status.value,
            "value": res.objective, "bound": res.bound, "gap": res.gap,
            "problem bound": prob.bound(inst, "sys_efficiency"),
            "period_s": res.solution.period if res.solution else None,
            "counts": res.solution.counts() if res.solution else None, "leaves": res.info.get("leaves"),
            "milps": res.info.get("milps"), "start": start.get("value"), "best_from": res.info.get("best_from"),
            "wall_s": wall, "cpu_s": cpu, "load_before": load, "load_after": os.getloadavg()[0],
            "cap_s": inst.period_cap(), "feasible": res.evaluation.feasible if res.evaluation else None,
            "library": stored(spec)}


def table(rows: list[dict]) -> str:
    cols = [("instance", "{}"), ("apps", "{}"), ("leaves solved by", "{}"), ("status", "{}"), ("value", "{:.10f}"),
            ("bound", "{:.10f}"), ("gap", "{:.2e}"), ("start", "{:.10f}"), ("library", "{:.10f}"),
            ("period_s", "{:.1f}"), ("counts", "{}"),
            ("leaves", "{}"), ("milps", "{}"), ("wall_s", "{:.1f}"), ("cpu_s", "{:.1f}"), ("load_before", "{:.1f}")]
    head = "| " + " | ".join(c for c, _ in cols) + " |"
    sep = "|" + "|".join("---" for _ in cols) + "|"
    body = ["| " + " | ".join("-" if r[c] is None else f.format(r[c]) for c, f in cols) + " |" for r in rows]
    return "\n".join([head, sep, *body])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--specs", nargs="+", default=SPECS)
    ap.add_argument("--limit", type=float, default=600.0, help="seconds per instance (the profile's time_limit)")
    ap.add_argument("--json", help="write the rows here")
    args = ap.parse_args()
    print(f"# {time.strftime('%Y-%m-%d %H:%M:%S %Z')}, {platform.node()}, {os.cpu_count()} CPUs, "
          f"limit {args.limit:g} s", flush=True)
    rows = []
    for spec in args.specs:
        rows.append(run(spec, args.limit))
        print(json.dumps(rows[-1]), flush=True)
    print(table(rows))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
