"""PerSched at scale and on the paper's sets: one `iosched solve` process per row, this checkout
beside another one (before/after in one run), then the paper's sets timed in-process.

    python benchmarks/periodic_persched.py [--baseline OTHER_PYTHON] [--sizes 50 100 200]
                                           [--workers 2] [--repeat 3] [--skip-sets]

Rows of the first table: `iosched solve periodic INSTANCE --method persched` as a user runs it
(default profile: 60 s), for random:1:N and paper:set1-10, with the CPU seconds (user + sys) and
peak RSS of the process (from wait4, as /usr/bin/time -v reports them), its wall time, the
method's own wall time, the periods built and pruned, and the status. ``--baseline`` is the
Python of another checkout's venv (e.g. main before this change): its rows come right after
ours, so both see the same load. Every process first loads the compiled kernel (0.5-1 s of its
CPU): compare the method's time for the small sets.

The second table times the whole method in-process on sets 1-10 (median of ``--repeat``) with
one and ``--workers`` threads. The README's comparison with the authors' C++ came from their
repository (github.com/vlefevre/IO-scheduling-simu: Pattern.*, Simulator.hpp and
src/Simulator.cpp, built outside this project with g++ -O2 -std=c++11 -include numeric) and a
driver that times Simulator::run() on each set with their README's Tmin, K' = 10 and
eps = 0.01, run in the same session as this script. Compare ratios within one run, not seconds
across machines or runs: other load on the machine moves both.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import iosched
from iosched.instances.periodic import PAPER_SETS, paper_set


def run_cli(python: str, instance: str, timeout: float = 900) -> dict:
    """One `iosched solve` process: CPU s, peak RSS (MB), wall s, and what its output says."""
    code = "import sys; from iosched.cli import main; sys.exit(main())"
    cmd = [python, "-c", code, "solve", "periodic", instance, "--method", "persched"]
    with tempfile.TemporaryFile("w+") as out:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.DEVNULL, text=True, cwd="/")  # not this checkout
        killer = threading.Timer(timeout, proc.kill)
        killer.start()
        _, _, usage = os.wait4(proc.pid, 0)  # this child's own CPU and peak RSS
        killer.cancel()
        proc.returncode = 0  # reaped here; keeps Popen from waiting for it again
        wall = time.perf_counter() - start
        out.seek(0)
        text = out.read()
    status = re.search(r"^periodic / \S+ / persched: (\w+)", text, re.M)
    method = re.search(r"\(method ([\d.]+) s", text)
    tried = re.search(r"periods_tried: (\d+)", text)
    pruned = re.search(r"periods_pruned: (\d+)", text)
    return {"cpu": usage.ru_utime + usage.ru_stime, "rss_mb": usage.ru_maxrss / 1024, "wall": wall,
            "method": float(method.group(1)) if method else None, "status": status.group(1) if status else "error",
            "tried": int(tried.group(1)) if tried else None, "pruned": int(pruned.group(1)) if pruned else 0}


def scale_table(pythons: dict[str, str], instances: list[str]) -> None:
    print("| instance | code | CPU s | peak RSS MB | wall s | method s | periods built | pruned | status |")
    print("|---|---|---|---|---|---|---|---|---|")
    for inst in instances:
        for label, python in pythons.items():
            r = run_cli(python, inst)
            method = "-" if r["method"] is None else f"{r['method']:.2f}"
            print(f"| {inst} | {label} | {r['cpu']:.2f} | {r['rss_mb']:.0f} | {r['wall']:.2f} | {method} | "
                  f"{r['tried'] if r['tried'] is not None else '-'} | {r['pruned']} | {r['status']} |", flush=True)


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


def sets_table(workers: int, repeat: int) -> None:
    iosched.solve("periodic", paper_set(9), "persched")  # warm-up: imports, the compiled kernel
    counts = sorted({1, workers})
    print("\n| set | " + " | ".join(f"{w} worker(s): CPU s | wall s" for w in counts) + " |")
    print("|---|" + "---|---|" * len(counts))
    totals = {w: [0.0, 0.0] for w in counts}
    for k in PAPER_SETS:
        row = []
        for w in counts:
            cpu, wall = time_set(k, w, repeat)
            totals[w][0] += cpu
            totals[w][1] += wall
            row += [f"{cpu:.4f}", f"{wall:.4f}"]
        print(f"| {k} | " + " | ".join(row) + " |", flush=True)
    print("| total | " + " | ".join(f"{totals[w][0]:.3f} | {totals[w][1]:.3f}" for w in counts) + " |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", help="the Python of another checkout's venv, run beside this one")
    ap.add_argument("--sizes", type=int, nargs="*", default=[50, 100, 200], help="random:1:N instances")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--skip-sets", action="store_true", help="no paper-set rows and no in-process table")
    args = ap.parse_args()
    pythons = {"this": sys.executable}
    if args.baseline:
        pythons["baseline"] = args.baseline
    for python in pythons.values():  # each checkout's kernel compiled (or loaded) once before any row
        subprocess.run([python, "-c", "from iosched.heuristics.periodic import compile_kernel; compile_kernel()"],
                       cwd="/", check=True, capture_output=True)
    instances = [f"random:1:{n}" for n in args.sizes]
    if not args.skip_sets:
        instances += [f"paper:set{k}" for k in PAPER_SETS]
    with open("/proc/loadavg") as f:
        print(f"load average at start: {f.read().split()[0]}\n")
    scale_table(pythons, instances)
    if not args.skip_sets:
        sets_table(args.workers, args.repeat)


if __name__ == "__main__":
    main()
