"""The batch simulator: speed, and the paper's comparison on S1-S4 (issue 10, Part 2).

    python benchmarks/batch_sim.py speed            # jobs/s; share of time in the window method
    python benchmarks/batch_sim.py study --jobs 2000 --out benchmarks/batch_results_cheap.json
    python benchmarks/batch_sim.py study --jobs 300 --kinds theta --methods all --out ...
    python benchmarks/batch_sim.py report --inputs a.json b.json   # tables and findings, by trace length

``speed``: jobs per second (wall clock of ``simulate``) for the base scheduler and the
``naive`` and ``first-fit`` plug-ins on 5,000 Theta jobs (S2, WFP) and 5,000 generated jobs (S2, FCFS); the
share of the time spent in the method (and the evaluator) for ``exact`` and
``bbsched-ga``; and the per-call cost of ``iosched.solve`` against calling the registered
method and the evaluator directly, on the windows of a simulation.
"""

from __future__ import annotations

import argparse
import json
import time

from iosched.batch import simulate
from iosched.batch.study import CHEAP, METHODS, findings, run, table, workload


def speed(jobs: int = 5000, ga_jobs: int = 100) -> None:
    for kind in ("theta", "generated"):
        trace, policy = workload(kind, "S2", jobs)
        for window in (None, "naive", "first-fit"):
            res = simulate(trace, policy=policy, window=window)
            print(f"{kind}-S2 {len(trace)} jobs, {policy}, window {window or '-'}: {res.wall_time_s:.2f} s, "
                  f"{len(trace) / res.wall_time_s:,.0f} jobs/s; {res.plugin_calls} calls, "
                  f"{res.plugin_time_s / res.wall_time_s:.0%} of the time in the method")
    trace, policy = workload("theta", "S2", ga_jobs)
    for window in ("exact", "bbsched-ga"):
        res = simulate(trace, policy=policy, window=window)
        print(f"theta-S2 {len(trace)} jobs, window {window}: {res.wall_time_s:.1f} s, "
              f"{len(trace) / res.wall_time_s:,.1f} jobs/s; {res.plugin_calls} calls, "
              f"{res.plugin_time_s / res.plugin_calls * 1000:.1f} ms a call, "
              f"{res.plugin_time_s / res.wall_time_s:.1%} of the time in the method")
    _solve_overhead(trace)


def _solve_overhead(trace, calls: int = 200) -> None:
    """Per call: iosched.solve (with its bound) against the method and the evaluator alone, on the same windows."""
    import iosched
    from iosched.core import get_method
    from iosched.evaluate.window import evaluate
    from iosched.instances.window import Capacity, Job, WindowInstance

    ids, nodes, bb = trace.ids.tolist(), trace.job_nodes.tolist(), trace.burst_buffer.tolist()
    windows = [WindowInstance(Capacity(trace.nodes // 2, trace.bb_capacity // 2),
                              tuple(Job(str(ids[j]), nodes[j], bb[j]) for j in range(k, k + 20)))
               for k in range(0, min(calls, len(trace) - 20))]
    for name in ("naive", "exact"):
        fn = get_method("window", name).run
        tick = time.perf_counter()
        for inst in windows:
            evaluate(inst, fn(inst).solution)
        direct = (time.perf_counter() - tick) / len(windows)
        tick = time.perf_counter()
        for inst in windows:
            iosched.solve("window", inst, name)
        full = (time.perf_counter() - tick) / len(windows)
        print(f"{name}: {direct * 1e3:.2f} ms a call direct (method + evaluator), {full * 1e3:.2f} ms through "
              f"iosched.solve (+ checks and the problem's bound)")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("part", choices=["speed", "study", "report"])
    p.add_argument("--inputs", nargs="+", default=[], help="report: JSON rows written by study --out")
    p.add_argument("--jobs", type=int, default=2000)
    p.add_argument("--kinds", nargs="+", default=["theta", "generated"])
    p.add_argument("--mixes", nargs="+", default=["S1", "S2", "S3", "S4"])
    p.add_argument("--methods", default="cheap", help="cheap (all but the GAs), all, or comma-separated labels")
    p.add_argument("--out", help="write the rows as JSON here")
    args = p.parse_args()
    if args.part == "speed":
        speed()
        return
    if args.part == "report":
        rows = [r for path in args.inputs for r in json.load(open(path))]
        for size in sorted({r["jobs"] for r in rows}):
            some = [r for r in rows if r["jobs"] == size]
            some.sort(key=lambda r: (r["workload"], [m[0] for m in METHODS].index(r["method"])))
            print(f"\n#### {size} jobs\n\n{table(some)}\n")
            print("\n".join(f"- {line}" for line in findings(some)))
        return
    methods = {"cheap": CHEAP, "all": METHODS}.get(args.methods) or [
        m for m in METHODS if m[0] in args.methods.split(",")]
    rows = run(args.kinds, args.mixes, methods, args.jobs, log=lambda s: print(s, flush=True))
    print(table(rows))
    print("\n".join(findings(rows)))
    if args.out:
        with open(args.out, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
