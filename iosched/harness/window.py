"""The paper's example (BBSched, Table 1): every window method beside the paper's Table 1b; and a
simulated table (Section 4): the cheap window methods in the batch simulator on a slice of the
Theta log with the S2 and S4 mixes, beside the paper's Theta-S4 figures."""

from __future__ import annotations

from iosched.core import solve
from iosched.errors import InstanceError
from iosched.harness import Reproduction, comparison
from iosched.instances.window import PAPER_EXAMPLE, PAPER_PARETO

# Table 1b: which of its three solutions each method picks (1: J1+J4, 2: J1+J5, 3: J2..J5). Its naive row is
# J1 with J4 backfilled (EASY); within one window that is first-fit, while naive itself stops at J2 (J1 alone)
PAPER_CHOICE = {"first-fit": 1, "constrained-cpu": 2, "weighted (0.8 / 0.2)": 2, "bin-packing": 2}
SOLUTIONS = {("J1", "J4"): 1, ("J1", "J5"): 2, ("J2", "J3", "J4", "J5"): 3}
RUNS = [("naive", {}), ("first-fit", {}), ("bin-packing", {}), ("constrained-cpu", {}), ("constrained-bb", {}),
        ("weighted", {"node_weight": 0.5}), ("weighted", {"node_weight": 0.8}), ("exact", {}),
        ("bbsched-ga", {}), ("nsga2", {"generations": 50})]


def reproduce_example() -> list[dict]:
    """One row per method: its choice, utilisations, and the paper's choice where Table 1b gives one."""
    rows = []
    for method, params in RUNS:
        res = solve("window", PAPER_EXAMPLE, method, **params)
        label = method
        if method == "weighted":
            label = f"weighted ({params['node_weight']:g} / {1 - params['node_weight']:g})"
        rows.append({"method": label, "selected": " ".join(res.solution.selected),
                     "solution": SOLUTIONS.get(tuple(res.solution.selected), "-"),
                     "paper": PAPER_CHOICE.get(label, "-"),
                     "node_util": res.evaluation.node_utilization, "bb_util": res.evaluation.bb_utilization,
                     "front": len(res.solution.front) or "-", "feasible": res.evaluation.feasible,
                     "pareto": ", ".join(sorted(str(SOLUTIONS.get(p.jobs, "other")) for p in res.solution.front))})
    return rows


PAPER = "BBSched (Fan et al., HPDC 2019)"
UTILISATION = {1: (90, 20), 2: (100, 20), 3: (80, 90)}  # Table 1b: each solution's node and BB utilisation, %
# Table 1b's columns beside our methods: the naive column is J1 with J4 backfilled (first-fit within one window);
# the "Pareto set" column marks solutions 2 and 3, the front our exact method and the GAs return
TABLE_1B = {"first-fit": "1", "constrained-cpu": "2", "weighted (0.8 / 0.2)": "2", "bin-packing": "2"}
PARETO_SET = "2, 3"


def comparisons(rows: list[dict]) -> list[dict]:
    """Table 1b beside ours: each solution's utilisations, each method's choice where the table gives
    one, and the Pareto set against the fronts of exact, bbsched-ga and nsga2."""
    out = [comparison(PAPER, "Table 1b", f"solution {k}", what, paper, ours, "%")
           for k, (n, b) in UTILISATION.items()
           for what, paper, ours in (("node utilisation", n, _util(k, "node")), ("BB utilisation", b, _util(k, "bb")))]
    for r in rows:
        if r.get("simulated"):
            continue
        if r["method"] in TABLE_1B:
            out.append(comparison(PAPER, "Table 1b", r["method"], "solution chosen", TABLE_1B[r["method"]],
                                  str(r["solution"])))
        if r["method"] in ("exact", "bbsched-ga", "nsga2"):
            out.append(comparison(PAPER, "Table 1b", r["method"], "Pareto set (solutions)", PARETO_SET, r["pareto"]))
    return out


def _util(k: int, what: str) -> float:
    """Node or BB utilisation (%) of Table 1b's solution k, evaluated on the example."""
    from iosched.evaluate.window import Selection, evaluate

    jobs = next(s for s, i in SOLUTIONS.items() if i == k)
    ev = evaluate(PAPER_EXAMPLE, Selection(jobs))
    return round(100 * (ev.node_utilization if what == "node" else ev.bb_utilization), 6)


def format_table(rows: list[dict]) -> str:
    head = "| method | selected | Table 1b solution | paper's choice | nodes | BB | front points | feasible |"
    lines = [head, "|---|---|---|---|---|---|---|---|"]
    lines += [f"| {r['method']} | {r['selected']} | {r['solution']} | {r['paper']} | {r['node_util']:.0%} | "
              f"{r['bb_util']:.0%} | {r['front']} | {r['feasible']} |" for r in rows]
    exact = [p[:2] for p in PAPER_PARETO]
    lines.append(f"\nThe paper's Pareto set (solutions 2 and 3): {exact} (nodes, TB)")
    return "\n".join(lines)


SIM_JOBS = 1000  # the first jobs of the Theta log: the table takes about 30 s here
SIM_MIXES = ("S2", "S4")
SIM_METHODS = ("base", "naive", "bin-packing", "weighted", "constrained-cpu", "constrained-bb", "exact")
# Table 3 of the paper, Theta-S4, BBSched with a window of 20 (its Figures 6-8 give the other methods as bars only)
PAPER_THETA_S4 = "node usage 73.29 %, BB usage 89.54 %, average wait 8,847 s, average slowdown 8.16"


def reproduce_simulation(jobs: int = SIM_JOBS) -> tuple[list[dict], str]:
    """The simulated table (rows and Markdown), or no rows and why when the Theta log is missing."""
    from iosched.batch import study

    try:
        study.theta_log()
    except InstanceError as e:
        return [], f"Simulated table skipped: {e}"
    methods = [m for m in study.CHEAP if m[0] in SIM_METHODS]
    rows = study.run(("theta",), SIM_MIXES, methods, jobs)
    text = (f"Simulated (first {jobs} jobs of the Theta 2022 log, 4,392 nodes, 1.26 PB burst buffer, WFP + EASY, "
            f"window 20; usage and waits without the first and last 10 % of the submit span; GAs in "
            f"benchmarks/batch_sim.py):\n\n{study.table(rows)}\n\n" + "\n".join(study.findings(rows))
            + f"\n\nThe paper (Theta 2018, Theta-S4, BBSched): {PAPER_THETA_S4}; up to 41 % less wait than the "
            f"baseline.")
    return rows, text


def reproduce(workers: int = 1, progress: bool = True, simulate: bool = True, jobs: int = SIM_JOBS) -> Reproduction:
    """Every window method on the paper's example beside Table 1b (one instance: no workers, no progress),
    then (``simulate``) the simulated table on the first ``jobs`` jobs of the Theta log."""
    rows = reproduce_example()
    table = format_table(rows)
    if simulate:
        sim_rows, text = reproduce_simulation(jobs)
        rows = rows + [{"simulated": True, **r} for r in sim_rows]
        table += "\n\n" + text
    return Reproduction("window: the paper's example (100 nodes, 100 TB) beside Table 1b, and a simulation", rows,
                        table, all(r.get("feasible", True) for r in rows), comparisons=comparisons(rows))
