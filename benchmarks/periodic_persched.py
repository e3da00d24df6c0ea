"""Time PerSched on the paper's sets 1-10, per set and in total, with 1 and N workers.

    python benchmarks/periodic_persched.py [--workers 2] [--repeat 3]

Prints the median wall time of the period search (the whole method, pattern
and evaluation included) per set; compare ratios within one run, not seconds
across machines. The authors' C++ takes about 4 s for all ten on a 2-core
machine of this kind (set 5 alone about 2.5 s).
"""

from __future__ import annotations

import argparse
import statistics
import time

import iosched
from iosched.instances.periodic import paper_set


def time_set(k: int, workers: int, repeat: int) -> float:
    inst = paper_set(k)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        res = iosched.solve("periodic", inst, "persched", workers=workers)
        times.append(time.perf_counter() - start)
        assert res.evaluation.feasible
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    iosched.solve("periodic", paper_set(9), "persched")  # warm-up: imports, JIT caches
    counts = sorted({1, args.workers})
    print("| set | " + " | ".join(f"{w} worker(s) s" for w in counts) + " |")
    print("|---|" + "---|" * len(counts))
    totals = dict.fromkeys(counts, 0.0)
    for k in range(1, 11):
        row = []
        for w in counts:
            t = time_set(k, w, args.repeat)
            totals[w] += t
            row.append(f"{t:.2f}")
        print(f"| {k} | " + " | ".join(row) + " |", flush=True)
    print("| total | " + " | ".join(f"{totals[w]:.2f}" for w in counts) + " |")
    if len(counts) == 2:
        print(f"\nspeed-up with {args.workers} workers: {totals[1] / totals[args.workers]:.2f}x")


if __name__ == "__main__":
    main()
