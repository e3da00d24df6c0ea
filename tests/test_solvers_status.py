"""Each backend's one status table (issue 50): every native code it lists maps to its stop, the codes are the
vendor's own (read from the installed package), an unlisted code is logged and named, never folded into
another, and the verdict follows one rule for every backend."""

import ast
import logging
import shutil
from pathlib import Path

import pytest

import iosched
from iosched.solvers import BACKENDS, Profile, Stop, load_profile, solve_pyomo
from iosched.solvers.backends import cbc
from iosched.solvers.backends.cpsat import CPSAT
from iosched.solvers.outcome import verdict
from iosched.status import Status

ENGINES = [*BACKENDS.values(), CPSAT]
MODULES = Path(iosched.__file__).parent / "solvers" / "backends"


@pytest.mark.parametrize("engine", ENGINES, ids=lambda e: e.name)
def test_every_listed_code_maps_to_its_stop_and_an_unlisted_one_is_logged(engine, caplog):
    assert engine.STATUS and engine.STATUS_DOC.startswith("https://")
    with caplog.at_level(logging.WARNING, logger="iosched.solvers"):
        for code, stop in engine.STATUS.items():
            assert engine.stop(code) is stop and isinstance(stop, Stop)
        assert not caplog.records  # a listed code is no news
        unknown = 987654 if isinstance(next(iter(engine.STATUS)), int) else "no such status"
        assert engine.stop(unknown) is Stop.UNLISTED
    [record] = caplog.records
    assert engine.name in record.getMessage() and repr(unknown) in record.getMessage()
    answer = engine.answer(unknown, True, "said")
    assert answer.stop is Stop.UNLISTED and answer.code == str(unknown)
    out = answer.outcome(1.0)
    assert out.status == Status.FEASIBLE and out.code == str(unknown) and str(unknown) in out.stopped


def test_each_backend_module_has_one_status_table():
    for path in sorted(MODULES.glob("*.py")):
        tables = [node for node in ast.parse(path.read_text()).body if isinstance(node, ast.Assign)
                  and any(isinstance(t, ast.Name) and t.id == "STATUS" for t in node.targets)]
        assert len(tables) == (0 if path.stem in ("__init__", "base", "pyomo_path") else 1), path.name


def test_the_tables_hold_the_vendors_codes():
    """Each code a table lists is one its package defines, and (but for CPLEX's codes of features iosched
    does not use, and CBC's words, which no package lists) every code the package defines is listed."""
    import cplex
    import gurobipy as gp
    import highspy
    import pyscipopt
    import xpress as xp
    from ortools.sat import cp_model_pb2

    grb = {getattr(gp.GRB.Status, n) for n in dir(gp.GRB.Status) if n.isupper()}
    assert set(BACKENDS["gurobi"].STATUS) == grb
    assert set(BACKENDS["highs"].STATUS) == set(highspy.HighsModelStatus.__members__)
    scip = {n.lower() for n in dir(pyscipopt.SCIP_STATUS) if n.isupper()}
    assert scip <= set(BACKENDS["scip"].STATUS)
    assert set(BACKENDS["scip"].STATUS) - scip == {"terminate", "lp optimal", "lp stopped at its time limit",
                                                 "lp not optimal"}  # SCIP 9's, and its LP interface's words
    status = cplex.Cplex().solution.status
    assert set(BACKENDS["cplex"].STATUS) <= {getattr(status, n) for n in dir(status) if not n.startswith("_")}
    words = set(xp.SolStatus.__members__) | set(xp.StopType.__members__) - {"NONE", "SOLVECOMPLETE"}
    assert set(BACKENDS["xpress"].STATUS) == words
    assert set(CPSAT.STATUS) == set(cp_model_pb2.CpSolverStatus.keys()) | {"FEASIBLE at the time limit"}


def test_cbc_status_words_are_read_from_its_solution_file_header():
    assert cbc.header_status("Optimal - objective value 3.00000000") == "Optimal"
    assert cbc.header_status("Stopped on time (no integer solution - continuous used) - objective value -2918.4") \
        == "Stopped on time"
    assert cbc.header_status("Integer infeasible - objective value 2.00000000") == "Integer infeasible"
    assert BACKENDS["cbc"].stop(cbc.header_status("Optimal (within gap tolerance) - objective value 12664.27")) \
        is Stop.OPTIMAL  # forwarding random:0:200's DFRA-space MILP under the quick profile
    assert cbc.header_status("") == "no solution file"
    assert all(BACKENDS["cbc"].stop(cbc.header_status(f"{w} - objective value 1")) is s
               for w, s in BACKENDS["cbc"].STATUS.items() if w != "no solution file")


@pytest.mark.parametrize("stop,has,status", [
    (Stop.OPTIMAL, True, Status.OPTIMAL), (Stop.OPTIMAL, False, Status.ERROR),
    (Stop.TIME_LIMIT, True, Status.TIME_LIMIT), (Stop.TIME_LIMIT, False, Status.TIME_LIMIT),
    (Stop.INFEASIBLE, False, Status.INFEASIBLE), (Stop.INFEASIBLE_OR_UNBOUNDED, False, Status.INFEASIBLE),
    (Stop.OTHER_LIMIT, True, Status.FEASIBLE), (Stop.UNBOUNDED, False, Status.ERROR),
    (Stop.UNLISTED, False, Status.ERROR), (Stop.NUMERICS, True, Status.FEASIBLE)])
def test_one_verdict_for_every_backend(stop, has, status):
    assert verdict(stop, has) == status


def _tiny():
    import pyomo.environ as pe

    m = pe.ConcreteModel()
    m.x = pe.Var(domain=pe.Integers, bounds=(0, 4))
    m.c = pe.Constraint(expr=2 * m.x <= 7)
    m.o = pe.Objective(expr=m.x, sense=pe.maximize)
    return m


@pytest.mark.parametrize("solver", [n for n in BACKENDS if n != "cbc" or shutil.which("cbc")])
def test_a_solve_reports_why_it_stopped_and_an_unlisted_code_keeps_the_incumbent(solver, monkeypatch, caplog):
    """A real solve says its stop and native code; where the backend's code were missing from its table, the
    outcome names it, keeps the incumbent (feasible, never optimal or error), and the log says so."""
    prof = load_profile(f"quick:{solver}")
    out = solve_pyomo(_tiny(), prof)
    assert out.status == Status.OPTIMAL and out.stop is Stop.OPTIMAL and out.objective == pytest.approx(3)
    assert out.code in {str(c) for c in BACKENDS[solver].STATUS}
    b = BACKENDS[solver]
    monkeypatch.setattr(b, "STATUS", {})
    with caplog.at_level(logging.WARNING, logger="iosched.solvers"):
        out = solve_pyomo(_tiny(), prof)
    assert out.stop is Stop.UNLISTED and out.status == Status.FEASIBLE and out.objective == pytest.approx(3)
    assert any(solver in r.getMessage() and "does not list" in r.getMessage() for r in caplog.records)
    assert out.stopped.startswith("unlisted (")


def test_a_time_limit_is_said_with_or_without_its_incumbent():
    from iosched.solvers.outcome import Answer

    assert Answer(Stop.TIME_LIMIT, "9", True, 1.0).outcome(1.0).stopped == "time limit, with an incumbent (9)"
    assert Answer(Stop.TIME_LIMIT, "9", False).outcome(1.0).stopped == "time limit, without a solution (9)"
    assert Profile("p", 1, 0, 1, 0).solver == "highs"
