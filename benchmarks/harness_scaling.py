"""Scale-out of the benchmark harness: the same suite with 1, 2, ... N local workers.

    python benchmarks/harness_scaling.py [--suite periodic-random] [--max-workers 2]

Each run starts from an empty results directory; the speed-up is the wall time of
1 worker over the wall time of w workers, measured in this one run.
"""

from __future__ import annotations

import argparse
import tempfile
import time

from iosched.harness.runner import run_suite
from iosched.harness.suite import load_suite


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suite", default="periodic-random")
    ap.add_argument("--max-workers", type=int, default=2)
    args = ap.parse_args()
    suite = load_suite(args.suite)
    print(f"suite {suite.name}: {len(suite.tasks)} tasks")
    print("| workers | wall s | speed-up |\n|---|---|---|")
    base = None
    for w in range(1, args.max_workers + 1):
        with tempfile.TemporaryDirectory() as out:
            start = time.perf_counter()
            counts = run_suite(suite, out, workers=w, progress=False)
            wall = time.perf_counter() - start
        base = base or wall
        print(f"| {w} | {wall:.1f} | {base / wall:.2f} | ({counts['failed']} failed)", flush=True)


if __name__ == "__main__":
    main()
