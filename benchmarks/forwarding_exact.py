"""forwarding/exact (exact over every allocation) on the paper's instances and the library's forwarding instances.

    python benchmarks/forwarding_exact.py [--time-limit 600] [--only figure4 lib:forwarding/scarce-0 ...]
                                          [--sweep 10] [--sweep-limit 60]
                                          [--markdown benchmarks/forwarding_exact.md] [--json out.json]

Per instance: the method's evaluated value, its bound (valid for every allocation), status and gap, the
library's best known and bound beside them (read, never written), what the method did (start heuristic,
polish, branch-and-bound oracle calls, core), wall and CPU seconds of one ``iosched.solve`` call, and the
load average before and after it. ``--sweep N`` adds generated instances, seeds 0 .. N-1 of
``generate(seed, n_jobs, compute_nodes=8192, default_nodes=16, pool_nodes=pool)`` for 20 and 50 jobs and
pools of 0 and 16 nodes (every default node shared with running jobs; no idle node at all for pool 0), each
under ``--sweep-limit`` s. Times are measured on whatever else the machine is doing.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import os
import platform
import sys
import time

import iosched
from iosched import library
from iosched.instances.forwarding_presets import APPS, generate

PAPER = ["figure4", "pair:wrf1:awp"] + [f"testbed:{a}" for a in APPS]
LIBRARY = ["scarce-0", "scarce-1", "large-0", "large-1", "medium-0", "medium-1", "medium-2", "medium-3",
           "small-0", "small-1", "small-2", "small-3", "small-4"]
DEFAULT = PAPER + [f"lib:forwarding/{n}" for n in LIBRARY]


def known(spec: str) -> tuple[float | None, float | None]:
    """The library's best known and bound for ``spec`` (a library name, or a built-in the library holds)."""
    name = spec.removeprefix("lib:")
    if not name.startswith("forwarding/"):
        name = "forwarding/" + spec.replace(":", "-")
    entry = library.summary("forwarding").get(name)
    return (entry["best_known"], entry["bound"]) if entry else (None, None)


def run(spec, time_limit: float) -> dict:
    load = os.getloadavg()[0]
    wall, cpu = time.perf_counter(), time.process_time()
    r = iosched.solve("forwarding", spec, "exact", time_limit=time_limit)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    best, bound = known(spec) if isinstance(spec, str) else (None, None)
    spec = spec if isinstance(spec, str) else spec.name
    info = r.info
    did = [f"start {info['start']['heuristic']} {info['start']['value']:.10g}"]
    if "polish" in info:
        did.append(f"polish {info['polish']['moves']} moves")
    if "checks" in info:
        did.append(f"search {info['checks']} oracle calls, {info['boxes']} boxes")
    for core in info.get("core", {}).get("cores", []):
        did.append(f"core {'+'.join(core['jobs'])}: {core.get('bound', '-')}")
    for key in ("full_search", "stopped"):
        if key in info:
            did.append(f"{key.replace('_', ' ')}: {info[key][:90]}")
    return {"instance": spec, "status": str(r.status), "value": r.objective, "bound": r.bound, "gap": r.gap,
            "library_best": best, "library_bound": bound, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
            "load_before": round(load, 2), "load_after": round(os.getloadavg()[0], 2), "did": "; ".join(did)}


def markdown(rows: list[dict], time_limit: float, command: str) -> str:
    def num(x, fmt=".10g"):
        return "-" if x is None else format(x, fmt)

    out = ["# forwarding/exact: every allocation, the paper's and the library's instances\n",
           f"Produced {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC on {platform.node()} "
           f"({os.cpu_count()} cores, shared: the load average before and after each run is in its row; CPU "
           f"time beside wall time shows what the run had). Command:\n", f"```sh\n{command}\n```\n",
           f"Time limit {time_limit:g} s per instance. `value` is the evaluator's total_io_time of the method's "
           "allocation, `bound` the method's bound, valid for every allocation, `gap` (value - bound) / value. "
           "The library's best known and bound (before this method) are read from iosched/library/data, not "
           "written.\n",
           "| instance | status | value | bound | gap | library best | library bound | wall s | CPU s | load "
           "| what it did |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['instance']} | {r['status']} | {num(r['value'])} | {num(r['bound'])} | "
                   f"{num(r['gap'], '.2e')} | {num(r['library_best'])} | {num(r['library_bound'])} | {r['wall_s']} | "
                   f"{r['cpu_s']} | {r['load_before']}-{r['load_after']} | {r['did']} |")
    return "\n".join(out) + "\n"


def sweep_table(rows: list[dict]) -> str:
    out = ["\n## Generated instances\n",
           "| pool nodes | jobs | instances | optimal | largest gap | mean gap of the others | mean wall s | "
           "max wall s | mean CPU s |", "|---|---|---|---|---|---|---|---|---|"]
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        groups.setdefault((r["pool"], r["n_jobs"]), []).append(r)
    for (pool, n), rs in sorted(groups.items()):
        open_ = [r["gap"] for r in rs if r["status"] != "optimal"]
        out.append(f"| {pool} | {n} | {len(rs)} | {len(rs) - len(open_)} | {max(open_, default=0):.2e} | "
                   f"{(sum(open_) / len(open_) if open_ else 0):.2e} | "
                   f"{sum(r['wall_s'] for r in rs) / len(rs):.2f} | {max(r['wall_s'] for r in rs):.2f} | "
                   f"{sum(r['cpu_s'] for r in rs) / len(rs):.2f} |")
    out.append("\nThe open ones:\n")
    out += [f"- {r['instance']}: {r['status']}, {r['value']:.10g} against {r['bound']:.10g} (gap {r['gap']:.2e}), "
            f"{r['wall_s']} s wall, {r['cpu_s']} s CPU, load {r['load_before']}-{r['load_after']}; {r['did']}"
            for r in rows if r["status"] != "optimal"]
    return "\n".join(out) + "\n"


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--time-limit", type=float, default=600.0)
    p.add_argument("--only", nargs="*", default=None)
    p.add_argument("--sweep", type=int, default=0)
    p.add_argument("--sweep-limit", type=float, default=60.0)
    p.add_argument("--markdown", default=None)
    p.add_argument("--json", default=None)
    a = p.parse_args(argv)
    rows = []
    for spec in DEFAULT if a.only is None else a.only:
        rows.append(run(spec, a.time_limit))
        print(json.dumps(rows[-1]), flush=True)
    swept = []
    for pool in (0, 16) if a.sweep else ():
        for n in (20, 50):
            for seed in range(a.sweep):
                inst = generate(seed, n, compute_nodes=8192, default_nodes=16, pool_nodes=pool)
                inst = dataclasses.replace(inst, name=f"generate({seed}, {n}, pool_nodes={pool})")
                swept.append({**run(inst, a.sweep_limit), "pool": pool, "n_jobs": n})
                print(json.dumps(swept[-1]), flush=True)
    command = "python benchmarks/forwarding_exact.py " + " ".join(argv if argv is not None else sys.argv[1:])
    if a.markdown:
        with open(a.markdown, "w") as fh:
            fh.write(markdown(rows, a.time_limit, command.strip()) + (sweep_table(swept) if swept else ""))
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(rows + swept, fh, indent=1)


if __name__ == "__main__":
    main()
