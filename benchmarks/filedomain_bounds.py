"""The filedomain library under the safe bounds of issue 47: every instance solved by the exact method.

    python benchmarks/filedomain_bounds.py [--names small-4 ...] [--profile default] [--iosched PATH]
        [--out FILE.md]

For each filedomain instance of the library (``iosched library list --json``), in a process of its own:
``iosched bound filedomain lib:NAME --json`` (the problem's bound, :func:`time_bound`, with the
heuristics' best as the upper end of its search) and ``iosched solve filedomain lib:NAME --method exact
--json`` (the ``--iosched`` command given: another checkout's command measures that checkout). Per
instance: the stored best known and bound, the bound now, the exact method's status, value, bound and
gap, who was chosen and whether the certificate ran, CPU seconds (user + system of the process) and
wall seconds, and the load average when it started (the machine may be shared). A value is compared
with the stored best known exactly (``==``), as the bounds are in the evaluator's own arithmetic.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path


def run(cmd: list[str]) -> tuple[dict, float, float, float]:
    """(its JSON output, CPU seconds, wall seconds, the load average when it started) of one command."""
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - wall
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return json.loads(proc.stdout), cpu, wall, load


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--names", nargs="*", help="instance names without 'filedomain/' (default: all)")
    ap.add_argument("--profile", default="default")
    ap.add_argument("--iosched", default=str(Path(sys.executable).with_name("iosched")))
    ap.add_argument("--out", type=Path)
    ap.add_argument("--generated", type=int, nargs=2, metavar=("FIRST", "LAST"),
                    help="instead: the cheap and the problem's bound on random:SEED (generate(SEED), requests on even "
                         "seeds, tokens on multiples of 3) for SEED in FIRST..LAST, in this process")
    args = ap.parse_args(argv)
    if args.generated:
        return generated(*args.generated)
    listing, *_ = run([args.iosched, "library", "list", "--json"])
    stored = {e["name"].split("/", 1)[1]: e for e in listing if e["problem"] == "filedomain"}
    names = args.names or sorted(stored)
    rows = []
    for name in names:
        spec = f"lib:filedomain/{name}"
        bound, bound_cpu, bound_wall, _ = run([args.iosched, "bound", "filedomain", spec, "--json"])
        res, cpu, wall, load = run([args.iosched, "solve", "filedomain", spec, "--method", "exact",
                                    "--profile", args.profile, "--json"])
        e = stored[name]
        info = res["info"]
        certificate = info.get("certificate")
        row = {"name": name, "stored_status": e["status"], "best_known": e["best_known"], "stored_bound": e["bound"],
               "bound_now": bound["bounds"]["time_s"], "bound_cpu_s": bound_cpu, "bound_wall_s": bound_wall,
               "status": res["status"], "objective": res["objective"], "bound": res["bound"], "gap": res["gap"],
               "chosen": info.get("chosen"), "certificate": certificate[-1]["result"] if certificate else "",
               "cpu_s": cpu, "wall_s": wall, "load": load}
        rows.append(row)
        print(json.dumps(row), flush=True)
    text = render(rows, args.profile)
    print(text)
    if args.out:
        args.out.write_text(text)
    return 0


def generated(first: int, last: int) -> int:
    """Per generated instance: the cheap bound, the problem's bound (time_bound, its search's upper end the
    heuristics' best), how much it raises the cheap one and the gap left to the heuristics, its CPU seconds."""
    from iosched.instances.filedomain_presets import generate
    from iosched.models.filedomain import cheap_bound
    from iosched.models.filedomain_relax import heuristics_best, time_bound

    print(f"load {os.getloadavg()[0]:.1f}\n\n| seed | P | S | stripes | locking | cheap | time_bound | raised | gap to "
          "the heuristics | CPU s |\n|---|---|---|---|---|---|---|---|---|---|")
    for seed in range(first, last + 1):
        inst = generate(seed, requests=seed % 2 == 0, locking="token" if seed % 3 == 0 else "extent")
        began = time.process_time()
        lo, hi = cheap_bound(inst), heuristics_best(inst)
        bound = time_bound(inst, hi)
        print(f"| {seed} | {inst.aggregators} | {inst.stripe_count} | {inst.stripes} | {inst.locking} | {lo:.6g} | "
              f"{bound:.6g} | {(bound - lo) / lo:.1%} | {(hi - bound) / hi:.1%} | {time.process_time() - began:.2f} |")
    return 0


def render(rows: list[dict], profile: str) -> str:
    """The table of the rows (one per instance, as printed one JSON line each by :func:`main`)."""
    table = ["| instance | stored | best known | stored bound | bound now (CPU s, wall s) | exact | value "
             "| bound | gap | chosen | certificate | CPU s | wall s | load |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        same = "= best" if r["objective"] == r["best_known"] else ("< best" if r["objective"] < r["best_known"]
                                                                    else "> best")
        table.append(f"| {r['name']} | {r['stored_status']} | {r['best_known']!r} | {r['stored_bound']!r} | "
                     f"{r['bound_now']!r} ({r['bound_cpu_s']:.1f}, {r['bound_wall_s']:.1f}) | {r['status']} | "
                     f"{r['objective']!r} ({same}) | {r['bound']!r} | {r['gap']:.3g} | {r['chosen']} | "
                     f"{r['certificate'] or '-'} | {r['cpu_s']:.1f} | {r['wall_s']:.1f} | {r['load']:.1f} |")
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    return (f"Measured {stamp} with `python benchmarks/filedomain_bounds.py --profile {profile}`\n\n"
            + "\n".join(table) + "\n")


if __name__ == "__main__":
    raise SystemExit(main())
