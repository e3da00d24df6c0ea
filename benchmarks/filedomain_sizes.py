"""Where each exact engine stops on irregular writes: random:SEED:S:S for S = P in 4 ... 64.

    python benchmarks/filedomain_sizes.py [--sizes 4 8 16 32 64] [--seeds 0 1 2 3 4]
        [--engines segments milp cpsat] [--profile default] [--iosched PATH] [--out FILE.md]

The ``random:`` generator's writes are irregular: stripes of 64 KiB to 4 MiB (1.5 MiB is not a
power of two), a region of up to 64 stripes starting anywhere (partial first and last stripes),
two aggregators per node half of the time, random bandwidths and lock costs. Each engine runs
``iosched solve filedomain random:SEED:S:S --method exact --param engine=E --param early=false``
(``early=false``: the engine's model runs even where a heuristic meets the cheap bound) in a
process of its own, started by the ``iosched`` command given (``--iosched``: another checkout's
command measures that checkout, e.g. ``/work/before/.venv/bin/iosched``). Per solve: the status
(``optimal`` = proved within the profile's gap), the gap to the bound the Result reports (valid
for every solution), CPU seconds (user + system of that process) and wall seconds, and the load
average when it started (the machine may be shared).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ENGINES = ["segments", "milp", "cpsat"]


def solve(iosched: str, spec: str, engine: str, profile: str) -> dict:
    """One solve in its own process: the Result's figures, its CPU and wall seconds, the load then."""
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.perf_counter()
    proc = subprocess.run([iosched, "solve", "filedomain", spec, "--method", "exact", "--param", f"engine={engine}",
                           "--param", "early=false", "--profile", profile, "--json"], capture_output=True, text=True)
    wall = time.perf_counter() - wall
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    row = {"instance": spec, "engine": engine, "cpu_s": cpu, "wall_s": wall, "load": load}
    if proc.returncode != 0:
        return {**row, "status": "refused" if proc.returncode == 2 else "error",
                "message": (proc.stderr.strip().splitlines() or [""])[-1]}
    d = json.loads(proc.stdout)
    return {**row, "status": d["status"], "objective_s": d["objective"], "bound_s": d["bound"], "gap": d["gap"]}


def fmt(r: dict) -> str:
    if r["status"] in ("refused", "error"):
        return f"| {r['instance']} | {r['engine']} | {r['status']}: {r['message'][:60]} | | | | " \
               f"{r['cpu_s']:.1f} | {r['wall_s']:.1f} | {r['load']:.1f} |"
    gap = "-" if r["gap"] is None else f"{100 * r['gap']:.2f}"
    return (f"| {r['instance']} | {r['engine']} | {r['status']} | {r['objective_s'] * 1e3:.4f} | "
            f"{r['bound_s'] * 1e3:.4f} | {gap} | {r['cpu_s']:.1f} | {r['wall_s']:.1f} | {r['load']:.1f} |")


def summary(rows: list[dict], sizes: list[int], engines: list[str]) -> list[str]:
    """Per size and engine: instances proved, the largest gap left, median and largest CPU seconds."""
    out = ["| S = P | engine | proved | largest gap % | median CPU s | largest CPU s |", "|---|---|---|---|---|---|"]
    for n in sizes:
        for e in engines:
            mine = [r for r in rows if r["engine"] == e and r["instance"].endswith(f":{n}:{n}")]
            if not mine:
                continue
            proved = sum(r["status"] == "optimal" for r in mine)
            gaps = [r["gap"] for r in mine if r.get("gap") is not None]
            worst = f"{100 * max(gaps):.2f}" if gaps else "-"
            cpus = [r["cpu_s"] for r in mine]
            out.append(f"| {n} | {e} | {proved} of {len(mine)} | {worst} | {statistics.median(cpus):.1f} | "
                       f"{max(cpus):.1f} |")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[4, 8, 16, 32, 64])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    ap.add_argument("--engines", nargs="+", default=ENGINES)
    ap.add_argument("--profile", default="default")
    ap.add_argument("--iosched", default=str(Path(sys.executable).with_name("iosched")),
                    help="the iosched command to measure (default: this environment's)")
    ap.add_argument("--out", help="also write the tables here (Markdown)")
    args = ap.parse_args()
    head = ["| instance | engine | status | time ms | bound ms | gap % | CPU s | wall s | load |",
            "|---|---|---|---|---|---|---|---|---|"]
    print("\n".join(head), flush=True)
    rows = []
    for n in args.sizes:
        for seed in args.seeds:
            for engine in args.engines:
                rows.append(solve(args.iosched, f"random:{seed}:{n}:{n}", engine, args.profile))
                print(fmt(rows[-1]), flush=True)
    text = "\n".join(head + [fmt(r) for r in rows] + ["", *summary(rows, args.sizes, args.engines)])
    print("\n" + "\n".join(summary(rows, args.sizes, args.engines)))
    if args.out:
        Path(args.out).write_text(f"command: {' '.join(sys.argv)}\n\n{text}\n")


if __name__ == "__main__":
    main()
