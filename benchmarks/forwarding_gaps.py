"""DFRA, MCKP, round-robin and the fixed mapping against the choice MILP, the MILP's reach, and the online day.

    python benchmarks/forwarding_gaps.py [--sizes 10 20 50 100 200] [--seeds 10] [--pools 160 16]
                                         [--largest 200 400 600 800 1000] [--online-hours 24] [--json out.json]
    python benchmarks/forwarding_gaps.py --report out.json     # the gap tables of a saved run

1. Gaps: for every generated TaihuLight-like instance (``generate(seed, n_jobs, pool_nodes=pool)``),
   each heuristic's total I/O time over the MILP's (``default`` profile: 60 s, 1 thread), as
   (heuristic - MILP) / MILP: mean and worst per method, with the wall and CPU time of each
   method (one ``iosched.solve`` call: the method, the evaluator and the bound); a negative
   gap means an allocation outside the MILP's scope beat it. Also how many
   MILP runs HiGHS proved optimal over the scope, and how many met the bound valid for every
   allocation (then optimal outright).
2. Reach: the largest n_jobs (over seeds 0-2, full pool) whose MILP HiGHS still proves optimal
   within the ``default`` profile.
3. Online: a generated day, the mapping decided at each dispatch by fixed, DFRA and the MILP
   (``quick`` profile at each dispatch), beside the seed's 171.2 of 240 forwarding nodes in use.

Times are measured in this run, on whatever else the machine is doing.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

import iosched
from iosched.harness.forwarding import SEED_NODES_USED, online_rows
from iosched.instances.forwarding import generate, generate_trace

HEURISTICS = ("dfra", "mckp", "round-robin", "fixed")


def timed(method: str, inst, **params):
    wall, cpu = time.perf_counter(), time.process_time()
    res = iosched.solve("forwarding", inst, method, **params)
    return res, time.perf_counter() - wall, time.process_time() - cpu


def gaps(sizes, seeds, pools) -> list[dict]:
    rows = []
    for pool in pools:
        for n in sizes:
            for seed in range(seeds):
                inst = generate(seed, n, pool_nodes=pool)
                exact, wall, cpu = timed("milp", inst)
                row = {"pool": pool, "n_jobs": n, "seed": seed, "milp": exact.objective,
                       "milp_status": exact.status.value, "model_status": exact.info.get("model_status"),
                       "bound": exact.bound, "milp_wall": wall,
                       "milp_cpu": cpu, "configurations": exact.info.get("configurations")}
                for h in HEURISTICS:
                    res, wall, cpu = timed(h, inst)
                    assert res.evaluation.feasible, (h, inst.name)
                    row[h], row[f"{h}_wall"], row[f"{h}_cpu"] = res.objective, wall, cpu
                rows.append(row)
                print(f"pool {pool} n {n} seed {seed}: milp {row['milp']} ({row['model_status']}, "
                      f"{row['milp_wall']:.1f} s)", file=sys.stderr, flush=True)
    return rows


def gap_table(rows: list[dict]) -> str:
    ok = [r for r in rows if r["milp"] is not None]
    out = ["| method | mean gap | median gap | worst gap | best gap | beats the MILP | mean wall s | max wall s | "
           "mean CPU s |", "|---|---|---|---|---|---|---|---|---|"]
    for m in ("milp",) + HEURISTICS:
        wall = [r[f"{m}_wall"] for r in ok]
        cpu = [r[f"{m}_cpu"] for r in ok]
        if m == "milp":
            out.append(f"| milp | 0 | 0 | 0 | 0 | - | {statistics.mean(wall):.3f} | {max(wall):.3f} | "
                       f"{statistics.mean(cpu):.3f} |")
            continue
        g = [(r[m] - r["milp"]) / r["milp"] for r in ok]
        out.append(f"| {m} | {statistics.mean(g):.1%} | {statistics.median(g):.1%} | {max(g):.1%} | {min(g):.1%} | "
                   f"{sum(x < -1e-9 for x in g)} of {len(g)} | {statistics.mean(wall):.4f} | {max(wall):.4f} | "
                   f"{statistics.mean(cpu):.4f} |")
    proved = sum(r["model_status"] == "optimal" for r in ok)
    outright = sum(r["milp_status"] == "optimal" for r in ok)
    out.append(f"\n{len(rows)} instances, {len(ok)} with a MILP allocation; HiGHS proved {proved} optimal over the "
               f"scope; {outright} meet the bound valid for every allocation (optimal outright).")
    return "\n".join(out)


def largest(sizes, seeds=3) -> tuple[list[dict], int | None]:
    rows, best = [], None
    for n in sizes:
        runs = []
        for seed in range(seeds):
            res, wall, cpu = timed("milp", generate(seed, n))
            runs.append({"n_jobs": n, "seed": seed, "model_status": res.info.get("model_status"), "wall": wall,
                         "cpu": cpu, "configurations": res.info.get("configurations"),
                         "gap": res.info.get("model_gap"), "error": res.info.get("error", "")[:80]})
            print(f"reach n {n} seed {seed}: {runs[-1]['model_status']} {wall:.1f} s", file=sys.stderr, flush=True)
        rows += runs
        if all(r["model_status"] == "optimal" for r in runs):
            best = n
        else:
            break
    return rows, best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="*", default=[10, 20, 50, 100, 200])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--pools", type=int, nargs="*", default=[160, 16])
    ap.add_argument("--largest", type=int, nargs="*", default=[200, 400, 600, 800, 1000, 1500])
    ap.add_argument("--online-hours", type=float, default=24.0)
    ap.add_argument("--json", help="also write every row here")
    ap.add_argument("--report", metavar="JSON", help="print the gap tables of a previous run's --json, run nothing")
    args = ap.parse_args()
    if args.report:
        with open(args.report) as f:
            rows = json.load(f)["gaps"]
        for pool in sorted({r["pool"] for r in rows}, reverse=True):
            print(f"\n### pool_nodes = {pool}: total I/O time against the MILP (default profile)\n")
            print(gap_table([r for r in rows if r["pool"] == pool]))
        return
    start = time.perf_counter()
    out: dict = {}
    if args.sizes and args.seeds:
        out["gaps"] = gaps(args.sizes, args.seeds, args.pools)
        for pool in args.pools:
            print(f"\n### pool_nodes = {pool}: total I/O time against the MILP (default profile)\n")
            print(gap_table([r for r in out["gaps"] if r["pool"] == pool]), flush=True)
    if args.largest:
        out["reach"], best = largest(args.largest)
        print("\n### Reach (full pool, seeds 0-2, default profile)\n")
        print("| n_jobs | seed | model status | configurations | wall s | CPU s |\n|---|---|---|---|---|---|")
        for r in out["reach"]:
            print(f"| {r['n_jobs']} | {r['seed']} | {r['model_status']} {r['error']} | {r['configurations']} | "
                  f"{r['wall']:.1f} | {r['cpu']:.1f} |")
        print(f"\nlargest n_jobs proved optimal for every seed: {best}", flush=True)
    if args.online_hours > 0:
        wall = time.perf_counter()
        out["online"] = online_rows(generate_trace(0, hours=args.online_hours), ("fixed", "dfra", "milp"))
        print(f"\n### Online: a generated {args.online_hours:g}-hour day ({time.perf_counter() - wall:.0f} s)\n")
        print("| method | I/O time (time average, s) | saved vs fixed | median job speed-up | nodes serving jobs | "
              "80 + pool in use | given more nodes | on dedicated nodes |\n|---|---|---|---|---|---|---|---|")
        for r in out["online"]:
            print(f"| {r['method']} | {r['io_time']:.4g} | {r['saved']:.1%} | {r['median_job_speedup']:.2f} | "
                  f"{r['nodes_used']:.1f} | {r['in_service_plus_pool']:.1f} | {r['granted']:.1%} | "
                  f"{r['dedicated']:.1%} |")
        print(f"\nthe seed's replay: {SEED_NODES_USED} of 240 forwarding nodes in use on average")
    print(f"\nwhole run {time.perf_counter() - start:.0f} s wall, {time.process_time():.0f} s CPU")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1, default=str)


if __name__ == "__main__":
    main()
