"""The sweep of P: every method's modelled time and conflicts against the optimum.

    python benchmarks/filedomain_sweep.py [--servers 4 8 64] [--profile default] [--out FILE.md]

For each S, the sweep platform (``iosched.instances.filedomain.sweep``: 16 S stripes of
1 MiB, servers 1 GB/s, aggregators 0.25 GB/s, 0.1 ms per lock, 1 ms per conflict) with P
from 2 to 4 S (every P for S <= 8; for larger S every P up to 8, then every S/8-th and the
P next to multiples of S: ``--all`` for every P). Each heuristic is scored by the
evaluator; the optimum comes from ``exact`` with the aggregated engine under the profile
(the relaxation's bound for every solution, the column splits and the relaxation's loads
laid out per server, and the whole-stripe count model): a row says ``optimal`` when the best solution meets the bound
(within the profile's gap), else the gap to the bound (the exact column is then the best
solution found, not an optimum). Columns: time / exact and conflicts. Wall and CPU time
of each exact solve are measured in this run (other work may share the machine).
"""

from __future__ import annotations

import argparse
import sys
import time

import iosched
from iosched.instances.filedomain_presets import sweep

METHODS = ["even", "stripe-aligned", "stripe-size-io", "static-cyclic", "group-cyclic", "transpose", "lustre", "gpfs"]
SHORT = {"even": "even", "stripe-aligned": "aligned", "stripe-size-io": "ssio", "static-cyclic": "static",
         "group-cyclic": "group", "transpose": "transp", "lustre": "lustre", "gpfs": "gpfs"}


def p_values(S: int, every: bool) -> list[int]:
    if every or S <= 8:
        return list(range(2, 4 * S + 1))
    step = max(1, S // 8)
    picks = set(range(2, 9)) | set(range(step, 4 * S + 1, step))
    picks |= {m * S + d for m in (1, 2, 3, 4) for d in (-1, 0, 1)}
    return sorted(p for p in picks if 2 <= p <= 4 * S)


def run(S: int, P: int, profile: str) -> dict:
    inst = sweep(S, P)
    row = {"S": S, "P": P}
    for m in METHODS:
        r = iosched.solve("filedomain", inst, m)
        row[m] = (r.objective, r.evaluation.conflicts)
    wall, cpu = time.perf_counter(), time.process_time()
    ex = iosched.solve("filedomain", inst, "exact", engine="aggregated", profile=profile)
    row["exact_wall_s"], row["exact_cpu_s"] = time.perf_counter() - wall, time.process_time() - cpu
    row["exact"] = (ex.objective, ex.evaluation.conflicts)
    row["status"], row["bound"], row["chosen"] = ex.status.value, ex.bound, ex.info.get("chosen")
    row["gap"] = ex.gap
    return row


def table(rows: list[dict]) -> str:
    head = "| P | exact ms (conflicts) | proof | " + " | ".join(SHORT[m] for m in METHODS) + \
        " | best heuristic | exact s (cpu) |"
    lines = [head, "|" + "---|" * (len(METHODS) + 5)]
    for r in rows:
        opt = r["exact"][0]
        cells = [f"{r[m][0] / opt:.2f} ({r[m][1]})" for m in METHODS]
        best = min(METHODS, key=lambda m: r[m][0])
        status = "optimal" if r["status"] == "optimal" else f"gap {r['gap']:.1%} (bound {r['bound'] * 1e3:.2f})"
        lines.append(f"| {r['P']} | {opt * 1e3:.2f} ({r['exact'][1]}) | {status} | " + " | ".join(cells) +
                     f" | {SHORT[best]} {r[best][0] / opt:.3f} | {r['exact_wall_s']:.1f} ({r['exact_cpu_s']:.1f}) |")
    return "\n".join(lines)


def summary(rows: list[dict]) -> str:
    proven = sum(r["status"] == "optimal" for r in rows)
    wins = {m: sum(min(METHODS, key=lambda k: r[k][0]) == m for r in rows) for m in METHODS}
    ratio = max(max(r[m][0] for m in METHODS) / min(r[m][0] for m in METHODS) for r in rows)
    worst_gap = max(min(r[m][0] for m in METHODS) / r["exact"][0] for r in rows if r["status"] == "optimal")
    return (f"{proven} of {len(rows)} optima proven; best heuristic per P: "
            + ", ".join(f"{SHORT[m]} {n}" for m, n in wins.items() if n)
            + f"; where proven, the best heuristic is at most {worst_gap:.3f} x the optimum; "
            f"worst / best method up to {ratio:.1f} x")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--servers", type=int, nargs="*", default=[4, 8, 64])
    ap.add_argument("--profile", default="default")
    ap.add_argument("--all", action="store_true", help="every P from 2 to 4 S, also for large S")
    ap.add_argument("--out", help="also write the tables (Markdown) here")
    args = ap.parse_args()
    text = []
    for S in args.servers:
        rows = []
        for P in p_values(S, args.all):
            rows.append(run(S, P, args.profile))
            print(f"S={S} P={P} done ({rows[-1]['status']}, {rows[-1]['exact_wall_s']:.1f} s)", file=sys.stderr,
                  flush=True)
        block = f"### S = {S} ({16 * S} stripes of 1 MiB)\n\n" + table(rows) + "\n\n" + summary(rows) + "\n"
        print(block, flush=True)
        text.append(block)
    if args.out:
        with open(args.out, "w") as f:
            f.write(__doc__.split("\n\n")[2].replace("\n", " ") + "\n\n" + "\n".join(text))


if __name__ == "__main__":
    main()
