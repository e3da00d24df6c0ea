"""The paper's experiment: PerSched on sets 1-10 beside Table 4, the best pattern we find
(``trace-compact``), the bounds with their scope, and which sets are proved optimal."""

from __future__ import annotations

import math
import statistics
import sys
import time
from dataclasses import replace
from functools import lru_cache
from pathlib import Path

from iosched.core import CERTIFIED_GAP, solve
from iosched.evaluate.periodic import dilation, evaluate_trace, sys_efficiency
from iosched.heuristics.periodic_online import simulate_online
from iosched.heuristics.periodic_persched import search
from iosched.instances.periodic import (
    PAPER_FIGURE7,
    PAPER_SETS,
    PAPER_TABLE3,
    PAPER_TABLE4,
    PAPER_TABLE5,
    paper_set,
)
from iosched.models.periodic_bounds import bounds, gap_reference, paper_bound
from iosched.reproduce import Reproduction
from iosched.solvers import Profile

FINDER_SECONDS = 10.0  # trace-compact's budget per set here (its default profile allows 60 s)


def _proved(best: float | None, lp: float, contiguity: float, capped: float) -> str:
    """Which optimality the figures prove: over every schedule (the best meets the long-run LP
    bound), every periodic pattern (it meets the contiguity bound), every pattern within the
    instance's cap T <= 10 t_min (it meets the period-capped bound, the problem's), or none (nor without a
    schedule)."""
    if best is None:
        return "-"
    if best >= lp * (1 - CERTIFIED_GAP):
        return "all schedules"
    if best >= contiguity * (1 - CERTIFIED_GAP):
        return "all periodic patterns"
    if best >= capped * (1 - CERTIFIED_GAP):
        return "T <= 10 t_min"
    return "-"


def reproduce_set(k: int, workers: int = 1, finder_seconds: float = FINDER_SECONDS) -> dict:
    """One row: PerSched and PerSched-MinDil on set k beside the paper, trace-compact, the bounds."""
    inst = paper_set(k)
    se = solve("periodic", inst, "persched", workers=workers)
    dil = solve("periodic", inst, "persched-mindil", workers=workers)
    best = solve("periodic", inst, "trace-compact", workers=workers,
                 profile=Profile("reproduce", finder_seconds, 1e-4, 1, 0))
    b = bounds(inst)
    paper = PAPER_TABLE4[k]
    lp = b["lp_sys_efficiency"]
    return {
        "set": k,
        "sys_efficiency": se.objective, "paper_sys_efficiency": paper[3],
        "dilation": se.evaluation.dilation, "paper_dilation": paper[2],
        "min_dilation": dil.objective, "paper_min_dilation": paper[0],
        "period": se.solution.period,
        "feasible": se.evaluation.feasible and dil.evaluation.feasible and best.evaluation.feasible,
        "paper_bound": b["paper_sys_efficiency"], "lp_sys_efficiency": lp, "lp_dilation": b["lp_dilation"],
        "capped_sys_efficiency": b["capped_sys_efficiency"], "period_cap_s": b["period_cap_s"],
        "contiguity_sys_efficiency": b["contiguity_sys_efficiency"],
        "gap": se.gap, "gap_dilation": dil.gap,
        "best": best.objective, "best_period": best.solution.period, "best_status": best.status.value,
        "best_gap": (b["capped_sys_efficiency"] - best.objective) / b["capped_sys_efficiency"],
        "proved": _proved(best.objective, lp, b["contiguity_sys_efficiency"], b["capped_sys_efficiency"]),
        "time_s": se.wall_time_s, "time_mindil_s": dil.wall_time_s, "time_best_s": best.wall_time_s,
    }


COLUMNS = [
    ("set", "set", "{}"),
    ("PerSched SE", "sys_efficiency", "{:.4f}"), ("paper", "paper_sys_efficiency", "{:.4f}"),
    ("Dilation", "dilation", "{:.3f}"), ("paper", "paper_dilation", "{:.3f}"),
    ("MinDil", "min_dilation", "{:.3f}"), ("paper", "paper_min_dilation", "{:.3f}"),
    ("best SE (trace-compact)", "best", "{:.6f}"), ("its period s", "best_period", "{:.0f}"),
    ("eq.5 bound", "paper_bound", "{:.4f}"), ("LP SysEff (all schedules)", "lp_sys_efficiency", "{:.6f}"),
    ("contiguity (all periodic)", "contiguity_sys_efficiency", "{:.6f}"),
    ("capped (T <= 10 t_min: the problem's)", "capped_sys_efficiency", "{:.6f}"),
    ("gap best-capped", "best_gap", "{:.3%}"), ("proved optimal", "proved", "{}"),
    ("LP Dil", "lp_dilation", "{:.3f}"), ("gap Dil", "gap_dilation", "{:.2%}"),
    ("feasible", "feasible", "{}"), ("PerSched s", "time_s", "{:.2f}"), ("best s", "time_best_s", "{:.2f}"),
]


def _cell(fmt: str, value) -> str:
    return "-" if value is None else fmt.format(value)


def format_table(rows: list[dict]) -> str:
    """A Markdown table of ``reproduce_set`` rows."""
    head = "| " + " | ".join(c[0] for c in COLUMNS) + " |"
    sep = "|" + "|".join("---" for _ in COLUMNS) + "|"
    body = ["| " + " | ".join(_cell(fmt, r[key]) for _, key, fmt in COLUMNS) + " |" for r in rows]
    return "\n".join([head, sep, *body])


SETS = list(PAPER_SETS)


def reproduce(workers: int = 1, progress: bool = True, sets: list[int] | None = None, report: bool = False,
              full: bool = False) -> Reproduction:
    """PerSched, PerSched-MinDil and trace-compact on the paper's sets (all by default) beside Table 4;
    with ``report``, every compared figure (:func:`comparisons`, ``full``: Figure 7 at the authors'
    40 values of K') and Figures 6 and 7 drawn by the reproduction's ``figures``."""
    from tqdm import tqdm

    from iosched.errors import ParameterError

    sets = SETS if sets is None else sets
    bad = [k for k in sets if k not in PAPER_SETS]
    if bad:
        raise ParameterError(f"sets must be among {SETS}, got {bad[0]!r}")
    start = time.perf_counter()
    rows = [reproduce_set(k, workers=workers)
            for k in tqdm(sets, desc="paper sets", file=sys.stderr, disable=not progress)]
    ranges = "; ".join(f"set {r['set']}: {r['period_cap_s']:.6g} s" for r in rows)
    notes = "\n".join([
        f"time over {len(rows)} sets: PerSched {sum(r['time_s'] for r in rows):.2f} s, PerSched-MinDil "
        f"{sum(r['time_mindil_s'] for r in rows):.2f} s, trace-compact {sum(r['time_best_s'] for r in rows):.2f} s "
        f"({FINDER_SECONDS:g} s budget per set; {workers} worker(s)); whole run {time.perf_counter() - start:.1f} s",
        f"gap best-capped: (capped - best) / capped, against {gap_reference(None, 'sys_efficiency')}: the problem "
        f"is the paper's, periods up to K' t_min = 10 t_min (t_min: the authors'; {ranges}), and every pattern "
        "here is within it (models.periodic_counts.capped_bound: integer counts, cycles, volume, contiguity cuts "
        "and blocking).",
        "The contiguity bound is the LP bound with cuts for transfers that cannot overlap as the LP needs "
        "(computes are contiguous: models.periodic.contiguity_bound); it holds for every periodic pattern.",
        "proved optimal: 'all schedules' when the best meets the LP bound, 'all periodic patterns' the contiguity "
        "bound, 'T <= 10 t_min' the capped bound.",
        f"best within 0.1 % of the capped bound on {sum(r['best_gap'] <= 0.001 for r in rows)} of {len(rows)} sets; "
        f"proved optimal on {sum(r['proved'] != '-' for r in rows)}.",
    ])
    rep = Reproduction("periodic: PerSched beside Table 4, the best pattern found, and the bounds with their scope",
                       rows, format_table(rows), all(r["feasible"] for r in rows), notes)
    if report:
        rep.comparisons = comparisons(full, rows)
        rep.figures = lambda folder: [Path(p) for p in draw_figures(folder, full)]
    return rep


# --- every compared figure as data (issue 24): Tables 3-5, Figures 6-7, the Online column ------------

PAPER = "periodic (Aupy, Gainaru, Le Fèvre: Periodic I/O scheduling for super-computers)"
ONLINE = ("fcfs", "max-syseff", "min-dilation", "minmax")  # the greedy online heuristics of Gainaru et al.
FIGURE7_K_PRIMES = (1, 2, 3, 5, 10, 20, 100)
FIGURE7_K_PRIMES_FULL = tuple(x / 2 for x in range(2, 41)) + (100,)  # the authors' study: 1 to 20 by 0.5, 100
CALIBRATION_STEPS = 20  # bisection steps for the effective bandwidth that matches a measured SysEfficiency


def entry(table_or_figure: str, row, column: str, paper_value, ours, unit: str = "", note: str = "") -> dict:
    """One compared figure: {paper, table_or_figure, row, column, paper_value, ours, unit,
    relative_difference, note}; relative_difference is (ours - paper) / |paper| where both exist."""
    rel = None if paper_value in (None, 0) or ours is None else (ours - paper_value) / abs(paper_value)
    return {"paper": PAPER, "table_or_figure": table_or_figure, "row": str(row), "column": column,
            "paper_value": paper_value, "ours": ours, "unit": unit, "relative_difference": rel, "note": note}


def table4_entries(rows: list[dict]) -> list[dict]:
    """Table 4's PerSched columns from :func:`reproduce`'s rows (the Online column: :func:`online_entries`)."""
    out = []
    for r in rows:
        k = r["set"]
        out += [
            entry("Table 4", f"set {k}", "min Dilation", r["paper_min_dilation"], r["min_dilation"], "",
                  "persched-mindil: the least Dilation over every pattern PerSched's two loops build"),
            entry("Table 4", f"set {k}", "upper bound SysEff (eq. 5)", PAPER_TABLE4[k][1], r["paper_bound"], "",
                  f"eq. 5 ignores that the applications share B; the long-run LP bound, valid for every "
                  f"schedule, is {r['lp_sys_efficiency']:.4f}"),
            entry("Table 4", f"set {k}", "PerSched Dilation", r["paper_dilation"], r["dilation"]),
            entry("Table 4", f"set {k}", "PerSched SysEff", r["paper_sys_efficiency"], r["sys_efficiency"]),
        ]
    return out


def _kind(app) -> str:
    return app.name.split("-")[0]


def slowdowns(instance, trace) -> dict[str, float]:
    """Per application kind, the average bandwidth slowdown of its I/O phases in ``trace``:
    1 - (volume / (I/O completion - I/O request)) / (its bandwidth alone, min(β b, B)), over every
    completed instance of every application of that kind (Table 3's measure)."""
    lost: dict[str, list[float]] = {}
    for k, (app, insts) in enumerate(zip(instance.applications, trace.applications)):
        alone = instance.max_rate(k)
        for inst in insts:
            if inst.io:
                took = max(e for _, e, _ in inst.io) - (inst.compute_start + app.work)
                lost.setdefault(_kind(app), []).append(1 - app.io_volume / took / alone)
    return {kind: sum(v) / len(v) for kind, v in lost.items()}


def _no_scheduler(instance, bandwidth: float | None = None) -> tuple[float, dict[str, float]]:
    """SysEfficiency and slowdowns of the fluid run with B (or ``bandwidth``) shared max-min fairly."""
    if bandwidth is not None:
        instance = replace(instance, platform=replace(instance.platform, bandwidth=bandwidth))
    trace = simulate_online(instance, "fairshare")
    return evaluate_trace(instance, trace).sys_efficiency, slowdowns(instance, trace)


def effective_bandwidth(instance, target_sys_efficiency: float) -> float | None:
    """The file-system bandwidth B' (data/s) at which the no-scheduler fluid run reaches
    ``target_sys_efficiency`` (bisection over B' in (0, B]; None when even B' = B stays below it)."""
    lo, hi = 0.0, instance.platform.bandwidth
    if _no_scheduler(instance)[0] < target_sys_efficiency:
        return None
    for _ in range(CALIBRATION_STEPS):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if _no_scheduler(instance, mid)[0] < target_sys_efficiency else (lo, mid)
    return hi


def table3_entries(sets=None) -> list[dict]:
    """Table 3 (no I/O scheduler, measured on Jupiter) beside the fluid model's run with B shared
    max-min fairly. A SysEfficiency that differs is explained by measurement: the bandwidth B'
    at which the fluid run reaches the measured value (what the real I/O system delivered, in the
    model's terms), and the slowdowns of the fluid run at B'."""
    out = []
    for k in sets or PAPER_TABLE3:
        paper_slow, paper_se = PAPER_TABLE3[k]
        inst = paper_set(k)
        se, slow = _no_scheduler(inst)
        B = inst.platform.bandwidth
        eff = effective_bandwidth(inst, paper_se)
        at_eff = _no_scheduler(inst, eff)[1] if eff is not None else {}
        missing = "the seed gives neither the bandwidth Jupiter delivered under contention nor its overheads"
        calibrated = (f"the measured SysEfficiency is the fluid run's at B' = {eff:.3g} GB/s ({eff / B:.0%} of "
                      f"B = {B:g} GB/s)" if eff is not None else "the measured SysEfficiency is above the fluid "
                      "run's even at B")
        out.append(entry("Table 3", f"set {k}", "SysEfficiency (no scheduler)", paper_se, se, "",
                         f"fluid run, B shared max-min fairly without loss or per-request cost; {calibrated}; "
                         f"{missing}"))
        for kind, value in paper_slow.items():
            there = f"; at B' the fluid run's is {at_eff[kind]:.3f}" if kind in at_eff else ""
            out.append(entry("Table 3", f"set {k} {kind}", "bandwidth slowdown", value, slow.get(kind), "fraction",
                             "fraction of the bandwidth alone lost to congestion, averaged over the I/O phases of "
                             f"the fluid run with fair sharing{there}: max-min fairness favours the applications "
                             f"of smaller cap, which the measured machine need not do; {missing}"))
    return out


def table5_entries(sets=None) -> list[dict]:
    """Table 5: the most instances of one application in PerSched's pattern, and n_max."""
    out = []
    for k in sets or SETS:
        inst = paper_set(k)
        found = search(inst)
        counts = dict(found["trace"])[found["period"]]
        cycles = [a.work + inst.time_io(i) for i, a in enumerate(inst.applications)]
        n_inst, n_max = PAPER_TABLE5[k]
        out.append(entry("Table 5", f"set {k}", "n_inst", n_inst, max(counts), "instances",
                         f"PerSched's pattern at T = {found['period']:.6g} s"))
        out.append(entry("Table 5", f"set {k}", "n_max", n_max, max(cycles) / min(cycles), "",
                         "max_k (w_k + time_io_k) / min_k (w_k + time_io_k); the paper prints 3 digits"))
    return out


@lru_cache(maxsize=64)
def _figure6_trace(k: int) -> tuple:
    """(period, SysEfficiency, Dilation) of every pattern of PerSched's upward loop on set k (none pruned)."""
    inst = paper_set(k)
    found = search(inst, prune=False)
    upward = found["trace"][:found["periods_planned"]]
    return tuple((T, sys_efficiency(inst, c, T), dilation(inst, c, T)) for T, c in upward if min(c) > 0)


def figure6_entries(sets=None) -> list[dict]:
    """Figure 6 (SysEfficiency and Dilation against the period): the seed shows it as a picture
    only, so each set's row gives our best SysEfficiency over the upward loop, its period, and the
    spread; :func:`draw_figures` draws the curves."""
    out = []
    for k in sets or SETS:
        points = _figure6_trace(k)
        T, se, dil = max(points, key=lambda p: p[1])
        low = min(p[1] for p in points)
        out.append(entry("Figure 6", f"set {k}", "best SysEfficiency over T in [t_min, 10 t_min]", None, se, "",
                         f"at T = {T:.6g} s (Dilation {dil:.4f}); lowest {low:.4f} over {len(points)} periods. "
                         "Missing from the seed: the figure's values (and which set it shows)"))
    return out


@lru_cache(maxsize=64)
def _figure7_runs(k: int, k_primes: tuple) -> tuple:
    """(K', SysEfficiency, its Dilation) of PerSched on set k for each K' (the instance's cap set to it: the
    figure studies the problem at each cap)."""
    inst = paper_set(k)
    out: list[tuple[int, float | None, float | None]] = []
    for kp in k_primes:
        found = search(replace(inst, k_prime=kp))
        T = found["period"]
        if T is None:  # no period in [t_min, K' t_min] holds every application
            out.append((kp, None, None))
            continue
        c = dict(found["trace"])[T]
        out.append((kp, sys_efficiency(inst, c, T), dilation(inst, c, T)))
    return tuple(out)


def figure7_points(full: bool = False, sets=None) -> list[tuple]:
    """(K', mean and standard error over the sets of SysEfficiency(K') / SysEfficiency(100), the same
    for Dilation(K') / Dilation(100), how many sets have a pattern at that K') -- Figure 7's curves.
    A set whose periods up to K' t_min hold no pattern with every application is left out at that K'."""
    kps = FIGURE7_K_PRIMES_FULL if full else FIGURE7_K_PRIMES
    runs = [_figure7_runs(k, kps) for k in sets or SETS]
    out = []
    for j, kp in enumerate(kps):
        have = [r for r in runs if r[j][1] is not None]
        se = [r[j][1] / r[-1][1] for r in have]
        dil = [r[j][2] / r[-1][2] for r in have]
        out.append((kp, statistics.fmean(se), _stderr(se), statistics.fmean(dil), _stderr(dil), len(have)))
    return out


def _stderr(values) -> float:
    return statistics.stdev(values) / math.sqrt(len(values)) if len(values) > 1 else 0.0


def figure7_entries(full: bool = False, sets=None) -> list[dict]:
    """Figure 7: PerSched's SysEfficiency and the Dilation of that pattern at K', over K' = 100,
    averaged over the sets; the seed's text gives K' = 3 and 10."""
    out = []
    for kp, se, se_err, dil, dil_err, n in figure7_points(full, sets):
        paper = PAPER_FIGURE7.get(kp, (None, None))
        said = "" if kp in PAPER_FIGURE7 else "not in the seed's text (the figure's values are missing); "
        if n < len(sets or SETS):
            said += (f"{len(sets or SETS) - n} set(s) have no pattern with every application up to K' t_min "
                     "(ours never returns one without; the authors' code scores it anyway); ")
        out.append(entry("Figure 7", f"K' = {kp:g}", "SysEfficiency(K') / SysEfficiency(100)", paper[0], se, "",
                         f"{said}mean over {n} sets, standard error {se_err:.2g}"
                         + ("; the paper says 'within 0.3 %' (3) and '0.1 %' (10)" if kp in PAPER_FIGURE7 else "")))
        out.append(entry("Figure 7", f"K' = {kp:g}", "Dilation(K') / Dilation(100)", paper[1], dil, "",
                         f"{said}mean over {n} sets, standard error {dil_err:.2g}"
                         + ("; the paper says '5 % higher' (3) and 'within 1 %' (10)" if kp in PAPER_FIGURE7 else "")))
    return out


def online_entries(sets=None) -> list[dict]:
    """Table 4's Online column: the best SysEfficiency and the best Dilation over the greedy online
    heuristics (each objective from whichever is best for it, as the paper does), simulated in the
    fluid model, with what the paper's own pair implies."""
    out = []
    for k in sets or SETS:
        inst = paper_set(k)
        runs = {p: evaluate_trace(inst, simulate_online(inst, p)) for p in ONLINE}
        se_by = max(runs, key=lambda p: runs[p].sys_efficiency)
        dil_by = min(runs, key=lambda p: runs[p].dilation)
        paper_dil, paper_se = PAPER_TABLE4[k][4], PAPER_TABLE4[k][5]
        floor = paper_bound(inst) / paper_dil  # every ρ̃_k >= ρ_k / Dilation
        caveat = ("the paper's column cannot come from its own fluid model (a work-conserving policy keeps B "
                  "saturated there): it reflects a setting the seed does not state (overheads, or transfers "
                  "only at full rate)")
        if paper_se < floor * (1 - 1e-3):
            caveat += (f"; the heuristic that reached Dilation {paper_dil} had SysEfficiency >= {floor:.3f} "
                       f"(Σ β_k ρ_k / (N Dilation)) in that run, above the column's best {paper_se}")
        kinds = {_kind(a) for a in inst.applications}
        if len(kinds) == 1:
            app = inst.applications[0]
            rate = paper_se * inst.platform.processors / sum(a.processors for a in inst.applications) \
                * sum(a.io_volume / a.work for a in inst.applications)
            caveat += (f"; with one application kind ({_kind(app)}) its SysEfficiency means the I/O system "
                       f"delivered {rate:.3g} GB/s, {rate / inst.platform.bandwidth:.0%} of B")
        out.append(entry("Table 4", f"set {k}", "Online SysEff", paper_se, runs[se_by].sys_efficiency, "",
                         f"best of {', '.join(ONLINE)}: {se_by}; {caveat}"))
        out.append(entry("Table 4", f"set {k}", "Online Dilation", paper_dil, runs[dil_by].dilation, "",
                         f"best of {', '.join(ONLINE)}: {dil_by}; {caveat}"))
    return out


def comparisons(full: bool = False, rows: list[dict] | None = None) -> list[dict]:
    """Every figure of the paper we compare, as :func:`entry` dicts: Table 4 (from ``rows`` of
    :func:`reproduce` when given) and its Online column, Tables 3 and 5, Figures 6 and 7 (``full``:
    Figure 7 at the authors' 40 values of K' instead of 7)."""
    out = table4_entries(rows) if rows else []
    return (out + online_entries() + table3_entries() + table5_entries() + figure6_entries()
            + figure7_entries(full))


def draw_figures(folder, full: bool = False) -> list[str]:
    """Figures 6 and 7 as PNGs in ``folder`` (created if needed), the paper's values beside ours
    where the seed gives them; returns the paths written."""
    from iosched.plots.periodic import plot_figure6, plot_figure7

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    six = folder / "periodic_figure6.png"
    plot_figure6({k: _figure6_trace(k) for k in SETS}, six)
    seven = folder / "periodic_figure7.png"
    plot_figure7(figure7_points(full), PAPER_FIGURE7, seven)
    return [str(six), str(seven)]
