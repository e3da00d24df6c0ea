"""The solver layer: profiles, HiGHS through Pyomo, CP-SAT, in one process."""

import pyomo.environ as pe
import pytest
from ortools.sat.python import cp_model

from iosched.core import Status
from iosched.errors import ParameterError
from iosched.solvers import load_profile, solve_cpsat, solve_pyomo


def _knapsack(capacity=7.5):
    m = pe.ConcreteModel()
    m.x = pe.Var(within=pe.Integers, bounds=(0, 10))
    m.y = pe.Var(bounds=(0, None))
    m.cap = pe.Constraint(expr=3 * m.x + m.y <= capacity)
    m.obj = pe.Objective(expr=2 * m.x + m.y, sense=pe.maximize)
    return m


def test_highs_and_cpsat_in_one_process():
    """highspy and ortools both import here and each solves a tiny model (highspy<1.15 pin)."""
    import highspy  # noqa: F401

    m = _knapsack()
    out = solve_pyomo(m, load_profile("quick"))
    assert out.status == Status.OPTIMAL
    assert out.objective == pytest.approx(7.5)
    assert out.bound == pytest.approx(7.5)
    assert out.gap == pytest.approx(0.0, abs=1e-9)
    assert pe.value(m.y) + 3 * pe.value(m.x) == pytest.approx(7.5)

    cp = cp_model.CpModel()
    a, b = cp.new_int_var(0, 10, "a"), cp.new_int_var(0, 10, "b")
    cp.add(3 * a + 2 * b <= 13)
    cp.maximize(4 * a + 3 * b)
    res, solver = solve_cpsat(cp, load_profile("quick"))
    assert res.status == Status.OPTIMAL
    assert res.objective == 19 and res.bound == 19  # a=1, b=5 or a=3, b=2 -> 4*1+3*5 = 19
    assert 3 * solver.value(a) + 2 * solver.value(b) <= 13


def test_infeasible_is_a_status_not_an_exception():
    m = _knapsack()
    m.bad = pe.Constraint(expr=m.x >= 11)
    out = solve_pyomo(m, load_profile("quick"))
    assert out.status == Status.INFEASIBLE
    assert out.objective is None and not out.has_solution

    cp = cp_model.CpModel()
    v = cp.new_int_var(0, 3, "v")
    cp.add(v >= 4)
    cp.maximize(v)
    res, _ = solve_cpsat(cp, load_profile("quick"))
    assert res.status == Status.INFEASIBLE and res.objective is None and res.bound is None


def _near_half_subset_sum(rng, n=60):
    """Even weights, a sum pinned near half: slow for branch and bound at any size."""
    w = [2 * rng.randint(10_000, 20_000) for _ in range(n)]
    m = pe.ConcreteModel()
    m.x = pe.Var(range(n), within=pe.Binary)
    total = sum(w[i] * m.x[i] for i in range(n))
    return m, w, total


def test_time_limit_gives_incumbent_and_bound(tmp_path):
    """Stopped by the limit: TIME_LIMIT, the incumbent and a bound, or no incumbent; never raises."""
    prof = tmp_path / "solvers.toml"
    prof.write_text("[tiny]\ntime_limit = 0.5\nrel_gap = 0.0\nthreads = 1\nseed = 0\n"
                    "[tiny.highs]\npresolve = 'off'\n")
    profile = load_profile("tiny", prof)
    import random

    rng = random.Random(1)
    m, w, total = _near_half_subset_sum(rng)
    m.cap = pe.Constraint(expr=pe.inequality(sum(w) // 2 - 1, total, sum(w) // 2 + 1))
    m.obj = pe.Objective(expr=sum((w[i] + rng.randint(0, 9)) * m.x[i] for i in range(60)), sense=pe.maximize)
    out = solve_pyomo(m, profile)
    assert out.status == Status.TIME_LIMIT and out.has_solution
    assert out.objective <= out.bound and out.gap > 0

    m, w, total = _near_half_subset_sum(random.Random(1))
    m.odd = pe.Constraint(expr=total == 2 * (sum(w) // 4) + 1)  # even = odd: infeasible, hard to prove
    m.obj = pe.Objective(expr=sum(m.x[i] for i in range(60)), sense=pe.maximize)
    out = solve_pyomo(m, profile)
    assert out.status == Status.TIME_LIMIT
    assert out.objective is None and out.gap is None and not out.has_solution


def test_profiles_are_checked(tmp_path):
    assert load_profile("default").time_limit > 0
    with pytest.raises(ParameterError, match="unknown solver profile 'nope'"):
        load_profile("nope")
    bad = tmp_path / "s.toml"
    bad.write_text("[p]\ntime_limit = -1\nrel_gap = 0\nthreads = 1\nseed = 0\n")
    with pytest.raises(ParameterError, match=r"time_limit must be in \(0, 1e\+07\], got -1"):
        load_profile("p", bad)
    bad.write_text("[p]\ntime_limit = 1\nrel_gap = 0\nthreads = 1\nseed = 0\nspeed = 3\n")
    with pytest.raises(ParameterError, match="unknown key 'speed'"):
        load_profile("p", bad)


@pytest.mark.parametrize("text, message", [
    ("[default\ntime_limit = 1", "is not valid TOML"),
    ("[default]\ntime_limit = 60\nrel_gap = 0\nthreads = 'two'\nseed = 0\n", "threads must be an integer, got 'two'"),
    ("[default]\ntime_limit = 'abc'\nrel_gap = 0\nthreads = 1\nseed = 0\n", "time_limit must be a number, got 'abc'"),
    ("[default]\ntime_limit = nan\nrel_gap = 1e-4\nthreads = 1\nseed = 0\n", "time_limit must be a finite number"),
    ("default = 3\n", "must be a table"),
    ("[default]\ntime_limit = 1\nrel_gap = 0\nthreads = 1\nseed = 0\n[default.highs]\nbogus = 1\n",
     "HiGHS has no option 'bogus'"),
    ("[default]\ntime_limit = 1\nrel_gap = 0\nthreads = 1\nseed = 0\n[default.highs]\npresolve = 3\n",
     "HiGHS has no option 'presolve' taking 3"),
    ("[default]\ntime_limit = 1\nrel_gap = 0\nthreads = 1\nseed = 0\n[default.cpsat]\nbogus = 1\n",
     "CP-SAT has no parameter 'bogus'"),
    ("[default]\ntime_limit = 1\nrel_gap = 0\nthreads = 1\nseed = 0\ncpsat = 5\n", "cpsat must be a table"),
])
def test_bad_profile_files_name_file_and_key(tmp_path, text, message):
    f = tmp_path / "s.toml"
    f.write_text(text)
    with pytest.raises(ParameterError, match=message) as e:
        load_profile("default", f)
    assert "s.toml" in str(e.value)


def test_a_named_profile_file_must_exist(monkeypatch, tmp_path, capsys):
    from iosched.cli import main

    monkeypatch.setenv("IOSCHED_SOLVERS", str(tmp_path / "missing.toml"))
    with pytest.raises(ParameterError, match="IOSCHED_SOLVERS names .*missing.toml"):
        load_profile("default")
    # through the CLI: exit 2 before the method runs, naming the variable
    assert main(["solve", "window", "paper:example", "--method", "exact", "--param", "engine=milp"]) == 2
    assert "IOSCHED_SOLVERS" in capsys.readouterr().err


def test_a_methods_deadline_counts_from_when_solve_started_its_clock():
    """Deadline.for_method inside a method run by iosched.solve starts at solve's clock (the run's context, which
    solve passes the method), not at the method's first line: work before it (here a sleep standing for a slow
    set-up) counts. Called directly, without a context, the method counts from now."""
    import time

    from iosched import core
    from iosched.core import MethodOutput, RunContext, register, solve
    from iosched.solvers import Deadline

    seen = {}

    @register("window", "_deadline_probe", objective="hypervolume")
    def probe(instance, *, context: RunContext | None = None):
        seen["context"] = context
        seen["before"] = Deadline.for_method(5.0, context=context).remaining()
        time.sleep(0.05)
        seen["after"] = Deadline.for_method(5.0, context=context).remaining()
        seen["default"] = Deadline.for_method(context=context).seconds
        return MethodOutput(None, Status.ERROR)

    try:
        before = time.perf_counter()
        solve("window", "paper:example", "_deadline_probe")
        assert core.parameters("window", "_deadline_probe") == []  # the context is no parameter of the method
        with pytest.raises(ParameterError, match="unknown parameter 'context'"):  # nor can a user give it
            solve("window", "paper:example", "_deadline_probe", context=RunContext())
    finally:
        core.METHODS.pop("window/_deadline_probe", None)
    assert seen["after"] <= seen["before"] - 0.05  # one budget, whenever it is asked for
    assert seen["default"] == load_profile("default").time_limit
    context = seen["context"]
    assert before <= context.method_start <= time.perf_counter()
    assert context.bound_end == pytest.approx(context.method_start + load_profile("default").time_limit)
    assert context.solver == "highs"  # a method without a profile: its bounds' LPs on HiGHS
    assert Deadline.for_method(5.0).remaining() > 4.9  # outside solve: from now
    assert Deadline.for_bound(None) is None  # a bound called directly has no deadline
    assert Deadline.for_bound(RunContext(bound_end=time.perf_counter() - 1)).expired()


def test_a_context_parameter_must_be_keyword_only_and_default_to_none():
    """A direct call has no context: a method that could not be called without one is refused at registration."""
    from iosched import core
    from iosched.core import MethodOutput, register

    def positional(instance, context=None):
        return MethodOutput(None)

    def required(instance, *, context):
        return MethodOutput(None)

    for fn in (positional, required):
        with pytest.raises(ValueError, match="keyword-only with default None"):
            register("window", "_context_probe", objective="hypervolume")(fn)
    assert "window/_context_probe" not in core.METHODS


def test_the_problems_bound_gets_the_runs_solver_and_deadline(monkeypatch):
    """solve hands the problem's bound and its words the run's context: the LPs on the method's profile's backend
    (``quick:scip``: SCIP), by the end of the method's budget."""
    import time

    from iosched import core
    from iosched.core import get_problem, register, solve
    from iosched.heuristics.malleable import rigid_fcfs

    prob, seen = get_problem("malleable"), {}
    monkeypatch.setattr(prob, "bound", lambda instance, objective, context=None: seen.setdefault("bound", context)
                        and 0.0)
    monkeypatch.setattr(prob, "gap_reference", lambda instance, objective, context=None:
                        seen.setdefault("words", context) and "a probe's bound")

    @register("malleable", "_context_probe", objective="mean_completion")
    def probe(instance, profile: str = "default"):
        return rigid_fcfs(instance)

    try:
        start = time.perf_counter()
        res = solve("malleable", "paper:50", "_context_probe", profile="quick:scip")
    finally:
        core.METHODS.pop("malleable/_context_probe", None)
    assert res.info["gap_against"] == "a probe's bound"
    assert seen["bound"] is seen["words"]  # one context for the run
    assert seen["bound"].solver == "scip"
    assert start <= seen["bound"].bound_end - load_profile("quick").time_limit <= time.perf_counter()


@pytest.mark.parametrize("text", ["default = " + "[" * 100_000 + "]" * 100_000 + "\n",
                                  "default = " + "{a = " * 5_000 + "1" + "}" * 5_000 + "\n"],
                         ids=["arrays", "inline-tables"])
def test_a_deeply_nested_profile_file_is_an_error_naming_it(tmp_path, monkeypatch, capsys, text):
    from iosched.cli import main

    f = tmp_path / "deep.toml"
    f.write_text(text)
    with pytest.raises(ParameterError, match="deep.toml is nested too deeply"):
        load_profile("default", f)
    monkeypatch.setenv("IOSCHED_SOLVERS", str(f))
    assert main(["solve", "window", "paper:example", "--method", "exact", "--param", "engine=milp"]) == 2
    err = capsys.readouterr().err
    assert "deep.toml is nested too deeply" in err and "Traceback" not in err


def _file_options():
    import shutil

    cases = [("highs", "log_file", None), ("highs", "solution_file", None), ("highs", "write_model_file", None),
             ("highs", "write_solution_to_file", True), ("highs", "read_basis_file", None),
             ("gurobi", "LogFile", None), ("gurobi", "resultfile", None), ("scip", "visual/vbcfilename", None),
             ("cplex", "workdir", None), ("cplex", "output_clonelog", 1), ("xpress", "tuneroutputpath", None)]
    if shutil.which("cbc"):  # CBC takes any unique prefix of a command, and reads commands from stdin
        cases += [("cbc", "export", None), ("cbc", "expo", None), ("cbc", "solu", None), ("cbc", "stdin", 1),
                  ("cbc", "saveSolution", None), ("cbc", "-import", None)]
    return cases


@pytest.mark.parametrize("solver,key,value", _file_options())
def test_raw_options_that_write_files_are_refused_from_a_profile_file(tmp_path, solver, key, value):
    """A solvers.toml in the working folder is read by anyone's run there: none of its options may make a
    backend write (or read) files where it says, and the check itself writes nothing."""
    import json

    target = tmp_path / "written.txt"
    toml_value = json.dumps(str(target)) if value is None else json.dumps(value)
    f = tmp_path / "s.toml"
    f.write_text(f'[p]\ntime_limit = 5\nrel_gap = 0\nthreads = 1\nseed = 0\nsolver = "{solver}"\n'
                 f'[p.{solver}]\n"{key}" = {toml_value}\n')
    with pytest.raises(ParameterError, match=rf"profile 'p'\.{solver}: option '{key}' .*files"):
        load_profile("p", f)
    assert not target.exists() and list(tmp_path.iterdir()) == [f]


def test_cbc_options_are_single_words(tmp_path):
    """CBC gets each option as one argument: a key or value that is not one word (or that would start an
    option of its own) is refused before CBC runs."""
    from iosched.solvers.backends import cbc

    for options in ({"sec 5 -export x": 1}, {"sec": "5 -export"}, {"sec": "-export"}, {"": 1}):
        with pytest.raises(ParameterError, match="one word"):
            cbc.Cbc().check_options(options, "f: profile 'p'")


def test_the_profile_file_in_force_is_named(tmp_path, monkeypatch, capsys):
    """`iosched solvers` says which solvers.toml is in force; one nobody named (the working folder's) is said
    on stderr by every command that loads it."""
    import warnings
    from pathlib import Path

    from iosched.cli import main
    from iosched.solvers import DEFAULT_PROFILES, ProfileFileWarning, profile_source

    monkeypatch.delenv("IOSCHED_SOLVERS", raising=False)
    assert DEFAULT_PROFILES == Path(iosched_root()) / "iosched" / "solvers.toml"  # package data, in the wheel too
    assert profile_source() == f"{DEFAULT_PROFILES} (iosched's own)"
    monkeypatch.chdir(tmp_path)
    (tmp_path / "solvers.toml").write_text("[default]\ntime_limit = 7\nrel_gap = 0\nthreads = 1\nseed = 0\n")
    assert profile_source() == f"{tmp_path / 'solvers.toml'} (the working folder's)"
    with warnings.catch_warnings():
        warnings.simplefilter("always", ProfileFileWarning)
        assert main(["solve", "window", "paper:example", "--method", "exact", "--param", "engine=milp"]) == 0
    err = capsys.readouterr().err
    assert f"iosched: warning: solver profiles from {tmp_path / 'solvers.toml'}" in err
    with pytest.warns(ProfileFileWarning, match="the working folder's solvers.toml"):
        assert load_profile("default").time_limit == 7
    monkeypatch.setenv("IOSCHED_SOLVERS", str(tmp_path / "solvers.toml"))
    assert profile_source().endswith("(named by IOSCHED_SOLVERS)")
    with warnings.catch_warnings():
        warnings.simplefilter("error", ProfileFileWarning)  # a file named is no news
        load_profile("default")


def iosched_root() -> str:
    from pathlib import Path

    import iosched

    return str(Path(iosched.__file__).resolve().parents[1])
