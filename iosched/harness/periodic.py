"""The paper's experiment: PerSched on sets 1-10 beside Table 4 and the bounds."""

from __future__ import annotations

import sys
import time

from iosched.core import solve
from iosched.harness import Reproduction
from iosched.instances.periodic import PAPER_SETS, PAPER_TABLE4, paper_set
from iosched.models.periodic import bounds


def reproduce_set(k: int, workers: int = 1) -> dict:
    """One row: PerSched and PerSched-MinDil on set k, the paper's figures and the bounds."""
    inst = paper_set(k)
    se = solve("periodic", inst, "persched", workers=workers)
    dil = solve("periodic", inst, "persched-mindil", workers=workers)
    b = bounds(inst)
    paper = PAPER_TABLE4[k]
    return {
        "set": k,
        "sys_efficiency": se.objective, "paper_sys_efficiency": paper[3],
        "dilation": se.evaluation.dilation, "paper_dilation": paper[2],
        "min_dilation": dil.objective, "paper_min_dilation": paper[0],
        "period": se.solution.period, "feasible": se.evaluation.feasible and dil.evaluation.feasible,
        "paper_bound": b["paper_sys_efficiency"], "lp_sys_efficiency": b["lp_sys_efficiency"],
        "lp_dilation": b["lp_dilation"], "gap": se.gap, "gap_dilation": dil.gap,
        "time_s": se.wall_time_s, "time_mindil_s": dil.wall_time_s,
    }


COLUMNS = [
    ("set", "set", "{}"),
    ("SysEff", "sys_efficiency", "{:.4f}"), ("paper", "paper_sys_efficiency", "{:.4f}"),
    ("Dilation", "dilation", "{:.3f}"), ("paper", "paper_dilation", "{:.3f}"),
    ("MinDil", "min_dilation", "{:.3f}"), ("paper", "paper_min_dilation", "{:.3f}"),
    ("eq.5 bound", "paper_bound", "{:.4f}"), ("LP SysEff", "lp_sys_efficiency", "{:.4f}"),
    ("LP Dil", "lp_dilation", "{:.3f}"), ("gap SE", "gap", "{:.2%}"), ("gap Dil", "gap_dilation", "{:.2%}"),
    ("feasible", "feasible", "{}"), ("time s", "time_s", "{:.2f}"),
]


def format_table(rows: list[dict]) -> str:
    """A Markdown table of ``reproduce_set`` rows."""
    head = "| " + " | ".join(c[0] for c in COLUMNS) + " |"
    sep = "|" + "|".join("---" for _ in COLUMNS) + "|"
    body = ["| " + " | ".join(fmt.format(r[key]) for _, key, fmt in COLUMNS) + " |" for r in rows]
    return "\n".join([head, sep, *body])


SETS = list(PAPER_SETS)


def reproduce(workers: int = 1, progress: bool = True, sets: list[int] | None = None) -> Reproduction:
    """PerSched and PerSched-MinDil on the paper's sets (all by default) beside Table 4."""
    from tqdm import tqdm

    from iosched.errors import ParameterError

    sets = SETS if sets is None else sets
    bad = [k for k in sets if k not in PAPER_SETS]
    if bad:
        raise ParameterError(f"sets must be among {SETS}, got {bad[0]!r}")
    start = time.perf_counter()
    rows = [reproduce_set(k, workers=workers)
            for k in tqdm(sets, desc="paper sets", file=sys.stderr, disable=not progress)]
    notes = (f"PerSched time over {len(rows)} sets: {sum(r['time_s'] for r in rows):.2f} s (with {workers} "
             f"worker(s)); whole run {time.perf_counter() - start:.1f} s")
    return Reproduction("periodic: PerSched on the paper's sets beside Table 4 and the bounds", rows,
                        format_table(rows), all(r["feasible"] for r in rows), notes)
