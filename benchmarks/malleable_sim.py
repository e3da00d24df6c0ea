"""Speed of the event simulator and the evaluator: jobs per second at 400 and 10,000 jobs.

    python benchmarks/malleable_sim.py [--sizes 400 10000] [--kinds paper feitelson] [--repeat 3]

For each workload kind and size: wall and CPU time of simulating DMR and rigid EASY
backfilling (the best of ``repeat`` runs), the jobs per second, the events the DMR run
processed, and the evaluator's time on DMR's schedule, all measured in this run. Other
work on the machine inflates wall time; CPU time is the steadier figure.
"""

from __future__ import annotations

import argparse
import time

from iosched.evaluate.malleable import evaluate
from iosched.heuristics.malleable_sim import simulate
from iosched.instances.malleable_presets import generate


def timed(fn, *args, repeat: int = 1, **kw):
    """(result, best wall s, CPU s of that run)."""
    best = None
    for _ in range(repeat):
        w, c = time.perf_counter(), time.process_time()
        out = fn(*args, **kw)
        run = (time.perf_counter() - w, time.process_time() - c)
        best = run if best is None or run[0] < best[0] else best
    return out, *best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="*", default=[400, 10_000])
    ap.add_argument("--kinds", nargs="*", default=["paper", "feitelson"])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print("| kind | jobs | policy | wall s | CPU s | jobs/s (wall) | jobs/s (CPU) | events | evaluate wall s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for kind in args.kinds:
        for n in args.sizes:
            inst = generate(0, n, kind)
            for policy in ("dmr", "rigid"):
                res, wall, cpu = timed(simulate, inst, policy, "easy", repeat=args.repeat)
                ev, ev_wall, _ = timed(evaluate, inst, res.schedule)
                assert ev.feasible, ev.violations[:3]
                print(f"| {kind} | {n} | {policy} | {wall:.3f} | {cpu:.3f} | {n / wall:,.0f} | {n / cpu:,.0f} | "
                      f"{res.events:,} | {ev_wall:.3f} |", flush=True)


if __name__ == "__main__":
    main()
