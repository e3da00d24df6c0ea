"""Every installed MILP/LP backend side by side on each problem's exact methods, same profile.

``table``: each case of SMALL (every community licence takes them; ``default`` profile, 60 s, which they
need only on a loaded machine) and LARGE (past some licences: HiGHS and SCIP, and the others' licence
error; ``quick`` profile, 10 s: how far each backend gets) on every installed backend: status, value,
bound, the model's own status, method time. Each solve runs in a fresh process
(HiGHS fixes its thread pool once per process; a backend's licence start is part of its time). Where two
backends prove optimality their values must agree within the gap (:func:`disagreements`).

``paths``: how an array model (:class:`iosched.models.matrix.Matrix`) reaches a backend other than HiGHS,
on the largest time-indexed MILP malleable's ``milp`` builds in its default profile: the MPS file HiGHS
writes, read by the backend's own reader, against a rebuild in Pyomo handed over by Pyomo.

``lps``: the LPs built as arrays (:class:`iosched.solvers.lp.LP`) on every installed backend: malleable's
interval LP, completion-order LP and Lagrangian bound (mean completion), and periodic's compaction LP of
PerSched's pattern (``trace-compact``'s first), each instance in a fresh process: value, time, and where a
licence refused the interval LP's grid, the grid it was solved on instead.

``compare OTHER``: every case of ``table`` run on this checkout and on the checkout OTHER (an older
commit's, e.g. ``git archive``'d), alternately, so that both see the same load: one JSON line per case
and backend on stdout, saying whether status, value, bound, model status and start taken are the same.

    python benchmarks/solvers.py table|paths|lps [--out benchmarks/solvers.md]
    python benchmarks/solvers.py compare OTHER > compare.jsonl

Each of the first three writes its section of the Markdown file (the other sections are kept).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

SMALL = [
    ("forwarding", "random:0:20", "milp-dfra-space", {}),
    ("window", "paper:example", "exact", {"engine": "milp"}),
    ("filedomain", "sweep:4:6:2", "exact", {"engine": "milp"}),
    ("periodic", "paper:set9", "persched-compact", {}),
    ("malleable", "random:0:2:grid", "milp", {"unit": 2.0}),
]
LARGE = [
    ("forwarding", "random:0:200", "milp-dfra-space", {}),
    ("forwarding", "random:0:2", "milp", {}),
    ("window", "random:0:30", "exact", {"engine": "milp"}),
    ("filedomain", "sweep:8:12:2", "exact", {"engine": "milp"}),
    ("periodic", "paper:set1", "persched-compact", {}),
    ("malleable", "random:0:3:grid", "milp", {}),
]
PROFILES = {"small": "default", "large": "quick"}


class _Logged:
    """The warnings iosched.solvers logs meanwhile (a status code missing from a backend's table)."""

    def __enter__(self) -> list[str]:
        import logging

        self.seen: list[str] = []
        self.handler = logging.Handler(logging.WARNING)
        self.handler.emit = lambda record: self.seen.append(record.getMessage())
        logging.getLogger("iosched.solvers").addHandler(self.handler)
        return self.seen

    def __exit__(self, *exc) -> None:
        import logging

        logging.getLogger("iosched.solvers").removeHandler(self.handler)


def run_one(problem: str, instance: str, method: str, params: dict, solver: str, profile: str = "default") -> dict:
    """One solve in this process: a row of the table (a licence refusal or a missing backend as its error)."""
    with _Logged() as logged:
        row = _run_one(problem, instance, method, params, solver, profile)
    return {**row, "logged": logged}


def _run_one(problem: str, instance: str, method: str, params: dict, solver: str, profile: str) -> dict:
    import warnings

    import iosched
    from iosched.errors import ParameterError
    from iosched.solvers import backends

    warnings.simplefilter("ignore")
    try:
        backends.interface(solver)  # Pyomo, its solver plugins and the backend imported before the clock
    except ParameterError:
        pass  # the solve below reports it
    import scipy.optimize  # noqa: F401  (and SciPy, which import iosched no longer loads: the LPs' first use)
    import scipy.sparse  # noqa: F401
    start = time.perf_counter()
    row = {"problem": problem, "instance": instance, "method": method, "params": params, "solver": solver}
    try:
        r = iosched.solve(problem, instance, method, profile=f"{profile}:{solver}", **params)
    except ParameterError as e:
        return {**row, "status": "refused", "error": str(e), "time_s": time.perf_counter() - start}
    model = r.info.get("model_status")  # the exact methods' shared info keys (iosched.models.driver)
    proved = r.status.value == "optimal" or model == "optimal"
    value = r.info.get("model_objective", r.objective) if model else r.objective
    return {**row, "status": r.status.value, "objective": r.objective, "bound": r.bound, "model_status": model,
            "model_value": value, "proved": proved, "time_s": r.method_time_s,
            "start": r.info.get("start") if isinstance(r.info.get("start"), dict) else None}


def run_fresh(case: tuple, solver: str, profile: str, timeout: float = 600) -> dict:
    """:func:`run_one` in a fresh Python process."""
    problem, instance, method, params = case
    code = (f"import json, sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); import solvers; "
            f"print(json.dumps(solvers.run_one({problem!r}, {instance!r}, {method!r}, {params!r}, {solver!r}, "
            f"{profile!r})))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout)
    lines = [line for line in out.stdout.splitlines() if line.startswith("{")]
    if not lines:
        return {"problem": problem, "instance": instance, "method": method, "params": params, "solver": solver,
                "status": "crashed", "error": out.stderr[-300:]}
    return json.loads(lines[-1])


def disagreements(rows: list[dict], rel_gap: float) -> list[str]:
    """Pairs of rows of one case where both backends proved optimality (of the model) and their values differ
    by more than the gap allows: each is within rel_gap |v| of the optimum, so |a - b| <= rel_gap (|a| + |b|)."""
    out = []
    by_case: dict[tuple, list[dict]] = {}
    for r in rows:
        by_case.setdefault((r["problem"], r["instance"], r["method"], json.dumps(r["params"])), []).append(r)
    for case, group in by_case.items():
        proved = [r for r in group if r.get("proved") and r.get("model_value") is not None]
        for i, a in enumerate(proved):
            for b in proved[i + 1:]:
                va, vb = a["model_value"], b["model_value"]
                if abs(va - vb) > rel_gap * (abs(va) + abs(vb)) + 1e-12:
                    out.append(f"{case[:3]}: {a['solver']} {va!r} vs {b['solver']} {vb!r}")
    return out


def _fmt(v) -> str:
    return "" if v is None else f"{v:.6g}" if isinstance(v, float) else str(v)


def table(out: Path) -> None:
    from iosched.solvers import load_profile
    from iosched.solvers.backends import BACKENDS, version

    solvers = [s for s in BACKENDS if version(s) is not None]
    rows = []
    lines = ["Profiles `default` (small suite: 60 s per method) and `quick` (large suite: 10 s), both rel_gap 1e-4, 1 "
             "thread, seed 0; each solve in a fresh process (time: the method's, imports done before it, a "
             f"backend's licence start counted), measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on "
             "a 2-core machine (its load in the Notes); backends: "
             + ", ".join(f"{s} {version(s)}" for s in solvers) + ".", "",
             "| suite | problem | instance | method | solver | status | value | bound | model | time (s) | start |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for suite, cases in (("small", SMALL), ("large", LARGE)):
        for case in cases:
            for s in solvers:
                r = run_fresh(case, s, PROFILES[suite])
                rows.append(r)
                params = "".join(f" {k}={v}" for k, v in case[3].items())
                if r["status"] in ("refused", "crashed"):
                    status = r["status"] + ": " + r.get("error", "").split(" (")[0].split(": too large")[0]
                    cells = [status, "", "", "", f"{r['time_s']:.2f}" if r.get("time_s") else "", ""]
                else:
                    start = r.get("start") or {}
                    taken = ("taken" if start.get("solver_taken") else "not taken") if "solver_taken" in start else ""
                    cells = [r["status"], _fmt(r["objective"]), _fmt(r["bound"]), _fmt(r["model_status"]),
                             f"{r['time_s']:.2f}", taken]
                lines.append(f"| {suite} | {case[0]} | {case[1]} | {case[2]}{params} | {s} | " + " | ".join(cells)
                             + " |")
                print(lines[-1], flush=True)
    bad = disagreements(rows, max(load_profile(p).rel_gap for p in PROFILES.values()))
    logged = sorted({m for r in rows for m in r.get("logged", [])})
    lines += ["", "Where two backends proved the model optimal, their values agree within the gap: "
              + ("yes, on every case." if not bad else "NO: " + "; ".join(bad)),
              "", "Status codes missing from a backend's table (logged): " + ("none." if not logged else
                                                                            "; ".join(logged))]
    _write_section(out, "Solver table", lines)


def paths(out: Path) -> None:
    """The MPS path against a Pyomo rebuild, on malleable milp's largest model in its default profile."""
    import os
    import tempfile
    import warnings

    warnings.simplefilter("ignore")
    from iosched.core import get_problem
    from iosched.models import malleable_milp as mm
    from iosched.models.malleable_grid import make_grid
    from iosched.solvers import load_profile
    from iosched.solvers.backends import BACKENDS, version

    inst = get_problem("malleable").read_instance("random:0:32:grid")
    grid = make_grid(inst, None, max_slots=mm.MAX_SLOTS_MILP)
    t = time.perf_counter()
    m, _ = mm.milp_model(inst, grid, "mean_completion")
    build = time.perf_counter() - t
    lines = ["malleable `milp` on random:0:32:grid, default profile (its largest model: 40 jobs give 480,782 "
             f"columns, past the cap): {m.columns:,} columns, {m.row_count:,} rows (the method's cap is "
             f"{mm.MAX_MILP_COLUMNS:,} columns); arrays built in {build:.2f} s.", "",
             "| step | time (s) |", "|---|---|"]
    prof = load_profile("default")
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "m.mps")
        t = time.perf_counter()
        h = m.highs(prof)
        h.writeModel(path)
        lines.append(f"| arrays to highspy and MPS written ({os.path.getsize(path) / 1e6:.0f} MB) | "
                     f"{time.perf_counter() - t:.2f} |")
        for s in (s for s in BACKENDS if s != "highs" and version(s) is not None):
            t = time.perf_counter()
            try:
                _read(s, path)
                lines.append(f"| {s} reads the MPS file | {time.perf_counter() - t:.2f} |")
            except Exception as e:  # noqa: BLE001 (a licence refusal at read time is a result here)
                lines.append(f"| {s} reads the MPS file | refused after {time.perf_counter() - t:.2f}: "
                             f"{str(e)[:80]} |")
    t = time.perf_counter()
    pm = m.pyomo("malleable-milp")
    rebuild = time.perf_counter() - t
    lines.append(f"| Pyomo rebuild (Matrix.pyomo) | {rebuild:.2f} |")
    from pyomo.contrib.solver.common.factory import SolverFactory

    t = time.perf_counter()
    SolverFactory("scip_direct").solve(pm, time_limit=0.01, load_solutions=False,
                                       raise_exception_on_nonoptimal_result=False)
    lines.append(f"| Pyomo hands the rebuild to SCIP (scip_direct, 0.01 s solve) | {time.perf_counter() - t:.2f} |")
    lines += ["", "So HiGHS takes the arrays directly (highspy), and every other backend the MPS file: writing and "
              "reading it costs seconds where the Pyomo rebuild and its handover cost minutes, beyond any "
              "method's budget. (Gurobi, CPLEX and Xpress read the file under their pip licences and refuse to "
              "solve it: past their size limits.)"]
    _write_section(out, "Array models: which path", lines)
    print("\n".join(lines))


LP_CASES = ["random:0:3", "random:1:6", "random:0:20", "paper:50"]  # malleable instances for ``lps``


def lp_one(instance: str, solver: str) -> dict:
    """The malleable LP bounds of ``instance`` on ``solver``, in this process (each timed; the interval LP's
    grid, and what a licence refused, as said by its warning)."""
    import warnings

    import scipy.optimize  # noqa: F401  (imported before the clocks, as import iosched did before it left SciPy)
    import scipy.sparse  # noqa: F401

    from iosched.core import get_problem
    from iosched.models import malleable_lp as mlp

    inst = get_problem("malleable").read_instance(instance)
    row = {"instance": instance, "solver": solver, "jobs": len(inst.jobs)}
    with warnings.catch_warnings(record=True) as said, _Logged() as logged:
        warnings.simplefilter("always", mlp.LicenceWarning)
        for name, run in (("interval", lambda: mlp.interval_lp_bound(inst, "mean_completion", solver=solver)),
                          ("order", lambda: mlp.order_lp_bound(inst, "mean_completion", solver=solver)),
                          ("lagrangian", lambda: mlp.lagrangian_bound(inst, solver=solver))):
            t = time.perf_counter()
            row[name] = run()
            row[name + "_s"] = time.perf_counter() - t
    row["grid"] = next((k for (i, o, k, s), v in mlp._LPS.items() if s == solver and o == "mean_completion"
                        and isinstance(v, tuple)), None)
    row["refused"] = sorted({str(w.message).split(":")[0] for w in said if issubclass(w.category, mlp.LicenceWarning)})
    row["logged"] = logged
    return row


def compaction_one(solver: str) -> dict:
    """The compaction LP of PerSched's pattern on paper:set9 (periodic), on ``solver``, in this process."""
    import iosched
    from iosched.models.periodic_trace import compaction_lp
    from iosched.solvers import LicenceLimit

    inst = iosched.get_problem("periodic").read_instance("paper:set9")
    found = iosched.solve("periodic", inst, "persched")
    t = time.perf_counter()
    try:
        p = compaction_lp(inst, found.solution, 60, solver)
        return {"solver": solver, "period": None if p is None else p.period, "from": found.solution.period,
                "time_s": time.perf_counter() - t}
    except LicenceLimit as e:
        return {"solver": solver, "refused": str(e).split(" (")[0], "time_s": time.perf_counter() - t}


def _fresh(call: str, timeout: float = 900) -> dict:
    code = (f"import json, sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); import solvers; "
            f"print(json.dumps(solvers.{call}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout)
    lines = [line for line in out.stdout.splitlines() if line.startswith("{")]
    return json.loads(lines[-1]) if lines else {"error": out.stderr[-300:]}


def lps(out: Path) -> None:
    from iosched.solvers.backends import BACKENDS, version

    solvers = [s for s in BACKENDS if version(s) is not None]
    lines = ["malleable's LP bounds on the mean completion (s; higher is tighter, each valid for every schedule) "
             "and their times, each instance and backend in a fresh process, one thread, measured "
             f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on a 2-core machine (its load in the Notes). "
             "grid: the interval LP's intervals (a licence that refuses the first grid gets a "
             "coarser one: a weaker bound). The Lagrangian's column generation stops after 20 s.", "",
             "| instance | jobs | solver | interval LP | grid | s | order LP | s | Lagrangian | s | refused |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    logged: set[str] = set()
    for instance in LP_CASES:
        for s in solvers:
            r = _fresh(f"lp_one({instance!r}, {s!r})")
            logged.update(r.get("logged", []))
            if "error" in r:
                lines.append(f"| {instance} | | {s} | crashed: {r['error'][-80:]} | | | | | | | |")
            else:
                lines.append(f"| {instance} | {r['jobs']} | {s} | {_fmt(r['interval'])} | {_fmt(r['grid'])} | "
                             f"{r['interval_s']:.2f} | {_fmt(r['order'])} | {r['order_s']:.2f} | "
                             f"{_fmt(r['lagrangian'])} | {r['lagrangian_s']:.2f} | {'; '.join(r['refused'])} |")
            print(lines[-1], flush=True)
    lines += ["", "periodic's compaction LP of PerSched's pattern on paper:set9 (trace-compact's first LP): the "
              "shortest period (s) with the pattern's order.", "", "| solver | period | PerSched's | time (s) |",
              "|---|---|---|---|"]
    for s in solvers:
        r = _fresh(f"compaction_one({s!r})")
        if "period" in r:
            lines.append(f"| {s} | {_fmt(r['period'])} | {_fmt(r['from'])} | {r['time_s']:.2f} |")
        else:
            lines.append(f"| {s} | {r.get('refused', r.get('error', ''))[:100]} | | {_fmt(r.get('time_s'))} |")
        print(lines[-1], flush=True)
    lines += ["", "Status codes missing from a backend's table (logged): " + ("; ".join(sorted(logged)) or "none.")]
    _write_section(out, "Array LPs", lines)


def _read(solver: str, path: str) -> None:
    """Read ``path`` with ``solver``'s own MPS reader (no solve)."""
    if solver == "gurobi":
        import gurobipy as gp

        env = gp.Env(empty=True)
        env.setParam("OutputFlag", 0)
        env.start()
        gp.read(path, env)
    elif solver == "scip":
        import pyscipopt

        s = pyscipopt.Model()
        s.hideOutput()
        s.readProblem(path)
    elif solver == "cplex":
        import cplex

        c = cplex.Cplex()
        c.set_results_stream(None)
        c.set_log_stream(None)
        c.read(path)
    elif solver == "xpress":
        import xpress

        p = xpress.problem()
        p.setControl("outputlog", 0)
        p.readProb(path, "")


def _write_section(out: Path, title: str, lines: list[str]) -> None:
    """Replace (or add) the section ``## title`` of ``out``, written to a temporary file and renamed."""
    from iosched.files import atomic_path

    text = out.read_text(encoding="utf-8") if out.exists() else (
        "# Solvers side by side\n\nWritten by `python benchmarks/solvers.py table|paths`.\n")
    parts = text.split("\n## ")
    head, sections = parts[0], {p.split("\n", 1)[0]: p for p in parts[1:]}
    sections[title] = title + "\n\n" + "\n".join(lines) + "\n"
    with atomic_path(out) as tmp:
        tmp.write_text(head.rstrip("\n") + "\n\n## " + "\n## ".join(s.rstrip("\n") + "\n" for s in
                                                                    sections.values()), encoding="utf-8")


def compare(other: str) -> None:
    """Each case on this checkout and on ``other``, alternately (see the module's docstring)."""
    import os

    from iosched.solvers.backends import BACKENDS, version

    trees = {"other": str(Path(other).resolve()), "this": str(Path(__file__).resolve().parents[1])}
    cases = [(c, PROFILES["small"]) for c in SMALL] + [(c, PROFILES["large"]) for c in LARGE]
    for (problem, instance, method, params), profile in cases:
        for s in (s for s in BACKENDS if version(s) is not None):
            rows = {}
            for name, tree in trees.items():
                call = f"run_one({problem!r}, {instance!r}, {method!r}, {params!r}, {s!r}, {profile!r})"
                code = (f"import json, sys; sys.path.insert(0, {tree + '/benchmarks'!r}); import solvers; "
                        f"print(json.dumps(solvers.{call}))")
                out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=900,
                                     cwd=tree, env={**os.environ, "PYTHONPATH": tree})
                lines = [line for line in out.stdout.splitlines() if line.startswith("{")]
                rows[name] = json.loads(lines[-1]) if lines else {"status": "crashed", "error": out.stderr[-300:]}
            said = {name: {"status": r.get("status"), "objective": r.get("objective"), "bound": r.get("bound"),
                           "model": r.get("model_status"), "start_taken": (r.get("start") or {}).get("solver_taken"),
                           "time_s": r.get("time_s"), "logged": r.get("logged"), "error": r.get("error")}
                    for name, r in rows.items()}
            same = all(said["this"][k] == said["other"][k] for k in ("status", "objective", "bound", "model",
                                                                   "start_taken"))
            print(json.dumps({"case": [problem, instance, method, params], "solver": s, "profile": profile,
                              "same": same, "load": os.getloadavg()[0], **said}), flush=True)


if __name__ == "__main__":
    args = sys.argv[1:]
    if args and args[0] == "compare":
        compare(args[1])
        sys.exit(0)
    target = Path(args[args.index("--out") + 1]) if "--out" in args else Path(__file__).with_suffix(".md")
    {"table": table, "paths": paths, "lps": lps}[args[0] if args else "table"](target)
