"""Import time of the 65,536-process skew log (../shared/data/darshan/skew_io/skew-app.darshan): reading it
and mapping it to a forwarding job and a filedomain region, a few repetitions, wall and CPU seconds.

    python benchmarks/darshan_import.py [--repeat 5] [--log PATH]

Darshan reduces a file every rank opened to one record (rank -1), so the log is small whatever the
process count: the import should take well under a second. CPU counts the child process that reads
the log (iosched.importers.darshan.read forks one per log).
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import time
from pathlib import Path

from iosched.importers import darshan as dx
from iosched.instances import filedomain_darshan, forwarding_darshan

SKEW = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "darshan" / "skew_io" / "skew-app.darshan"


def _cpu() -> float:
    """CPU seconds of this process and its children (the log is read in a child process)."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--log", default=str(SKEW))
    args = ap.parse_args()
    steps = {"read": lambda: dx.read(args.log),
             "forwarding": lambda: forwarding_darshan.from_darshan(args.log),
             "filedomain": lambda: filedomain_darshan.from_darshan(args.log, aggregators=256)}
    for step, fn in steps.items():
        walls, cpus = [], []
        for _ in range(args.repeat):
            w, c = time.perf_counter(), _cpu()
            out = fn()
            walls.append(time.perf_counter() - w)
            cpus.append(_cpu() - c)
        size = f"nprocs {out.nprocs}" if step == "read" else out.provenance["assumed"][:90]
        print(f"{step:10s} median wall {statistics.median(walls):.3f} s, cpu {statistics.median(cpus):.3f} s "
              f"(max wall {max(walls):.3f} s; {size})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
