"""The harness's cost per task beside one ``iosched solve`` process.

    python benchmarks/harness_overhead.py [--tasks 40] [--workers 2]

Runs a suite of ``--tasks`` window/naive tasks (random:SEED:20, solver-free, a millisecond of
method time each) on ``--workers`` local workers, then one ``iosched solve window random:0:20
--method naive`` process. Prints the suite's wall time, its CPU time (this process and every
worker process) per task, the overhead per task (that CPU time less the tasks' own CPU time, which
the results record as ``process_cpu_s``), and the suite's wall time over the single process's.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from iosched.harness.runner import run_suite
from iosched.harness.suite import load_suite


def cpu_s() -> float:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=40)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        names = ", ".join(f'"random:{s}:20"' for s in range(args.tasks))
        path = Path(tmp, "suite.toml")
        path.write_text(f'problem = "window"\n[instances]\nnames = [{names}]\n[[methods]]\nname = "naive"\n')
        suite = load_suite(str(path))
        cpu, start = cpu_s(), time.perf_counter()
        run_suite(suite, Path(tmp, "out"), workers=args.workers, progress=False)
        wall, cpu = time.perf_counter() - start, cpu_s() - cpu
        rows = [json.loads(p.read_text()) for p in Path(tmp, "out", "results").glob("*.json")]
    own = sum(r.get("process_cpu_s", 0.0) for r in rows)  # older results lack it: 0
    cpu0, start = cpu_s(), time.perf_counter()
    subprocess.run([sys.executable, "-m", "iosched.cli", "solve", "window", "random:0:20", "--method", "naive"],
                   check=True, stdout=subprocess.DEVNULL)
    one, one_cpu = time.perf_counter() - start, cpu_s() - cpu0
    print(f"{len(rows)} tasks on {args.workers} workers: wall {wall:.2f} s, CPU {cpu:.2f} s "
          f"(the tasks' own {own:.2f} s)")
    print(f"CPU per task: {cpu / len(rows) * 1000:.0f} ms; overhead per task: {(cpu - own) / len(rows) * 1000:.0f} ms")
    print(f"one 'iosched solve' process: wall {one:.2f} s, CPU {one_cpu:.2f} s")
    print(f"suite wall / one process wall: {wall / one:.2f}x")


if __name__ == "__main__":
    main()
