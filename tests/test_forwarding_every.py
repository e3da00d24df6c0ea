"""The MILP over every allocation (milp): its optimum is the best score over every allocation by enumeration, it is
never worse than the DFRA-space MILP, the problem's bound is below every method, and the local search."""

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import iosched
from iosched.evaluate.forwarding import Allocation, evaluate
from iosched.instances.forwarding import ForwardingInstance, ForwardingNode, Job
from iosched.instances.forwarding_presets import generate
from iosched.models.forwarding import lower_bound
from iosched.models.forwarding_every import SCOPE_EVERY, build_every, node_classes

BF = 2.5
BC = BF / 32
OBJECTIVES = ("total_io_time", "max_io_time", "total_slowdown")
MODES = ("N-N", "N-1", "1-1")


def compositions(n, k):
    """Every way to write n as k non-negative parts, in order."""
    for cut in itertools.combinations(range(n + k - 1), k - 1):
        b = (-1,) + cut + (n + k - 1,)
        yield tuple(b[i + 1] - b[i] - 1 for i in range(k))


def brute_force(inst, objective):
    """The best score over every allocation: every split of every job's compute nodes over every usable node."""
    banned = {f for r in inst.running if r.dedicated for f, _ in r.forwarding}
    nodes = [f.id for f in inst.forwarding_nodes if f.id not in banned]
    best = None
    for pick in itertools.product(*[list(compositions(j.nodes, len(nodes))) for j in inst.jobs]):
        mapping = {j.id: tuple((f, c) for f, c in zip(nodes, p) if c) for j, p in zip(inst.jobs, pick)}
        ev = evaluate(inst, Allocation(mapping))
        assert ev.feasible
        value = getattr(ev, objective)
        best = value if best is None else min(best, value)
    return best


@st.composite
def tiny(draw, max_jobs=3, max_nodes=2):
    """A few jobs of 1-2 compute nodes, 4-6 forwarding nodes (some pool, one maybe anomalous or slower), a running
    neighbour (maybe on dedicated pool nodes)."""
    n_fwd = draw(st.integers(4, 6))
    slow = draw(st.sampled_from([None, n_fwd - 1]))
    bad = draw(st.sampled_from([None, 0, 2]))
    nodes = tuple(ForwardingNode(i, BF / 2 if i == slow else BF, i == bad, "default" if i < 2 else "pool")
                  for i in range(n_fwd))
    jobs, pos = [], 0
    for k in range(draw(st.integers(1, max_jobs))):
        n, mode = draw(st.integers(1, max_nodes)), draw(st.sampled_from(MODES))
        jobs.append(Job(f"j{k}", pos, n, 1 if mode == "1-1" else n, draw(st.sampled_from([BC, 1.0, 3.0])),
                        draw(st.floats(0.5, 20)), mode, draw(st.sampled_from([0.0, 50.0])),
                        draw(st.sampled_from(["low", "high"])), draw(st.sampled_from(["low", "high"]))))
        pos += n
    running = []
    if draw(st.booleans()):
        mode = draw(st.sampled_from(MODES[:2]))
        dedicated = draw(st.booleans())
        iops = draw(st.sampled_from(["low", "high"]))
        running.append(Job("r", 600, 2, 2, 1.5, draw(st.floats(1, 20)), mode, iops=iops,
                           forwarding=((n_fwd - 2, 2),) if dedicated else None, dedicated=dedicated))
    return ForwardingInstance(1024, 512, nodes, tuple(jobs), tuple(running))


def solved(inst, method="milp", **params):
    r = iosched.solve("forwarding", inst, method, profile="quick", **params)
    assert r.evaluation is not None and r.evaluation.feasible, r.info
    return r


# --- the optimum over every allocation ----------------------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(tiny(), st.sampled_from(OBJECTIVES))
def test_optimum_equals_brute_force_over_every_allocation(inst, objective):
    r = solved(inst, "milp-max") if objective == "max_io_time" else solved(inst, objective=objective)
    best = brute_force(inst, objective)
    assert r.info["scope"] == SCOPE_EVERY and r.info["model_status"] == "optimal"
    assert getattr(r.evaluation, objective) == pytest.approx(best, rel=2e-4, abs=1e-9)  # HiGHS's 0.01 % gap
    assert r.info["model_bound"] <= best * (1 + 1e-7) + 1e-9  # its bound holds for every allocation
    assert r.info["model_objective"] == pytest.approx(getattr(r.evaluation, objective), rel=1e-7, abs=1e-9)


@settings(max_examples=15, deadline=None)
@given(tiny(max_jobs=2, max_nodes=3), st.sampled_from(["total_io_time", "total_slowdown"]))
def test_every_allocation_never_worse_than_dfra_space(inst, objective):
    every = solved(inst, objective=objective)
    scope = solved(inst, "milp-dfra-space", objective=objective)
    assert getattr(every.evaluation, objective) <= getattr(scope.evaluation, objective) * (1 + 2e-4) + 1e-9


def test_a_better_allocation_outside_dfras_space():
    """No idle pool node: DFRA's space holds only the default mapping, where the low job sits beside a running
    N-1 job (50x). Every allocation includes moving it to the other default node, alone."""
    n1 = Job("r", 0, 32, 32, 0.001, 1.0, "N-1")
    low = Job("low", 32, 2, 1, BC, 1.0, "1-1")
    nodes = (ForwardingNode(0, BF), ForwardingNode(1, BF))
    inst = ForwardingInstance(1024, 512, nodes, (low,), (n1,))
    every, scope = solved(inst), solved(inst, "milp-dfra-space")
    assert every.objective == pytest.approx(1.0 / BC) and every.status == "optimal"
    assert every.solution.mapping["low"] == ((1, 2),)
    assert scope.objective == pytest.approx(50 * 1.0 / BC)


def test_interchangeable_idle_nodes_form_one_class():
    """Eight idle pool nodes of one bandwidth are one class (an integer count per configuration); a job of
    256 N-N nodes at 20 GB/s of links takes eight of them: 100 GB in 5 s."""
    nodes = tuple(ForwardingNode(i, BF, False, "default" if i < 2 else "pool") for i in range(10))
    job = Job("a", 0, 8, 8, 2.5, 100.0)
    inst = ForwardingInstance(1024, 512, nodes, (job,))
    classes = node_classes(inst)
    assert sorted(len(c.nodes) for c in classes) == [10]
    m = build_every(inst, data=classes)
    assert all(not v.is_binary() for v in m.w.values())
    r = solved(inst)
    assert r.objective == pytest.approx(100.0 / 20) and r.status == "optimal"
    assert len(r.solution.mapping["a"]) == 8


# --- the problem's bound and the methods -------------------------------------------------------------------------


@settings(max_examples=20, deadline=None)
@given(tiny())
def test_bound_never_beaten_by_any_method(inst):
    bound = lower_bound(inst, "total_io_time")
    for method in ("fixed", "dfra", "mckp", "round-robin", "search", "milp", "milp-dfra-space"):
        r = iosched.solve("forwarding", inst, method, **({"profile": "quick"} if "milp" in method else {}))
        assert r.evaluation.feasible, method
        assert r.objective >= bound * (1 - 1e-9), method
    assert brute_force(inst, "total_io_time") >= bound * (1 - 1e-9)


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 10**6), st.integers(1, 40), st.sampled_from([0, 3, 16]))
def test_search_passes_the_evaluator_and_never_loses_to_its_start(seed, n, pool):
    inst = generate(seed, n, compute_nodes=8192, default_nodes=16, pool_nodes=pool)
    r = iosched.solve("forwarding", inst, "search")
    assert r.evaluation.feasible and r.status in ("feasible", "optimal")
    starts = min(iosched.solve("forwarding", inst, m).objective for m in ("fixed", "dfra", "mckp"))
    assert r.objective <= starts * (1 + 1e-9)
    assert r.objective >= r.bound * (1 - 1e-9)


def test_search_finds_the_move_outside_dfras_space():
    n1 = Job("r", 0, 32, 32, 0.001, 1.0, "N-1")
    low = Job("low", 32, 2, 1, BC, 1.0, "1-1")
    inst = ForwardingInstance(1024, 512, (ForwardingNode(0, BF), ForwardingNode(1, BF)), (low,), (n1,))
    r = iosched.solve("forwarding", inst, "search")
    assert r.objective == pytest.approx(1.0 / BC) and r.status == "optimal"  # meets the bound


def test_search_stops_at_its_time_limit_with_an_allocation():
    r = iosched.solve("forwarding", generate(0, 200, pool_nodes=16), "search", time_limit=0.5)
    assert r.status == "time_limit" and r.evaluation.feasible


# --- size and errors --------------------------------------------------------------------------------------------


def test_too_large_is_refused_naming_the_estimate():
    with pytest.raises(iosched.ParameterError, match=r"configurations.*milp-dfra-space"):
        iosched.solve("forwarding", "random:4:30", "milp")
    with pytest.raises(iosched.ParameterError, match=r"10\^847.8 configurations"):  # past a float: no OverflowError
        iosched.solve("forwarding", "random:1:1000", "milp")
    with pytest.raises(iosched.ParameterError, match="max_configurations=10"):
        iosched.solve("forwarding", brute_instance(), "milp", max_configurations=10)


def brute_instance():
    nodes = tuple(ForwardingNode(i, BF, False, "default" if i < 2 else "pool") for i in range(4))
    return ForwardingInstance(1024, 512, nodes, (Job("a", 0, 3, 3, 1.0, 1.0), Job("b", 3, 2, 2, 1.0, 1.0)))


@pytest.mark.parametrize("params, name", [({"scope": "dfra"}, "scope"), ({"objective": "speed"}, "objective")])
def test_bad_parameters(params, name):
    with pytest.raises(iosched.ParameterError, match=name):
        iosched.solve("forwarding", brute_instance(), "milp", **params)


def test_bound_leaves_out_nodes_dedicated_to_running_jobs():
    """One usable node of 2.5 GB/s (the other is a running job's own): a job of 64 GB on links of 5 GB/s
    takes at least 64 / 2.5 s whatever the allocation, and the every-allocation MILP meets it."""
    nodes = (ForwardingNode(0, BF), ForwardingNode(1, BF, False, "pool"))
    r = Job("r", 0, 2, 2, 1.0, 1.0, forwarding=((1, 2),), dedicated=True)
    inst = ForwardingInstance(512, 512, nodes, (Job("a", 2, 2, 2, 2.5, 64.0),), (r,))
    assert lower_bound(inst) == pytest.approx(64 / 2.5)
    assert solved(inst).objective == pytest.approx(64 / 2.5) == brute_force(inst, "total_io_time")
