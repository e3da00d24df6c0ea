"""One way to measure, relax and solve a model of each kind (Pyomo, CP-SAT, array model), so that the formulation
study and :func:`iosched.solve_model` treat every formulation alike: its size as a MILP solver prints it, its LP
relaxation, and one solve on the profile's backend with the root node's bound.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from iosched.formulations.registry import ARRAY, CPSAT, PYOMO
from iosched.solvers import Profile, SolveOutcome, solve_cpsat, solve_pyomo, solve_relaxation

NUMERICS_RANGE = 1e6  # a range of |coefficients| wider than this: MILP solvers warn of numerical trouble


def _range(values) -> tuple[float | None, float | None]:
    """(min, max) of the nonzero |values| (None, None where there is none)."""
    a = np.abs(np.asarray(values, dtype=float))
    a = a[(a > 0) & np.isfinite(a)]
    return (float(a.min()), float(a.max())) if len(a) else (None, None)


def _stats(kinds: np.ndarray, rows: int, entries, rhs, cost, bounds) -> dict:
    """The size columns of a row of the study from arrays: ``kinds`` per column ("B", "I" or "C")."""
    out: dict[str, Any] = {
        "variables": int(len(kinds)), "binaries": int((kinds == "B").sum()), "integers": int((kinds == "I").sum()),
        "continuous": int((kinds == "C").sum()), "constraints": int(rows), "nonzeros": int(np.count_nonzero(entries))}
    warn = []
    for key, values, what in (("coef", entries, "matrix"), ("rhs", rhs, "right-hand side"),
                              ("objective", cost, "objective"), ("bounds", bounds, "bounds")):
        lo, hi = _range(values)
        out[f"{key}_min"], out[f"{key}_max"] = lo, hi
        if lo is not None and hi is not None and hi / lo > NUMERICS_RANGE:
            warn.append(f"{what} range [{lo:.1e}, {hi:.1e}]")
    out["numerics"] = ("wider than 1e6 (numerical trouble is likely): " + "; ".join(warn)) if warn else None
    return out


def _pyomo_size(model) -> dict:
    """What a MILP solver receives from the Pyomo ``model`` (Pyomo's standard-form compiler: fixed variables
    substituted, a ranged row counted once)."""
    from pyomo.repn.plugins.standard_form import LinearStandardFormCompiler

    repn = LinearStandardFormCompiler().write(model, mixed_form=True)
    kinds = np.array(["B" if v.is_binary() else "I" if v.is_integer() else "C" for v in repn.columns], dtype="<U1")
    first = [i for i, (con, _) in enumerate(repn.rows) if i == 0 or repn.rows[i - 1][0] is not con]
    A = repn.A.tocsr()[first] if first else repn.A
    rhs = np.asarray(repn.rhs, dtype=float)
    bounds = [b for v in repn.columns for b in v.bounds if b is not None and not v.is_binary()]
    cost = repn.c.toarray().ravel() if hasattr(repn.c, "toarray") else np.asarray(repn.c, dtype=float).ravel()
    return _stats(kinds, len(first), A.data, rhs, cost, bounds)


def _cpsat_size(model) -> dict:
    """Variables by domain, constraints and the linear constraints' coefficients of the CP-SAT ``model``."""
    proto = model.Proto()
    kinds = np.array(["B" if list(v.domain) == [0, 1] else "I" for v in proto.variables], dtype="<U1")
    coefs, rhs = [], []
    for c in proto.constraints:
        if c.has_linear():
            coefs += list(c.linear.coeffs)
            rhs += [d for d in c.linear.domain if abs(d) < 2**62]
    bounds = [d for v in proto.variables if list(v.domain) != [0, 1] for d in v.domain if abs(d) < 2**62]
    out = _stats(kinds, len(proto.constraints), coefs, rhs, list(proto.objective.coeffs), bounds)
    out["nonzeros"] = len(coefs)  # of the linear constraints; intervals and cumulatives have no coefficients
    return out


def _array_size(model) -> dict:
    lo, hi, integer, cost, row_lo, row_hi, _, _, vals = model.matrix.arrays()
    binary = integer & (lo == 0) & (hi == 1)
    kinds = np.where(binary, "B", np.where(integer, "I", "C"))
    rhs = np.concatenate([row_lo[np.isfinite(row_lo)], row_hi[np.isfinite(row_hi)]])
    bounds = np.concatenate([lo[~binary & np.isfinite(lo)], hi[~binary & np.isfinite(hi)]])
    return _stats(kinds, model.matrix.row_count, vals, rhs, cost, bounds)


def size(kind: str, model) -> dict:
    """The size of ``model``: variables by kind (binary, general integer, continuous), constraints, nonzeros, the
    ranges of |coefficients|, right-hand sides, objective and bounds, and a numerics warning past 1e6."""
    return {PYOMO: _pyomo_size, CPSAT: _cpsat_size, ARRAY: _array_size}[kind](model)


def relax(kind: str, model, profile: Profile) -> tuple[SolveOutcome | None, str]:
    """The LP relaxation of ``model`` solved on the profile's backend (the model itself unchanged), or None and why
    there is none."""
    if kind == PYOMO:
        return solve_relaxation(model, profile), ""
    if kind == ARRAY:
        from iosched.models.matrix import solve

        return solve(model.matrix, profile, relax=True)[0], ""
    return None, "CP-SAT reasons on the integer model: it has no LP relaxation to report"


@dataclass
class Solved:
    """One solve of a model: the outcome (in the model's units) and what the formulation's reader needs."""

    outcome: SolveOutcome
    values: object  # None (Pyomo: the model holds them), the CP-SAT solver, or the array model's column values


def solve(kind: str, model, profile: Profile, root: bool = False) -> Solved:
    """Solve ``model`` under ``profile`` (CP-SAT models on OR-Tools, the others on the profile's backend), the
    incumbent loaded; with ``root`` the root node's bound read where the backend reports one."""
    if kind == PYOMO:
        return Solved(solve_pyomo(model, profile, root=root), None)
    if kind == CPSAT:
        outcome, solver = solve_cpsat(model, profile)
        if root:
            outcome.root_why = "CP-SAT has no root node (not branch and bound on an LP)"
        return Solved(outcome, solver)
    from iosched.models.matrix import solve as solve_matrix

    began = time.perf_counter()
    outcome, x = solve_matrix(model.matrix, profile, root=root)
    outcome.wall_time_s = max(outcome.wall_time_s, time.perf_counter() - began)
    return Solved(outcome, x)
