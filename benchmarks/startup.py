"""How long ``import iosched`` takes beside ``import numpy`` (which it needs), each in a fresh interpreter.

Every CLI call and every fresh task process of a bench pays it. Each import is timed inside its interpreter
(wall: perf_counter, CPU: process_time, around the import statement alone), ``--runs`` times alternately;
the minimum is the cost without interference, the median what a loaded machine gives. The packages
``import iosched`` loads are listed too (tests/test_startup.py keeps the heavy ones out).

Twice: with iosched's bytecode cached (as an installed package has it; the caches go to a temporary
``PYTHONPYCACHEPREFIX``, warmed by one import first), and without (``PYTHONDONTWRITEBYTECODE=1``, as a
checkout run where that is set: every module compiled on each start). numpy's bytecode is cached by its
install either way.

    python benchmarks/startup.py [--runs 20] [--out benchmarks/startup.md]
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HEAVY = ["scipy", "pyomo", "numba", "ortools", "pymoo", "matplotlib", "highspy", "pandas", "networkx", "dask"]


def timed_import(module: str, env: dict) -> dict:
    """One import of ``module`` in a fresh interpreter (environment ``env``): wall and CPU seconds, and the
    heavy packages loaded."""
    code = ("import time, sys, json; w = time.perf_counter(); c = time.process_time(); "
            f"import {module}; "
            "print(json.dumps({'wall': time.perf_counter() - w, 'cpu': time.process_time() - c, "
            f"'heavy': [m for m in {HEAVY!r} if m in sys.modules], 'modules': len(sys.modules)}}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True,
                         env=env)
    return json.loads(out.stdout.strip().splitlines()[-1])


def measure(runs: int, env: dict) -> dict[str, list[dict]]:
    runs_of: dict[str, list[dict]] = {"numpy": [], "iosched": []}
    for module in runs_of:
        timed_import(module, env)  # the bytecode written, where it may be
    for _ in range(runs):
        for module in runs_of:  # alternately, so that both see the same load
            runs_of[module].append(timed_import(module, env))
    return runs_of


def main(runs: int, out: Path) -> None:
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="iosched-pycache-") as cache:
        base = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
        cases = {"bytecode cached": measure(runs, {**base, "PYTHONPYCACHEPREFIX": cache}),
                 "no bytecode cache": measure(runs, {**base, "PYTHONDONTWRITEBYTECODE": "1"})}
    load_after = os.getloadavg()
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    lines = [f"`python benchmarks/startup.py --runs {runs}`, measured {when}"
             f" on a 2-core machine shared with other jobs (load average {load_before[0]:.1f} before, "
             f"{load_after[0]:.1f} after); Python {sys.version.split()[0]}. Each import timed inside a fresh "
             f"interpreter, {runs} runs alternately: minimum (median).", "",
             "| iosched's bytecode | import | wall (s) | CPU (s) | modules loaded | heavy packages loaded |",
             "|---|---|---|---|---|---|"]
    ratios = []
    for case, runs_of in cases.items():
        stats = {m: {k: (min(r[k] for r in rs), statistics.median(r[k] for r in rs)) for k in ("wall", "cpu")}
                 for m, rs in runs_of.items()}
        for m, rs in runs_of.items():
            (wmin, wmed), (cmin, cmed) = stats[m]["wall"], stats[m]["cpu"]
            lines.append(f"| {case} | `import {m}` | {wmin:.3f} ({wmed:.3f}) | {cmin:.3f} ({cmed:.3f}) | "
                         f"{rs[-1]['modules']} | {', '.join(rs[-1]['heavy']) or 'none'} |")
        ratio = {k: (stats["iosched"][k][0] / stats["numpy"][k][0], stats["iosched"][k][1] / stats["numpy"][k][1])
                 for k in ("wall", "cpu")}
        ratios.append(f"{case}: wall {ratio['wall'][0]:.2f}x (median {ratio['wall'][1]:.2f}x), CPU "
                      f"{ratio['cpu'][0]:.2f}x (median {ratio['cpu'][1]:.2f}x)")
    lines += ["", "`import iosched` / `import numpy`: " + "; ".join(ratios) + ". The promise: at most 3x."]
    text = "# Start-up\n\n" + "\n".join(lines) + "\n"
    out.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    args = sys.argv[1:]
    main(int(args[args.index("--runs") + 1]) if "--runs" in args else 20,
         Path(args[args.index("--out") + 1]) if "--out" in args else Path(__file__).with_name("startup.md"))
