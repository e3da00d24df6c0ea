"""The free (fluid) problem's search (iosched.models.malleable_fluid): against a brute force over every order of
events, below the exact optimum, at least the Lagrangian where it closes, its free schedules checked directly."""

import itertools
import math
import shutil

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import iosched
from iosched import library
from iosched.errors import ParameterError
from iosched.evaluate.malleable import evaluate
from iosched.heuristics.malleable_sim import simulate
from iosched.instances.malleable import Job, MalleableInstance, Runtime
from iosched.instances.malleable_presets import generate
from iosched.models import malleable_bounds as mb
from iosched.models.malleable_fluid import ARRIVAL, COMPLETION, Free, best_configuration, search
from iosched.models.malleable_lp import lagrangian_bound, order_lp_bound
from iosched.solvers import BACKENDS, Deadline

A = Runtime("amdahl", seconds_1=100.0, serial=0.25)


def every_order(n: int, arrivals: list[int]):
    """Every sequence of the n arrivals (in ``arrivals``' order) and n completions, each after its own arrival:
    no dominance, no pruning."""
    def grow(prefix, arrived, done):
        if len(prefix) == 2 * n:
            yield prefix
            return
        if arrived < n:
            yield from grow(prefix + ((ARRIVAL, arrivals[arrived]),), arrived + 1, done)
        for j in arrivals[:arrived]:
            if j not in done:
                yield from grow(prefix + ((COMPLETION, j),), arrived, done | {j})
    return grow((), 0, frozenset())


def brute_force(inst: MalleableInstance) -> float:
    """The free optimum's mean: the least exact LP over every order of events (an infeasible order's LP pays its
    missing work at BIG_M, above every feasible order's)."""
    free = Free(inst)
    return min(free.solve(order) for order in every_order(free.n, free.arrivals)) / free.n


def check_free_schedule(inst: MalleableInstance, free: Free, order) -> float:
    """Check the free schedule of ``order`` directly (sizes on the ladder, within the nodes, nothing before an
    arrival or after the completion, each job's work done) and return its mean completion time."""
    fs = free.schedule(order)
    done = [0.0] * free.n
    last = [0.0] * free.n
    for start, end, config in fs.runs:
        assert end >= start - 1e-9 and sum(config.values()) <= inst.nodes
        for j, p in config.items():
            job = inst.jobs[j]
            assert p in job.sizes and start >= job.arrival - 1e-6
            done[j] += (end - start) / job.time(p)
            if end > start + 1e-9:
                last[j] = end
    completion = {j: t for (k, j), t in zip(order, fs.times) if k == COMPLETION}
    for j in range(free.n):
        assert done[j] == pytest.approx(1.0, abs=1e-6)
        assert last[j] <= completion[j] + 1e-6
    mean = sum(completion[j] - job.arrival for j, job in enumerate(inst.jobs)) / free.n
    assert mean == pytest.approx(fs.value / free.n, rel=1e-7)
    return mean


def test_grid3_0_by_hand():
    """The issue's grid3-0: free of checks and resize costs its jobs complete in 76.5 s in all (mean 25.5), above
    the Lagrangian (25.42) and below the best schedule (27.333, optimal: the exact method's)."""
    inst = iosched.load_instance("malleable", "lib:malleable/grid3-0")
    found = search(inst)
    assert found.complete and found.bound == pytest.approx(25.5, rel=1e-5) and found.bound <= 25.5
    assert found.best == pytest.approx(25.5, rel=1e-9) and brute_force(inst) == pytest.approx(25.5, rel=1e-9)
    assert check_free_schedule(inst, Free(inst), found.order) == pytest.approx(25.5, rel=1e-7)
    assert lagrangian_bound(inst) < found.bound < 27.333333


def test_two_jobs_share_evenly():
    """Two jobs of 100 s at 1 node (25 % serial) from 0 on 8 nodes: both at 4 nodes end at 43.75 s, the optimum
    (the completion-order LP proves it, test_malleable_bounds); with 4 and 2 nodes only (8 = 4 + 4 is still a
    configuration) the same; the free problem agrees."""
    inst = MalleableInstance(8, (Job("a", 0, 1, A, 1, 8), Job("b", 0, 1, A, 1, 8)))
    assert search(inst).bound == pytest.approx(43.75, rel=1e-5)
    assert order_lp_bound(inst) == pytest.approx(43.75, rel=1e-5)


def test_a_pause_pays_in_the_free_problem():
    """One node, a job of 100 s from 0 and one of 10 s at 10. Free, the long one pauses while the short one runs:
    completions 20 and 110, flows 10 + 110, mean 60. A schedule may not pause a job (its intervals are
    contiguous): the best is the short one first and the long one from 20 (flows 10 + 120, mean 65), so the free
    bound is strictly below the optimum here."""
    long_ = Runtime("table", seconds=((1, 100.0),))
    short = Runtime("table", seconds=((1, 10.0),))
    inst = MalleableInstance(1, (Job("long", 0, 1, long_, 1, 1), Job("short", 10, 1, short, 1, 1)))
    assert search(inst).bound == pytest.approx(60.0, rel=1e-5)
    assert brute_force(inst) == pytest.approx(60.0, rel=1e-9)


def test_the_knapsack_pricing_by_enumeration():
    """best_configuration against every assignment of sizes (or 0) to three jobs."""
    sizes = [(1, 2, 4), (2, 4), (1, 2, 4, 8)]
    rates = [(0.1, 0.18, 0.3), (0.2, 0.33), (0.05, 0.09, 0.16, 0.25)]
    for price in ({0: 1.0, 1: 2.0, 2: 3.0}, {0: -1.0, 1: 0.5, 2: 2.0}, {0: 0.0, 1: 0.0, 2: 0.0}):
        for nodes in (1, 3, 6, 8, 13):
            value, config = best_configuration([0, 1, 2], price, sizes, rates, nodes)
            brute = max(sum(price[j] * rates[j][sizes[j].index(p)] for j, p in enumerate(c) if p)
                        for c in itertools.product(*[(0, *s) for s in sizes]) if sum(c) <= nodes)
            assert value == pytest.approx(brute, abs=1e-12)
            assert sum(p for _, p in config) <= nodes
            assert sum(price[j] * rates[j][sizes[j].index(p)] for j, p in config) == pytest.approx(value, abs=1e-12)


@settings(max_examples=12, deadline=None)
@given(st.integers(0, 10**6), st.sampled_from(["grid", "paper", "feitelson"]), st.integers(2, 3))
def test_the_search_equals_a_brute_force_over_every_order(seed, kind, n):
    """On 2-3 jobs the search (dominance, pruning, partial-order bounds) finds the least LP over every order of
    events: the free optimum; its free schedule is checked directly; it is at least the Lagrangian and the
    completion-order LP (both relax the free problem further) and below every schedule a simulator finds."""
    inst = generate(seed, n, kind)
    found = search(inst)
    assert found.complete
    brute = brute_force(inst)
    assert found.bound <= brute <= found.bound * (1 + 3e-6) + 1e-9
    assert check_free_schedule(inst, Free(inst), found.order) == pytest.approx(brute, rel=1e-7)
    assert found.bound >= lagrangian_bound(inst) - 1e-5 * abs(brute)
    assert found.bound >= order_lp_bound(inst) - 1e-5 * abs(brute)
    for policy in (("dmr",), ("rigid", "fcfs")):
        ev = evaluate(inst, simulate(inst, *policy).schedule)
        assert ev.feasible and ev.mean_completion >= found.bound - 1e-9 * ev.mean_completion


@settings(max_examples=5, deadline=None)
@given(st.integers(0, 10**6))
def test_the_bound_is_below_the_exact_optimum(seed):
    """The exact method (valid for every schedule) on 3 grid jobs: where it proves its optimum, the free bound is
    at most that optimum (and its schedule's evaluated value)."""
    inst = generate(seed, 3, "grid")
    r = iosched.solve("malleable", inst, "exact", profile="quick")
    found = search(inst)
    assert found.complete
    assert r.objective >= found.bound - 1e-9 * r.objective
    if r.info.get("model_status") == "optimal":
        assert found.best <= r.objective * (1 + 1e-7)


def test_identical_jobs_are_pruned_to_arrival_order_without_loss():
    """Four jobs of one application (identical ladders and run times) arriving apart: the search places their
    completions in arrival order only, and still finds the brute force's optimum over all 4-job orders."""
    jobs = tuple(Job(f"j{k}", 7.0 * k, 1, A, 1, 4) for k in range(4))
    inst = MalleableInstance(6, jobs)
    free = Free(inst)
    assert free.earlier == [[], [0], [0, 1], [0, 1, 2]]
    arrived = tuple((ARRIVAL, j) for j in range(4))
    assert free.children(arrived) == [(COMPLETION, 0)]
    assert free.children(arrived + ((COMPLETION, 0),)) == [(COMPLETION, 1)]
    found = search(inst)
    assert found.complete and found.bound == pytest.approx(brute_force(inst), rel=3e-6)


def test_a_completion_before_an_arrival_it_cannot_precede_is_not_searched():
    """Job a (100 s at its fastest) cannot complete before b arrives at 50: the search offers b's arrival only."""
    inst = MalleableInstance(8, (Job("a", 0, 1, A, 1, 1), Job("b", 50, 1, A, 1, 1)))
    free = Free(inst)
    assert free.children(((ARRIVAL, 0),)) == [(ARRIVAL, 1)]
    late = MalleableInstance(8, (Job("a", 0, 1, A, 1, 1), Job("b", 150, 1, A, 1, 1)))
    assert Free(late).children(((ARRIVAL, 0),)) == [(ARRIVAL, 1), (COMPLETION, 0)]
    assert search(late).bound == pytest.approx(100.0, rel=1e-5)


def test_the_search_keeps_its_deadline_and_its_bound_is_valid_at_any_time():
    """No time: no bound. A little time: a bound, below the closed search's (anytime)."""
    inst = generate(1, 12, "paper")
    assert search(inst, Deadline(0.0)).bound is None
    full = search(inst, Deadline(120.0))
    assert full.complete
    for seconds in (0.2, 1.0):
        early = search(inst, Deadline(seconds))
        assert early.bound is None or early.bound <= full.bound * (1 + 1e-9)


def test_an_upper_bound_from_a_schedule_prunes_and_keeps_the_bound():
    """``upper``, a schedule's mean completion, prunes; the bound is the same free optimum (or that upper bound
    where nothing lies below it)."""
    inst = generate(2, 6, "paper")
    plain = search(inst)
    ev = evaluate(inst, simulate(inst, "dmr").schedule)
    pruned = search(inst, upper=ev.mean_completion)
    assert pruned.complete and pruned.bound == pytest.approx(plain.bound, rel=1e-9)
    assert pruned.nodes <= plain.nodes
    low = search(inst, upper=plain.best * 0.99)  # not a schedule's value: then the bound is that upper bound
    assert low.bound <= plain.best * 0.99


def test_the_problems_bounds_take_it_where_larger():
    """paper10-style workloads: the free problem's bound closes, is above the Lagrangian and is the one taken."""
    inst = generate(1, 10, "paper")
    b = mb.bounds(inst, ("mean_completion",))
    assert b["mean_completion_fluid_status"] == "optimal"
    assert b["mean_completion_fluid"] > b["mean_completion_lagrangian"]
    assert b["mean_completion"] == b["mean_completion_fluid"] and b["mean_completion_from"] == "free-problem search"
    big = mb.bounds(generate(0, mb.FLUID_MAX_JOBS + 1, "paper"), ("mean_completion",))
    assert big["mean_completion_fluid"] is None and big["mean_completion_fluid_status"] is None
    assert math.isfinite(big["mean_completion"])


@pytest.mark.parametrize("solver", [name for name in BACKENDS if name != "cbc" or shutil.which("cbc")])
def test_every_backend_finds_the_same_free_optimum(solver):
    """The LPs on each backend (their duals in one convention, :class:`iosched.solvers.lp.LP`) price the same
    configurations: the same free optimum on random:1:6 (591.459, HiGHS's) within the solvers' tolerances."""
    inst = generate(1, 6, "paper")
    found = search(inst, solver=solver)
    assert found.complete and found.bound == pytest.approx(591.4586, rel=1e-6)


@pytest.mark.parametrize("name", ["grid3-0", "grid3-3", "grid4-0", "grid4-7", "grid6-2", "grid6-4", "paper10-0"])
def test_below_the_librarys_best_known(name):
    """The library's best known schedules (the grid ones proved optimal by the exact method) are free schedules: the
    free optimum is at most each, and here strictly above the Lagrangian."""
    inst = iosched.load_instance("malleable", f"lib:malleable/{name}")
    known = library.summary("malleable")[f"malleable/{name}"]["best_known"]
    found = search(inst)
    assert found.complete and found.best <= known * (1 + 1e-9)
    assert found.bound > lagrangian_bound(inst)


def test_a_floor_stops_the_search_where_it_cannot_gain():
    """``floor``: the search stops at the first complete order whose mean is at most it (its bound can be no
    larger), with a bound still valid; bounds() passes the Lagrangian's, so an instance whose free optimum is
    the Lagrangian's (grid3-1: 20.333 both) stops with ``no_gain``."""
    inst = generate(2, 8, "grid")
    full = search(inst)
    stopped = search(inst, floor=full.best * 1.01)
    assert not stopped.complete and stopped.best <= full.best * 1.01 and stopped.nodes < full.nodes
    assert stopped.bound <= full.bound * (1 + 1e-9)
    with pytest.raises(ParameterError, match="floor"):
        search(inst, floor=math.nan)
    with pytest.raises(ParameterError, match="upper"):
        search(inst, upper="1")
    few = search(inst, max_nodes=3)  # a node budget: the same search, cut
    assert few.nodes == 3 and not few.complete and few.bound <= full.bound * (1 + 1e-9)
    with pytest.raises(ParameterError, match="max_nodes"):
        search(inst, max_nodes=-1)
    tight = iosched.load_instance("malleable", "lib:malleable/grid3-1")
    b = mb.bounds(tight, ("mean_completion",))
    assert b["mean_completion_fluid_status"] in ("no_gain", "optimal")
    assert b["mean_completion"] == pytest.approx(20.3333, rel=1e-4)
