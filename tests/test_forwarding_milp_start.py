"""The forwarding MILPs (milp, milp-max, milp-dfra-space) start from the best fast heuristic: when the model is not
built or solved in time, or HiGHS has nothing better, they return that start (status time_limit) instead of no
allocation, say where it came from, and an optimal model is never worse than it. A start whose value meets the
problem's bound is called optimal (issue 40, item 8): on these tiny instances DFRA's often does."""

import pytest

import iosched
from iosched.core import Status, get_method, optimality_tolerance
from iosched.evaluate.forwarding import evaluate
from iosched.heuristics.forwarding import fixed
from iosched.instances.forwarding import ForwardingInstance, ForwardingNode, History, Job
from iosched.models import driver
from iosched.models import forwarding as fwd
from iosched.models import forwarding_every as every
from iosched.solvers import Deadline, SolveOutcome

BF = 2.5
METHODS = {"milp": "total_io_time", "milp-max": "max_io_time", "milp-dfra-space": "total_io_time"}
HEURISTICS = {"milp": ("fixed", "dfra", "mckp", "round-robin"), "milp-max": ("fixed", "dfra", "mckp", "round-robin"),
              "milp-dfra-space": ("fixed", "dfra", "mckp")}


def isolate():
    """A job with a history beside a running N-1 job on default node 0: DFRA moves it to a pool node (rule 4),
    far better than the fixed mapping; every model is tiny."""
    nodes = (ForwardingNode(0, BF), ForwardingNode(1, BF), ForwardingNode(2, BF, False, "pool"),
             ForwardingNode(3, BF, False, "pool"))
    r = Job("r", 0, 2, 2, 1.0, 10.0, "N-1")
    a = Job("a", 2, 2, 2, 1.0, 10.0, history=History(10.0, 2, 1.0))
    b = Job("b", 4, 1, 1, 1.0, 2.0)
    return ForwardingInstance(1024, 512, nodes, (a, b), (r,))


def best_heuristic(inst, method):
    objective = METHODS[method]
    return min(getattr(iosched.solve("forwarding", inst, h).evaluation, objective) for h in HEURISTICS[method])


def run(inst, method):
    r = iosched.solve("forwarding", inst, method, profile="quick")
    assert r.solution is not None and r.evaluation.feasible, r.info
    assert r.objective >= r.bound * (1 - 1e-9)  # minimisation: never below the bound
    return r


def handed_back(r) -> bool:
    """The start returned at the limit: time_limit, or optimal where its value meets the problem's bound (valid for
    every allocation), info naming that bound."""
    if r.gap is not None and r.gap <= optimality_tolerance(get_method("forwarding", r.method), r.params):
        return r.status == "optimal" and "the problem's bound" in r.info["optimal"]
    return r.status == "time_limit"


@pytest.mark.parametrize("method", list(METHODS))
def test_walkthrough_case_returns_an_allocation(method):
    """random:0:2, quick profile: milp ended time_limit with no allocation (65,792 variables, about 23 s to build)
    although DFRA's allocation meets the bound."""
    r = run("random:0:2", method)
    assert r.status in ("time_limit", "optimal")
    if r.status == "time_limit":
        assert "incumbent" in r.info
    assert r.objective <= best_heuristic("random:0:2", method) * (1 + 1e-9)


@pytest.mark.parametrize("method", list(METHODS))
def test_a_model_not_built_in_time_returns_the_best_start(method, monkeypatch):
    monkeypatch.setattr(fwd, "SECONDS_PER_VARIABLE", 1e6)  # no model fits in any budget
    inst = isolate()
    r = run(inst, method)
    assert handed_back(r)
    assert "would take about" in r.info["error"] and "the MILP was not built" in r.info["incumbent"]
    assert "optimal" not in r.info["incumbent"]
    assert r.objective == pytest.approx(best_heuristic(inst, method), rel=1e-12)
    assert r.info["start"]["value"] == pytest.approx(r.objective, rel=1e-12)
    assert r.objective < getattr(iosched.solve("forwarding", inst, "fixed").evaluation, METHODS[method])


@pytest.mark.parametrize("method", list(METHODS))
def test_the_walkthrough_not_built_path_is_deterministic(method, monkeypatch):
    monkeypatch.setattr(fwd, "SECONDS_PER_VARIABLE", 1e6)
    r = run("random:0:2", method)
    assert handed_back(r) and "the MILP was not built" in r.info["incumbent"]
    assert r.objective == pytest.approx(best_heuristic("random:0:2", method), rel=1e-12)


def _module(method):
    return fwd if method == "milp-dfra-space" else every


@pytest.mark.parametrize("method", list(METHODS))
def test_a_model_not_solved_returns_the_start(method, monkeypatch):
    monkeypatch.setattr(driver, "solve_pyomo_within",
                        lambda build, prof, deadline, handover, **kw: (None, None, "no time left for HiGHS"))
    r = run(isolate(), method)
    assert handed_back(r) and r.info["error"] == "the MILP was not solved: no time left for HiGHS"
    assert "the MILP was not solved" in r.info["incumbent"]
    assert r.objective == pytest.approx(best_heuristic(isolate(), method), rel=1e-12)


@pytest.mark.parametrize("method", list(METHODS))
def test_highs_without_an_incumbent_returns_the_start(method, monkeypatch):
    def nothing(build, prof, deadline, handover, **kw):
        return build(), SolveOutcome(Status.TIME_LIMIT, None, 1.0, None, 0.1, False, "maxTimeLimit"), ""

    monkeypatch.setattr(driver, "solve_pyomo_within", nothing)
    r = run(isolate(), method)
    assert handed_back(r) and "the solver found no allocation" in r.info["incumbent"]
    assert r.info["model_status"] == "time_limit"
    assert r.objective == pytest.approx(best_heuristic(isolate(), method), rel=1e-12)


@pytest.mark.parametrize("method", list(METHODS))
def test_an_incumbent_worse_than_the_start_is_replaced_by_it(method, monkeypatch):
    """HiGHS stops at its time limit holding the fixed mapping (as if): the start, DFRA's, is better and returned."""
    def stopped(build, prof, deadline, handover, **kw):
        return build(), SolveOutcome(Status.TIME_LIMIT, 1e9, 1.0, None, 0.1, True, "maxTimeLimit"), ""

    monkeypatch.setattr(driver, "solve_pyomo_within", stopped)
    monkeypatch.setattr(_module(method), "read_allocation" if method == "milp-dfra-space" else "read_every",
                        lambda inst, m: fixed(inst).solution)
    inst = isolate()
    r = run(inst, method)
    worse = getattr(iosched.solve("forwarding", inst, "fixed").evaluation, METHODS[method])
    assert handed_back(r) and "worse" in r.info["incumbent"]
    assert r.objective == pytest.approx(best_heuristic(inst, method), rel=1e-12) and r.objective < worse


@pytest.mark.parametrize("method", list(METHODS))
@pytest.mark.parametrize("pool", [0, 1, 2])
def test_an_optimal_model_is_never_worse_than_the_start(method, pool):
    nodes = isolate().forwarding_nodes[:2 + pool]
    inst = ForwardingInstance(1024, 512, nodes, isolate().jobs, isolate().running)
    r = run(inst, method)
    assert r.info["model_status"] == "optimal" and "incumbent" not in r.info
    assert r.info["model_objective"] <= r.info["start"]["value"] * (1 + 1e-7) + 1e-9
    assert r.objective <= best_heuristic(inst, method) * (1 + 1e-9)


def test_the_start_counts_inside_the_deadline():
    """With the deadline gone the start is the first heuristic's (fixed: every job on its default mapping)."""
    inst = isolate()
    start = fwd.best_start(inst, "total_io_time", Deadline(0.0), every.STARTS)
    assert start.heuristic == "fixed" and evaluate(inst, start.allocation).feasible
    assert start.value == pytest.approx(evaluate(inst, fixed(inst).solution).total_io_time)


@pytest.mark.parametrize("method", list(METHODS))
def test_a_machine_of_fewer_compute_nodes_than_round_robins_groups(method):
    """16 compute nodes: round-robin's default k = 32 is refused (a ParameterError), so the start deals groups of
    16; the MILP still solves."""
    nodes = (ForwardingNode(0, BF), ForwardingNode(1, BF, False, "pool"))
    r = run(ForwardingInstance(16, 16, nodes, (Job("a", 0, 2, 2, 1.0, 1.0),)), method)
    assert r.info["model_status"] == "optimal" and r.objective == pytest.approx(0.5)
