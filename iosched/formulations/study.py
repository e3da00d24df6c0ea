"""The formulation study: every formulation of a problem on one instance, side by side (``iosched formulations``,
``iosched.formulations(problem, instance, ...)``).

One row per formulation and per MILP backend (a CP-SAT model or an algorithm has one row): its size (variables
by kind, constraints, nonzeros, the ranges of |coefficients|, right-hand sides and objective, a numerics warning
past 1e6), its LP relaxation and the time it took, the root node's bound (or why there is none), the best value
found, the final bound, the status and nodes within the profile, the integrality gap (best vs LP relaxation)
and the root gap, both relative and signed in the problem's sense (positive: the relaxation is weaker than
the value), its scope, and the value of its solution through the problem's evaluator beside how far that lies
from the model's own value (``approximation``, relative, positive where the solution is worse than the model
said). Every value is in the problem's units and sense. A formulation refused (a size limit, a licence, a
backend not installed) is a row whose ``error`` says why, never an exception.

``status`` follows the one rule of :func:`iosched.solve`: ``optimal`` only where the evaluated value meets
a bound valid for every solution (the problem's, or the row's own where its scope is every solution);
``model_status`` is the solver's verdict over the formulation's scope.
"""

from __future__ import annotations

import csv
import json
import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from iosched.core import checked_bound, get_problem, profile_tolerance, relative_gap, settle
from iosched.errors import OutputError, ParameterError
from iosched.formulations import engine
from iosched.formulations.loop import guarded_bound, make_model, score
from iosched.formulations.registry import ALGORITHM, CPSAT, formulations_of, get_formulation
from iosched.solvers import LicenceLimit, SolverMissing, load_profile
from iosched.status import Status

KEYS = ("formulation", "solver", "kind", "scope", "objective", "sense", "relaxation", "params", "variables", "binaries",
        "integers", "continuous", "constraints", "nonzeros", "coef_min", "coef_max", "rhs_min", "rhs_max",
        "objective_min", "objective_max", "bounds_min", "bounds_max", "numerics", "build_s", "lp_relaxation",
        "lp_time_s", "lp_why", "root_bound", "root_bound_why", "best", "bound", "status", "model_status", "stopped",
        "nodes", "time_s", "integrality_gap", "root_gap", "evaluated", "approximation", "note", "error")


MAX_VARIABLES = 50_000  # a model estimated past this is not built by the study (see study's max_variables)


@dataclass
class Study:
    """The rows of one study (:data:`KEYS` each), with the instance, the objective compared and the load."""

    problem: str
    instance: str
    objective: str
    sense: str
    profile: str
    rows: list[dict] = field(default_factory=list)
    load_average: float | None = None

    def to_dict(self) -> dict:
        return {"problem": self.problem, "instance": self.instance, "objective": self.objective,
                "sense": self.sense, "profile": self.profile, "load_average": self.load_average, "rows": self.rows}

    def best_evaluated(self) -> float | None:
        """The best evaluated value of any row, in the problem's sense."""
        values = [r["evaluated"] for r in self.rows if r["evaluated"] is not None and r["status"] != "error"]
        if not values:
            return None
        return min(values) if self.sense == "min" else max(values)

    def table(self) -> str:
        """The rows as a text table, then each formulation's scope and the notes (numerics, errors)."""
        return render(self)

    def markdown(self) -> str:
        """The rows as a Markdown table, then each formulation's scope (docs/formulations.md's tables)."""
        return markdown(self)

    def frame(self):
        """The rows as a pandas DataFrame (pandas imported here)."""
        import pandas as pd

        return pd.DataFrame(self.rows, columns=list(KEYS))

    def plot(self, path=None):
        """Bound (and best value) against time per row: the LP relaxation at its solve time, then the final
        bound and the best value at the solve's end (a matplotlib Figure, saved to ``path`` when given)."""
        return plot(self, path)


def _signed_gap(value: float | None, bound: float | None, sense: str) -> float | None:
    """(value - bound) / |value| for a minimisation, (bound - value) / |value| for a maximisation: positive
    where ``bound`` is a relaxation's weaker side."""
    if value is None or bound is None or value == 0:
        return None
    return (value - bound) / abs(value) if sense == "min" else (bound - value) / abs(value)


def _worse(model_value: float | None, evaluated: float | None, sense: str) -> float | None:
    """How much worse the evaluated value of a model's solution is than the model's own value, relative to it
    (negative: better; the model approximates the evaluator)."""
    if model_value is None or evaluated is None or model_value == 0:
        return None
    return (evaluated - model_value) / abs(model_value) * (1 if sense == "min" else -1)


def _blank(label: str, solver: str | None, f, params: dict, sense: str) -> dict:
    row = dict.fromkeys(KEYS)
    row.update(formulation=label, solver=solver, kind=f.kind, scope=f.scope_of(params),
               objective=f.objective_of(params), sense=sense, relaxation=f.is_relaxation(params),
               params={k: v for k, v in params.items() if isinstance(v, (int, float, str, bool, type(None)))})
    return row


def _algorithm_row(prob, inst, f, params, profile, bound, row: dict) -> None:
    began = time.perf_counter()
    ran = f.run(inst, profile, **params)
    row["time_s"] = time.perf_counter() - began
    row.update(best=ran.value, bound=ran.bound, note=ran.note or None,
               lp_why="an algorithm: no LP relaxation", root_bound_why="an algorithm: no root node",
               model_status=(Status.OPTIMAL if ran.finished else Status.TIME_LIMIT).value)
    status, evaluated = (Status.OPTIMAL if ran.finished else Status.TIME_LIMIT), None
    if ran.solution is not None:
        evaluation = prob.evaluate(inst, ran.solution)
        evaluated = prob.objective(evaluation, row["objective"])
        if not evaluation.feasible:
            status = Status.ERROR
            row["error"] = "the evaluator rejected the solution: " + "; ".join(map(str, evaluation.violations[:3]))
    row["evaluated"] = evaluated
    if ran.solution is not None and status != Status.ERROR:  # a bound keeps its status: computed in full or not
        best, proof = bound
        if f.every_solution(params) and ran.bound is not None and ran.finished and (
                best is None or (ran.bound > best if row["sense"] == "min" else ran.bound < best)):
            best, proof = ran.bound, f"the bound of {f.name}"
        info: dict = {}
        best = checked_bound(best, proof, evaluated, row["sense"], info)
        status = settle(status, evaluated, best, relative_gap(evaluated, best), profile_tolerance(profile), proof,
                        info)
    row["status"] = status.value
    row["approximation"] = _worse(row["best"], evaluated, row["sense"])


def _model_rows(prob, inst, f, label, params, profiles, bound, max_variables: int) -> list[dict]:
    """One row per profile (backend) for a model: built once, measured once, relaxed and solved per backend."""
    sense = prob.sense(f.objective_of(params))
    first = _blank(label, profiles[0].solver if f.kind != CPSAT else "cpsat", f, params, sense)
    try:
        estimate = f.estimate(inst, params) if f.estimate is not None else None
        if estimate is not None and estimate > max_variables:
            first["error"] = (f"not built: about {estimate:,} variables, past the study's max_variables="
                              f"{max_variables:,} (building and handing it over would outlast the time limit)")
            return [first]
        began = time.perf_counter()
        model = make_model(f, inst, params)
        first["build_s"] = time.perf_counter() - began
        first.update(engine.size(f.kind, model))
    except (ParameterError, MemoryError) as e:  # a size limit, a bad parameter: a row that says so
        first["error"] = f"not built: {e}"
        return [first]
    rows = []
    for profile in (profiles if f.kind != CPSAT else profiles[:1]):
        row = dict(first, solver=profile.solver if f.kind != CPSAT else "cpsat")
        rows.append(row)
        try:
            _solve_row(prob, inst, f, params, model, profile, bound, row)
        except (LicenceLimit, SolverMissing) as e:
            row["error"] = str(e)
        except Exception as e:  # a backend's failure on one formulation is that row's, not the study's
            row["error"] = f"{type(e).__name__}: {e}"
    return rows


def _solve_row(prob, inst, f, params, model, profile, bound, row: dict) -> None:
    lp, why = engine.relax(f.kind, model, profile)
    if lp is not None:
        row["lp_time_s"] = lp.wall_time_s
        if lp.status == Status.OPTIMAL and lp.objective is not None:
            row["lp_relaxation"] = f.value(inst, model, lp.objective, True)
        else:
            why = f"the LP relaxation was not solved: {lp.stopped or lp.status.value}"
    row["lp_why"] = why or None
    solved = engine.solve(f.kind, model, profile, root=True)
    out = solved.outcome
    s = score(prob, f, inst, params, model, solved, profile, bound, trust_bound=True)  # models as registered
    row.update(best=s.info["model_objective"], bound=s.info["model_bound"], status=s.status.value,
               model_status=out.status.value, stopped=out.stopped, nodes=out.nodes, time_s=out.wall_time_s,
               evaluated=s.objective, error=s.info.get("error"))
    if f.is_relaxation(params) and row["bound"] is None:
        row["bound"] = row["best"] if out.status == Status.OPTIMAL else None
    if out.root_bound is not None:
        row["root_bound"] = f.value(inst, model, out.root_bound, True)
    row["root_bound_why"] = out.root_why or None
    if out.root_bound is not None and out.status == Status.TIME_LIMIT and out.nodes == 0:
        row["root_bound_why"] = ("the time limit came before the root node ended: root_bound is the dual bound "
                                 "when the solve stopped, valid over the model's scope")
    sense = row["sense"]
    row["integrality_gap"] = _signed_gap(row["best"], row["lp_relaxation"], sense)
    row["root_gap"] = _signed_gap(row["best"], row["root_bound"], sense)
    row["approximation"] = _worse(row["best"], s.objective, sense)
    notes = [s.info[k] for k in ("not_optimal", "optimal", "bound_error") if s.info.get(k)]
    row["note"] = "; ".join(notes) or None


def study(problem: str, instance, solvers: list[str] | None = None, profile: str = "default",
          names: list[str] | None = None, params: dict | None = None,
          variants: dict | None = None, max_variables: int = MAX_VARIABLES) -> Study:
    """Every formulation of ``problem`` on ``instance`` side by side (module docstring).

    Parameters
    ----------
    problem : str
        The problem's name.
    instance : instance, dict or spec
        As :func:`iosched.load_instance` takes it (``lib:forwarding/small-0`` ...).
    solvers : list of str, optional
        MILP backends to solve each Pyomo and array model on, one row each (default: the profile's).
    profile : str
        The solvers.toml profile: time limit, gap, threads, seed (each solve and each LP relaxation gets its
        time limit).
    names : list of str, optional
        Only these formulations (default: every registered one).
    params : dict, optional
        ``{formulation: {parameter: value}}`` passed to its builder (beyond what the study picks: PerSched's
        period for periodic's time-indexed models).
    variants : dict, optional
        ``{label: (formulation, {parameter: value})}``: extra rows, e.g. ``{"milp+covers": ("milp", {"covers":
        True})}`` to measure a valid inequality beside the model without it.
    max_variables : int
        A model its formulation estimates past this many variables is a row that says so, not built (Pyomo
        builds and hands over about 10^4 variables a second: beyond, the build outlasts the time limit).

    Returns
    -------
    Study
        ``rows`` (dicts with :data:`KEYS`), ``table()``, ``to_dict()`` (what ``--json`` prints), ``frame()``,
        ``plot()``.

    Raises
    ------
    ParameterError
        An unknown problem, formulation, backend or profile, or a parameter a builder does not take.
    """
    prob = get_problem(problem)
    inst = prob.read_instance(instance)
    known = formulations_of(problem)
    chosen = list(known) if names is None else names
    params = params or {}
    plan = [(n, get_formulation(problem, n), dict(params.get(n, {}))) for n in chosen]
    for label, spec in (variants or {}).items():
        if not (isinstance(spec, (tuple, list)) and len(spec) == 2 and isinstance(spec[1], dict)):
            raise ParameterError(f"variant {label!r} must be (formulation, {{parameter: value}}), got {spec!r}")
        plan.append((label, get_formulation(problem, spec[0]), {**params.get(spec[0], {}), **spec[1]}))
    for label, f, p in plan:
        if set(p) - _accepted(f):
            raise ParameterError(f"formulation {problem}/{f.name} ({label}): unknown parameter "
                                 f"{sorted(set(p) - _accepted(f))[0]!r}; it takes {', '.join(sorted(_accepted(f)))}")
    base = load_profile(profile)
    profiles = [load_profile(f"{profile}:{s}") for s in solvers] if solvers else [base]
    first = plan[0][1].objective_of(plan[0][2]) if plan else "objective"
    out = Study(problem, getattr(inst, "name", "instance"), first, prob.sense(first), profile,
                load_average=os.getloadavg()[0] if hasattr(os, "getloadavg") else None)
    bounds: dict[str, tuple] = {}
    extra: dict[str, dict] = {}
    for label, f, p in plan:
        if f.study is not None and f.name not in extra:
            try:
                extra[f.name] = f.study(inst, base)
            except ParameterError as e:
                extra[f.name] = {"error": str(e)}
        full = {**{k: v for k, v in extra.get(f.name, {}).items() if k != "error"}, **p}
        objective = f.objective_of(full)
        if objective not in bounds:
            bounds[objective] = guarded_bound(prob, f, inst, objective, base)
        if extra.get(f.name, {}).get("error"):
            row = _blank(label, None, f, full, prob.sense(objective))
            row["error"] = extra[f.name]["error"]
            out.rows.append(row)
            continue
        if f.kind == ALGORITHM:
            row = _blank(label, base.solver, f, full, prob.sense(objective))
            try:
                _algorithm_row(prob, inst, f, full, base, bounds[objective], row)
            except (ParameterError, LicenceLimit) as e:
                row["error"] = str(e)
            except Exception as e:
                row["error"] = f"{type(e).__name__}: {e}"
            out.rows.append(row)
        else:
            out.rows.extend(_model_rows(prob, inst, f, label, full, profiles, bounds[objective], max_variables))
    return out


def _accepted(f) -> set[str]:
    import inspect

    fn = f.build if f.build is not None else f.run
    names = list(inspect.signature(fn).parameters)
    return set(names[1:] if f.build is not None else names[2:])


# --- output -------------------------------------------------------------------------------------------------


def _num(x, spec: str = ".6g") -> str:
    if x is None:
        return "-"
    if isinstance(x, bool):
        return str(x)
    return format(x, spec) if isinstance(x, (int, float)) else str(x)


def _pct(x) -> str:
    return "-" if x is None else f"{100 * x:.3g}%"


COLUMNS = ("formulation", "solver", "vars b/i/c", "cons", "nnz", "|a| range", "LP", "root", "best", "bound",
           "status", "nodes", "time s", "int gap", "root gap", "evaluated")


def _cells(r: dict) -> list[str]:
    if r["variables"] is None:
        size = ["-", "-", "-", "-"]
    else:
        rng = "-" if r["coef_min"] is None else f"{r['coef_min']:.0e}..{r['coef_max']:.0e}"
        size = [f"{r['variables']} {r['binaries']}/{r['integers']}/{r['continuous']}", str(r["constraints"]),
                str(r["nonzeros"]), rng]
    return [r["formulation"], r["solver"] or "-", *size, _num(r["lp_relaxation"]), _num(r["root_bound"]),
            _num(r["best"]), _num(r["bound"]), r["status"] or "error", _num(r["nodes"]), _num(r["time_s"], ".3g"),
            _pct(r["integrality_gap"]), _pct(r["root_gap"]), _num(r["evaluated"])]


def render(s: Study) -> str:
    """The text table of ``s`` (what ``iosched formulations`` prints)."""
    rows = [list(COLUMNS)] + [_cells(r) for r in s.rows]
    widths = [max(len(r[i]) for r in rows) for i in range(len(COLUMNS))]
    lines = [f"{s.problem} {s.instance}: {s.objective} ({s.sense}), profile {s.profile}"
             + (f", load {s.load_average:.2g}" if s.load_average is not None else "")]
    for k, cells in enumerate(rows):
        lines.append("  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip())
        if k == 0:
            lines.append("  ".join("-" * w for w in widths))
    lines.append("")
    seen = set()
    for r in s.rows:
        if r["formulation"] not in seen:
            seen.add(r["formulation"])
            lines.append(f"{r['formulation']} ({r['kind']}{', a relaxation' if r['relaxation'] else ''}): "
                         f"scope {r['scope']}")
        for key in ("numerics", "error", "note"):
            if r[key]:
                lines.append(f"  {r['formulation']} on {r['solver'] or '-'}: {key}: {r[key]}")
        if r["root_bound"] is None and r["root_bound_why"] and r["kind"] != ALGORITHM and not r["error"]:
            lines.append(f"  {r['formulation']} on {r['solver'] or '-'}: no root bound: {r['root_bound_why']}")
    return "\n".join(lines)


def markdown(s: Study) -> str:
    """The Markdown table of ``s``: the text table's columns, then one line per formulation with its scope and
    per row its error, where there is one."""
    cell = [[c.replace("|", "\\|") for c in cells] for cells in [list(COLUMNS)] + [_cells(r) for r in s.rows]]
    lines = ["| " + " | ".join(cell[0]) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(r) + " |" for r in cell[1:]]
    lines.append("")
    seen = set()
    for r in s.rows:
        if r["formulation"] not in seen:
            seen.add(r["formulation"])
            lines.append(f"- `{r['formulation']}` ({r['kind']}{', a relaxation' if r['relaxation'] else ''}): "
                         f"scope {r['scope']}")
        if r["error"]:
            lines.append(f"  - on {r['solver'] or '-'}: {r['error']}")
    return "\n".join(lines)


def plot(s: Study, path=None):
    import matplotlib

    if path is not None:
        matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.5))
    for k, r in enumerate(s.rows):
        color = f"C{k % 10}"
        label = f"{r['formulation']} ({r['solver'] or '-'})"
        if r["lp_relaxation"] is not None and r["lp_time_s"]:
            ax.plot([r["lp_time_s"]], [r["lp_relaxation"]], "o", mfc="none", color=color)
            if r["bound"] is not None and r["time_s"]:
                ax.plot([r["lp_time_s"], r["lp_time_s"] + r["time_s"]], [r["lp_relaxation"], r["bound"]], "-",
                        color=color, alpha=0.5)
        t_end = (r["lp_time_s"] or 0) + (r["time_s"] or 0)
        if r["bound"] is not None and t_end:
            ax.plot([t_end], [r["bound"]], "o", color=color, label=label)
        if r["best"] is not None and t_end and not r["relaxation"]:
            ax.plot([t_end], [r["best"]], "x", color=color)
    best = s.best_evaluated()
    if best is not None:
        ax.axhline(best, color="k", ls="--", lw=0.8, label="best evaluated value")
    ax.set_xscale("log")
    ax.set_xlabel("time (s): LP relaxation (hollow), then bound (dot) and best value (cross) at the solve's end")
    ax.set_ylabel(f"{s.objective} ({s.sense})")
    ax.set_title(f"{s.problem} {s.instance}: bound vs time per formulation")
    ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    if path is not None:
        from iosched.files import save_figure

        save_figure(fig, path)
    return fig


def finite(o):
    """``o`` with every infinite or NaN float as None (JSON has neither)."""
    if isinstance(o, float):
        return o if math.isfinite(o) else None
    if isinstance(o, dict):
        return {k: finite(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [finite(v) for v in o]
    return o


def write(s: Study, folder) -> list[Path]:
    """``formulations.json``, ``formulations.csv`` (and ``formulations.parquet`` where pyarrow is installed) and
    ``bound_vs_time.png`` in ``folder`` (made where missing), each written whole or not at all."""
    from iosched.files import make_writable_folder, write_text

    folder = Path(folder)
    try:
        make_writable_folder(folder)
    except OSError as e:
        raise OutputError(f"--out: cannot write in {str(folder)!r}: {e.strerror or e}") from None
    written = [write_text(folder / "formulations.json", json.dumps(finite(s.to_dict()), indent=2) + "\n")]
    flat = [{k: (json.dumps(v) if isinstance(v, dict) else v) for k, v in finite(r).items()} for r in s.rows]
    import io

    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=list(KEYS))
    writer.writeheader()
    writer.writerows(flat)
    written.append(write_text(folder / "formulations.csv", text.getvalue()))
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        pass
    else:
        from iosched.files import atomic_path

        target = folder / "formulations.parquet"
        with atomic_path(target) as tmp:
            pq.write_table(pa.Table.from_pylist(flat), tmp)
        written.append(target)
    import matplotlib.pyplot as plt

    fig = plot(s, folder / "bound_vs_time.png")
    plt.close(fig)
    written.append(folder / "bound_vs_time.png")
    return written
