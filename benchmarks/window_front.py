"""Exact front vs the paper's GA and NSGA-II at Theta's scale (4392 nodes, 1.26 PB in GB).

    python benchmarks/window_front.py quality [--seeds 10] [--sizes 10 20 50 100] [--mix S2] [--init one-job]
    python benchmarks/window_front.py ties [--seeds 10] [--sizes 10 20 50 100] [--baseline /work/before]
    python benchmarks/window_front.py ssd [--seeds 5] [--sizes 20 30 40] [--ssd-mix S6] [--baseline /work/before]

``quality``: for each window size and method (GA, NSGA-II with G = 500, P = 20,
p_m = 0.0005, seed = the window's seed) over the windows ``random:SEED:w:MIX``: the
median IGD against the exact front (pymoo, on 1 - utilisation), the mean hypervolume
ratio (method / exact), in how many windows the decision rule picks the same (nodes, BB)
point on the method's front as on the exact front, in how many the method's decision is
dominated by an exact front point, the mean and largest node utilisation lost against
the exact decision (percentage points of the free nodes), the mean burst-buffer
utilisation lost (pp of the free BB), and the median time.

``ties``: the cost of the decision rule's tie break (among subsets at the chosen (nodes,
BB) point, the one with jobs nearest the front of the window): the time of the exact
front and decision, the time of the tie break after it, the CPU time and peak RSS of the
process that did both (one per window), in how many windows the tie break changed the
chosen subset and in how many the rule was proved for every job; with ``--baseline`` the
same for another checkout's tie break on the same windows (asserting the same subsets).

``ssd``: the exact four-objective SSD front (mix S6, or ``--ssd-mix`` S5 / S7), each window
in a process of its own: front size, wall and CPU time, peak RSS; with ``--baseline`` also
another checkout's SSD front on the same windows in one run (asserting the same front
vectors; windows where it refused past its state cap are counted). ``quality --mix S6``
gives the GAs' hypervolume ratio on SSD windows.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from iosched.evaluate.window import front_quality
from iosched.heuristics.window import bbsched_ga, decide, nsga2
from iosched.instances.window_presets import generate
from iosched.models.window import pareto_front


def timed(fn, *args, **kw):
    start, cpu = time.perf_counter(), time.process_time()
    out = fn(*args, **kw)
    return out, time.perf_counter() - start, time.process_time() - cpu


def dominated(p, front) -> bool:
    return any(q.nodes >= p.nodes and q.burst_buffer >= p.burst_buffer
               and (q.nodes, q.burst_buffer) != (p.nodes, p.burst_buffer) for q in front)


def quality(args) -> None:
    methods = {"bbsched-ga": bbsched_ga, "nsga2": nsga2}
    print(f"mix {args.mix}, seeds 0-{args.seeds - 1}, G = 500, P = 20, p_m = 0.0005, init {args.init or 'default'}")
    print("| w | method | IGD (median) | HV ratio (mean) | decision = exact | dominated | "
          "nodes lost pp (mean / max) | BB lost pp (mean) | time s (median) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for w in args.sizes:
        stats = {m: [] for m in methods}
        for seed in range(args.seeds):
            inst = generate(seed, w, mix=args.mix)
            exact = pareto_front(inst)
            best = decide(inst, exact)
            for name, fn in methods.items():
                (front, *_), wall, _ = timed(fn, inst, seed=seed, **({"init": args.init} if args.init else {}))
                q = front_quality(inst, front, exact)
                chosen = decide(inst, front)
                same = (chosen.nodes, chosen.burst_buffer) == (best.nodes, best.burst_buffer)
                lost = 100 * (best.nodes - chosen.nodes) / max(inst.capacity.nodes, 1)
                lost_bb = 100 * (best.burst_buffer - chosen.burst_buffer) / max(inst.capacity.burst_buffer, 1)
                ratio = q["hv"] / q["hv_reference"] if q["hv_reference"] else 1.0
                stats[name].append((q["igd"], ratio, same, dominated(chosen, exact), lost, lost_bb, wall))
        for name, rows in stats.items():
            igd, ratio, same, dom, lost, lost_bb, wall = zip(*rows)
            print(f"| {w} | {name} | {statistics.median(igd):.4f} | {statistics.mean(ratio):.3f} | "
                  f"{sum(same)}/{len(rows)} | {sum(dom)}/{len(rows)} | {statistics.mean(lost):.1f} / "
                  f"{max(lost):.1f} | {statistics.mean(lost_bb):.2f} | {statistics.median(wall):.2f} |", flush=True)


def _in_child(fn):
    """``fn()`` in a forked process: its result, and the child's CPU seconds and peak RSS (MB)."""
    import json
    import os

    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        os.write(write, json.dumps(fn()).encode())
        os._exit(0)
    os.close(write)
    chunks = []
    while chunk := os.read(read, 65536):
        chunks.append(chunk)
    os.close(read)
    _, _, usage = os.wait4(pid, 0)
    return json.loads(b"".join(chunks)), usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def ties(args) -> None:
    from iosched.models.window import earliest_subset

    base = baseline_module(args.baseline) if args.baseline else None

    def run(module, inst):
        def go():
            front, t_front, _ = timed(module.pareto_front, inst)
            chosen, t_decide, _ = timed(decide, inst, front)
            out, t_ties, _ = timed(module.earliest_subset, inst, chosen)
            earliest, proved = out if isinstance(out, tuple) else (out, len(inst.jobs))
            return [t_front + t_decide, t_ties, earliest.jobs != chosen.jobs, proved, list(earliest.jobs)]
        return _in_child(go)

    print(f"mix {args.mix}, seeds 0-{args.seeds - 1}: the exact decision (front + rule), then its tie break, each "
          "window in a process of its own (CPU and peak RSS of that process)" +
          (f"; baseline: {args.baseline}" if base else ""))
    print("| w | front + decision s (median) | tie break s (median / max) | CPU s (max) | peak RSS MB (max) | "
          "subset changed | rule proved for every job |" + (" baseline tie s | baseline CPU s | baseline MB |"
                                                             if base else ""))
    print("|---|---|---|---|---|---|---|" + ("---|---|---|" if base else ""))
    for w in args.sizes:
        rows = []
        for seed in range(args.seeds):
            inst = generate(seed, w, mix=args.mix)
            (front_s, tie_s, changed, proved, jobs), cpu, rss = run(sys.modules[earliest_subset.__module__], inst)
            row = [front_s, tie_s, cpu, rss, changed, proved == w]
            if base:
                (_, old_tie, _, _, old_jobs), old_cpu, old_rss = run(base, inst)
                assert old_jobs == jobs or proved < w, (w, seed)
                row += [old_tie, old_cpu, old_rss]
            rows.append(row)
        cols = list(zip(*rows))
        line = (f"| {w} | {statistics.median(cols[0]):.4f} | {statistics.median(cols[1]):.4f} / {max(cols[1]):.3f} | "
                f"{max(cols[2]):.2f} | {max(cols[3]):.0f} | {sum(cols[4])}/{len(rows)} | {sum(cols[5])}/{len(rows)} |")
        if base:
            line += f" {statistics.median(cols[6]):.3f} | {max(cols[7]):.2f} | {max(cols[8]):.0f} |"
        print(line, flush=True)


def baseline_module(checkout: str):
    """``iosched/models/window.py`` of another checkout (e.g. main), loaded beside this one."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location("baseline_window", Path(checkout) / "iosched/models/window.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def ssd(args) -> None:
    from iosched.errors import ParameterError
    from iosched.models.window import pareto_ssd

    base = baseline_module(args.baseline) if args.baseline else None
    pareto_ssd(generate(0, 8, mix="S5"))  # warm-up: the numba kernel loads from its cache

    def run(module, inst):
        def go():
            try:
                front, wall, _ = timed(module.pareto_ssd, inst)
            except ParameterError:  # past the state cap
                return None
            return [wall, sorted(p.vector() for p in front)]
        return _in_child(go)

    mix = args.ssd_mix or "S6"
    print(f"mix {mix}, seeds 0-{args.seeds - 1}: each window's front in a process of its own (CPU and peak RSS of "
          "that process)" + (f"; baseline: {args.baseline}" if base else ""))
    print("| w | points (median) | wall s (median) | CPU s (median / max) | peak RSS MB (max) |" +
          (" baseline CPU s (median / max) | baseline MB (max) | baseline refused |" if base else ""))
    print("|---|---|---|---|---|" + ("---|---|---|" if base else ""))
    for w in args.sizes:
        rows, old_rows, refused = [], [], 0
        for seed in range(args.seeds):
            inst = generate(seed, w, mix=mix)
            (wall, vectors), cpu, rss = run(sys.modules[pareto_ssd.__module__], inst)
            rows.append([len(vectors), wall, cpu, rss])
            if base:
                old, old_cpu, old_rss = run(base, inst)
                if old is None:
                    refused += 1
                else:
                    assert [tuple(v) for v in old[1]] == [tuple(v) for v in vectors], (w, seed)
                    old_rows.append([old_cpu, old_rss])
        cols = list(zip(*rows))
        line = (f"| {w} | {statistics.median(cols[0]):g} | {statistics.median(cols[1]):.3f} | "
                f"{statistics.median(cols[2]):.2f} / {max(cols[2]):.2f} | {max(cols[3]):.0f} |")
        if base:
            old_cols = list(zip(*old_rows)) or [[float("nan")]] * 2
            line += (f" {statistics.median(old_cols[0]):.2f} / {max(old_cols[0]):.2f} | {max(old_cols[1]):.0f} | "
                     f"{refused}/{args.seeds} |")
        print(line, flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", nargs="?", choices=("quality", "ties", "ssd"), default="quality")
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--sizes", type=int, nargs="*", default=None)
    ap.add_argument("--mix", default="S2")
    ap.add_argument("--ssd-mix", default=None)
    ap.add_argument("--init", choices=("greedy", "one-job"), default=None, help="the GAs' first generation")
    ap.add_argument("--baseline", default=None, help="ssd, ties: also time this checkout's (same results)")
    args = ap.parse_args()
    if args.sizes is None:
        args.sizes = [20, 30, 40] if args.what == "ssd" else [10, 20, 50, 100]
    args.seeds = min(args.seeds, 5) if args.what == "ssd" and "--seeds" not in sys.argv else args.seeds
    pareto_front(generate(0, 10))  # warm-up: the numba kernel loads from its cache
    {"quality": quality, "ties": ties, "ssd": ssd}[args.what](args)


if __name__ == "__main__":
    main()
