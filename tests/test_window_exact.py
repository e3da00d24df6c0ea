"""The exact Pareto front of a window: the paper's example, brute force, the three engines, the MILP, solve()."""

import numpy as np
import pyomo.environ as pe
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import iosched
from iosched.errors import ParameterError
from iosched.evaluate.window import Selection, evaluate, hypervolume
from iosched.heuristics.window import decide
from iosched.instances.window import Capacity, Job, WindowInstance
from iosched.instances.window_presets import PAPER_EXAMPLE, PAPER_PARETO, generate
from iosched.models.window import build_milp, pareto_dp, pareto_front


def brute_front(inst):
    """All non-dominated (nodes, bb) of the feasible subsets, most nodes first, by enumerating 2^w subsets."""
    w = len(inst.jobs)
    X = (np.arange(2 ** w)[:, None] >> np.arange(w)) & 1
    n, b = X @ inst.nodes(), X @ inst.bbs()
    ok = (n <= inst.capacity.nodes) & (b <= inst.capacity.burst_buffer)
    pts = set(zip(n[ok].tolist(), b[ok].tolist()))
    return sorted((p for p in pts if not any(q != p and q[0] >= p[0] and q[1] >= p[1] for q in pts)), reverse=True)


def vectors(front):
    return [(p.nodes, p.burst_buffer) for p in front]


def check_subsets(inst, front):
    """Each point's subset: known distinct jobs, sums equal to the point, within the capacity."""
    index = {j.id: i for i, j in enumerate(inst.jobs)}
    for p in front:
        assert len(set(p.jobs)) == len(p.jobs)
        idx = [index[j] for j in p.jobs]
        assert sum(inst.jobs[i].nodes for i in idx) == p.nodes
        assert sum(inst.bb(i) for i in idx) == p.burst_buffer
        assert p.nodes <= inst.capacity.nodes and p.burst_buffer <= inst.capacity.burst_buffer
    sel = Selection(front[0].jobs, tuple(front))
    assert evaluate(inst, sel).feasible


# --- (1) the paper's example ----------------------------------------------------------------------


@pytest.mark.parametrize("engine", ["dp", "milp", "cpsat"])
def test_paper_example_front(engine):
    front = pareto_front(PAPER_EXAMPLE, engine, "quick")
    assert vectors(front) == [(n, b) for n, b, _ in PAPER_PARETO]
    # the subsets are unique here (J1+J5 is the only (100, 20); J2..J5 the only (80, 90))
    assert [p.jobs for p in front] == [ids for _, _, ids in PAPER_PARETO]


def test_bad_engine():
    with pytest.raises(ParameterError, match="gurobi"):
        pareto_front(PAPER_EXAMPLE, "gurobi")


# --- (2) dp against brute force -------------------------------------------------------------------

GENERATED = [(seed, 8 + seed % 9, ("S1", "S2", "S3", "S4")[seed % 4], (0.05, 0.1, 0.2, 0.3)[(seed // 4) % 4])
             for seed in range(44)]


@pytest.mark.parametrize("seed,size,mix,load_", GENERATED)
def test_dp_equals_brute_force_generated(seed, size, mix, load_):
    inst = generate(seed, size, mix=mix, load=load_)
    front = pareto_front(inst)
    assert vectors(front) == brute_front(inst)
    check_subsets(inst, front)


def _w(cap, jobs, granularity=1):
    return WindowInstance(Capacity(*cap), tuple(Job(f"j{i}", *j) for i, j in enumerate(jobs)),
                          granularity=granularity)


HAND = {
    "nothing_fits": _w((5, 5), [(10, 0), (6, 6), (1, 9)]),
    "zero_capacity": _w((0, 0), [(1, 0), (2, 3)]),
    "no_bb_capacity": _w((10, 0), [(3, 1), (4, 0), (5, 0), (2, 0)]),
    "no_bb_jobs": _w((10, 7), [(3, 0), (4, 0), (6, 0), (9, 0)]),
    "equal_jobs": _w((10, 10), [(3, 3)] * 5),
    "granularity": _w((10, 50), [(1, 21), (1, 21), (2, 0), (3, 9)], granularity=10),
    "tradeoff": _w((10, 10), [(6, 1), (5, 9), (4, 0), (1, 1), (2, 5)]),
    "exact_fit": _w((12, 12), [(4, 4), (4, 4), (4, 4), (6, 6), (6, 6), (12, 0)]),
    "chain": _w((7, 7), [(1, 6), (2, 5), (3, 4), (4, 3), (5, 2), (6, 1)]),
    "zero_nodes_cap": _w((0, 9), [(1, 1), (2, 2)]),
    "many_small": _w((9, 11), [(1, 2), (2, 1), (1, 0), (3, 3), (2, 4), (1, 5), (4, 0), (2, 2)]),
}


@pytest.mark.parametrize("key", HAND)
def test_dp_equals_brute_force_hand_made(key):
    inst = HAND[key]
    front = pareto_front(inst)
    assert vectors(front) == brute_front(inst)
    check_subsets(inst, front)


def test_hand_made_known_fronts():
    assert vectors(pareto_front(HAND["nothing_fits"])) == [(0, 0)]
    assert vectors(pareto_front(HAND["no_bb_capacity"])) == [(9, 0)]
    assert vectors(pareto_front(HAND["equal_jobs"])) == [(9, 9)]
    assert vectors(pareto_front(HAND["granularity"])) == [(6, 40)]  # j0 and j1 are 30 each: not both


# --- (3) the three engines agree ------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(10))
def test_engines_agree(seed):
    inst = generate(100 + seed, 10 + seed % 5, mix=("S1", "S2", "S3", "S4")[seed % 4],
                    load=(0.1, 0.2, 0.3)[seed % 3])
    fronts = {e: pareto_front(inst, e, "quick") for e in ("dp", "milp", "cpsat")}
    assert vectors(fronts["dp"]) == vectors(fronts["milp"]) == vectors(fronts["cpsat"])
    for f in fronts.values():
        check_subsets(inst, f)


@pytest.mark.parametrize("engine", ["dp", "milp", "cpsat"])
def test_front_that_reaches_the_bb_capacity(engine):
    # the last point uses all 10 of burst buffer while the requests sum to 20: the ε-constraint
    # loop must stop there (the MILP once built a constraint 11 <= used <= 10 and failed)
    inst = _w((10, 10), [(5, 10), (5, 10), (3, 0)])
    assert vectors(pareto_front(inst, engine, "quick")) == brute_front(inst) == [(8, 10)]


# --- (4) property test ----------------------------------------------------------------------------

job = st.tuples(st.integers(1, 20), st.integers(0, 30))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(jobs=st.lists(job, min_size=1, max_size=10), n_cap=st.integers(0, 60), b_cap=st.integers(0, 60),
       granularity=st.sampled_from([1, 1, 1, 4, 10]))
def test_dp_equals_brute_force_property(jobs, n_cap, b_cap, granularity):
    inst = _w((n_cap, b_cap), jobs, granularity)
    front = pareto_front(inst)
    assert vectors(front) == brute_front(inst)
    check_subsets(inst, front)


# --- (5) the MILP model ---------------------------------------------------------------------------


def test_build_milp_writes_lp(tmp_path):
    m = build_milp(PAPER_EXAMPLE)
    assert isinstance(m, pe.ConcreteModel)
    assert len(m.x) == 5 and all(m.x[j].is_binary() for j in m.J)
    path = tmp_path / "window.lp"
    m.write(str(path), io_options={"symbolic_solver_labels": True})
    text = path.read_text()
    assert "max" in text and "x(0)" in text and "x(4)" in text
    assert "<= 100" in text and "binary" in text
    for j, n in enumerate(PAPER_EXAMPLE.nodes()):  # the node row's coefficients
        assert f"+{n} x({j})" in text


def test_build_milp_second_step(tmp_path):
    m = build_milp(PAPER_EXAMPLE, min_bb=30, fix_nodes=80)
    m.x[1].value = m.x[2].value = m.x[3].value = m.x[4].value = 1
    m.x[0].value = 0
    assert pe.value(m.obj) == 90  # the burst buffer is the objective
    assert pe.value(m.used_nodes) == 80
    assert pe.value(m.bb.lower) == 30
    path = tmp_path / "step2.lp"
    m.write(str(path), io_options={"symbolic_solver_labels": True})
    assert "= 80" in path.read_text()


# --- (6) the exact method through solve -----------------------------------------------------------

SOLVE_CASES = [("paper", None, "dp"), ("paper", None, "milp"), ("paper", None, "cpsat"),
               ("random", 1, "dp"), ("random", 2, "dp"), ("random", 3, "milp"), ("random", 4, "cpsat")]


@pytest.mark.parametrize("kind,seed,engine", SOLVE_CASES)
def test_exact_method_through_solve(kind, seed, engine):
    inst = PAPER_EXAMPLE if kind == "paper" else generate(seed, 12, load=0.2)
    r = iosched.solve("window", inst, "exact", engine=engine, profile="quick")
    dp = pareto_front(inst)
    assert r.status == "optimal"
    assert r.gap == 0
    assert r.evaluation.feasible
    assert vectors(r.solution.front) == vectors(dp)
    if engine == "dp":
        assert r.solution.front == tuple(dp)
    assert r.solution.selected == decide(inst, list(r.solution.front)).jobs
    assert r.objective == pytest.approx(hypervolume(inst, vectors(dp)), abs=1e-12)
    assert r.objective == pytest.approx(r.bound, abs=1e-12)


def test_exact_method_paper_choice():
    r = iosched.solve("window", PAPER_EXAMPLE, "exact")
    assert r.solution.selected == ("J2", "J3", "J4", "J5")
    assert (r.evaluation.node_utilization, r.evaluation.bb_utilization) == pytest.approx((0.8, 0.9))
    assert r.objective == pytest.approx(1.0 * 0.2 + 0.8 * 0.7)  # hypervolume of {(1, .2), (.8, .9)}
    nodes = iosched.solve("window", PAPER_EXAMPLE, "exact", decision="nodes")
    assert nodes.solution.selected == ("J1", "J5")



@pytest.mark.parametrize("method", ["exact", "bbsched-ga"])
def test_the_decision_factor_is_a_parameter(method):
    """The move from (100 %, 20 %) to (80 %, 90 %) gains 0.7 of the burst buffer for 0.2 of the nodes: 3.5 times.
    Below factor 3.5 the rule moves (the paper's 2), above it stays at the most nodes."""
    moved = iosched.solve("window", PAPER_EXAMPLE, method, factor=3.4)
    stayed = iosched.solve("window", PAPER_EXAMPLE, method, factor=3.6)
    assert moved.solution.selected == ("J2", "J3", "J4", "J5")
    assert stayed.solution.selected == ("J1", "J5")

def test_burst_buffer_in_fine_units_keeps_the_exact_front():
    """Counted in units 10^11 times finer (10^17 in all), the front is the same, scaled: the DP counts
    in the requests' gcd. (It overflowed int64 and ended in an IndexError.)"""
    base = generate(0, 20)
    scale = 10**11
    fine = WindowInstance(Capacity(base.capacity.nodes, base.capacity.burst_buffer * scale),
                          tuple(Job(j.id, j.nodes, j.burst_buffer * scale) for j in base.jobs), name="fine")
    want = [(p.nodes, p.burst_buffer * scale, p.jobs) for p in pareto_dp(base)]
    assert [(p.nodes, p.burst_buffer, p.jobs) for p in pareto_dp(fine)] == want


def test_sizes_beyond_the_dp_are_an_error_for_exact_and_an_absent_bound_for_heuristics():
    jobs = (Job("a", 3, 10**17 + 1), Job("b", 2, 10**17 + 2), Job("c", 4, 0))
    inst = WindowInstance(Capacity(10**6, 3 * 10**17), jobs, name="fine")
    with pytest.raises(ParameterError, match="capacity.burst_buffer"):
        pareto_dp(inst)
    res = iosched.solve("window", inst, "naive")
    assert res.bound is None and res.evaluation.feasible and res.status.value == "feasible"


def test_exact_beyond_the_dp_falls_back_to_cpsat():
    """Burst buffer in units 10^17 fine: the dp cannot pack it, CP-SAT (int64) proves the front."""
    x = 10**17 + 1
    jobs = (Job("d", 3, x), Job("b", 2, x + 1), Job("c", 4, 0), Job("a", 3, x))
    inst = WindowInstance(Capacity(10**6, x + 1), jobs, name="fine")
    res = iosched.solve("window", inst, "exact", profile="quick")
    assert res.status.value == "optimal" and "engine cpsat" in res.info["engine"]
    assert "capacity.burst_buffer = 100000000000000002" in res.info["engine"]
    assert [(p.nodes, p.burst_buffer) for p in res.solution.front] == [(7, x), (6, x + 1)]
    assert res.evaluation.feasible and res.solution.selected == ("d", "c")  # of {d, c} and {c, a}: d is first
    # the problem's bound (the dp's front) is absent; the method's own, its proved front's hypervolume, holds
    assert res.bound == res.objective and res.info["gap_against"] == "the method's own bound"


def test_window_modules_do_not_import_numba_at_module_top():
    """numba loads with the first exact front (iosched.models._window_kernels), not with ``import iosched``."""
    import ast
    from pathlib import Path

    root = Path(iosched.__file__).parent
    for path in ("models/window.py", "heuristics/window.py", "instances/window.py", "evaluate/window.py"):
        tree = ast.parse((root / path).read_text())
        top = [a.name for node in tree.body if isinstance(node, ast.Import) for a in node.names]
        top += [node.module for node in tree.body if isinstance(node, ast.ImportFrom)]
        assert not [m for m in top if m.split(".")[0] == "numba" or m.endswith("_window_kernels")], (path, top)


def test_the_front_dp_refuses_past_its_key_cap_and_exact_falls_back(monkeypatch):
    """random:3:200:S2 held 5 GB of (nodes, BB) keys before its time limit; past MAX_FRONT_KEYS the dynamic
    program refuses naming the count, and `exact` (engine auto) proves the same front with CP-SAT."""
    from iosched.instances.window_presets import load
    from iosched.models import window as wm

    inst = load("random:4:14:S2")
    dp = wm.pareto_dp(inst)
    monkeypatch.setattr(wm, "MAX_FRONT_KEYS", 5)
    with pytest.raises(ParameterError, match="more than 5"):
        wm.pareto_dp(inst)
    wm._FRONTS.clear()
    res = iosched.solve("window", inst, "exact", profile="quick")
    assert res.status == "optimal" and "cpsat" in res.info["engine"]
    assert [(p.nodes, p.burst_buffer) for p in res.solution.front] == [(p.nodes, p.burst_buffer) for p in dp]
