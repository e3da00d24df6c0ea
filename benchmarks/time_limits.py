"""Every time-limited method on an instance too hard for its budget: does it stop within its profile?

Prints one Markdown row per case: wall and CPU seconds of the whole ``iosched.solve`` call
(method, evaluation and bound), the method's own time, and the status with incumbent and
bound. Exact methods run under the ``quick`` profile (10 s); the heuristics with a budget get
``time_limit=10``.

    python benchmarks/time_limits.py [PROBLEM ...]
"""

import sys
import time

import iosched

CASES = [
    ("periodic", "paper:set1", "milp", {"profile": "quick"}),
    ("periodic", "random:1:200", "milp", {"profile": "quick"}),
    ("periodic", "random:1:200", "persched", {"time_limit": 10}),
    ("periodic", "random:1:200", "persched-compact", {"profile": "quick"}),
    ("window", "random:4:50", "exact", {"engine": "milp", "profile": "quick"}),
    ("window", "random:4:50", "exact", {"engine": "cpsat", "profile": "quick"}),
    ("window", "random:0:24:S2:ssd", "exact", {"profile": "quick"}),
    ("window", "random:0:200", "bbsched-ga", {"time_limit": 10}),
    ("window", "random:0:200", "nsga2", {"time_limit": 10}),
    ("forwarding", "random:0:600", "milp-dfra-space", {"profile": "quick"}),
    ("forwarding", "random:0:2000", "milp-dfra-space", {"profile": "quick"}),
    ("filedomain", "sweep:8:64", "exact", {"engine": "milp", "profile": "quick"}),
    ("filedomain", "sweep:8:64", "exact", {"engine": "cpsat", "profile": "quick"}),
    ("filedomain", "sweep:4:48:64", "exact", {"engine": "aggregated", "profile": "quick"}),
    ("malleable", "random:0:12:grid", "cpsat", {"profile": "quick"}),
    ("malleable", "random:0:12:grid", "milp", {"profile": "quick"}),
    ("malleable", "random:0:12:grid", "rigid-optimal", {"profile": "quick"}),
]


def main(problems: list[str]) -> None:
    print("| problem | instance | method, params | wall s | CPU s | method s | status | objective | bound |")
    print("|---|---|---|---|---|---|---|---|---|")
    for problem, spec, method, params in CASES:
        if problems and problem not in problems:
            continue
        inst = iosched.load_instance(problem, spec)
        cpu, wall = time.process_time(), time.perf_counter()
        r = iosched.solve(problem, inst, method, **params)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        shown = ", ".join(f"{k}={v}" for k, v in params.items())
        objective = "-" if r.objective is None else f"{r.objective:.6g}"
        bound = "-" if r.bound is None else f"{r.bound:.6g}"
        status = r.status.value + (f" ({r.info['error'][:60]}...)" if r.status == "error" else "")
        print(f"| {problem} | {spec} | {method} {shown} | {wall:.2f} | {cpu:.2f} | {r.method_time_s:.2f} | {status} "
              f"| {objective} | {bound} |", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
