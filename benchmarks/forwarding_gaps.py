"""Every forwarding method against the bound valid for every allocation, the DFRA-space MILP's reach, the online day.

    python benchmarks/forwarding_gaps.py [--sizes 10 50 100 200 1000] [--seeds 10] [--pools 160 16]
                                         [--largest 200 400 600 800 1000 1500] [--online-hours 24] [--json out.json]
    python benchmarks/forwarding_gaps.py --report out.json     # the gap tables of a saved run

1. Gaps: for every generated TaihuLight-like instance (``generate(seed, n_jobs, pool_nodes=pool)``),
   each method's certified gap: (value - bound) / value, the bound being the problem's, valid for
   every allocation (:func:`iosched.models.forwarding.lower_bound`), so a small gap says the method
   is near the best allocation whatever its scope. Also each method's gap to the DFRA-space MILP's
   allocation (optimal in that scope where HiGHS proves it; ``default`` profile: 60 s, 1 thread),
   negative where the method found a better allocation outside DFRA's space, and the wall and CPU
   time of each method (one ``iosched.solve`` call: the method, the evaluator and the bound).
2. Reach: the largest n_jobs (over seeds 0-2, full pool) whose DFRA-space MILP HiGHS still proves
   optimal within the ``default`` profile.
3. Online: a generated day, the mapping decided at each dispatch by fixed, DFRA and the DFRA-space
   MILP (``quick`` profile at each dispatch), beside the seed's 171.2 of 240 forwarding nodes in use.

Times are measured in this run, on whatever else the machine is doing.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

import iosched
from iosched.instances.forwarding_presets import generate
from iosched.instances.forwarding_trace import generate_trace
from iosched.reproduce.forwarding import SEED_NODES_USED, online_rows

SCOPE = "milp-dfra-space"
METHODS = (SCOPE, "search", "dfra", "mckp", "round-robin", "fixed")


def timed(method: str, inst, **params):
    """The method's result (None where it refuses the instance, e.g. a model past max_configurations) and its
    wall and CPU seconds."""
    wall, cpu = time.perf_counter(), time.process_time()
    try:
        res = iosched.solve("forwarding", inst, method, **params)
    except iosched.ParameterError as e:
        print(f"{method} refused {inst.name}: {e}", file=sys.stderr, flush=True)
        res = None
    return res, time.perf_counter() - wall, time.process_time() - cpu


def gaps(sizes, seeds, pools, log=None) -> list[dict]:
    rows = []
    for pool in pools:
        for n in sizes:
            for seed in range(seeds):
                inst = generate(seed, n, pool_nodes=pool)
                row = {"pool": pool, "n_jobs": n, "seed": seed}
                for m in METHODS:
                    res, wall, cpu = timed(m, inst)
                    if res is None:
                        row[m], row[f"{m}_status"], row[f"{m}_wall"], row[f"{m}_cpu"] = None, "refused", wall, cpu
                        continue
                    assert res.solution is None or res.evaluation.feasible, (m, inst.name)
                    row[m], row[f"{m}_status"], row[f"{m}_wall"], row[f"{m}_cpu"] = (
                        res.objective, res.status.value, wall, cpu)
                    row["bound"] = res.bound
                    if m == SCOPE:
                        row["model_status"] = res.info.get("model_status")
                rows.append(row)
                if log is not None:  # one JSON line per instance: a long run interrupted keeps what it measured
                    log.write(json.dumps(row) + "\n")
                    log.flush()
                print(f"pool {pool} n {n} seed {seed}: bound {row['bound']:.6g}, "
                      + ", ".join(f"{m} {row[m]:.6g}" if row[m] is not None else f"{m} -" for m in METHODS),
                      file=sys.stderr, flush=True)
    return rows


def gap_table(rows: list[dict]) -> str:
    out = ["| method | mean gap to the bound | median | worst | within 10 % | mean gap to the DFRA-space MILP | "
           "better than it | mean wall s | max wall s | mean CPU s |", "|---|---|---|---|---|---|---|---|---|---|"]
    for m in METHODS:
        ok = [r for r in rows if r[m] is not None]
        if not ok:
            out.append(f"| {m} | no allocation | | | | | | | | |")
            continue
        g = [(r[m] - r["bound"]) / r[m] if r[m] > 0 else 0.0 for r in ok]
        vs = [(r[m] - r[SCOPE]) / r[SCOPE] for r in ok if r.get(SCOPE)]
        wall, cpu = [r[f"{m}_wall"] for r in ok], [r[f"{m}_cpu"] for r in ok]
        out.append(f"| {m} | {statistics.mean(g):.2%} | {statistics.median(g):.2%} | {max(g):.2%} | "
                   f"{sum(x <= 0.1 for x in g)} of {len(g)} | {statistics.mean(vs) if vs else float('nan'):.1%} | "
                   f"{sum(x < -1e-9 for x in vs)} of {len(vs)} | {statistics.mean(wall):.3f} | {max(wall):.3f} | "
                   f"{statistics.mean(cpu):.3f} |")
    proved = sum(r.get("model_status") == "optimal" for r in rows)
    out.append(f"\n{len(rows)} instances; HiGHS proved the DFRA-space MILP optimal over its scope on {proved}; "
               f"the gaps are (value - bound) / value with the bound valid for every allocation.")
    return "\n".join(out)


def largest(sizes, seeds=3) -> tuple[list[dict], int | None]:
    rows, best = [], None
    for n in sizes:
        runs = []
        for seed in range(seeds):
            res, wall, cpu = timed(SCOPE, generate(seed, n))
            info = res.info if res is not None else {"model_status": "refused", "error": "past max_configurations"}
            runs.append({"n_jobs": n, "seed": seed, "model_status": info.get("model_status"), "wall": wall,
                         "cpu": cpu, "configurations": info.get("configurations"),
                         "gap": info.get("model_gap"), "error": info.get("error", "")[:80]})
            print(f"reach n {n} seed {seed}: {runs[-1]['model_status']} {wall:.1f} s", file=sys.stderr, flush=True)
        rows += runs
        if all(r["model_status"] == "optimal" for r in runs):
            best = n
        else:
            break
    return rows, best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="*", default=[10, 50, 100, 200, 1000])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--pools", type=int, nargs="*", default=[160, 16])
    ap.add_argument("--largest", type=int, nargs="*", default=[200, 400, 600, 800, 1000, 1500])
    ap.add_argument("--online-hours", type=float, default=24.0)
    ap.add_argument("--json", help="also write every row here")
    ap.add_argument("--log", help="append each instance's row to this JSON-lines file as it is measured")
    ap.add_argument("--report", metavar="JSON", help="print the gap tables of a previous run's --json, run nothing")
    args = ap.parse_args()
    if args.report:
        with open(args.report) as f:
            rows = json.load(f)["gaps"]
        for pool in sorted({r["pool"] for r in rows}, reverse=True):
            print(f"\n### pool_nodes = {pool}: total I/O time against the bound valid for every allocation\n")
            print(gap_table([r for r in rows if r["pool"] == pool]))
        return
    start = time.perf_counter()
    out: dict = {}
    if args.sizes and args.seeds:
        if args.log:
            with open(args.log, "a") as log:
                out["gaps"] = gaps(args.sizes, args.seeds, args.pools, log)
        else:
            out["gaps"] = gaps(args.sizes, args.seeds, args.pools)
        for pool in args.pools:
            print(f"\n### pool_nodes = {pool}: total I/O time against the bound valid for every allocation\n")
            print(gap_table([r for r in out["gaps"] if r["pool"] == pool]), flush=True)
    if args.largest:
        out["reach"], best = largest(args.largest)
        print("\n### Reach of the DFRA-space MILP (full pool, seeds 0-2, default profile)\n")
        print("| n_jobs | seed | model status | configurations | wall s | CPU s |\n|---|---|---|---|---|---|")
        for r in out["reach"]:
            print(f"| {r['n_jobs']} | {r['seed']} | {r['model_status']} {r['error']} | {r['configurations']} | "
                  f"{r['wall']:.1f} | {r['cpu']:.1f} |")
        print(f"\nlargest n_jobs proved optimal for every seed: {best}", flush=True)
    if args.online_hours > 0:
        wall = time.perf_counter()
        out["online"] = online_rows(generate_trace(0, hours=args.online_hours), ("fixed", "dfra", SCOPE))
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
