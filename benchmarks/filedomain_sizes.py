"""How large an instance each exact formulation proves optimal within a profile (default: 60 s, 1 thread).

    python benchmarks/filedomain_sizes.py [--profile default] [--servers 4] [--formulations ...]

Instances: the sweep platform (``sweep(S, P, stripes_per_server)``: servers 1 GB/s, aggregators
0.25 GB/s, 1 MiB stripes, 0.1 ms per grant, 1 ms per conflict) along a ladder of growing
(stripes, aggregators). Each formulation is solved by ``exact`` with ``early=False`` (the model
always runs) until the first size it does not prove within the profile; "proved" means the
solver's optimality over the formulation's scope (every solution for byte granularity, whole
stripes for unit and the count model of ``aggregated``). Wall and CPU time of each solve are
measured in this run; other work may share the machine.
"""

from __future__ import annotations

import argparse
import sys
import time

from iosched.instances.filedomain import sweep
from iosched.models.filedomain import solve_exact
from iosched.solvers import load_profile

LADDER = [(4, 2), (8, 3), (12, 4), (16, 6), (24, 6), (32, 8), (48, 10), (64, 12), (96, 16), (128, 20), (192, 24),
          (256, 32), (384, 48), (512, 64), (1024, 96), (2048, 128)]  # (stripes, aggregators)
FORMULATIONS = {"milp-byte": ("milp", "byte"), "cpsat-byte": ("cpsat", "byte"), "milp-unit": ("milp", "unit"),
                "cpsat-unit": ("cpsat", "unit"), "aggregated": ("aggregated", "unit")}


def attempt(engine: str, gran: str, S: int, stripes: int, P: int, profile) -> dict:
    inst = sweep(S, P, stripes // S)
    wall, cpu = time.perf_counter(), time.process_time()
    out = solve_exact(inst, engine, gran, profile, early=False)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    if gran == "byte":
        proved = out.info.get("solver_status") == "optimal"
    else:
        proved = bool(out.info.get("scope_optimal"))
    return {"stripes": stripes, "P": P, "proved": proved, "wall": wall, "cpu": cpu, "status": out.status.value,
            "solver": out.info.get("solver_status"), "global": out.status.value == "optimal"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", default="default")
    ap.add_argument("--servers", type=int, default=4)
    ap.add_argument("--formulations", nargs="*", default=list(FORMULATIONS), choices=list(FORMULATIONS))
    args = ap.parse_args()
    prof = load_profile(args.profile)
    print(f"profile {prof.name}: {prof.time_limit:g} s, {prof.threads} thread(s), gap {prof.rel_gap:g}; "
          f"S = {args.servers}")
    print("| formulation | largest proved: stripes x P (cells) | wall s (cpu s) | first not proved | its status |")
    print("|---|---|---|---|---|")
    for name in args.formulations:
        engine, gran = FORMULATIONS[name]
        last, fail = None, None
        for stripes, P in LADDER:
            if stripes % args.servers:
                continue
            r = attempt(engine, gran, args.servers, stripes, P, prof)
            print(f"{name} {stripes}x{P}: proved {r['proved']} ({r['solver']}, {r['wall']:.1f} s wall, "
                  f"{r['cpu']:.1f} s cpu)", file=sys.stderr, flush=True)
            if not r["proved"]:
                fail = r
                break
            last = r
        best = f"{last['stripes']} x {last['P']} ({last['stripes'] * last['P']})" if last else "none"
        times = f"{last['wall']:.1f} ({last['cpu']:.1f})" if last else "-"
        first = f"{fail['stripes']} x {fail['P']}" if fail else "beyond the ladder"
        status = f"{fail['solver']} after {fail['wall']:.0f} s" if fail else "-"
        print(f"| {name} | {best} | {times} | {first} | {status} |", flush=True)


if __name__ == "__main__":
    main()
