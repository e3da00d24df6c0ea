"""Exact front vs the paper's GA and NSGA-II at Theta's scale (4392 nodes, 1.26 PB in GB).

    python benchmarks/window_front.py [--seeds 5] [--sizes 10 20 50 100]

For each window size: the median time of the exact front (dp), of the GA and of NSGA-II
(G = 500, P = 20, p_m = 0.0005), their median IGD against the exact front (pymoo, on
normalised objectives), and the ratio GA time / exact time, all measured in this run.
Windows come from the generator's default mix (S2) at half the machine free.
"""

from __future__ import annotations

import argparse
import statistics
import time

from iosched.evaluate.window import front_quality
from iosched.heuristics.window import bbsched_ga, nsga2
from iosched.instances.window import generate
from iosched.models.window import pareto_front


def timed(fn, *args, **kw):
    start = time.perf_counter()
    out = fn(*args, **kw)
    return out, time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--sizes", type=int, nargs="*", default=[10, 20, 50, 100])
    args = ap.parse_args()
    pareto_front(generate(0, 10))  # warm-up: the numba kernel loads from its cache
    print("| w | exact s | front points | GA s | GA IGD | NSGA-II s | NSGA-II IGD | GA / exact time |")
    print("|---|---|---|---|---|---|---|---|")
    for w in args.sizes:
        rows = []
        for seed in range(args.seeds):
            inst = generate(seed, w)
            exact, t_exact = timed(pareto_front, inst)
            ref = [(p.nodes, p.burst_buffer) for p in exact]
            (ga, _), t_ga = timed(bbsched_ga, inst, seed=seed)
            (ns, _), t_ns = timed(nsga2, inst, seed=seed)
            igd_ga = front_quality(inst, [(p.nodes, p.burst_buffer) for p in ga], ref)["igd"]
            igd_ns = front_quality(inst, [(p.nodes, p.burst_buffer) for p in ns], ref)["igd"]
            rows.append((t_exact, len(exact), t_ga, igd_ga, t_ns, igd_ns))
        med = [statistics.median(col) for col in zip(*rows)]
        print(f"| {w} | {med[0]:.4f} | {med[1]:g} | {med[2]:.3f} | {med[3]:.4f} | {med[4]:.3f} | {med[5]:.4f} | "
              f"{med[2] / med[0]:.0f}x |", flush=True)


if __name__ == "__main__":
    main()
