"""Time PerSched on the paper's sets 1-10, per set and in total, with 1 and N worker threads.

    python benchmarks/periodic_persched.py [--workers 2] [--repeat 3]

Prints the median CPU time (all threads of this process) and wall time of the whole method
(period search, the chosen pattern read back and evaluated) per set. Compare ratios within
one run, not seconds across machines or runs: other load on the machine moves both.

The README's comparison with the authors' C++ came from their repository
(github.com/vlefevre/IO-scheduling-simu: Pattern.*, Simulator.hpp and src/Simulator.cpp, built
outside this project with g++ -O2 -std=c++11 -include numeric) and a driver that times
Simulator::run() on each set with their README's Tmin, K' = 10 and eps = 0.01, run in the same
session as this script; both try the same 2,469 periods and find the same patterns.
"""

from __future__ import annotations

import argparse
import statistics
import time

import iosched
from iosched.instances.periodic import paper_set


def time_set(k: int, workers: int, repeat: int) -> tuple[float, float]:
    inst = paper_set(k)
    cpu, wall = [], []
    for _ in range(repeat):
        c, w = time.process_time(), time.perf_counter()
        res = iosched.solve("periodic", inst, "persched", workers=workers)
        cpu.append(time.process_time() - c)
        wall.append(time.perf_counter() - w)
        assert res.evaluation.feasible
    return statistics.median(cpu), statistics.median(wall)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    iosched.solve("periodic", paper_set(9), "persched")  # warm-up: imports, the compiled kernel
    counts = sorted({1, args.workers})
    print("| set | " + " | ".join(f"{w} worker(s): CPU s | wall s" for w in counts) + " |")
    print("|---|" + "---|---|" * len(counts))
    totals = {w: [0.0, 0.0] for w in counts}
    for k in range(1, 11):
        row = []
        for w in counts:
            cpu, wall = time_set(k, w, args.repeat)
            totals[w][0] += cpu
            totals[w][1] += wall
            row += [f"{cpu:.3f}", f"{wall:.3f}"]
        print(f"| {k} | " + " | ".join(row) + " |", flush=True)
    print("| total | " + " | ".join(f"{totals[w][0]:.2f} | {totals[w][1]:.2f}" for w in counts) + " |")
    if len(counts) == 2:
        print(f"\nwall-time speed-up with {args.workers} workers: {totals[1][1] / totals[args.workers][1]:.2f}x")


if __name__ == "__main__":
    main()
